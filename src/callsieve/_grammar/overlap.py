"""Strategy: dialect isolation — whether two entry terminals of different dialects open
blocks on the same text, and which one is the more specific (grammar/README.md, "Entries").

What it does: ``sample(pattern)`` writes one text the pattern matches, its plainest: the
first alternative of each choice, the fewest repeats, the first character of each class
(and what a trailing look-ahead needs). ``relation(a, b)`` asks each pattern whether it
matches the other's sample. ``b`` is *within* ``a`` when ``a`` matches ``b``'s text but
``b`` does not match ``a``'s: ``b`` is the more specific spelling (Step-3's
``<｜tool_calls_begin｜>`` within DeepSeek's noisy ``<[|｜]tool[▁_ ]calls[▁_ ]begin[|｜]>``).
Both matching the other's text is an overlap neither resolves.
What it guarantees: an overlap reported is real (a text both match); an overlap found
only past the plainest spellings is not looked for.
What it costs: two pattern matches per pair of entries whose first characters meet, when a
grammar is derived (cold; the result is part of the cached blueprint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

try:  # Python >= 3.11
    from re import _parser as _p
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _p

from .patterns import compile as compile_pattern

__all__ = ["Relation", "relation", "sample"]

#: Stand-ins for a class with no literal first member (a category, a negated set).
_STAND_INS = "a0 _<x{\n"
_CATEGORY = {"CATEGORY_SPACE": " ", "CATEGORY_DIGIT": "0", "CATEGORY_WORD": "a"}


@dataclass(frozen=True)
class Relation:
    """How two entry patterns relate: ``overlap`` (a text both match), ``a_within_b`` (``a``
    is the more specific: ``b`` matches ``a``'s text, not the reverse), ``b_within_a``."""

    overlap: bool
    a_within_b: bool
    b_within_a: bool


class _NoSample(Exception):
    """A construct ``sample`` does not write (the pair is then not compared)."""


def _char(op: str, av: Any) -> str:
    if op == "LITERAL":
        return chr(av)
    if op == "ANY":
        return "a"
    if op == "IN":
        first = av[0] if av else None
        if first is not None and str(first[0]) == "LITERAL":
            return chr(first[1])
        if first is not None and str(first[0]) == "RANGE":
            return chr(first[1][0])
        if first is not None and str(first[0]) == "CATEGORY" and str(first[1]) in _CATEGORY:
            return _CATEGORY[str(first[1])]
    from .prefix import char_class_source

    try:
        test = re.compile(char_class_source(op, av))
    except ValueError:
        raise _NoSample from None
    for c in _STAND_INS:
        if test.fullmatch(c):
            return c
    raise _NoSample


def _write(items: Any, out: list[str]) -> None:
    for op, av in items:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            out.append(_char(name, av))
        elif name == "SUBPATTERN":
            _write(av[3], out)
        elif name == "BRANCH":
            _write(av[1][0], out)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            for _ in range(av[0]):
                _write(av[2], out)
        elif name == "ASSERT" and av[0] == 1:
            ahead: list[str] = []
            _write(av[1], ahead)
            out.append("\0" + "".join(ahead))  # (what follows the match: joined last)
        elif name not in ("AT", "ASSERT_NOT"):
            raise _NoSample


def sample(pattern: str) -> str | None:
    """The plainest text ``pattern`` matches (see the module docstring), or None."""
    out: list[str] = []
    try:
        _write(_p.parse(pattern), out)
    except _NoSample:
        return None
    text = "".join(part.lstrip("\0") for part in out)
    return text if compile_pattern(pattern).match(text) else None


def relation(a: str, b: str) -> Relation:
    """How entry patterns ``a`` and ``b`` relate (see the module docstring)."""
    sa, sb = sample(a), sample(b)
    b_takes_a = sa is not None and compile_pattern(b).match(sa) is not None
    a_takes_b = sb is not None and compile_pattern(a).match(sb) is not None
    return Relation(
        a_takes_b or b_takes_a, b_takes_a and not a_takes_b, a_takes_b and not b_takes_a
    )

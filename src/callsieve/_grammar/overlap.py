"""Strategy: dialect isolation — whether two entry terminals of different dialects open
blocks on the same text, and which one is the more specific (grammar/README.md, "Entries").

What it does: ``samples(pattern)`` writes a few texts the pattern matches, its plainest: the
fewest repeats, and the k-th alternative of each choice and the k-th character of each class,
for the first few k (with what a trailing look-ahead needs). ``relation(a, b)`` asks each
pattern whether it matches the other's samples. ``b`` is *within* ``a`` when ``a`` matches
all of ``b``'s texts but ``b`` not all of ``a``'s: ``b`` is the more specific (Step-3's
``<｜tool_calls_begin｜>`` within DeepSeek's noisy ``<[|｜]tool[▁_ ]calls[▁_ ]begin[|｜]>``).
Each matching all of the other's texts is an overlap neither resolves.
What it guarantees: an overlap reported is real (a text both match); an overlap found
only past the plainest spellings is not looked for.
What it costs: two pattern matches per pair of entries whose first characters meet, when a
grammar is derived (cold; the result is part of the cached blueprint).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .patterns import compile as compile_pattern
from .prefix import char_class_source, regex_items

__all__ = ["Relation", "relation", "samples"]

#: Stand-ins for a class with no literal first member (a category, a negated set).
_STAND_INS = "a0 _<x{\n"
_CATEGORY = {"CATEGORY_SPACE": " ", "CATEGORY_DIGIT": "0", "CATEGORY_WORD": "a"}
#: How many variants ``samples`` writes (the k-th alternative, k below this).
_VARIANTS = 4


@dataclass(frozen=True)
class Relation:
    """How two entry patterns relate: ``overlap`` (a text both match), ``a_within_b`` (``a``
    is the more specific: ``b`` matches ``a``'s text, not the reverse), ``b_within_a``."""

    overlap: bool
    a_within_b: bool
    b_within_a: bool


class _NoSample(Exception):
    """A construct ``sample`` does not write (the pair is then not compared)."""


def _char(op: str, av: Any, k: int) -> str:
    if op == "LITERAL":
        return chr(av)
    if op == "ANY":
        return "a"
    if op == "IN":
        plain = av and all(str(m[0]) != "NEGATE" for m in av)
        first = av[min(k, len(av) - 1)] if plain else None
        if first is not None and str(first[0]) == "LITERAL":
            return chr(first[1])
        if first is not None and str(first[0]) == "RANGE":
            return chr(first[1][0])
        if first is not None and str(first[0]) == "CATEGORY" and str(first[1]) in _CATEGORY:
            return _CATEGORY[str(first[1])]
    try:
        test = re.compile(char_class_source(op, av))
    except ValueError:
        raise _NoSample from None
    for c in _STAND_INS:
        if test.fullmatch(c):
            return c
    raise _NoSample


def _write(items: Any, out: list[str], k: int) -> None:
    for op, av in items:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            out.append(_char(name, av, k))
        elif name == "SUBPATTERN":
            _write(av[3], out, k)
        elif name == "BRANCH":
            _write(av[1][min(k, len(av[1]) - 1)], out, k)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            for _ in range(av[0]):
                _write(av[2], out, k)
        elif name == "ASSERT" and av[0] == 1:
            ahead: list[str] = []
            _write(av[1], ahead, k)
            out.append("\0" + "".join(ahead))  # (what follows the match: joined last)
        elif name not in ("AT", "ASSERT_NOT"):
            raise _NoSample


@functools.lru_cache(maxsize=4096)
def samples(pattern: str) -> tuple[str, ...]:
    """Plain texts ``pattern`` matches (see the module docstring); none if it has a construct
    they are not written for. Kept: each entry meets every other dialect's entries."""
    parsed = regex_items(pattern)
    test = compile_pattern(pattern)
    out: list[str] = []
    for k in range(_VARIANTS):
        parts: list[str] = []
        try:
            _write(parsed, parts, k)
        except _NoSample:
            return ()
        text = "".join(part.lstrip("\0") for part in parts)
        if text not in out and test.match(text):
            out.append(text)
    return tuple(out)


def relation(a: str, b: str) -> Relation:
    """How entry patterns ``a`` and ``b`` relate (see the module docstring)."""
    sa, sb = samples(a), samples(b)
    ta, tb = compile_pattern(a), compile_pattern(b)
    a_hits = [ta.match(t) is not None for t in sb]  # (``a`` on ``b``'s texts)
    b_hits = [tb.match(t) is not None for t in sa]
    overlap = any(a_hits) or any(b_hits)
    a_takes_b = bool(sb) and all(a_hits)
    b_takes_a = bool(sa) and all(b_hits)
    return Relation(overlap, b_takes_a and not a_takes_b, a_takes_b and not b_takes_a)

"""Strategy: the one door to CPython's private ``re`` modules. No other module imports them.

What it does: the grammar reads the structure of its terminals' patterns (what a match can
start with, its prefixes, its automaton) from ``re``'s own parser. It also keeps patterns'
compiled code in its cache and rebuilds them without parsing again. Both need names that are
not public. This module holds every one of them:

- ``re._parser.parse`` (``sre_parse`` before 3.11) and a parsed pattern's ``getwidth()``,
  ``state.flags``, ``state.groups`` and ``state.groupdict``;
- ``re._constants.MAXREPEAT`` (``sre_constants``);
- ``re._compiler._code`` (``sre_compile``);
- ``_sre.compile`` and ``_sre.CODESIZE``.

Callers see ``parse`` (a pattern's items, each an op and its argument; an op prints as its
name, such as ``LITERAL`` or ``MAX_REPEAT``), ``MAXREPEAT``, ``compiled_code`` and
``pattern_from_code``.

What it guarantees: where a private module is missing, nothing fails at import. ``parse``
raises ``ReInternalsUnavailable`` (a ``GrammarError`` and a ``ValueError``). A reader that can
do without a pattern's structure treats it as a construct it cannot read. Loading a grammar
cannot: it fails with that error, which names what is missing. ``compiled_code`` returns None, so patterns compile from their source. The
code path is used only if a probe pattern rebuilt from its code equals ``re.compile``'s.
"""

from __future__ import annotations

import array
import functools
import importlib
import re
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .errors import GrammarError

__all__ = [
    "MAXREPEAT",
    "CompiledCode",
    "ReInternalsUnavailable",
    "code_usable",
    "compiled_code",
    "max_width",
    "parse",
    "pattern_from_code",
]


def _load(new: str, old: str) -> ModuleType | None:
    try:
        return importlib.import_module(new if sys.version_info >= (3, 11) else old)
    except ImportError:  # pragma: no cover - another Python's layout
        return None


_parser = _load("re._parser", "sre_parse")
_compiler = _load("re._compiler", "sre_compile")
_constants = _load("re._constants", "sre_constants")
_sre = _load("_sre", "_sre")

#: The "no upper bound" of a repeat, as the parser writes it.
MAXREPEAT: int = int(getattr(_constants, "MAXREPEAT", 2**32 - 1))

_PROBE = r"(?P<a>[\s\u200b<＜]{0,3})x(?=[^>]|\Z)|[a-z_]{1,9}(?P=a)"


class ReInternalsUnavailable(GrammarError, ValueError):
    """This Python's ``re`` has no parser this module can read. A grammar cannot be loaded
    without one: its terminals' structure is read from ``re``'s parser."""

    def __init__(self) -> None:
        super().__init__(
            f"this Python ({sys.version.split()[0]}) has no re parser callsieve can read",
            expected=("re._parser (CPython 3.11+) or sre_parse",),
        )


@dataclass(frozen=True, slots=True)
class CompiledCode:
    """A pattern's compiled form as plain data: what ``_sre.compile`` takes."""

    flags: int
    code: bytes
    groups: int
    groupindex: dict[str, int]
    indexgroup: tuple[str | None, ...]


def parse(source: str) -> list[tuple[Any, Any]]:
    """``source`` as ``re`` parses it: its items, each an op and its argument. The items
    are shared between callers (read them, never change them)."""
    if _parser is None:
        raise ReInternalsUnavailable
    return list(_parsed(source))


def max_width(source: str) -> int:
    """The length of the longest match of ``source`` (a very large number if unbounded)."""
    if _parser is None:
        raise ReInternalsUnavailable
    return int(_parsed(source).getwidth()[1])


@functools.lru_cache(maxsize=4096)
def _parsed(source: str) -> Any:
    """``re``'s parse of ``source``, kept: deriving a grammar reads each terminal's
    pattern many times (its prefixes, its width, its overlap with other dialects')."""
    assert _parser is not None
    return _parser.parse(source)


def _code(source: str) -> CompiledCode:
    assert _parser is not None and _compiler is not None
    parsed = _parser.parse(source, 0)
    state = parsed.state
    groupindex = dict(state.groupdict)
    indexgroup: list[str | None] = [None] * state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    words = array.array("I", _compiler._code(parsed, 0))
    return CompiledCode(
        state.flags, words.tobytes(), state.groups - 1, groupindex, tuple(indexgroup)
    )


def pattern_from_code(source: str, compiled: CompiledCode) -> re.Pattern[str]:
    """The pattern ``re.compile(source)`` returns, built from its compiled form."""
    if _sre is None:  # pragma: no cover - guarded by compiled_code
        raise ReInternalsUnavailable
    words = array.array("I")
    words.frombytes(compiled.code)
    pattern: re.Pattern[str] = _sre.compile(
        source,
        compiled.flags,
        words.tolist(),
        compiled.groups,
        dict(compiled.groupindex),
        compiled.indexgroup,
    )
    return pattern


def _code_works() -> bool:
    if _parser is None or _compiler is None or _sre is None:
        return False
    try:
        return bool(
            array.array("I").itemsize == _sre.CODESIZE
            and pattern_from_code(_PROBE, _code(_PROBE)) == re.compile(_PROBE)
        )
    except Exception:  # noqa: BLE001 - another engine or layout: no compiled forms
        return False


_CODE_WORKS: bool | None = None


def code_usable() -> bool:
    """Whether patterns can be rebuilt from their compiled code in this process."""
    global _CODE_WORKS
    if _CODE_WORKS is None:
        _CODE_WORKS = _code_works()
    return _CODE_WORKS


def compiled_code(source: str) -> CompiledCode | None:
    """The compiled form of ``source``, or None where this Python's engine cannot be fed one.
    Raises ``re.error`` if ``source`` is not a valid pattern."""
    if not code_usable():
        re.compile(source)
        return None
    return _code(source)

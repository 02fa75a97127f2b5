"""Strategy: compile the grammar's regular expressions from a compiled form kept in the
grammar cache, instead of from their source, where this Python allows it.

What it does: ``re.compile`` parses a source and turns it into the engine's code (a list of
ints, Python code: ~1 ms for a pattern with large Unicode classes, ~80 ms for all of the
built-in grammar's), then hands that code to ``_sre.compile``, which is cheap. ``freeze``
does the first two steps and returns the code and group tables as plain data (the cache
stores them, keyed — through the cache's digest — by the exact Python build); ``learn``
makes frozen forms known to this process, and ``compile`` hands a known one to
``_sre.compile`` directly (microseconds), or compiles the source as ``re`` does.
What it guarantees: a pattern from ``compile`` equals (``==``: same source, flags and code)
what ``re.compile`` returns for the source. Freezing is on only if a probe pattern rebuilt
this way equals ``re.compile``'s in this process (else ``freeze`` returns None and every
pattern comes from ``re.compile``); the engine validates any code it is given (a damaged one
raises, and ``compile`` falls back to the source). Thread-safe: the table of known forms is
one ``dict``, written whole entries at a time.
What it costs: ``freeze`` is a compile (the cold path only); ``compile`` of a known pattern
~10 µs; the known forms stay in memory (bytes, ~0.4 MB for the built-in grammar).
"""

from __future__ import annotations

import array
import importlib
import re
import sys
from typing import Any

# ``re``'s own parser and code generator (``sre_*`` before 3.11, deprecated since).
_p: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_cmp: Any = importlib.import_module(
    "re._compiler" if sys.version_info >= (3, 11) else "sre_compile"
)
try:
    _sre: Any = importlib.import_module("_sre")
except ImportError:  # pragma: no cover - not CPython's engine
    _sre = None

__all__ = ["Frozen", "compile", "freeze", "learn"]

#: A pattern's flags, code (``array('I')`` bytes), group count and group tables.
Frozen = tuple[int, bytes, int, dict[str, int], tuple[Any, ...]]
_PROBE = r"(?P<a>[\s\u200b<＜]{0,3})x(?=[^>]|\Z)|[a-z_]{1,9}(?P=a)"
_known: dict[str, Frozen] = {}
_usable: bool | None = None


def _freeze(source: str) -> Frozen:
    p = _p.parse(source, 0)
    code = _cmp._code(p, 0)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (
        p.state.flags,
        array.array("I", code).tobytes(),
        p.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def _thaw(source: str, frozen: Frozen) -> re.Pattern[str]:
    flags, code, groups, groupindex, indexgroup = frozen
    words = array.array("I")
    words.frombytes(code)
    pattern: re.Pattern[str] = _sre.compile(
        source, flags, words.tolist(), groups, dict(groupindex), tuple(indexgroup)
    )
    return pattern


def _works() -> bool:
    """Whether a pattern rebuilt from its frozen form is ``re``'s own, in this process."""
    global _usable
    if _usable is None:
        try:
            _usable = (
                _sre is not None
                and array.array("I").itemsize == _sre.CODESIZE
                and _thaw(_PROBE, _freeze(_PROBE)) == re.compile(_PROBE)
            )
        except Exception:  # noqa: BLE001 - another engine or layout: no frozen forms
            _usable = False
    return _usable


def freeze(source: str) -> Frozen | None:
    """The compiled form of ``source`` (raises ``re.error`` if it is not a valid pattern),
    or None where frozen forms are not usable."""
    if not _works():
        re.compile(source)
        return None
    frozen = _freeze(source)
    _known.setdefault(source, frozen)
    return frozen


def learn(frozen: dict[str, Frozen]) -> None:
    """Make frozen forms (from the cache) known to ``compile``."""
    if _works():
        _known.update(frozen)


def compile(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, from its frozen form when one is known."""
    frozen = _known.get(source)
    if frozen is not None:
        try:
            return _thaw(source, frozen)
        except Exception:  # noqa: BLE001 - a damaged form: the source decides
            _known.pop(source, None)
    return re.compile(source)

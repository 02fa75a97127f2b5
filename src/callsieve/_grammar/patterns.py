"""Strategy: compile the grammar's regular expressions from a compiled form kept in the
grammar cache, instead of from their source, where this Python allows it.

What it does: ``re.compile`` parses a source and turns it into the engine's code (a list of
ints, Python code: ~1 ms for a pattern with large Unicode classes, ~80 ms for all of the
built-in grammar's), then hands that code to the engine, which is cheap. ``freeze``
does the first two steps and returns the code and group tables as plain data (the cache
stores them, keyed — through the cache's digest — by the exact Python build); ``learn``
makes frozen forms known to this process, and ``compile`` hands a known one to
the engine directly (microseconds), or compiles the source as ``re`` does.
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

import re
from typing import Any

from .._base.re_internals import CompiledCode, code_usable, compiled_code, pattern_from_code

__all__ = ["Frozen", "compile", "freeze", "learn"]

#: A pattern's flags, code (``array('I')`` bytes), group count and group tables: the plain
#: data the grammar cache stores (``CompiledCode``'s fields, in order).
Frozen = tuple[int, bytes, int, dict[str, int], tuple[Any, ...]]
_known: dict[str, Frozen] = {}


def freeze(source: str) -> Frozen | None:
    """The compiled form of ``source`` (raises ``re.error`` if it is not a valid pattern),
    or None where frozen forms are not usable."""
    code = compiled_code(source)
    if code is None:
        return None
    frozen: Frozen = (code.flags, code.code, code.groups, code.groupindex, code.indexgroup)
    _known.setdefault(source, frozen)
    return frozen


def learn(frozen: dict[str, Frozen]) -> None:
    """Make frozen forms (from the cache) known to ``compile``."""
    if code_usable():
        _known.update(frozen)


def compile(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, from its frozen form when one is known."""
    frozen = _known.get(source)
    if frozen is not None:
        try:
            return pattern_from_code(source, CompiledCode(*frozen))
        except Exception:  # noqa: BLE001 - a damaged form: the source decides
            _known.pop(source, None)
    return re.compile(source)

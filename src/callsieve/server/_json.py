"""Strategy: JSON in and out of the gateway — strict on the way in (what a client sends is
refused with a 400 unless it is plain, finite, well-formed UTF-8 JSON of bounded depth), and
in slices on the way out (a reply of tens of megabytes is encoded a slice at a time, never
in one call that holds the event loop).

What it does: ``loads_strict(data, max_depth)`` parses a request body: UTF-8 only (no BOM
guessing, no ``surrogatepass``), no ``NaN``/``Infinity``, no number that overflows to an
infinite float (``1e400``), no integer of more digits than Python converts, nesting no
deeper than ``max_depth``, no lone surrogate (``"\\ud800"``) in a string or a key.
``dumps_sliced(obj, deferred)`` yields the compact JSON text of ``obj`` in pieces: every
string longer than ``SLICE`` characters is taken out, the rest encoded at once, and each long
string then encoded ``SLICE`` characters at a time (JSON escapes one code point at a time,
so the pieces join to exactly ``json.dumps(obj)``), with a ``Deferred``'s markers replaced
by the text they stand for.
What it guarantees: every refusal is an ``ApiError(400, code="invalid_json")`` whose message
says what was wrong (and, for a syntax error, where); never a ``RecursionError``.
What it costs: one parse and one walk over the parsed value; the output's big strings are
copied once more, a slice at a time.
"""

from __future__ import annotations

import codecs
import json
import json.decoder
import json.scanner
import math
import re
import secrets
from collections.abc import Callable, Iterator
from typing import Any

from ._errors import ApiError

__all__ = ["SLICE", "Deferred", "dumps_sliced", "loads_sliced", "loads_strict"]

SLICE = 1 << 16
_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad(message: str) -> ApiError:
    return ApiError(400, f"the body is not valid JSON: {message}", code="invalid_json")


def _constant(name: str) -> Any:
    raise _bad(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _bad(f"the number {text[:40]} is out of range")
    return value


def loads_strict(data: bytes, max_depth: int) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(f"not UTF-8 (byte {exc.start})") from None
    if _nesting(text) > max_depth:
        raise _bad(f"nested deeper than {max_depth} levels")
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float)
    except ApiError:
        raise
    except RecursionError:  # (cannot happen below max_depth, kept as a guard)
        raise _bad(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
        raise _bad(str(exc)) from None
    _check_strings(value)
    return value


def _nesting(text: str) -> int:
    """An upper bound of the nesting depth: brackets counted outside strings — cheap for a
    body without brackets in strings, exact for a body with them too."""
    if text.count("[") + text.count("{") <= 32:
        return 0
    depth = most = 0
    in_string = escaped = False
    for m in re.finditer(r'[\[\]{}"\\]', text):
        c = m.group()
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = m.end() < len(text) and (text[m.end()] == "\\" or text[m.end()] == '"')
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            most = max(most, depth)
        elif c in "]}":
            depth -= 1
    return most


def _check_strings(value: Any) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                raise _bad("a string holds a lone surrogate (\\ud800-\\udfff)")
        elif isinstance(v, dict):
            for k, item in v.items():
                if _SURROGATE.search(k):
                    raise _bad("a key holds a lone surrogate (\\ud800-\\udfff)")
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)


class Deferred:
    """Text that is written into the JSON output only as it is sent, piece by piece: a
    reply's long run of text stands in the rendered response as ``head + marker + tail``
    (``text(pieces)``), and ``dumps_sliced(obj, deferred)`` puts the pieces back in its
    place — so a reply of tens of megabytes never becomes one string (joining 50 MB alone
    holds the event loop for 0.1–0.2 s on a busy machine)."""

    __slots__ = ("_mark", "_pieces", "pattern")

    def __init__(self) -> None:
        self._mark = ""
        self._pieces: list[list[str]] = []
        #: What finds a marker (``None`` until the first one is made: most replies have none,
        #: and compiling a pattern per reply costs more than the rest of a short one).
        self.pattern: re.Pattern[str] | None = None

    def text(self, pieces: list[str]) -> str:
        """``pieces`` joined, or, when that would be long, their first and last pieces (up
        to a character that is not white space: a renderer trims only the ends) around a
        marker for the rest."""
        if sum(len(p) for p in pieces) <= 4 * SLICE:
            return "".join(pieces)
        head = 1
        while head < len(pieces) - 1 and not pieces[head - 1].strip():
            head += 1
        tail = len(pieces) - 1
        while tail > head and not pieces[tail].strip():
            tail -= 1
        if tail <= head:
            return "".join(pieces)
        if self.pattern is None:
            self._mark = f"\ue000{secrets.token_hex(8)}:"
            self.pattern = re.compile(f"{re.escape(self._mark)}(\\d+)\ue000")
        self._pieces.append(pieces[head:tail])
        return (
            f"{''.join(pieces[:head])}{self._mark}{len(self._pieces) - 1}\ue000"
            f"{''.join(pieces[tail:])}"
        )

    def encode(self, value: str) -> Iterator[str]:
        """The JSON string body of ``value`` (no quotes), its markers replaced, in slices."""
        at = 0
        for m in self.pattern.finditer(value) if self.pattern is not None else ():
            yield from _slices(value[at : m.start()])
            for piece in self._pieces[int(m.group(1))]:
                yield from _slices(piece)
            at = m.end()
        yield from _slices(value[at:])


def _slices(value: str) -> Iterator[str]:
    for i in range(0, len(value), SLICE):
        yield json.dumps(value[i : i + SLICE], ensure_ascii=False)[1:-1]


def dumps_sliced(obj: Any, deferred: Deferred | None = None) -> Iterator[str]:
    big: list[str] = []
    mark = f"\ue001{secrets.token_hex(8)}"

    def take(v: Any) -> Any:
        if isinstance(v, str) and (
            len(v) > SLICE
            or deferred is not None
            and deferred.pattern is not None
            and deferred.pattern.search(v)
        ):
            big.append(v)
            return f"{mark}{len(big) - 1}\ue001"
        if isinstance(v, dict):
            return {k: take(item) for k, item in v.items()}
        if isinstance(v, list):
            return [take(item) for item in v]
        return v

    text = json.dumps(take(obj), ensure_ascii=False, separators=(",", ":"))
    if not big:
        yield text
        return
    encode = deferred.encode if deferred is not None else _slices
    pattern = re.compile(f'"{re.escape(mark)}(\\d+)\ue001"')
    at = 0
    for m in pattern.finditer(text):
        yield text[at : m.start()] + '"'
        yield from encode(big[int(m.group(1))])
        yield '"'
        at = m.end()
    yield text[at:]


#: The escapes a cut of a JSON string may split: ``\uXXXX\uXXXX`` (a surrogate pair) at most.
_LONGEST_ESCAPE = 12


def loads_sliced(data: bytes) -> Any:
    """``json.loads(data)`` (UTF-8) in steps of at most ``SLICE`` characters each, for a
    worker thread: the C parser would hold the interpreter for the whole body (0.4 s for a
    50 MB string); between two steps, the event loop's thread can take it. The text is
    decoded a slice at a time; the structure is read by ``json``'s Python scanner; a string
    longer than a slice is decoded a slice at a time (object keys are read whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(data)
    parts = [decoder.decode(view[i : i + SLICE]) for i in range(0, len(view), SLICE)]
    parts.append(decoder.decode(b"", final=True))
    text = "".join(parts).removeprefix("\ufeff")
    reader = json.JSONDecoder()
    reader.parse_string = _long_string  # type: ignore[attr-defined]
    reader.scan_once = json.scanner.py_make_scanner(reader)  # type: ignore[attr-defined]
    return reader.decode(text)


def _long_string(s: str, end: int, strict: bool = True) -> tuple[str, int]:
    """``json.decoder.scanstring``, a slice at a time: a cut never splits an escape (the
    slice is shortened until its text parses on its own, and never ends inside a surrogate
    pair)."""
    near = s.find('"', end, end + SLICE)
    if near != -1 and s[near - 1] != "\\":  # (the closing quote is near: one bounded call)
        return _scanstring(s, end, strict)
    parts: list[str] = []
    at = end
    while True:
        if at >= len(s):
            raise json.JSONDecodeError("Unterminated string starting at", s, end - 1)
        part, used, stop = _slice(s, at, strict)
        parts.append(part)
        if used is not None:
            return "".join(parts), used
        at = stop


def _slice(s: str, at: int, strict: bool) -> tuple[str, int | None, int]:
    """The text of ``s[at:stop]`` (``stop`` at most ``SLICE`` on, before any escape that
    would be cut), and where the string ended if it did within (else ``None``)."""
    stop = min(at + SLICE, len(s))
    error: ValueError | None = None
    for _ in range(_LONGEST_ESCAPE + 1):
        if stop <= at:  # (no cut parses: the text's own fault)
            break
        window = s[at:stop] + '"'
        try:
            part, used = _scanstring(window, 0, strict)
        except ValueError as exc:  # (a cut escape, or the text's own fault)
            error = error or exc
            stop -= 1
            continue
        if used < len(window):  # (the string's own closing quote)
            return part, at + used, stop
        if part and "\ud800" <= part[-1] <= "\udbff" and s.startswith("\\u", stop):
            stop -= 6  # (a surrogate pair cut in two: end before its first half)
            continue
        return part, None, stop
    raise error or json.JSONDecodeError("Invalid string", s, at)


_scanstring: Callable[[str, int, bool], tuple[str, int]] = getattr(json.decoder, "scanstring")  # noqa: B009 (not in the stubs)

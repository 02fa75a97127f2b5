"""Strategy: read DeepSeek native tool calls leniently, for ``callsieve.deepseek`` (SPEC §11).

What it does: finds the markers with the ``deepseek_native`` grammar's own patterns (every
alias spelling of SPEC §3 counts), then reads each call as the grammar lays it out: the
call-begin marker, ``function`` and the name on its line before a ```` ```json ```` fence
(V3), or the name itself (V3.1); then the JSON arguments, fenced or bare. Unlike
``parse()``, a call counts as soon as its name and its JSON are complete, before any end
marker arrives (the closing fence for a fenced JSON, the closing brace for a bare one).
What it guarantees: no function here raises on any ``str``, except ``parse_argument_object``,
whose job is to say why text is not an object (a ``FormatError`` with the offset);
``try_parse_calls`` turns that, and every other failure, into a reason.
What it costs: a few regex matches per call and one JSON decode of its arguments: linear.
"""

from __future__ import annotations

import json
from typing import Any

from .._base.errors import FormatError
from .._base.events import ToolCall, _Value, value
from .._base.values import load_json
from .._config.options import new_call_id
from .._grammar.names import SPELLINGS
from .._grammar.spelling import spelling

__all__ = [
    "SPELL",
    "NativeCalls",
    "has_call_terminator",
    "has_tool_call_signal",
    "parse_argument_object",
    "try_extract_tool_name",
    "try_parse_calls",
]

#: The dialect's checked spellings and, through them, its parser terminals.
SPELL = spelling("deepseek_native")
DIALECT = SPELL.dialect
_CALLS_BEGIN = SPELL.terminal(SPELLINGS.NATIVE_CALLS_BEGIN)
_CALLS_END = SPELL.terminal(SPELLINGS.NATIVE_CALLS_END)
_CALL_BEGIN = SPELL.terminal(SPELLINGS.NATIVE_CALL_BEGIN)
_CALL_END = SPELL.terminal(SPELLINGS.NATIVE_CALL_END)
_SEP = SPELL.terminal(SPELLINGS.NATIVE_SEP)
_HEAD = SPELL.terminal(SPELLINGS.NATIVE_HEAD)
_NAME_LINE = SPELL.terminal(SPELLINGS.NATIVE_NAME_LINE)
_FENCE_OPEN = SPELL.terminal(SPELLINGS.NATIVE_FENCE_OPEN)
_FUNCTION = SPELL[SPELLINGS.NATIVE_HEAD]
_FENCE = SPELL[SPELLINGS.NATIVE_FENCE_END].strip()
_FENCE_LINE = SPELL[SPELLINGS.NATIVE_FENCE_OPEN]
_DECODER = json.JSONDecoder()


@value
class NativeCalls(_Value):
    """What ``try_parse_calls`` read: ``calls`` (complete calls, in order) and ``reason``
    (``""`` when calls were read, else why none could be); ``end`` is the offset just past
    the last call read (and the block's calls-end marker, if it follows). True when it holds
    calls."""

    __hash__ = None  # type: ignore[assignment]  # (its calls are unhashable, ``ToolCall``)
    __slots__ = ("_calls", "_reason", "_end")
    calls: tuple[ToolCall, ...]
    reason: str
    end: int

    def __init__(self, calls: tuple[ToolCall, ...], reason: str = "", end: int = 0) -> None:
        self._calls = calls
        self._reason = reason
        self._end = end

    def __bool__(self) -> bool:
        return bool(self.calls)


def has_tool_call_signal(text: str) -> bool:
    """Does ``text`` hold the start of a native call (a calls-begin or call-begin marker, in
    any spelling the grammar accepts)?

    >>> has_tool_call_signal("Sure.<|tool_calls_begin|>")
    True
    """
    return isinstance(text, str) and bool(_CALLS_BEGIN.search(text) or _CALL_BEGIN.search(text))


def has_call_terminator(text: str) -> bool:
    """Does ``text`` hold a call-end or calls-end marker (any spelling the grammar accepts)?

    >>> has_call_terminator("…```<｜tool▁call▁end｜>")
    True
    """
    return isinstance(text, str) and bool(_CALL_END.search(text) or _CALLS_END.search(text))


def _value(m: Any) -> str:
    q = m.group("q")
    return str(q if q is not None else m.group("v")).strip()


def _name_at(text: str, begin: int) -> tuple[str, int, bool] | None:
    """After a call-begin marker ending at ``begin``: (name, where the arguments start,
    fenced?), or None while the name is not complete."""
    head = _HEAD.match(text, begin)
    if head is None:
        return None
    sep = _SEP.match(text, head.end())
    if sep is None:
        return None
    name = _value(head)
    if name == _FUNCTION:  # V3: the name on its own line, then the fence
        line = _NAME_LINE.match(text, sep.end())
        return None if line is None else (_value(line), line.end(), True)
    fence = _FENCE_OPEN.match(text, sep.end())  # V3.1: fenced or bare JSON
    return (name, fence.end(), True) if fence is not None else (name, sep.end(), False)


def _ended_name(text: str, begin: int) -> str | None:
    """After a call-begin marker ending at ``begin``, the V3 name whose line has ended (a
    line break after it) though the fence has not arrived yet: read as the grammar reads
    the name line with the fence the header writes (``NATIVE_FENCE_OPEN``'s spelling)."""
    head = _HEAD.match(text, begin)
    sep = _SEP.match(text, head.end()) if head is not None else None
    if sep is None or _value(head) != _FUNCTION:
        return None
    nl = text.find("\n", sep.end())
    if nl < 0:
        return None
    line = _NAME_LINE.fullmatch(text[sep.end() : nl + 1] + _FENCE_LINE)
    return _value(line) if line is not None else None


def try_extract_tool_name(text: str) -> tuple[str, str] | None:
    """The name of the first call in ``text`` and ``after_marker``, the text after its
    call-begin marker (what the model has written of the header: a caller writes only what
    it lacks, ``deepseek.format_call_header(name)[len(after_marker):]`` when the header
    starts with it), or None while no name is complete: for V3, until the line break after
    the name (or the fence) has arrived; for V3.1, until the separator after it.

    >>> try_extract_tool_name("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n")
    ('get_weather', 'function<｜tool▁sep｜>get_weather\\n')
    >>> try_extract_tool_name("<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_wea") is None
    True
    """
    if not isinstance(text, str):
        return None
    m = _CALL_BEGIN.search(text)
    if m is None:
        return None
    found = _name_at(text, m.end())
    name = found[0] if found is not None else _ended_name(text, m.end())
    return (name, text[m.end() :]) if name else None


def _arguments(text: str, start: int, fenced: bool) -> tuple[str, int] | None:
    """The JSON text of a call's arguments and where it ends, or None while incomplete."""
    if fenced:
        close = text.find(_FENCE, start)
        return None if close < 0 else (text[start:close], close + len(_FENCE))
    p = start
    while p < len(text) and text[p].isspace():
        p += 1
    if p == len(text):
        return None
    try:
        _, end = _DECODER.raw_decode(text, p)
    except (json.JSONDecodeError, RecursionError):
        close = _CALL_END.search(text, p)  # the call is over: its JSON is malformed
        return None if close is None else (text[p : close.start()], close.start())
    return text[p:end], end


def try_parse_calls(text: str) -> NativeCalls:
    """Every complete call in ``text``, in order (of every block, and of calls whose block
    opener was lost), leniently: a call counts once its name and its JSON arguments are
    complete, whether or not the end markers have arrived. No call read gives the reason;
    a call that is complete but broken (malformed JSON, arguments not an object, an empty
    name) gives a reason and no calls, as such a block fails in ``parse()``; never an
    exception.

    >>> try_parse_calls('<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": [1, 2]}').calls[0].input
    {'a': [1, 2]}
    >>> try_parse_calls('<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1,]}<｜tool▁call▁end｜>').reason
    'call 1 (f): arguments are not a JSON object: Expecting property name enclosed in double quotes at offset 8'
    """
    if not isinstance(text, str):
        return NativeCalls((), f"not a str: {type(text).__name__}")
    calls: list[ToolCall] = []
    p = end = 0
    while True:
        m = _CALL_BEGIN.search(text, p)
        if m is None:
            break
        found = _name_at(text, m.end())
        if found is None:
            if not calls:
                return NativeCalls((), "the name of the first call is not complete")
            break
        name, start, fenced = found
        if not name:
            return NativeCalls((), f"call {len(calls) + 1} has an empty name")
        args = _arguments(text, start, fenced)
        if args is None:
            if not calls:
                return NativeCalls((), f"the arguments of call 1 ({name}) are not complete")
            break
        try:
            value = parse_argument_object(args[0])
        except FormatError as exc:
            return NativeCalls((), f"call {len(calls) + 1} ({name}): {exc}")
        calls.append(ToolCall(name, value, new_call_id(), DIALECT))
        end = p = args[1]
        while p < len(text) and text[p].isspace():
            p += 1
        close = _CALL_END.match(text, p)
        p = end = close.end() if close is not None else end
    if not calls:
        return NativeCalls(
            (),
            "no tool call marker"
            if not has_tool_call_signal(text)
            else "no call begins after the calls-begin marker",
        )
    after = _CALLS_END.match(text, len(text) - len(text[end:].lstrip()))
    return NativeCalls(tuple(calls), "", after.end() if after is not None else end)


def parse_argument_object(text: str) -> dict[str, Any]:
    """A call's arguments: a JSON object, bare or in a ```` ```json ```` fence; empty text
    is ``{}``. Anything else is a ``FormatError`` saying why, with the offset in ``text``.

    >>> parse_argument_object('```json\\n{"city": "SF"}\\n```')
    {'city': 'SF'}
    """
    if not isinstance(text, str):
        raise FormatError(f"arguments must be a str, not {type(text).__name__}")
    body, base = text, 0
    fence = _FENCE_OPEN.match(body.lstrip())
    if fence is not None:
        base = len(body) - len(body.lstrip()) + fence.end()
        body = body.lstrip()[fence.end() :]
        close = body.rfind(_FENCE)
        body = body[:close] if close >= 0 else body
    stripped = body.strip()
    if not stripped:
        return {}
    base += len(body) - len(body.lstrip())
    try:
        value = load_json(stripped)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"arguments are not a JSON object: {exc.msg} at offset {base + exc.pos}",
            offset=base + exc.pos,
            expected=("a JSON object",),
        ) from None
    except (ValueError, RecursionError) as exc:
        raise FormatError(
            f"arguments are not a JSON object: {exc}", offset=base, expected=("a JSON object",)
        ) from None
    if not isinstance(value, dict):
        raise FormatError(
            f"arguments are not a JSON object but a {type(value).__name__}",
            offset=base,
            expected=("a JSON object",),
        )
    return value

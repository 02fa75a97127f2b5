"""Strategy: DeepSeek's native tool-call protocol (V3/R1 special tokens), both directions
(SPEC §11): the markers as constants, the writers of calls and results, and a lenient reader.

What it does: every marker is read from the grammar when this module is imported — the
parser's own terminals (``<｜tool▁calls▁begin｜>`` …) and the chat template's tokens
(``<｜User｜>``, ``<｜tool▁outputs▁begin｜>`` …) from ``grammar/spelling/deepseek_native.lark``,
each parser marker checked against the ``deepseek_native`` terminal it spells
(``_grammar.spelling``). Writers: ``format_call_header`` (what the framework writes after the
model's call-begin marker), ``format_call_prefix``, ``format_arguments``, ``format_call_tail``,
``format_calls``, ``format_result``, ``format_results``. Readers: ``has_tool_call_signal``,
``has_call_terminator``, ``try_extract_tool_name``, ``try_parse_calls``,
``parse_argument_object`` (in ``_blocks.native_read``; they find markers with the grammar's
patterns, so every alias spelling of SPEC §3 counts).

>>> print(format_calls([("get_weather", {"city": "Hangzhou"})]))
<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
```json
{"city": "Hangzhou"}
```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
>>> try_parse_calls(format_calls([("get_weather", {"city": "Hangzhou"})])).calls[0].input
{'city': 'Hangzhou'}

What it guarantees: what the writers produce, ``parse()``, ``Sieve`` and ``try_parse_calls``
read back as the same calls, whatever the argument values hold (a run of backticks inside a
JSON string, which would end the fence, is written as ``\\u0060`` escapes: the same JSON
value). The readers never raise on any ``str``: malformed JSON is a failure reason.
What it costs: importing reads one small file and loads the ``deepseek_native`` grammar
(cached); each function is linear in its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._base.errors import FormatError
from ._base.events import ToolCall
from ._base.values import escape_del
from ._blocks.native_read import SPELL as _SP
from ._blocks.native_read import (
    NativeCalls,
    has_call_terminator,
    has_tool_call_signal,
    parse_argument_object,
    try_extract_tool_name,
    try_parse_calls,
)
from ._grammar.names import SPELLINGS

__all__ = [
    "ALL_MARKERS",
    "ASSISTANT",
    "BEGIN_OF_SENTENCE",
    "END_OF_SENTENCE",
    "FUNCTION",
    "JSON_FENCE",
    "JSON_FENCE_END",
    "TOOL_CALLS_BEGIN",
    "TOOL_CALLS_END",
    "TOOL_CALL_BEGIN",
    "TOOL_CALL_END",
    "TOOL_OUTPUTS_BEGIN",
    "TOOL_OUTPUTS_END",
    "TOOL_OUTPUT_BEGIN",
    "TOOL_OUTPUT_END",
    "TOOL_SEP",
    "USER",
    "NativeCalls",
    "format_arguments",
    "format_block",
    "format_call_header",
    "format_call_prefix",
    "format_call_tail",
    "format_calls",
    "format_result",
    "format_results",
    "has_call_terminator",
    "has_tool_call_signal",
    "parse_argument_object",
    "try_extract_tool_name",
    "try_parse_calls",
]

#: ``<｜tool▁calls▁begin｜>``: opens the block of calls.
TOOL_CALLS_BEGIN: str = _SP[SPELLINGS.NATIVE_CALLS_BEGIN]
#: ``<｜tool▁calls▁end｜>``: closes the block.
TOOL_CALLS_END: str = _SP[SPELLINGS.NATIVE_CALLS_END]
#: ``<｜tool▁call▁begin｜>``: opens one call.
TOOL_CALL_BEGIN: str = _SP[SPELLINGS.NATIVE_CALL_BEGIN]
#: ``<｜tool▁call▁end｜>``: closes one call.
TOOL_CALL_END: str = _SP[SPELLINGS.NATIVE_CALL_END]
#: ``<｜tool▁sep｜>``: between the call's type (``function``) or name and what follows.
TOOL_SEP: str = _SP[SPELLINGS.NATIVE_SEP]
#: ``function``: the call type V3 writes before the separator.
FUNCTION: str = _SP[SPELLINGS.NATIVE_HEAD]
#: The opening ``json`` fence of the arguments, with its line break: ````` ```json\\n `````.
JSON_FENCE: str = _SP[SPELLINGS.NATIVE_FENCE_OPEN]
#: The closing fence, with the line break before it: ````` \\n``` `````.
JSON_FENCE_END: str = _SP[SPELLINGS.NATIVE_FENCE_END]
#: ``<｜begin▁of▁sentence｜>`` (BOS) and ``<｜end▁of▁sentence｜>`` (EOS).
BEGIN_OF_SENTENCE: str = _SP[SPELLINGS.BEGIN_OF_SENTENCE]
END_OF_SENTENCE: str = _SP[SPELLINGS.END_OF_SENTENCE]
#: ``<｜User｜>`` and ``<｜Assistant｜>``: the turns of the chat template.
USER: str = _SP[SPELLINGS.USER]
ASSISTANT: str = _SP[SPELLINGS.ASSISTANT]
#: ``<｜tool▁outputs▁begin｜>`` … ``<｜tool▁outputs▁end｜>``: the tool results of a turn.
TOOL_OUTPUTS_BEGIN: str = _SP[SPELLINGS.TOOL_OUTPUTS_BEGIN]
TOOL_OUTPUTS_END: str = _SP[SPELLINGS.TOOL_OUTPUTS_END]
#: ``<｜tool▁output▁begin｜>`` … ``<｜tool▁output▁end｜>``: one result.
TOOL_OUTPUT_BEGIN: str = _SP[SPELLINGS.TOOL_OUTPUT_BEGIN]
TOOL_OUTPUT_END: str = _SP[SPELLINGS.TOOL_OUTPUT_END]
#: Every special-token marker above (not ``FUNCTION`` or the fences, which are plain text).
ALL_MARKERS: tuple[str, ...] = (
    BEGIN_OF_SENTENCE,
    END_OF_SENTENCE,
    USER,
    ASSISTANT,
    TOOL_CALLS_BEGIN,
    TOOL_CALLS_END,
    TOOL_CALL_BEGIN,
    TOOL_CALL_END,
    TOOL_SEP,
    TOOL_OUTPUTS_BEGIN,
    TOOL_OUTPUTS_END,
    TOOL_OUTPUT_BEGIN,
    TOOL_OUTPUT_END,
)

_CALL_SEP = _SP.get(SPELLINGS.CALL_SEP)
_RESULT_SEP = _SP.get(SPELLINGS.RESULT_SEP)
_FENCE = JSON_FENCE_END.strip()  # the closing fence itself
#: A run of the fence's character as long as the fence: it would end the JSON run.
_FENCE_RUN = re.compile(re.escape(_FENCE[:1]) + "{" + str(len(_FENCE)) + ",}") if _FENCE else None
_NAME_LINE = _SP.terminal(SPELLINGS.NATIVE_NAME_LINE)


def format_call_header(name: str) -> str:
    """What the framework writes of a call's header once the model has named the tool
    (SPEC §11): ``function``, the separator, the name on its line and the opening fence —
    neither the calls-begin nor the call-begin marker, which the model writes as its signal
    (``try_extract_tool_name``'s ``after_marker`` is how much of this the model has already
    written). ``format_call_prefix`` is the whole prefix of a call. A name the grammar
    cannot read back is a ``FormatError``.

    >>> format_call_header("get_weather")
    'function<｜tool▁sep｜>get_weather\\n```json\\n'
    """
    line = _SP.fill(SPELLINGS.NATIVE_NAME_LINE, name)
    m = _NAME_LINE.fullmatch(line) if isinstance(name, str) else None
    if m is None or (m.group("q") if m.group("q") is not None else m.group("v")) != name:
        raise FormatError(
            f"tool name {name!r} cannot be written in deepseek_native",
            expected=(
                (
                    "a name of 1-256 characters without white space, "
                    "quotes, brackets, braces, backticks or angle brackets"
                ),
            ),
        )
    return FUNCTION + TOOL_SEP + line


def format_call_prefix(name: str) -> str:
    """Everything of one call before its JSON arguments: the call-begin marker and the
    header (``format_call_header``); not the block's calls-begin marker.

    >>> format_call_prefix("get_weather")
    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n```json\\n'
    """
    return TOOL_CALL_BEGIN + format_call_header(name)


def format_arguments(arguments: Mapping[str, Any]) -> str:
    """The arguments as the JSON between the fences (``json.dumps``, non-ASCII kept, as the
    chat template writes them); a run of backticks that would end the fence is written as
    ``\\u0060`` escapes. Not JSON-serialisable (or NaN, infinity) is a ``FormatError``.

    >>> format_arguments({"q": "```x```", "n": 1})
    '{"q": "\\\\u0060\\\\u0060\\\\u0060x\\\\u0060\\\\u0060\\\\u0060", "n": 1}'
    """
    if not isinstance(arguments, Mapping):
        raise FormatError(
            f"arguments must be a JSON object, not {type(arguments).__name__}", expected=("a dict",)
        )
    try:
        text = json.dumps(dict(arguments), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"arguments are not JSON: {exc}", expected=("JSON values",)) from None
    if _FENCE_RUN is not None:
        text = _FENCE_RUN.sub(lambda m: f"\\u{ord(_FENCE[0]):04x}" * len(m.group()), text)
    return escape_del(text)


def format_call_tail(last: bool = True) -> str:
    """What follows a call's JSON: the closing fence and the call-end marker, then the
    block's calls-end marker if ``last``, else the line break before the next call.

    >>> format_call_tail(True)
    '\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    """
    return JSON_FENCE_END + TOOL_CALL_END + (TOOL_CALLS_END if last else _CALL_SEP)


def _name_input(call: Any) -> tuple[str, Mapping[str, Any]]:
    if isinstance(call, ToolCall):
        return call.name, call.input
    if isinstance(call, tuple) and len(call) == 2:
        return call[0], call[1]
    raise FormatError(
        f"a call is a ToolCall or a (name, input) pair, not {type(call).__name__}",
        expected=("ToolCall", "(name, input)"),
    )


def format_calls(calls: Iterable[ToolCall | tuple[str, Mapping[str, Any]]]) -> str:
    """A whole block: ``TOOL_CALLS_BEGIN``, each call (header, arguments, tail), the last
    one closing the block; ``""`` for no calls. (``callsieve.prompt.format_calls`` takes
    every message shape too.)

    >>> text = format_calls([("f", {"a": 1}), ToolCall("g", {})])
    >>> text.count(TOOL_CALL_BEGIN), text.endswith(TOOL_CALLS_END)
    (2, True)
    """
    return format_block([(name, format_arguments(args)) for name, args in map(_name_input, calls)])


def format_block(written: Sequence[tuple[str, str]]) -> str:
    """A whole block of calls whose arguments are already JSON text: ``(name, text)`` pairs.
    ``format_calls`` writes the text with ``format_arguments``; a caller may change it first.

    >>> format_block([("f", "{}")]).endswith(JSON_FENCE_END + TOOL_CALL_END + TOOL_CALLS_END)
    True
    """
    if not written:
        return ""
    out = [TOOL_CALLS_BEGIN]
    for k, (name, text) in enumerate(written):
        out += [format_call_prefix(name), text, format_call_tail(k == len(written) - 1)]
    return "".join(out)


def format_result(text: str) -> str:
    """One tool result: ``<｜tool▁output▁begin｜>text<｜tool▁output▁end｜>`` (the text as
    it is: the template does not escape it).

    >>> format_result("22°C")
    '<｜tool▁output▁begin｜>22°C<｜tool▁output▁end｜>'
    """
    return TOOL_OUTPUT_BEGIN + text + TOOL_OUTPUT_END


def format_results(texts: Iterable[str]) -> str:
    """The results of one turn, in order, inside ``TOOL_OUTPUTS_BEGIN`` …
    ``TOOL_OUTPUTS_END``, one line each (DeepSeek-V3's chat template); ``""`` for none.

    >>> format_results(["a", "b"]).count(TOOL_OUTPUT_BEGIN)
    2
    """
    parts = [format_result(t) for t in texts]
    return TOOL_OUTPUTS_BEGIN + _RESULT_SEP.join(parts) + TOOL_OUTPUTS_END if parts else ""

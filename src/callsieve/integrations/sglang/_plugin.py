"""Strategy: callsieve as SGLang's tool-call detector and reasoning detector, one class of
each per variant row, as SGLang's chat serving drives them.

What it does: ``CallsieveDetector`` is a ``BaseFormatDetector``: ``FunctionCallParser``
calls ``detect_and_parse`` for a whole reply, ``parse_streaming_increment`` per chunk and
``finish`` at the end. Each reply is read by one ``Sieve`` over the variant's dialects and
the request's tools: text is ``normal_text``, a call is ``ToolCallItem``s (its name first,
then each argument fragment, ``tool_index`` the call's number in the reply), and a thought
the reasoning detector did not take stays text with its tags (calls drafted in it are not
made). A call that began streaming and then is not made raises ``CallAbortedError`` (a
``ValueError``): SGLang's streaming chat ends the stream with its error event (SPEC §17).
``CallsieveReasoningDetector`` is a ``BaseReasoningFormatDetector``: its sieve splits the
thought from the answer (SGLang's ``force_reasoning``, or the request's thinking switch, says
whether the reply starts inside the thought) and passes every block on as text for the tool
detector. Its thought markers, which SGLang's scheduler asks for as token ids, are the
tokenizer's added tokens the grammar reads as ``<think>`` / ``</think>``.
``supports_structural_tag()`` is false: SGLang constrains a required or named
``tool_choice`` with its own JSON-array schema and parser, not with these detectors.
What it guarantees: importing it needs SGLang; ``install()`` adds the names once, beside
SGLang's own (every name starts with ``callsieve``).
What it costs: per chunk, one ``Sieve.feed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from sglang.srt.function_call import function_call_parser, parser_names
from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.parser import reasoning_parser, reasoning_parser_names
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

from ... import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallsieveError,
    CallStarted,
    Event,
    Reasoning,
    Sieve,
    Text,
    ToolCalls,
    parse,
)
from ..vllm._request import think_ids
from ..vllm._variants import VARIANTS, Variant, active_variants, reasoning_setting
from ._options import operator_options

__all__ = ["CallAbortedError", "CallsieveDetector", "CallsieveReasoningDetector", "install"]


class CallAbortedError(CallsieveError, ValueError):
    """A call began streaming and then was not made; SGLang ends the stream with its error
    event on a ``ValueError``."""


def _tool_dicts(tools: Iterable[Any] | None) -> list[Any] | None:
    out = [t.model_dump(exclude_none=True) if hasattr(t, "model_dump") else t for t in tools or []]
    return out or None


class CallsieveDetector(BaseFormatDetector):  # type: ignore[misc,unused-ignore]
    """SGLang's tool-call detector for one variant row (see the module docstring)."""

    variant: ClassVar[Variant] = VARIANTS[0]

    def __init__(self) -> None:
        super().__init__()
        self._sieve: Sieve | None = None
        self._closed = False
        self._names: dict[int, str] = {}

    def _options(self, tools: Iterable[Any] | None) -> dict[str, Any]:
        return {
            "dialects": self.variant.dialects,
            "reasoning": "tags",
            "early_emit": "arguments",
            **operator_options(),
            "tools": _tool_dicts(tools),
        }

    # ------------------------------------------------------------ whole replies
    def has_tool_call(self, text: str) -> bool:
        return bool(parse(text, dialects=self.variant.dialects, reasoning="tags").blocks)

    def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
        options = self._options(tools)
        options["early_emit"] = "block"
        sieve = Sieve(**options)
        position = {name: i for i, name in enumerate(_names(tools))}
        normal: list[str] = []
        calls: list[Any] = []
        for e in sieve.feed(text) + sieve.close():
            if isinstance(e, Text):
                normal.append(e.text)
            elif isinstance(e, Reasoning):
                normal.append(e.source)  # (no reasoning detector took it: it stays text)
            elif isinstance(e, ToolCalls):
                calls += [
                    ToolCallItem(
                        tool_index=position.get(c.name, -1), name=c.name, parameters=c.arguments
                    )
                    for c in e.calls
                ]
        return StreamingParseResult(normal_text="".join(normal), calls=calls)

    # ------------------------------------------------------------ streams
    def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
        if self._sieve is None:
            self._sieve = Sieve(**self._options(tools))
        return self._render(self._sieve.feed(new_text) if new_text else [])

    def finish(self, tools: list[Any]) -> Any:
        if self._sieve is None or self._closed:
            return StreamingParseResult()
        self._closed = True
        return self._render(self._sieve.close())

    def _render(self, events: list[Event]) -> Any:
        text: list[str] = []
        calls: list[Any] = []
        for e in events:
            if isinstance(e, Text):
                text.append(e.text)
            elif isinstance(e, Reasoning):
                text.append(e.source)  # (no reasoning detector took it: it stays text)
            elif isinstance(e, CallStarted):
                self._names[e.index] = e.name
                self.current_tool_id = e.index
                self.streamed_args_for_tool.append("")
                calls.append(ToolCallItem(tool_index=e.index, name=e.name, parameters=""))
            elif isinstance(e, ArgumentsDelta):
                self.streamed_args_for_tool[e.index] += e.delta
                calls.append(ToolCallItem(tool_index=e.index, name=None, parameters=e.delta))
            elif isinstance(e, CallFinished):
                self.prev_tool_call_arr.append(
                    {
                        "name": self._names[e.index],
                        "arguments": self.streamed_args_for_tool[e.index],
                    }
                )
            elif isinstance(e, CallAborted):
                name = self._names.get(e.index, "?")
                raise CallAbortedError(
                    f"tool call {e.index} ({name}) began streaming and was not made: {e.reason}"
                )
        return StreamingParseResult(normal_text="".join(text), calls=calls)

    # ------------------------------------------------------------ constraints
    def supports_structural_tag(self) -> bool:
        return False

    def structure_info(self) -> Any:
        raise NotImplementedError(
            "callsieve's formats are constrained by its own grammars (callsieve.constrain)"
        )


def _names(tools: Iterable[Any] | None) -> list[str]:
    out = []
    for tool in _tool_dicts(tools) or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        out.append((fn or tool).get("name", "") if isinstance(tool, dict) else "")
    return out


class CallsieveReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc,unused-ignore]
    """SGLang's reasoning detector for one variant row (see the module docstring)."""

    variant: ClassVar[Variant] = VARIANTS[0]

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        tokenizer: Any = None,
        **_: Any,
    ) -> None:
        self._ids = think_ids(tokenizer) if tokenizer is not None else None
        marks = self._ids
        super().__init__(
            (marks.open_text if marks else None) or "",
            (marks.close_text if marks else None) or "",
            stream_reasoning=stream_reasoning,
        )
        if force_reasoning is None:
            self._reasoning = reasoning_setting(self.variant, None)
        elif force_reasoning and self.variant.template_opens_thought:
            self._reasoning = "open"
        else:
            self._reasoning = "tags"
        self._sieve: Sieve | None = None
        self._closed = False
        self._held: list[str] = []  # the thought, when it is not streamed

    def get_think_end_token_ids(self, tokenizer: Any) -> list[int]:
        return sorted(think_ids(tokenizer).closes)

    def get_self_opened_think_start_token_ids(self, tokenizer: Any) -> list[int] | None:
        return sorted(think_ids(tokenizer).opens) or None

    def _new_sieve(self) -> Sieve:
        options = {"dialects": self.variant.dialects, **operator_options()}
        options.update(reasoning=self._reasoning, early_emit="block")
        options.pop("policy", None)
        return Sieve(**options)

    def detect_and_parse(self, text: str) -> Any:
        sieve = self._new_sieve()
        return self._render(sieve.feed(text) + sieve.close(), final=True)

    def parse_streaming_increment(self, new_text: str) -> Any:
        if self._sieve is None:
            self._sieve = self._new_sieve()
        return self._render(self._sieve.feed(new_text) if new_text else [], final=False)

    def finish(self) -> Any:
        if self._sieve is None or self._closed:
            return ReasoningResult()
        self._closed = True
        return self._render(self._sieve.close(), final=True)

    def _render(self, events: list[Event], *, final: bool) -> Any:
        answer: list[str] = []
        for e in events:
            if isinstance(e, Text):
                answer.append(e.text)
            elif isinstance(e, Reasoning):
                self._held.append(e.text)
            elif isinstance(e, ToolCalls):
                answer.append(e.block.raw)  # (the tool detector reads it)
        thought = ""
        if self.stream_reasoning or final or answer:
            thought = "".join(self._held)
            self._held.clear()
        return ReasoningResult(normal_text="".join(answer), reasoning_text=thought)


def _subclass(base: type, variant: Variant, role: str) -> type:
    return type(
        f"{variant.class_stem}{role}",
        (base,),
        {"variant": variant, "__module__": __name__, "__doc__": base.__doc__},
    )


def detector_classes() -> dict[str, tuple[type, type]]:
    """Each active variant's name: its (tool detector, reasoning detector) classes."""
    out: dict[str, tuple[type, type]] = {}
    for v in active_variants():
        if v is VARIANTS[0]:
            out[v.name] = (CallsieveDetector, CallsieveReasoningDetector)
        else:
            out[v.name] = (
                _subclass(CallsieveDetector, v, "Detector"),
                _subclass(CallsieveReasoningDetector, v, "ReasoningDetector"),
            )
    return out


_CLASSES = detector_classes()


def install() -> None:
    """Add the names to SGLang's two registries and their CLI name lists (idempotent)."""
    tools = function_call_parser.FunctionCallParser.ToolCallParserEnum
    thoughts = reasoning_parser.ReasoningParser.DetectorMap
    for name, (tool, thought) in _CLASSES.items():
        tools.setdefault(name, tool)
        thoughts.setdefault(name, thought)
        for names in (parser_names.TOOL_CALL_PARSER_NAMES,
                      reasoning_parser_names.REASONING_PARSER_NAMES):  # fmt: skip
            if name not in names:
                names.append(name)

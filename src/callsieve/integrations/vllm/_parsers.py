"""Strategy: callsieve as vLLM's tool parser and reasoning parser, one class of each per
variant row, both reading a request's reply with one ``Sieve``.

What it does: ``CallsieveToolParser`` and ``CallsieveReasoningParser`` implement vLLM's
``ToolParser`` and ``ReasoningParser`` as its serving layer drives them (``DelegatingParser``:
``parse_delta`` per chunk, ``parse`` for a whole reply). Both are engine-based
(``engine_based_streaming``): vLLM hands them each chunk, never the accumulated text, and
asks them whether reasoning ended (``has_engine_confirmed_reasoning_end``) and for what they
hold at the end (``finish_streaming``). When both are ours (``RequestState.paired``) the
reasoning parser steps aside at the first chunk — it passes the text on and confirms the end
— and the tool parser's sieve reads reasoning, text and calls in one pass, its
``DeltaMessage`` carrying all three; for a whole reply the reasoning parser, which is asked
first and is given the request, reads it once and leaves the result for the tool parser.
Each also works beside another vendor's parser: the reasoning parser alone splits the thought
and passes the answer on as the model wrote it; the tool parser alone reads the answer it is
given (with no reasoning parser configured at all, a thought's characters are content, as vLLM
does, while a call drafted inside it is still not made). ``tool_choice="none"`` leaves blocks
as text; ``required`` and named choices are read like ``auto`` (our formats are not JSON, so
vLLM's JSON-schema forcing is off: ``supports_required_and_named=False``), and enforced by
the constraint ``adjust_request`` gives vLLM (``_constrain``: callsieve's own grammar). The token-id
questions vLLM's engine asks (``is_reasoning_end``, ``count_reasoning_tokens``, ...) are
answered from the tokenizer's thought markers. A variant is a subclass per row of
``VARIANTS``, named from it (``callsieve_deepseek_r1`` -> ``CallsieveDeepseekR1ToolParser``).
What it guarantees: importing this module checks the vLLM release first and raises
``IncompatibleVllmError`` with the supported range instead of failing somewhere inside vLLM.
What it costs: per chunk, one ``Sieve.feed`` and at most one ``DeltaMessage``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from ... import Sieve
from ._constrain import enforce
from ._contract import IncompatibleVllmError, check_vllm, operator_options
from ._request import (
    RequestState,
    claim,
    offer,
    prompt_marker,
    sieve_options,
    think_ids,
    with_grammar_dirs,
)
from ._variants import VARIANTS, Variant, active_variants, reasoning_setting, resolved

check_vllm()
try:
    from vllm.entrypoints.generate.base.protocol import (
        ExtractedToolCallInformation,
        FunctionCall,
        ToolCall,
    )
    from vllm.reasoning import ReasoningParser
    from vllm.renderers.chat_utils import make_tool_call_id
    from vllm.tool_parsers import ToolParser

    from ._deltas import ReplyStream, message, whole_reply
except ImportError as exc:  # (a module vLLM moved: its version said it would be there)
    raise IncompatibleVllmError(f"callsieve's vLLM plugin cannot load: {exc}") from exc

__all__ = ["CallsieveReasoningParser", "CallsieveToolParser", "parser_classes"]


def _calls(request: Any) -> bool:
    return getattr(request, "tool_choice", None) != "none"


class CallsieveToolParser(ToolParser):  # type: ignore[misc]
    variant: ClassVar[Variant] = VARIANTS[0]
    supports_required_and_named = False
    engine_based_streaming = True
    #: vLLM sets it on the instance when no reasoning parser is configured.
    skip_reasoning_parsing = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self._variant = resolved(self.variant)  # (callsieve_auto: from the model's folder)
        self._state = claim(tokenizer) or RequestState(tokenizer)
        self._state.tool_variant = self._variant
        self._state.has_tool_side = True
        self._stream: ReplyStream | None = None

    def _reading(self) -> tuple[str, bool]:
        """The reasoning setting, and whether reasoning goes out as content."""
        if self._state.paired:
            return self._state.reasoning(), False
        if self.skip_reasoning_parsing:  # no reasoning parser: a thought's markup is content
            return reasoning_setting(self._variant, None), True
        return "tags", False  # another reasoning parser took the thought: this is the answer

    def _sieve(self, request: Any, *, whole: bool) -> tuple[Sieve, dict[str, Any], bool]:
        reasoning, as_content = self._reading()
        options = sieve_options(
            self._state,
            request,
            reasoning=reasoning,
            calls=_calls(request),
            id_factory=make_tool_call_id,
        )
        if whole:
            options["early_emit"] = "block"
        return Sieve(**options), options, as_content

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        stream = self._stream
        if stream is None:
            sieve, options, as_content = self._sieve(request, whole=False)
            stream = self._stream = ReplyStream(
                sieve,
                calls=_calls(request),
                reasoning_as_content=as_content,
                streams_arguments=options["early_emit"] == "arguments",
            )
        return stream.feed(delta_text)

    def adjust_request(self, request: Any) -> Any:
        """vLLM asks this once per request, before generating: the request gets the
        constraint that makes a forced ``tool_choice`` hold (``_constrain``)."""
        return enforce(self._state, request, starts_in_thought=self._reading()[0] == "open")

    def finish_streaming(self) -> Any:
        return None if self._stream is None else self._stream.close()

    def get_remaining_unstreamed_args(self) -> str:
        return ""  # every fragment went out with the chunk that decided it

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        left = self._state.whole
        self._state.whole = None
        if left is not None and left[0] == model_output:
            reply = left[1]
        else:
            sieve, _, as_content = self._sieve(request, whole=True)
            reply = whole_reply(
                sieve, model_output, calls=_calls(request), reasoning_as_content=as_content
            )
        calls = [
            ToolCall(
                id=c.id,
                type="function",
                function=FunctionCall(id=c.id, name=c.name, arguments=c.arguments),
            )
            for c in reply.calls
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=reply.content or None
        )


class CallsieveReasoningParser(ReasoningParser):  # type: ignore[misc]
    variant: ClassVar[Variant] = VARIANTS[0]
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._variant = resolved(self.variant)
        self._state = RequestState(
            tokenizer,
            reasoning_variant=self._variant,
            has_reasoning_side=True,
            chat_template_kwargs=dict(kwargs.get("chat_template_kwargs") or {}),
        )
        offer(self._state)
        self._ids = think_ids(tokenizer)
        self._stream: ReplyStream | None = None  # (alone: the thought's own sieve)
        self._ended = False

    # ------------------------------------------------------------ token ids (the engine's)
    @property
    def reasoning_start_str(self) -> str | None:
        return self._ids.open_text

    @property
    def reasoning_end_str(self) -> str | None:
        return self._ids.close_text

    def _off(self) -> bool:
        return operator_options().get("reasoning") == "off"

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        if self._off() or not self._ids.closes:
            return True  # nothing the engine could wait for
        return prompt_marker(self._ids, input_ids) == "close"

    def is_reasoning_end_streaming(
        self, input_ids: Sequence[int], delta_ids: Iterable[int]
    ) -> bool:
        return self._off() or any(i in self._ids.closes for i in delta_ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        for at, token_id in enumerate(input_ids):
            if token_id in self._ids.closes:
                return input_ids[at + 1 :]
        return []

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        depth = 1 if self._state.reasoning() == "open" else 0
        count = 0
        for token_id in token_ids:
            if token_id in self._ids.opens:
                depth += 1
            elif token_id in self._ids.closes:
                depth = max(depth - 1, 0)
            elif depth:
                count += 1
        return count

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._state.prompt_ids = prompt_token_ids
        self._state.marker = prompt_marker(self._ids, prompt_token_ids)

    # ------------------------------------------------------------ text
    def _own_sieve(self) -> Sieve:
        options = {
            "dialects": self._variant.dialects,
            **operator_options(),
            "reasoning": self._state.reasoning(),
            "early_emit": "block",
        }
        options.pop("policy", None)
        with_grammar_dirs(options, self._variant)
        return Sieve(**options)

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        state = self._state
        if state.paired:  # read it all now, for the tool parser asked next
            options = sieve_options(
                state,
                request,
                reasoning=state.reasoning(),
                calls=_calls(request),
                id_factory=make_tool_call_id,
            )
            options["early_emit"] = "block"
            reply = whole_reply(
                Sieve(**options), model_output, calls=_calls(request), reasoning_as_content=False
            )
            state.whole = (reply.answer, reply)
        else:
            reply = whole_reply(
                self._own_sieve(), model_output, calls=False, reasoning_as_content=False
            )
        return reply.reasoning or None, reply.answer or None

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Any:
        if self._state.paired:  # the tool parser reads the thought too: pass it on
            self._ended = True
            return message(delta_text, "", [])
        if self._stream is None:
            self._stream = ReplyStream(
                self._own_sieve(), calls=False, reasoning_as_content=False, streams_arguments=False
            )
        delta = self._stream.feed(delta_text)
        if delta is not None and (delta.content or "").strip():
            self._ended = True  # the answer began: vLLM flushes us and moves on
        return delta

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._ended

    def finish_streaming(self) -> Any:
        return None if self._stream is None else self._stream.close()


def _subclass(base: type, variant: Variant, role: str) -> type:
    return type(
        f"{variant.class_stem}{role}",
        (base,),
        {"variant": variant, "__module__": __name__, "__doc__": base.__doc__},
    )


def parser_classes() -> dict[str, tuple[type, type]]:
    """Each active variant's name: its (tool parser, reasoning parser) classes."""
    return {
        v.name: (
            globals()[f"{v.class_stem}ToolParser"],
            globals()[f"{v.class_stem}ReasoningParser"],
        )
        for v in active_variants()
    }


for _variant in active_variants():
    if _variant is VARIANTS[0]:
        continue
    globals()[f"{_variant.class_stem}ToolParser"] = _subclass(
        CallsieveToolParser, _variant, "ToolParser"
    )
    globals()[f"{_variant.class_stem}ReasoningParser"] = _subclass(
        CallsieveReasoningParser, _variant, "ReasoningParser"
    )

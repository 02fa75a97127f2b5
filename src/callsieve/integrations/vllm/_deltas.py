"""Strategy: one reply's ``Sieve`` events as the messages vLLM's serving layer streams —
``DeltaMessage(content, reasoning, tool_calls=[DeltaToolCall(index, id, type, function)])`` —
and a whole reply as its parts.

What it does: ``ReplyStream(sieve, ...)`` feeds text and turns each chunk's events into one
``DeltaMessage`` (or ``None`` when the chunk decided nothing): ``Text`` is content;
``Reasoning`` is reasoning (``reasoning_as_content``: its characters, tags included, are
content — vLLM's rule when no reasoning parser is configured); ``CallStarted`` opens a
``DeltaToolCall`` with the call's index, id, ``type="function"`` and name, each
``ArgumentsDelta`` is the next ``function.arguments`` fragment (a chunk's fragments of one call
joined); with ``early_emit`` ``"block"`` or ``"invoke"`` a call goes out whole, indexed by
this stream. ``calls=False`` (``tool_choice="none"``) writes every block as the text it was.
A ``CallAborted`` — a call that began streaming and then was not made (the reply was cut off
inside it, the policy rejected it, its block failed) — raises ``CallAbortedError``: vLLM ends
the stream with its error event, which the client's SDK raises (SPEC §17), since a call a
client has begun to receive cannot be taken back. ``WholeReply`` is the non-streaming side:
reasoning, content, calls, and the answer's raw text (everything but the reasoning).
What it guarantees: the content, reasoning and argument fragments of a stream, joined, are
what the events carry; an index never repeats.
What it costs: one ``DeltaMessage`` per chunk that decided something, built by ``trusted``:
what pydantic's ``model_construct`` makes (the fields are already the right types), without
its loop over every field and alias — validated construction of vLLM's models cost 9-30 µs a
message on this machine, ``model_construct`` 15 µs, ``trusted`` about 1 µs, which is most of
the plugin's own cost per chunk (bench_vllm.py (c): see docs/vllm.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
)

from ... import (
    ArgumentsDelta,
    CallAborted,
    CallStarted,
    Event,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
)
from ._contract import CallAbortedError

__all__ = ["ReplyStream", "WholeReply", "message", "trusted", "whole_reply"]


def trusted(cls: Any, always: tuple[str, ...] = ()) -> Callable[..., Any]:
    """A constructor of ``cls`` (a pydantic model) from trusted values: the object
    ``cls.model_construct(**values)`` builds, for models without aliases or post-init whose
    fields with a default factory are in ``always`` (the caller passes them every time); any
    other model gets ``model_construct`` itself. A test checks that both give equal objects
    that serialize alike."""
    fields = cls.model_fields
    if (
        cls.__pydantic_post_init__
        or cls.__pydantic_root_model__
        or any(
            f.alias or f.validation_alias or (f.default_factory and name not in always)
            for name, f in fields.items()
        )
    ):
        return cls.model_construct  # type: ignore[no-any-return]
    defaults = {name: f.default for name, f in fields.items() if name not in always}
    allow_extra = cls.model_config.get("extra") == "allow"
    new = cls.__new__
    setattr_ = object.__setattr__

    def make(**values: Any) -> Any:
        obj = new(cls)
        setattr_(obj, "__dict__", {**defaults, **values})
        setattr_(obj, "__pydantic_fields_set__", set(values))
        setattr_(obj, "__pydantic_extra__", {} if allow_extra else None)
        setattr_(obj, "__pydantic_private__", None)
        return obj

    return make


_new_message = trusted(DeltaMessage, always=("tool_calls",))
_new_call = trusted(DeltaToolCall)
_new_function = trusted(DeltaFunctionCall)


def _tool_call(
    index: int, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> Any:
    """A ``DeltaToolCall`` whose unset fields stay unset (vLLM serializes with
    ``exclude_unset``: a continuation carries no ``id``, ``type`` or ``name``)."""
    if name is None:
        fn = _new_function() if arguments is None else _new_function(arguments=arguments)
    else:
        fn = (
            _new_function(name=name)
            if arguments is None
            else _new_function(name=name, arguments=arguments)
        )
    if id is None:
        return _new_call(index=index, function=fn)
    return _new_call(id=id, type="function", index=index, function=fn)


def message(content: str, reasoning: str, tool_calls: list[Any]) -> Any:
    """A ``DeltaMessage`` with the fields that are not empty, or ``None``."""
    if reasoning:
        if content:
            return _new_message(content=content, reasoning=reasoning, tool_calls=tool_calls)
        return _new_message(reasoning=reasoning, tool_calls=tool_calls)
    if content:
        return _new_message(content=content, tool_calls=tool_calls)
    return _new_message(tool_calls=tool_calls) if tool_calls else None


class ReplyStream:
    """A reply's sieve and the indexes it handed out (see the module docstring)."""

    def __init__(
        self, sieve: Sieve, *, calls: bool, reasoning_as_content: bool, streams_arguments: bool
    ) -> None:
        self.sieve = sieve
        self.calls = calls
        self.reasoning_as_content = reasoning_as_content
        self.streams_arguments = streams_arguments
        self.closed = False
        self._next_index = 0  # (whole calls: block and invoke modes)
        self._names: dict[int, str] = {}

    def feed(self, text: str) -> Any:
        return self.render(self.sieve.feed(text)) if text else None

    def close(self) -> Any:
        if self.closed:
            return None
        self.closed = True
        return self.render(self.sieve.close())

    def render(self, events: list[Event]) -> Any:
        if len(events) == 1:  # (most chunks: one piece of text, or one argument fragment)
            e = events[0]
            if e.__class__ is Text:
                return message(e.text, "", [])
            if e.__class__ is ArgumentsDelta:
                return _new_message(tool_calls=[_tool_call(e.index, arguments=e.delta)])
        content: list[str] = []
        reasoning: list[str] = []
        tool_calls: list[Any] = []
        for e in events:
            cls = e.__class__
            if cls is Text:
                content.append(e.text)  # type: ignore[union-attr]
            elif cls is Reasoning:
                if self.reasoning_as_content:
                    content.append(e.source)  # type: ignore[union-attr]
                else:
                    reasoning.append(e.text)  # type: ignore[union-attr]
            elif cls is ArgumentsDelta:
                self._argument(tool_calls, e)  # type: ignore[arg-type]
            elif cls is CallStarted:
                self._names[e.index] = e.name  # type: ignore[union-attr]
                tool_calls.append(_tool_call(e.index, e.id, e.name))  # type: ignore[union-attr]
            elif cls is ToolCalls:
                self._calls(content, tool_calls, e)  # type: ignore[arg-type]
            elif cls is CallAborted:
                index = e.index  # type: ignore[union-attr]
                raise CallAbortedError(index, self._names.get(index, "?"), e.reason)  # type: ignore[union-attr]
        return message("".join(content), "".join(reasoning), tool_calls)

    @staticmethod
    def _argument(tool_calls: list[Any], e: ArgumentsDelta) -> None:
        last = tool_calls[-1] if tool_calls else None
        if last is not None and last.index == e.index:
            last.function.arguments = (last.function.arguments or "") + e.delta
        else:
            tool_calls.append(_tool_call(e.index, arguments=e.delta))

    def _calls(self, content: list[str], tool_calls: list[Any], e: ToolCalls) -> None:
        if not self.calls:
            content.append(e.block.raw)
        elif not self.streams_arguments:
            for call in e.calls:
                tool_calls.append(_tool_call(self._next_index, call.id, call.name, call.arguments))
                self._next_index += 1


@dataclass
class WholeReply:
    """A whole reply read in one pass: what vLLM's ``parse`` returns, and the answer's raw
    text (the reply without its reasoning), which the reasoning side hands the tool side."""

    reasoning: str = ""
    content: str = ""
    answer: str = ""
    calls: list[ToolCall] = field(default_factory=list)


def whole_reply(sieve: Sieve, text: str, *, calls: bool, reasoning_as_content: bool) -> WholeReply:
    out = WholeReply()
    reasoning: list[str] = []
    content: list[str] = []
    answer: list[str] = []
    for e in sieve.feed(text) + sieve.close():
        if isinstance(e, Text):
            content.append(e.text)
            answer.append(e.text)
        elif isinstance(e, Reasoning):
            (content if reasoning_as_content else reasoning).append(
                e.source if reasoning_as_content else e.text
            )
        elif isinstance(e, ToolCalls):
            answer.append(e.block.raw)
            if calls:
                out.calls.extend(e.calls)
            else:
                content.append(e.block.raw)
    out.reasoning, out.content, out.answer = "".join(reasoning), "".join(content), "".join(answer)
    return out

"""Strategy: callsieve's reply as OpenAI Chat Completions JSON — ``chat.completion.chunk``
objects for a stream (``StreamRenderer``) and one ``chat.completion`` object for a whole
reply (``render_response``), as plain dicts (SPEC §10; docs/rendering.md).

What it does: the sieve's events go through a ``Reply`` (``trim_around_calls=False``: the
message's content is one string, so white space between text and a call stays; only the
reply's leading and trailing white space goes) and each reply event becomes one chunk, with
the choice at ``index`` 0:
  - the first chunk carries ``delta.role="assistant"``: alone with ``content: ""`` before
    text, or with ``content: null`` and the first call, as the real API sends them; it is
    sent with the first thing there is to show (or at ``close()`` for an empty reply);
  - ``Text`` -> ``delta.content``;
  - ``Reasoning`` -> ``delta.reasoning_content`` (DeepSeek's API convention, which vLLM and
    SGLang follow; ``reasoning_field="reasoning"`` for the newer vLLM / OpenRouter name);
    the first chunk then carries the role with ``content: null`` and ``reasoning_content:
    ""``. The whole response has ``message.reasoning_content`` (omitted when there is none).
    The SDK keeps the field as an extra attribute and its accumulator joins it like text.
    ``include_reasoning=False`` leaves reasoning out;
  - ``CallStarted`` -> ``delta.tool_calls[{index, id, type: "function", function: {name,
    arguments: ""}}]``, ``index`` being the call's number in the reply (0, 1, 2, …);
  - ``ArgumentsDelta`` -> ``delta.tool_calls[{index, function: {arguments: fragment}}]``;
  - ``CallFinished`` sends nothing (the client has the whole call);
  - ``CallAborted`` (a wire cannot take back what it sent): under ``on_abort="error"`` (the
    default) one chunk ``{"error": {"message", "type": "server_error", "param": null,
    "code": "tool_call_…"}}`` ends the reply — the ``openai`` SDK's stream reader
    (``openai._streaming.Stream.__stream__``) raises ``APIError`` on a chunk with an
    ``error`` — and ``feed()`` and ``close()`` send nothing more (``aborted`` is the abort);
    under ``on_abort="continue"`` nothing is sent, so that index simply gets no more
    fragments, and the reply goes on;
  - ``close(finish_reason)`` -> a chunk with an empty delta and the finish reason, and, when
    ``usage`` is given (the request asked for ``stream_options.include_usage``), a last
    chunk with ``choices: []`` and the usage.
Finish reasons: ``None``, ``"stop"`` or ``"tool_calls"`` (the model ended on its own):
``"tool_calls"`` if any call finished, else ``"stop"``; ``"length"`` (cut off by the token
limit) and ``"content_filter"`` pass through whatever the calls. A reply cut off inside a
call (a call aborted ``"cut_off"``; for ``render_response``, a result whose last block the
end of the input left open) says ``"length"`` for a natural reason. Anything else is a
``ConfigurationError``.
Ids: the completion id from ``completion_id_factory`` (default ``chatcmpl-`` and 28 hex
digits), the same on every chunk; a call's id is the sieve's (``call_`` and 24 hex digits by
default, or the model's own; a call without one gets a fresh one), or ``call_id_factory()``'s
when one is given. ``created`` (Unix seconds) defaults to the time of construction.
What it guarantees: every object validates as the ``openai`` SDK's ``ChatCompletionChunk`` /
``ChatCompletion``, and the SDK's ``ChatCompletionStreamState`` fed the chunks of a stream
gives the message ``render_response`` gives for ``parse()`` of the same text, unless a call
aborted (then the SDK raises on the error chunk). What it costs: one small dict tree per
reply event, built inline for text (the hot path), no copies, no validation; a feed with no
events returns at once. On a tool-heavy
chat (``benchmarks/bench_render.py``) sieve, ``Reply`` and this renderer take about 1.3x the
sieve alone at 64-character chunks and about 2x at 1-8-character chunks, where building one
plain dict per piece of prose, and nothing else, already takes about 1.55x. The module never
imports the SDK.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

from .._base.errors import ConfigurationError, SieveClosedError
from .._base.events import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
)
from .._config.options import new_call_id
from .._facade.results import ParseResult
from ._aborts import cut_off, ends_reply, finish_after_cut, why
from ._options import Usage, make_id, token_counts
from ._reply import ENDED, Reply, reply_events

__all__ = ["FINISH_REASONS", "REASONING_FIELDS", "StreamRenderer", "render_response"]

#: The ``finish_reason`` values ``close()`` and ``render_response`` accept.
FINISH_REASONS = (None, "stop", "tool_calls", "length", "content_filter")
_NATURAL = (None, "stop", "tool_calls")
#: The names a reasoning delta and message field may take (DeepSeek's, vLLM's newer one).
REASONING_FIELDS = ("reasoning_content", "reasoning")

IdFactory = Callable[[], str]


def _new_completion_id() -> str:
    """A Chat Completions id: ``chatcmpl-`` and 28 random hex digits."""
    return "chatcmpl-" + secrets.token_hex(14)


def _finish_reason(given: str | None, called: bool, cut: bool = False) -> str:
    """The wire's ``finish_reason`` for the caller's ``given`` one (see the module's
    docstring); ``called``: some call finished; ``cut``: the reply was cut off in a call."""
    if cut:
        given = finish_after_cut(given)
    if given in _NATURAL:
        return "tool_calls" if called else "stop"
    if given in ("length", "content_filter"):
        return given
    raise ConfigurationError(f"finish_reason must be one of {FINISH_REASONS!r}, got {given!r}")


def _reasoning_field(name: str) -> str:
    if name not in REASONING_FIELDS:
        raise ConfigurationError(
            f"reasoning_field must be one of {REASONING_FIELDS!r}, got {name!r}",
            expected=REASONING_FIELDS,
        )
    return name


def _usage(usage: Usage | None) -> dict[str, Any]:
    """The caller's counts (``_options.token_counts``: the same ``usage`` every renderer
    takes) as Chat Completions writes them."""
    prompt, completion = token_counts(usage)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class StreamRenderer:
    """Sieve events in, ``chat.completion.chunk`` dicts out (see the module's docstring)."""

    __slots__ = (
        "_reply",
        "_id",
        "_created",
        "_model",
        "_call_id",
        "_field",
        "_started",
        "_called",
        "_closed",
        "_error",
        "_names",
        "_cut",
        "_aborted",
    )

    def __init__(
        self,
        *,
        model: str = "callsieve",
        created: int | None = None,
        completion_id_factory: IdFactory | None = None,
        call_id_factory: IdFactory | None = None,
        include_reasoning: bool = True,
        reasoning_field: str = "reasoning_content",
        on_abort: str = "error",
    ) -> None:
        self._error = ends_reply(on_abort)
        self._field = _reasoning_field(reasoning_field)
        self._reply = Reply(trim_around_calls=False, include_reasoning=include_reasoning)
        self._id = make_id(completion_id_factory or _new_completion_id, "completion_id_factory")
        self._created = int(time.time()) if created is None else created
        self._model = model
        self._call_id = call_id_factory
        self._started = False  # the role chunk went out
        self._called = False  # some call finished
        self._closed = False
        self._names: dict[int, str] = {}  # a started call's number -> its name
        self._cut = False  # a call aborted because the reply was cut off inside it
        self._aborted: CallAborted | None = None  # the abort that ended the reply

    @property
    def id(self) -> str:
        """The completion id every chunk carries."""
        return self._id

    @property
    def aborted(self) -> CallAborted | None:
        """The abort that ended the reply with an error chunk (``on_abort="error"``; its
        ``index`` is the call's number in the reply), else None."""
        return self._aborted

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The chunks for the next sieve events."""
        if self._closed:
            raise SieveClosedError("feed() after close() on an openai_chat.StreamRenderer")
        if not events:  # (most feeds inside a block: nothing to do)
            return []
        out: list[dict[str, Any]] = []
        for e in self._reply.feed(events):
            delta: dict[str, Any]
            if isinstance(e, Text):
                if self._started:  # the hot path: one chunk per piece of prose, built inline
                    out.append(
                        {
                            "id": self._id,
                            "object": "chat.completion.chunk",
                            "created": self._created,
                            "model": self._model,
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"content": e.text},
                                    "logprobs": None,
                                    "finish_reason": None,
                                }
                            ],
                        }
                    )
                    continue
                delta = {"content": e.text}
            elif isinstance(e, Reasoning):
                delta = {self._field: e.text}
            elif isinstance(e, ArgumentsDelta):
                delta = {"tool_calls": [{"index": e.index, "function": {"arguments": e.delta}}]}
            elif isinstance(e, CallStarted):
                ident = (
                    make_id(self._call_id, "call_id_factory")
                    if self._call_id is not None
                    else e.id or new_call_id()
                )
                delta = {
                    "tool_calls": [
                        {
                            "index": e.index,
                            "id": ident,
                            "type": "function",
                            "function": {"name": e.name, "arguments": ""},
                        }
                    ]
                }
                self._names[e.index] = e.name
            else:
                if isinstance(e, CallFinished):
                    self._called = True
                    self._names.pop(e.index, None)
                elif isinstance(e, CallAborted) and self._abort(e, out):
                    break  # (the error ended the reply)
                continue  # CallFinished, CallAborted: nothing to send
            if not self._started:
                self._started = True
                if "content" in delta:
                    out.append(self._chunk({"role": "assistant", "content": ""}))
                elif self._field in delta:
                    out.append(self._chunk({"role": "assistant", "content": None, self._field: ""}))
                else:
                    delta = {"role": "assistant", "content": None, **delta}
            out.append(self._chunk(delta))
        return out

    def close(
        self,
        finish_reason: str | None = None,
        *,
        usage: Usage | None = None,
        blocks: Iterable[Block] = (),
    ) -> list[dict[str, Any]]:
        """The last chunks: the finish reason (and the usage chunk when ``usage`` is given).
        ``blocks`` (the sieve's, ``Sieve.blocks``): a reply that ended inside a call whose
        start was never sent (``early_emit="block"`` or ``"invoke"``) is cut off too."""
        if self._closed:
            raise SieveClosedError("close() after close() on an openai_chat.StreamRenderer")
        _finish_reason(finish_reason, self._called)  # (checked before any change)
        if usage is not None:
            _usage(usage)
        out: list[dict[str, Any]] = []
        for e in self._reply.close():  # (aborts of calls still open: cut off)
            if isinstance(e, CallAborted) and self._abort(e, out):
                break
        self._closed = True
        if self._aborted is not None:
            return out
        self._cut = self._cut or cut_off(blocks)
        reason = _finish_reason(finish_reason, self._called, self._cut)
        if not self._started:
            self._started = True
            out.append(self._chunk({"role": "assistant", "content": None}))
        out.append(self._chunk({}, reason))
        if usage is not None:
            out.append(
                {
                    "id": self._id,
                    "object": "chat.completion.chunk",
                    "created": self._created,
                    "model": self._model,
                    "choices": [],
                    "usage": _usage(usage),
                }
            )
        return out

    def _abort(self, e: CallAborted, out: list[dict[str, Any]]) -> bool:
        """A call that started aborted: the error chunk, under ``on_abort="error"`` (True:
        the reply ends), else nothing but what a cut-off says at the end."""
        self._cut = self._cut or e.reason == "cut_off"
        if not self._error:
            return False
        code, message, _ = why(e, self._names.get(e.index, ""))
        out.append(
            {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
        )
        self._aborted = e
        self._reply = ENDED  # (nothing more shows)
        return True

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self._model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }


def render_response(
    result: ParseResult,
    *,
    model: str = "callsieve",
    created: int | None = None,
    completion_id_factory: IdFactory | None = None,
    call_id_factory: IdFactory | None = None,
    finish_reason: str | None = None,
    usage: Usage | None = None,
    include_reasoning: bool = True,
    reasoning_field: str = "reasoning_content",
) -> dict[str, Any]:
    """The whole ``chat.completion`` for ``result`` (``usage`` zeros unless given)."""
    field = _reasoning_field(reasoning_field)
    ident = make_id(completion_id_factory or _new_completion_id, "completion_id_factory")
    text: list[str] = []
    thought: list[str] = []
    calls: list[dict[str, Any]] = []
    arguments: list[list[str]] = []
    for e in reply_events(result, trim_around_calls=False, include_reasoning=include_reasoning):
        if isinstance(e, Text):
            text.append(e.text)
        elif isinstance(e, Reasoning):
            thought.append(e.text)
        elif isinstance(e, CallStarted):
            call_id = (
                make_id(call_id_factory, "call_id_factory")
                if call_id_factory is not None
                else e.id or new_call_id()
            )
            calls.append(
                {"id": call_id, "type": "function", "function": {"name": e.name, "arguments": ""}}
            )
            arguments.append([])
        elif isinstance(e, ArgumentsDelta):
            arguments[e.index].append(e.delta)
    for call, parts in zip(calls, arguments):
        call["function"]["arguments"] = "".join(parts)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if thought:
        message[field] = "".join(thought)
    message["refusal"] = None
    message["annotations"] = []
    if calls:
        message["tool_calls"] = calls
    reason = _finish_reason(finish_reason, bool(calls), cut_off(result.blocks))
    return {
        "id": ident,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
        "usage": _usage(usage),
    }

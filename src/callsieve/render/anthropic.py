"""Strategy: a reply as the Anthropic Messages API sends it — the whole ``message`` object and
the server-sent events of a streamed one — as plain dicts, ready for ``json.dumps``.

What it does: ``StreamRenderer`` reads a sieve's events through ``Reply`` (text and calls in
order, white space trimmed where text meets a call) and writes the stream events:
``message_start`` (a message with empty content), then for each run of reasoning a
``thinking`` block (``content_block_start`` with ``thinking: ""`` and ``signature: ""``,
``thinking_delta`` deltas, ``content_block_stop``; callsieve has no signature to give, and
the SDK's accumulator needs no ``signature_delta``), for each run of text a ``text`` block
(``content_block_start`` with ``text: ""``, ``text_delta`` deltas, ``content_block_stop``)
and for each call a ``tool_use`` block (``content_block_start`` with its ``toolu_`` id, name
and ``input: {}``, ``input_json_delta`` deltas whose ``partial_json`` concatenate to the
call's arguments JSON, ``content_block_stop``), then ``message_delta`` (``stop_reason``,
``usage``) and ``message_stop``. ``render_response`` builds the whole message from
``reply_events(result)``: the same blocks with the same ids (given the same factories).
What it guarantees: blocks are numbered 0, 1, 2, … in reply order, one open at a time (for
any sieve stream: text is never released while a call is being streamed); no text block is
empty or only white space; the stream, accumulated by Anthropic's SDK, is the message
``render_response`` gives, unless a call aborted (below). Every object validates against the
SDK's types (the tests check it; this module does not import the SDK).
Aborts: a wire cannot take back what it sent. Under ``on_abort="error"`` (the default) a
call that aborts (``CallAborted``: its block failed, the reply was cut off inside it, the
policy rejected it, or it is sent again) ends the reply with an ``error`` event
(``{"type": "error", "error": {"type": "api_error", "message": …}}``, right after what was
sent, its ``tool_use`` block left open), on which the SDK's stream reader
(``anthropic._streaming.Stream.__stream__``) raises an ``APIStatusError``; ``feed()`` and
``close()`` then send nothing more (``aborted`` is the abort). Under ``on_abort="continue"``
its ``tool_use`` block is stopped where it stands and the reply goes on: a client's
accumulator then holds a ``tool_use`` block with the input parsed so far, and it does not
count for ``stop_reason`` (``"max_tokens"`` if the reply was cut off inside it).
What it costs: a few small dicts per event; no copies of the text, no JSON parsing.
"""

from __future__ import annotations

import re
import secrets
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
from .._facade.results import ParseResult
from ._aborts import cut_off, ends_reply, finish_after_cut, why
from ._options import Usage, make_id, token_counts
from ._reply import ENDED, Reply, reply_events

__all__ = [
    "STOP_REASONS",
    "TOOL_USE_ID",
    "StreamRenderer",
    "new_message_id",
    "new_tool_use_id",
    "render_response",
    "stop_reason",
]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: What the API accepts as a ``tool_use`` id (a client sends it back in ``tool_result``).
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")

#: Anthropic's own stop reasons: a ``finish_reason`` that is one of them is sent as it is.
STOP_REASONS = (
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
)
_DECIDED = (None, "stop", "tool_calls")  # tool use if a call finished, else the turn's end
_MAPPED = {"length": "max_tokens", "content_filter": "refusal"}  # (OpenAI's names)


def _base62(n: int) -> str:
    return "".join(secrets.choice(_BASE62) for _ in range(n))


def new_message_id() -> str:
    """A message id shaped as the API's: ``msg_01`` and 22 random base-62 characters."""
    return "msg_01" + _base62(22)


def new_tool_use_id() -> str:
    """A ``tool_use`` id shaped as the API's: ``toolu_01`` and 22 random base-62 characters."""
    return "toolu_01" + _base62(22)


def stop_reason(finish_reason: str | None, called: bool) -> str:
    """The ``stop_reason`` for the caller's ``finish_reason``.

    ``None``, ``"stop"`` and ``"tool_calls"``: ``"tool_use"`` if a call finished, else
    ``"end_turn"``; ``"length"`` (the model was cut off): ``"max_tokens"``, calls or not;
    ``"content_filter"``: ``"refusal"``; one of ``STOP_REASONS``: itself. Anything else is a
    ``ConfigurationError``.
    """
    if finish_reason in _DECIDED:
        return "tool_use" if called else "end_turn"
    if finish_reason in _MAPPED:
        return _MAPPED[finish_reason]
    if finish_reason in STOP_REASONS:
        return finish_reason
    allowed = ("stop", "tool_calls", *_MAPPED, *STOP_REASONS)
    raise ConfigurationError(
        f"finish_reason must be None or one of {allowed}, not {finish_reason!r}", expected=allowed
    )


def _message(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    reason: str | None,
    usage: tuple[int, int],
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": ""}


def _tool_use(factory: Callable[[], str], name: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": make_id(factory, "tool_use_id_factory", TOOL_USE_ID),
        "name": name,
        "input": value,
    }


class StreamRenderer:
    """Sieve events in, Anthropic stream events out (see the module's docstring).

    ``StreamRenderer(*, model="callsieve", message_id_factory=new_message_id,
    tool_use_id_factory=new_tool_use_id, usage=None)``; ``usage`` is ``{"input_tokens": n,
    "output_tokens": m}`` (zeros by default): ``message_start`` carries the input count,
    ``message_delta`` both (``close`` may give the final counts); ``include_reasoning=False``
    sends no ``thinking`` blocks; ``on_abort`` (``"error"`` or ``"continue"``): see the
    module's docstring. ``feed`` after ``close`` raises ``SieveClosedError``.
    """

    __slots__ = (
        "_model",
        "_message_id",
        "_tool_use_id",
        "_usage",
        "_reply",
        "_started",
        "_next",
        "_text",
        "_kind",
        "_blocks",
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
        message_id_factory: Callable[[], str] = new_message_id,
        tool_use_id_factory: Callable[[], str] = new_tool_use_id,
        usage: Usage | None = None,
        include_reasoning: bool = True,
        on_abort: str = "error",
    ) -> None:
        self._error = ends_reply(on_abort)
        self._model = model
        self._usage = token_counts(usage)
        self._message_id = make_id(message_id_factory, "message_id_factory")
        self._tool_use_id = tool_use_id_factory
        self._reply = Reply(trim_around_calls=True, include_reasoning=include_reasoning)
        self._started = False
        self._next = 0  # the next content block's index
        self._text = -1  # the open text or thinking block's index, or -1
        self._kind = ""  # which of the two it is
        self._blocks: dict[int, int] = {}  # an open call's reply number -> its block's index
        self._called = False  # a call finished: stop_reason "tool_use"
        self._closed = False
        self._names: dict[int, str] = {}  # an open call's reply number -> its name
        self._cut = False  # a call aborted because the reply was cut off inside it
        self._aborted: CallAborted | None = None  # the abort that ended the reply

    @property
    def aborted(self) -> CallAborted | None:
        """The abort that ended the reply with an ``error`` event (``on_abort="error"``; its
        ``index`` is the call's number in the reply), else None."""
        return self._aborted

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The stream events for ``events`` (the first call also sends ``message_start``)."""
        if self._closed:
            raise SieveClosedError("feed() called on a StreamRenderer that is already closed")
        out: list[dict[str, Any]] = []
        if not self._started:
            self._start(out)
        for e in self._reply.feed(events):
            self._render(e, out)
            if self._aborted is not None:  # (an error event ended the reply)
                break
        return out

    def close(
        self,
        finish_reason: str | None = None,
        *,
        usage: Usage | None = None,
        blocks: Iterable[Block] = (),
    ) -> list[dict[str, Any]]:
        """The end of the message: open blocks stop (a call still open aborts, cut off), then
        ``message_delta`` with ``stop_reason(finish_reason, ...)`` and ``usage`` (this call's,
        else the constructor's), and ``message_stop`` — or nothing more once an ``error``
        event ended the reply. ``blocks`` (the sieve's, ``Sieve.blocks``): a reply that ended
        inside a call whose start was never sent (``early_emit="block"`` or ``"invoke"``) is
        cut off too."""
        if self._closed:
            raise SieveClosedError("close() called on a StreamRenderer that is already closed")
        stop_reason(finish_reason, self._called)  # (checked before any change)
        counts = self._usage if usage is None else token_counts(usage)
        self._closed = True
        out: list[dict[str, Any]] = []
        if self._aborted is not None:
            return out
        if not self._started:
            self._start(out)
        for e in self._reply.close():
            self._render(e, out)
            if self._aborted is not None:
                return out
        cut = self._cut or cut_off(blocks)
        reason = stop_reason(
            finish_after_cut(finish_reason) if cut else finish_reason, self._called
        )
        self._stop_text(out)
        out.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": {"input_tokens": counts[0], "output_tokens": counts[1]},
            }
        )
        out.append({"type": "message_stop"})
        return out

    def _start(self, out: list[dict[str, Any]]) -> None:
        self._started = True
        out.append(
            {
                "type": "message_start",
                "message": _message(self._message_id, self._model, [], None, (self._usage[0], 0)),
            }
        )

    def _render(self, e: Event, out: list[dict[str, Any]]) -> None:
        if isinstance(e, Text):
            if self._kind != "text":
                self._stop_text(out)
                self._text = self._open({"type": "text", "text": ""}, out)
                self._kind = "text"
            out.append(
                {
                    "type": "content_block_delta",
                    "index": self._text,
                    "delta": {"type": "text_delta", "text": e.text},
                }
            )
        elif isinstance(e, Reasoning):
            if self._kind != "thinking":
                self._stop_text(out)
                self._text = self._open(_thinking(""), out)
                self._kind = "thinking"
            out.append(
                {
                    "type": "content_block_delta",
                    "index": self._text,
                    "delta": {"type": "thinking_delta", "thinking": e.text},
                }
            )
        elif isinstance(e, ArgumentsDelta):
            index = self._blocks.get(e.index, -1)
            if index >= 0:
                out.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": e.delta},
                    }
                )
        elif isinstance(e, CallStarted):
            self._stop_text(out)
            self._blocks[e.index] = self._open(_tool_use(self._tool_use_id, e.name, {}), out)
            self._names[e.index] = e.name
        elif isinstance(e, CallAborted) and self._error:
            self._aborted = e
            self._reply = ENDED  # (nothing more shows)
            out.append(
                {
                    "type": "error",
                    "error": {
                        "type": "api_error",
                        "message": why(e, self._names.get(e.index, "")).message,
                    },
                }
            )
        elif isinstance(e, (CallFinished, CallAborted)):
            index = self._blocks.pop(e.index, -1)
            self._names.pop(e.index, None)
            if index >= 0:
                out.append({"type": "content_block_stop", "index": index})
                self._called = self._called or isinstance(e, CallFinished)
                self._cut = self._cut or (isinstance(e, CallAborted) and e.reason == "cut_off")

    def _open(self, block: dict[str, Any], out: list[dict[str, Any]]) -> int:
        index = self._next
        self._next += 1
        out.append({"type": "content_block_start", "index": index, "content_block": block})
        return index

    def _stop_text(self, out: list[dict[str, Any]]) -> None:
        if self._text >= 0:
            out.append({"type": "content_block_stop", "index": self._text})
            self._text = -1
            self._kind = ""


def render_response(
    result: ParseResult,
    *,
    model: str = "callsieve",
    message_id_factory: Callable[[], str] = new_message_id,
    tool_use_id_factory: Callable[[], str] = new_tool_use_id,
    usage: Usage | None = None,
    finish_reason: str | None = None,
    include_reasoning: bool = True,
) -> dict[str, Any]:
    """The whole Messages response for ``result``: ``content`` holds its ``thinking``, text
    and ``tool_use`` blocks in reply order (each call's ``input`` is the call's own dict, not a
    copy), ``stop_reason`` is ``stop_reason(finish_reason, ...)`` — ``"max_tokens"`` for a
    natural reason when the result was cut off inside a call (``_aborts.cut_off``)."""
    counts = token_counts(usage)
    message_id = make_id(message_id_factory, "message_id_factory")
    content: list[dict[str, Any]] = []
    called = False
    for e in reply_events(result, trim_around_calls=True, include_reasoning=include_reasoning):
        if isinstance(e, Text):
            if content and content[-1]["type"] == "text":
                content[-1]["text"] += e.text
            else:
                content.append({"type": "text", "text": e.text})
        elif isinstance(e, Reasoning):
            if content and content[-1]["type"] == "thinking":
                content[-1]["thinking"] += e.text
            else:
                content.append(_thinking(e.text))
        elif isinstance(e, CallFinished):
            content.append(_tool_use(tool_use_id_factory, e.call.name, e.call.input))
            called = True
    if cut_off(result.blocks):
        finish_reason = finish_after_cut(finish_reason)
    return _message(message_id, model, content, stop_reason(finish_reason, called), counts)

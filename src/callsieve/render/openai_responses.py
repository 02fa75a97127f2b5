"""Strategy: callsieve's reply as OpenAI Responses JSON — the stream's events
(``StreamRenderer``) and the whole ``response`` object (``render_response``), as plain dicts
(SPEC §10; docs/rendering.md).

What it does: the sieve's events go through a ``Reply`` (``trim_around_calls=True``: each
text part is its own message item, so white space where text meets a call goes) and the
reply becomes output items in order — a ``message`` item (one ``output_text`` part) for each
run of text, a ``function_call`` item for each call; text after a call opens a new message.
Reasoning comes first in its run as a ``reasoning`` item with one summary part, as OpenAI's
reasoning models stream their summaries. The stream is what the real API sends:
  - on the first ``feed()`` (or ``close()``): ``response.created`` and
    ``response.in_progress`` (the response with ``status: "in_progress"``, no output);
  - text: ``response.output_item.added`` (the message, ``status: "in_progress"``) and
    ``response.content_part.added`` when a message opens, then one
    ``response.output_text.delta`` per ``Text``; when a call starts or the reply ends,
    ``response.output_text.done``, ``response.content_part.done`` and
    ``response.output_item.done``;
  - reasoning: ``response.output_item.added`` (``reasoning``, ``summary: []``) and
    ``response.reasoning_summary_part.added`` (``summary_index`` 0) when it opens, one
    ``response.reasoning_summary_text.delta`` per ``Reasoning``, and when anything else
    starts or the reply ends ``response.reasoning_summary_text.done``,
    ``response.reasoning_summary_part.done`` and ``response.output_item.done`` (its
    ``summary`` the one ``summary_text``); ``include_reasoning=False`` leaves it out;
  - a call: ``response.output_item.added`` (``function_call`` with ``call_id``, ``name``,
    ``arguments: ""``), one ``response.function_call_arguments.delta`` per
    ``ArgumentsDelta``, then ``response.function_call_arguments.done`` and
    ``response.output_item.done`` (``status: "completed"``);
  - ``CallAborted``: a wire cannot take back what it sent, so the item is closed with
    ``response.output_item.done`` and ``status: "incomplete"`` (no ``arguments.done``) and
    left out of the final ``output`` (whose items then skip its ``output_index``). Under
    ``on_abort="error"`` (the default) ``response.failed`` follows at once and ends the reply
    (its response ``status: "failed"``, ``error: {"code": "server_error", "message": …}``,
    and ``incomplete_details.reason = "max_output_tokens"`` if the reply was cut off inside
    the call): the SDK's ``ResponseStream.get_final_response()`` raises, having no
    ``response.completed``, and ``feed()`` and ``close()`` send nothing more (``aborted`` is
    the abort). Under ``on_abort="continue"`` the reply goes on;
  - ``close(finish_reason)``: ``response.completed`` with the whole response, or
    ``response.incomplete``.
Every event carries ``sequence_number`` (0, 1, 2, … over the stream); the item events carry
``output_index``, ``item_id`` and ``content_index`` (always 0) as the API does.
Finish reasons: ``None``, ``"stop"`` or ``"tool_calls"`` (the model ended on its own) ->
``status: "completed"``; ``"length"`` -> ``"incomplete"`` with ``incomplete_details.reason
= "max_output_tokens"``, ``"content_filter"`` -> ``"incomplete"`` with reason
``"content_filter"``; in both the message still open at the end is ``"incomplete"`` too. A
reply cut off inside a call (a call aborted ``"cut_off"``; for ``render_response``, a
result whose last block the end of the input left open) is ``"length"``'s for a natural
reason. Anything else is a ``ConfigurationError``.
Ids: ``resp_``, ``msg_``, ``rs_`` and ``fc_`` with 48 hex digits by default, from
``response_id_factory``, ``message_id_factory``, ``reasoning_id_factory`` and
``function_call_id_factory``; a call's
``call_id`` is the sieve's call id, or ``call_id_factory()``'s when one is given.
Required fields the SDK's ``Response`` needs and the API always sends are filled in:
``object``, ``created_at`` (``created``, default the time of construction), ``status``,
``model``, ``output``, ``parallel_tool_calls`` / ``tool_choice`` / ``tools`` (the request's,
passed in; default ``True`` / ``"auto"`` / ``[]``), ``error`` and ``incomplete_details``
(null), and ``usage`` (zeros, or the caller's counts, when the response ends).
What it guarantees: every event validates as the ``openai`` SDK's ``ResponseStreamEvent``,
every response as ``Response``; the SDK's ``ResponseStreamState`` accumulates the stream to
the response ``render_response`` gives for ``parse()`` of the same text, unless a call
aborted (then it ends ``response.failed``). What it costs: one small dict per reply event
(built inline for text) and a few per item boundary; the text and arguments of the open
item are kept (as lists of pieces) for the ``.done`` events; about what ``openai_chat`` costs (``benchmarks/bench_render.py``).
``render_response`` is this encoder run over ``reply_events(result)``, keeping the last
event's response, so the two cannot disagree. The module never imports the SDK.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

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

__all__ = ["FINISH_REASONS", "StreamRenderer", "render_response"]

#: The ``finish_reason`` values ``close()`` and ``render_response`` accept.
FINISH_REASONS = (None, "stop", "tool_calls", "length", "content_filter")
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}

IdFactory = Callable[[], str]


def _hex_id(prefix: str) -> IdFactory:
    return lambda: prefix + secrets.token_hex(24)


def _usage(usage: Usage | None) -> dict[str, Any]:
    """The caller's counts (``_options.token_counts``: the same ``usage`` every renderer
    takes) as the Responses API writes them, with the details it requires (zeros)."""
    given, made = token_counts(usage)
    return {
        "input_tokens": given,
        "output_tokens": made,
        "total_tokens": given + made,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _message(ident: str, status: str, text: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "message",
        "status": status,
        "content": [] if text is None else [_text_part(text)],
        "role": "assistant",
    }


def _reasoning(ident: str, status: str, text: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "reasoning",
        "status": status,
        "summary": [] if text is None else [_summary_part(text)],
    }


def _summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def _function_call(
    ident: str, status: str, call_id: str, name: str, arguments: str
) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


class _Kind(NamedTuple):
    """What differs between a message item and a reasoning item: their shapes, the names of
    their part's events, where the part sits, and what a text's done event adds."""

    item: Callable[[str, str, str | None], dict[str, Any]]
    part: Callable[[str], dict[str, Any]]
    part_added: str
    text_done: str
    part_done: str
    place: dict[str, int]
    text_extra: dict[str, Any]


_MESSAGE = _Kind(
    _message,
    _text_part,
    "response.content_part.added",
    "response.output_text.done",
    "response.content_part.done",
    {"content_index": 0},
    {"logprobs": []},
)
_REASONING = _Kind(
    _reasoning,
    _summary_part,
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    {"summary_index": 0},
    {},
)


class _Open:
    """An output item being streamed: its ids, place, and what it has sent."""

    __slots__ = ("id", "index", "pieces", "call_id", "name")

    def __init__(self, ident: str, index: int, call_id: str = "", name: str = "") -> None:
        self.id = ident
        self.index = index
        self.pieces: list[str] = []
        self.call_id = call_id
        self.name = name


class StreamRenderer:
    """Sieve events in, Responses stream events out (see the module's docstring)."""

    __slots__ = (
        "_reply",
        "_id",
        "_created",
        "_model",
        "_tools",
        "_tool_choice",
        "_parallel",
        "_msg_id",
        "_rs_id",
        "_fc_id",
        "_call_id",
        "_seq",
        "_next_index",
        "_msg",
        "_rs",
        "_calls",
        "_output",
        "_started",
        "_closed",
        "_error",
        "_cut",
        "_aborted",
    )

    def __init__(
        self,
        *,
        model: str = "callsieve",
        created: int | None = None,
        response_id_factory: IdFactory | None = None,
        message_id_factory: IdFactory | None = None,
        function_call_id_factory: IdFactory | None = None,
        call_id_factory: IdFactory | None = None,
        reasoning_id_factory: IdFactory | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
        tool_choice: Any = "auto",
        parallel_tool_calls: bool = True,
        include_reasoning: bool = True,
        on_abort: str = "error",
    ) -> None:
        self._error = ends_reply(on_abort)
        self._reply = Reply(trim_around_calls=True, include_reasoning=include_reasoning)
        self._id = make_id(response_id_factory or _hex_id("resp_"), "response_id_factory")
        self._created = int(time.time()) if created is None else created
        self._model = model
        self._tools = tools
        self._tool_choice = tool_choice
        self._parallel = parallel_tool_calls
        self._msg_id = message_id_factory or _hex_id("msg_")
        self._fc_id = function_call_id_factory or _hex_id("fc_")
        self._rs_id = reasoning_id_factory or _hex_id("rs_")
        self._call_id = call_id_factory
        self._seq = 0
        self._next_index = 0  # the next item's output_index
        self._msg: _Open | None = None  # the message item being streamed
        self._rs: _Open | None = None  # the reasoning item being streamed
        self._calls: dict[int, _Open] = {}  # reply call number -> its function_call item
        self._output: list[dict[str, Any]] = []  # the finished items of the final output
        self._started = False
        self._closed = False
        self._cut = False  # a call aborted because the reply was cut off inside it
        self._aborted: CallAborted | None = None  # the abort that ended the reply

    @property
    def id(self) -> str:
        """The response id."""
        return self._id

    @property
    def aborted(self) -> CallAborted | None:
        """The abort that ended the reply with ``response.failed`` (``on_abort="error"``;
        its ``index`` is the call's number in the reply), else None."""
        return self._aborted

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The stream events for the next sieve events."""
        if self._closed:
            raise SieveClosedError("feed() after close() on an openai_responses.StreamRenderer")
        if not events and self._started:  # (most feeds inside a block: nothing to do)
            return []
        out = self._begin()
        self._render(self._reply.feed(events), out)
        return out

    def close(
        self,
        finish_reason: str | None = None,
        *,
        usage: Usage | None = None,
        blocks: Iterable[Block] = (),
    ) -> list[dict[str, Any]]:
        """The last events: open items closed, then ``response.completed`` (or
        ``response.incomplete``) with the whole response. ``blocks`` (the sieve's,
        ``Sieve.blocks``): a reply that ended inside a call whose start was never sent
        (``early_emit="block"`` or ``"invoke"``) is cut off too."""
        if self._closed:
            raise SieveClosedError("close() after close() on an openai_responses.StreamRenderer")
        if finish_reason not in FINISH_REASONS:
            raise ConfigurationError(
                f"finish_reason must be one of {FINISH_REASONS!r}, got {finish_reason!r}"
            )
        given = _usage(usage)  # (checked before any change)
        self._closed = True
        if self._aborted is not None:
            return []
        out = self._begin()
        self._render(self._reply.close(), out)
        if self._aborted is not None:  # (a call still open: cut off)
            return out
        cut = self._cut or cut_off(blocks)
        return self._end(finish_after_cut(finish_reason) if cut else finish_reason, given, out)

    # ------------------------------------------------------------------ the encoder
    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return event

    def _response(
        self,
        status: str,
        output: list[dict[str, Any]],
        usage: dict[str, Any] | None = None,
        incomplete: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": self._id,
            "object": "response",
            "created_at": self._created,
            "status": status,
            "error": None,
            "incomplete_details": incomplete,
            "instructions": None,
            "model": self._model,
            "output": output,
            "parallel_tool_calls": self._parallel,
            "tool_choice": self._tool_choice,
            "tools": [dict(t) for t in self._tools],
            "usage": usage,
        }

    def _begin(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        return [
            self._event("response.created", response=self._response("in_progress", [])),
            self._event("response.in_progress", response=self._response("in_progress", [])),
        ]

    def _end(
        self, finish_reason: str | None, usage: dict[str, Any], out: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        reason = _INCOMPLETE.get(finish_reason or "")
        status = "completed" if reason is None else "incomplete"
        self._close_parts(out, status)
        incomplete = None if reason is None else {"reason": reason}
        response = self._response(status, self._output, usage, incomplete)
        out.append(self._event(f"response.{status}", response=response))
        return out

    def _render(self, events: list[Event], out: list[dict[str, Any]]) -> None:
        for e in events:
            if isinstance(e, Text):  # the hot path: one event per piece of prose, inline
                if self._rs is not None:
                    self._close_reasoning(out, "completed")
                msg = self._msg or self._open_message(out)
                msg.pieces.append(e.text)
                out.append(
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": self._seq,
                        "item_id": msg.id,
                        "output_index": msg.index,
                        "content_index": 0,
                        "delta": e.text,
                        "logprobs": [],
                    }
                )
                self._seq += 1
            elif isinstance(e, Reasoning):
                if self._msg is not None:
                    self._close_message(out, "completed")
                rs = self._rs or self._open_reasoning(out)
                rs.pieces.append(e.text)
                out.append(
                    self._event(
                        "response.reasoning_summary_text.delta",
                        item_id=rs.id,
                        output_index=rs.index,
                        summary_index=0,
                        delta=e.text,
                    )
                )
            elif isinstance(e, ArgumentsDelta):
                call = self._calls.get(e.index)
                if call is not None:
                    call.pieces.append(e.delta)
                    out.append(
                        self._event(
                            "response.function_call_arguments.delta",
                            item_id=call.id,
                            output_index=call.index,
                            delta=e.delta,
                        )
                    )
            elif isinstance(e, CallStarted):
                self._close_parts(out, "completed")
                call_id = (
                    make_id(self._call_id, "call_id_factory")
                    if self._call_id is not None
                    else e.id or new_call_id()
                )
                call = _Open(
                    make_id(self._fc_id, "function_call_id_factory"),
                    self._next_index,
                    call_id,
                    e.name,
                )
                self._next_index += 1
                self._calls[e.index] = call
                out.append(
                    self._event(
                        "response.output_item.added",
                        output_index=call.index,
                        item=_function_call(call.id, "in_progress", call_id, e.name, ""),
                    )
                )
            elif isinstance(e, CallFinished):
                self._finish_call(e.index, out)
            elif isinstance(e, CallAborted):
                name = self._abort_call(e.index, out)
                self._cut = self._cut or e.reason == "cut_off"
                if self._error:
                    self._fail(e, name, out)
                    return  # (the reply ended)

    def _fail(self, e: CallAborted, name: str, out: list[dict[str, Any]]) -> None:
        """``response.failed``: the reply ends with the error ``e`` (under
        ``on_abort="error"``)."""
        _, message, cut = why(e, name)
        self._aborted = e
        self._reply = ENDED  # (nothing more shows)
        response = self._response(
            "failed", self._output, None, {"reason": "max_output_tokens"} if cut else None
        )
        response["error"] = {"code": "server_error", "message": message}
        out.append(self._event("response.failed", response=response))

    def _open_message(self, out: list[dict[str, Any]]) -> _Open:
        self._msg = self._open_part(_MESSAGE, make_id(self._msg_id, "message_id_factory"), out)
        return self._msg

    def _open_reasoning(self, out: list[dict[str, Any]]) -> _Open:
        self._rs = self._open_part(_REASONING, make_id(self._rs_id, "reasoning_id_factory"), out)
        return self._rs

    def _close_parts(self, out: list[dict[str, Any]], status: str) -> None:
        """Close the message or reasoning item that is open (a call starts, or the end)."""
        if self._msg is not None:
            self._close_message(out, status)
        if self._rs is not None:
            self._close_reasoning(out, status)

    def _close_message(self, out: list[dict[str, Any]], status: str) -> None:
        assert self._msg is not None
        self._close_part(_MESSAGE, self._msg, status, out)
        self._msg = None

    def _close_reasoning(self, out: list[dict[str, Any]], status: str) -> None:
        assert self._rs is not None
        self._close_part(_REASONING, self._rs, status, out)
        self._rs = None

    def _open_part(self, kind: _Kind, ident: str, out: list[dict[str, Any]]) -> _Open:
        """A message or reasoning item opened: the item, then its one part."""
        item = _Open(ident, self._next_index)
        self._next_index += 1
        out.append(
            self._event(
                "response.output_item.added",
                output_index=item.index,
                item=kind.item(item.id, "in_progress", None),
            )
        )
        out.append(
            self._event(
                kind.part_added,
                item_id=item.id,
                output_index=item.index,
                **kind.place,
                part=kind.part(""),
            )
        )
        return item

    def _close_part(self, kind: _Kind, item: _Open, status: str, out: list[dict[str, Any]]) -> None:
        """A message or reasoning item closed: its text done, its part done, the item."""
        text = "".join(item.pieces)
        out.append(
            self._event(
                kind.text_done,
                item_id=item.id,
                output_index=item.index,
                **kind.place,
                text=text,
                **kind.text_extra,
            )
        )
        out.append(
            self._event(
                kind.part_done,
                item_id=item.id,
                output_index=item.index,
                **kind.place,
                part=kind.part(text),
            )
        )
        out.append(
            self._event(
                "response.output_item.done",
                output_index=item.index,
                item=kind.item(item.id, status, text),
            )
        )
        self._output.append(kind.item(item.id, status, text))

    def _finish_call(self, number: int, out: list[dict[str, Any]]) -> None:
        call = self._calls.pop(number, None)
        if call is None:
            return
        arguments = "".join(call.pieces)
        out.append(
            self._event(
                "response.function_call_arguments.done",
                item_id=call.id,
                name=call.name,
                output_index=call.index,
                arguments=arguments,
            )
        )
        out.append(
            self._event(
                "response.output_item.done",
                output_index=call.index,
                item=_function_call(call.id, "completed", call.call_id, call.name, arguments),
            )
        )
        self._output.append(
            _function_call(call.id, "completed", call.call_id, call.name, arguments)
        )

    def _abort_call(self, number: int, out: list[dict[str, Any]]) -> str:
        """The call's item done, ``"incomplete"``, and left out of the output; its name."""
        call = self._calls.pop(number, None)
        if call is None:
            return ""
        out.append(
            self._event(
                "response.output_item.done",
                output_index=call.index,
                item=_function_call(
                    call.id, "incomplete", call.call_id, call.name, "".join(call.pieces)
                ),
            )
        )
        return call.name


def render_response(
    result: ParseResult,
    *,
    model: str = "callsieve",
    created: int | None = None,
    response_id_factory: IdFactory | None = None,
    message_id_factory: IdFactory | None = None,
    function_call_id_factory: IdFactory | None = None,
    call_id_factory: IdFactory | None = None,
    reasoning_id_factory: IdFactory | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    finish_reason: str | None = None,
    usage: Usage | None = None,
    include_reasoning: bool = True,
) -> dict[str, Any]:
    """The whole ``response`` object for ``result`` (``usage`` zeros unless given); one cut
    off inside a call (``_aborts.cut_off``) is ``"incomplete"`` for a natural reason."""
    if finish_reason not in FINISH_REASONS:
        raise ConfigurationError(
            f"finish_reason must be one of {FINISH_REASONS!r}, got {finish_reason!r}"
        )
    encoder = StreamRenderer(
        model=model,
        created=created,
        response_id_factory=response_id_factory,
        message_id_factory=message_id_factory,
        function_call_id_factory=function_call_id_factory,
        call_id_factory=call_id_factory,
        reasoning_id_factory=reasoning_id_factory,
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
    )
    out: list[dict[str, Any]] = []
    encoder._render(
        reply_events(result, trim_around_calls=True, include_reasoning=include_reasoning), out
    )
    if cut_off(result.blocks):
        finish_reason = finish_after_cut(finish_reason)
    response: dict[str, Any] = encoder._end(finish_reason, _usage(usage), out)[-1]["response"]
    return response

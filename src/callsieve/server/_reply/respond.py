"""Strategy: one reply, from a model source through a ``Sieve`` to a client API — streamed as
Server-Sent Events, or whole — with each decision about a reply made in one place.

What it does:
  - ``sieve_options(config, req, defaults)`` is *the* place a request's sieve options are
    decided: the app's defaults, the server's settings over them, the request's tools, and
    ``mode="off"`` (without a policy) when the reply is text only (no tools, or
    ``tool_choice="none"``). ``make_sieve`` builds the sieve from them (a tool the sieve
    refuses is a 400 naming ``tools``).
  - ``ReplyEvents`` is *the* place a reply's events are decided before a renderer sees them:
    the sieve's events for the model's text; at the end, the sieve's last events and the
    upstream's own tool calls (``delta.tool_calls``, merged after what the sieve found, as
    one ``ToolCalls``); and the request's call limit (``parallel_tool_calls=false``: the
    first call is kept, later ones are dropped whole — ``CallLimit``).
  - ``stream_reply(api, req, source, events, emit)`` is the body of a streamed response:
    each piece of the model's text goes through ``ReplyEvents`` and the API's
    ``StreamRenderer``, and the frames of one piece are handed to ``emit`` as one string; a
    piece's reasoning (an upstream's ``reasoning_content``) goes to the renderer first, as a
    ``Reasoning`` event. ``end_of_reply`` is *the* place the end is rendered: the last
    events, the renderer's ``close(finish_reason, usage)``, the API's end marker — unless a
    call that began to stream aborted, and the renderer ended the reply with the API's error
    signal (SPEC §17): then the stream stops there (no end marker; the upstream is closed)
    and its outcome is ``stream_aborted``.
  - ``whole_reply`` feeds the same ``ReplyEvents`` as the pieces arrive (never one parse of
    the whole text at the end, which would hold the event loop for as long as it takes) and
    renders ``render_response`` of what they collected (``Collected``, a ``ParseResult``
    whose long runs of text are written into the response only as it is sent).
A piece larger than ``SLICE`` characters is fed in slices, with a checkpoint between them,
so one huge upstream event does not hold the event loop either.
What it guarantees: a fault after the stream began (``ApiError`` from the source; an
unexpected exception, logged, as a 500) ends the stream with the API's error event, and the
outcome says which (``"ok"``, ``"stream_aborted"``, ``"server_error"``); what was sent before
stays valid (held text and an open block are not released: the reply is broken). The caller
closes the source, whatever ends the reply.
What it costs: the sieve and the renderer per piece; a whole reply holds its text once
(joined as it grows, never one object per upstream event).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from ... import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    ConfigurationError,
    Event,
    ParseResult,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
)
from .._config import ServerConfig
from .._errors import ApiError
from .._json import Deferred
from .._read.turns import ModelRequest
from .apis import Api
from .upstream import Piece

__all__ = [
    "SLICE",
    "CallLimit",
    "Collected",
    "ReplyEvents",
    "Source",
    "end_of_reply",
    "make_sieve",
    "sieve_options",
    "stream_reply",
    "whole_reply",
]

log = logging.getLogger("callsieve.server")
#: Options that judge calls; a text-only reply has none (and has no tools to judge by).
_JUDGING = ("policy", "on_reject")
_FINISH = ("stop", "length", "content_filter", "tool_calls")
#: The most characters fed to the sieve at once (a checkpoint between slices).
SLICE = 1 << 16
_UPSTREAM_BLOCK = Block((0, 0), "upstream", "complete")


class Source(Protocol):
    finish_reason: str | None
    usage: dict[str, int] | None

    def pieces(self) -> AsyncIterator[Piece]: ...

    def calls(self) -> list[ToolCall]: ...

    async def aclose(self) -> None: ...


def sieve_options(
    config: ServerConfig, req: ModelRequest, defaults: dict[str, Any] | None = None
) -> dict[str, Any]:
    options = {**(defaults or {}), **config.sieve}
    if not req.parses:  # text only: nothing is parsed, so there is no call to judge
        options["mode"] = "off"
        for name in _JUDGING:
            options.pop(name, None)
    options["tools"] = req.tools or None
    return options


def make_sieve(options: dict[str, Any]) -> Sieve:
    try:
        return Sieve(**options)
    except ConfigurationError as exc:
        raise ApiError(400, f"tools: {exc}", param="tools") from None


class CallLimit:
    """Sieve events in, the same events out with only the reply's first ``limit`` calls:
    a later call is dropped whole (its start, arguments and end, and its place in the
    ``ToolCalls`` that settles it), so a renderer never sees it begin."""

    __slots__ = ("limit", "_kept", "_open", "_settle")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept = 0  # calls kept, finished or open
        self._open: dict[int, bool] = {}  # a started call's index -> kept
        self._settle: deque[bool] = deque()  # per CallFinished not yet settled: kept

    def __call__(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if isinstance(e, CallStarted):
                keep = self._take()
                self._open[e.index] = keep
            elif isinstance(e, ArgumentsDelta):
                keep = self._open.get(e.index, False)
            elif isinstance(e, CallFinished):
                started = self._open.pop(e.index, None)
                keep = self._take() if started is None else started
                self._settle.append(keep)
            elif isinstance(e, CallAborted):
                keep = self._open.pop(e.index, False)
                self._kept -= keep
            elif isinstance(e, ToolCalls):
                k = min(len(self._settle), len(e.calls))
                calls = [c for c in e.calls[:k] if self._settle.popleft()]
                calls += [c for c in e.calls[k:] if self._take()]
                if len(calls) == len(e.calls):
                    out.append(e)
                elif calls:
                    out.append(ToolCalls(tuple(calls), e.block))
                continue
            else:
                keep = True
            if keep:
                out.append(e)
        return out

    def _take(self) -> bool:
        if self._kept < self.limit:
            self._kept += 1
            return True
        return False


class ReplyEvents:
    """The events a reply's renderer gets (see the module's docstring)."""

    __slots__ = ("sieve", "_limit")

    def __init__(self, sieve: Sieve, max_calls: int | None = None) -> None:
        self.sieve = sieve
        self._limit = CallLimit(max_calls) if max_calls is not None else None

    def feed(self, text: str) -> list[Event]:
        events = self.sieve.feed(text)
        return self._limit(events) if self._limit is not None and events else events

    def close(self, upstream_calls: list[ToolCall]) -> list[Event]:
        events = self.sieve.close()
        if upstream_calls:
            events.append(ToolCalls(tuple(upstream_calls), _UPSTREAM_BLOCK))
        return self._limit(events) if self._limit is not None else events


def _finish(source: Source) -> str | None:
    return source.finish_reason if source.finish_reason in _FINISH else None


def _slices(text: str) -> list[str]:
    return (
        [text] if len(text) <= SLICE else [text[i : i + SLICE] for i in range(0, len(text), SLICE)]
    )


async def stream_reply(
    api: Api,
    req: ModelRequest,
    source: Source,
    events: ReplyEvents,
    emit: Callable[[str, int], Awaitable[None]],
) -> str:
    """Stream the reply through ``emit``; the outcome (``"ok"``, ``"stream_aborted"``,
    ``"server_error"``)."""
    frame = api.frame
    sent = 0
    try:
        renderer = api.stream_renderer(req)
        async for piece in source.pieces():
            objs = renderer.feed([Reasoning(piece.reasoning)]) if piece.reasoning else []
            if piece.text:
                slices = _slices(piece.text)
                for i, part in enumerate(slices):
                    if i:  # (a huge piece: let the other replies run between slices)
                        await anyio.lowlevel.checkpoint()
                    objs += renderer.feed(events.feed(part))
                    if len(slices) > 1 and objs:
                        await emit("".join([frame(o) for o in objs]), len(objs))
                        sent += len(objs)
                        objs = []
            if objs:
                await emit("".join([frame(o) for o in objs]), len(objs))
                sent += len(objs)
            if _ended(renderer):  # a call aborted: its error event ended the reply
                return "stream_aborted"
        objs = end_of_reply(api, req, source, events, renderer)
        end = "" if _ended(renderer) else api.end
        await emit("".join([frame(o) for o in objs]) + end, len(objs))
        if end != api.end:
            return "stream_aborted"
    except ApiError as err:
        await emit(api.error_frame(err, sent), 1)
        return "stream_aborted"
    except Exception as exc:  # a bug, not the model's fault: logged, and the stream ends
        log.exception("unexpected error while streaming a reply")
        await emit(
            api.error_frame(
                ApiError(500, f"internal error ({type(exc).__name__})", code="internal_error"), sent
            ),
            1,
        )
        return "server_error"
    return "ok"


def _ended(renderer: Any) -> bool:
    """Whether the renderer ended the reply with its API's error (a call that began to
    stream aborted, ``callsieve.render``'s ``on_abort="error"``): nothing more goes out,
    and the upstream is closed."""
    return getattr(renderer, "aborted", None) is not None


def end_of_reply(
    api: Api, req: ModelRequest, source: Source, events: ReplyEvents, renderer: Any
) -> list[dict[str, Any]]:
    """The reply's last objects: what the sieve still held, the upstream's own calls, and
    the renderer's end (finish reason, usage)."""
    usage = (source.usage or {}) if api.wants_usage(req) else None
    objs: list[dict[str, Any]] = renderer.feed(events.close(source.calls()))
    end: list[dict[str, Any]] = renderer.close(_finish(source), usage=usage)
    return objs + end


async def whole_reply(
    api: Api, req: ModelRequest, source: Source, events: ReplyEvents
) -> tuple[dict[str, Any], Deferred]:
    """The whole response, and the long text it stands for (``_http.send_json`` writes
    both)."""
    collected = Collected()
    async for piece in source.pieces():
        if piece.reasoning:
            collected.add([Reasoning(piece.reasoning)])
        if piece.text:
            for i, part in enumerate(_slices(piece.text)):
                if i:
                    await anyio.lowlevel.checkpoint()
                collected.add(events.feed(part))
    collected.add(events.close(source.calls()))
    response = api.whole(collected.result(events.sieve), req, _finish(source), source.usage or {})
    return response, collected.deferred


class _Run:
    """Text that grows in many small pieces, kept as pieces of about ``SLICE`` characters
    (a list of a million 4-character strings costs twenty times the text; one string of
    the whole run costs a join that holds the event loop)."""

    __slots__ = ("_pieces", "_small", "_small_len")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._small: list[str] = []
        self._small_len = 0

    def add(self, text: str) -> None:
        if len(text) >= SLICE:
            self._flush()
            self._pieces.extend(_slices(text))
            return
        self._small.append(text)
        self._small_len += len(text)
        if self._small_len >= SLICE:
            self._flush()

    def _flush(self) -> None:
        if self._small:
            self._pieces.append("".join(self._small))
            self._small, self._small_len = [], 0

    def take(self, deferred: Deferred) -> str:
        self._flush()
        out, self._pieces = deferred.text(self._pieces), []
        return out

    def __bool__(self) -> bool:
        return bool(self._pieces or self._small)


class Collected:
    """A whole reply's events gathered into a ``ParseResult`` (the upstream's reasoning
    where it came, the sieve's text, reasoning and calls in order). A long run of text or
    reasoning stands in the result as its ends around a marker (``_json.Deferred``), put
    back as the response is sent: no string of the whole reply is ever made."""

    __slots__ = ("_calls", "_parts", "_run", "_in_text", "deferred")

    def __init__(self) -> None:
        self._calls: list[ToolCall] = []
        self._parts: list[str | Reasoning | ToolCall] = []
        self._run = _Run()  # text or reasoning since the last part of the other kind
        self._in_text = True
        #: The long runs, written into the response only as it is sent (``_json``).
        self.deferred = Deferred()

    def add(self, events: Iterable[Event]) -> None:
        for e in events:
            if isinstance(e, Text | Reasoning):
                if not e.text:
                    continue
                if isinstance(e, Text) != self._in_text:
                    self._end_run()
                    self._in_text = not self._in_text
                self._run.add(e.text)
            elif isinstance(e, ToolCalls) and e.calls:
                self._end_run()
                self._calls.extend(e.calls)
                self._parts.extend(e.calls)

    def _end_run(self) -> None:
        if self._run:
            joined = self._run.take(self.deferred)
            self._parts.append(joined if self._in_text else Reasoning(joined))

    def result(self, sieve: Sieve) -> ParseResult:
        self._end_run()
        parts = tuple(self._parts)
        text = "".join([p for p in parts if isinstance(p, str)])
        thought = "".join([p.text for p in parts if isinstance(p, Reasoning)])
        return ParseResult(
            text,
            tuple(self._calls),
            sieve.blocks,
            sieve.saw_tool_call_syntax,
            sieve.rejected_by_policy,
            sieve.rejected_tool_names,
            parts=parts,
            reasoning=thought,
            rejections=sieve.rejections,
        )

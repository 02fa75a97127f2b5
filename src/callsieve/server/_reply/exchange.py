"""Strategy: one API request's life over ASGI, from its body to its last byte — and every way
it can end early: the client goes away (the upstream request is cancelled at once, whatever
stage it is at), the gateway drains for a shutdown, the upstream fails.

What it does: ``Endpoint(gateway, api)`` is the ASGI app of one API route. For each request:
the body is read (``_http.read_body``, up to ``max_body_bytes``), parsed strictly
(``_json.loads_strict``), read by the API's reader, its sieve built (``respond``) and its
upstream prompt written — all before the response starts, so each fault has its status and
counts as a ``client_error``; a large body (``INLINE_BYTES``), or any under
``policy="schema"``, goes through these steps in a worker thread, one at a time. Then the ``Exchange`` runs, in a task group that also watches
the client (``http.disconnect`` cancels everything: the source is closed, shielded, which
closes the upstream connection — before the upstream's headers, during a whole request,
during a stream); the drain calls it back at the grace period's end (the work is cancelled
and the request is answered as a shutdown). The source is opened (an upstream fault before the
reply: its status, ``upstream_error``): a streamed request asks the upstream for a stream,
a whole one for a whole reply (``upstream.open_upstream``); a streamed reply starts with 200 and
``text/event-stream``, goes through ``respond.stream_reply``, and while nothing is sent for
``keepalive_interval`` seconds the API's keep-alive goes out (an SSE comment; Anthropic's
``ping``); a whole reply is ``respond.whole_reply``, sent with ``_http.send_json`` in
slices. The request is counted in ``/metrics`` by its outcome and logged in one line when
it ends.
What it guarantees: a stream's frames are written whole, one write each, under one lock
(the keep-alive task takes it too); text that cannot be encoded ends the stream with the
API's error event (``respond``), never a cut connection; nothing is written after the
client went away.
What it costs: one waiting task per request (two while streaming), besides the reply; the
drain calls the exchange back (``Drain.enlist``), no task waits for it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.types import Message, Receive, Scope, Send

from .._errors import ApiError
from .._http import ClientGone, log_answer, read_body, send_json
from .._json import Deferred, loads_strict
from .._read.turns import ModelRequest
from .apis import Api
from .prompting import upstream_payload
from .replay import ReplaySource
from .respond import ReplyEvents, Source, reply_events, stream_reply, whole_reply
from .upstream import open_upstream

if TYPE_CHECKING:
    from .._app import Gateway

__all__ = ["INLINE_BYTES", "Endpoint", "Exchange"]

log = logging.getLogger("callsieve.server")
_SSE = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
#: A body larger than this is parsed and read in a worker thread, one at a time per worker
#: process (a smaller one costs less than the hand-over); under ``policy="schema"`` every
#: body is (checking a schema against its meta-schema costs about 0.5 ms per kB of it).
INLINE_BYTES = 64 * 1024
_SHUTDOWN = "the gateway is shutting down; retry the request"


def _headers(err: ApiError) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in err.headers.items()]


class Endpoint:
    """The ASGI app of one API's route."""

    def __init__(self, gateway: Gateway, api: Api, params: Any = None) -> None:
        self.gateway = gateway
        self.api = api
        self.params = params  # (scope -> the reader's parameters: Gemini's model and stream)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        gw, api = self.gateway, self.api
        try:
            if gw.drain.stopping:
                raise ApiError(503, _SHUTDOWN, code="shutting_down", headers={"Retry-After": "1"})
            data = await read_body(receive, scope, gw.config.max_body_bytes)
            params = self.params(scope) if self.params else {}
            if len(data) <= INLINE_BYTES and gw.config.sieve.get("policy") != "schema":
                req, events, payload = self._prepare(data, params)
            else:  # (off the event loop, one body at a time: the others' requests go on)
                if gw.parsing is None:
                    gw.parsing = anyio.CapacityLimiter(1)
                req, events, payload = await anyio.to_thread.run_sync(
                    self._prepare, data, params, limiter=gw.parsing
                )
        except ClientGone:
            self._done(scope, 499, "cancelled", started)
            return
        except ApiError as err:
            outcome = "client_error" if err.status < 500 else "shutdown"
            await send_json(send, err.status, api.error_body(gw.redact.error(err)), _headers(err))
            self._done(scope, err.status, outcome, started, err.code)
            return
        except Exception:  # a bug: counted and answered here (Starlette would only log it)
            self._done(scope, 500, "server_error", started)
            raise
        exchange = Exchange(gw, api, req, events, payload, send)
        try:
            await exchange.run(receive)
        except Exception:
            exchange.status, exchange.outcome = 500, "server_error"
            raise
        finally:
            self._done(scope, exchange.status, exchange.outcome, started, exchange.code)

    def _prepare(
        self, data: bytes, params: dict[str, str]
    ) -> tuple[ModelRequest, ReplyEvents, dict[str, Any] | None]:
        """The body parsed and read, the reply's sieve built (its tools' schemas checked) and
        the upstream's prompt written."""
        config = self.gateway.config
        body = loads_strict(data, config.max_json_depth)
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object", code="invalid_json")
        req = self.api.read(body, params)
        events = reply_events(config, req, self.gateway.metrics.sieve_defaults)
        payload = upstream_payload(config, req) if config.upstream else None
        return req, events, payload

    def _done(
        self, scope: Scope, status: int, outcome: str, started: float, code: str | None = None
    ) -> None:
        self.gateway.metrics.answered(self.api.name, status, outcome)
        log_answer(scope, status, outcome if code is None else f"{outcome} {code}", started)


class Exchange:
    """One request from its source to its last byte (see the module's docstring)."""

    def __init__(
        self,
        gateway: Gateway,
        api: Api,
        req: ModelRequest,
        events: ReplyEvents,
        payload: dict[str, Any] | None,
        send: Send,
    ) -> None:
        self.gw, self.api, self.req, self.events = gateway, api, req, events
        self.payload = payload
        self._client_send = send
        self.work = anyio.CancelScope()  # cancelled by the drain at the grace period's end
        self.started = False  # the response's headers went out
        self.stopping = False
        self.status = 200
        self.outcome = "ok"
        self.code: str | None = None
        self._lock = anyio.Lock(fast_acquire=True)
        self._last = 0.0  # when the last frame went out
        self.sent = 0  # frames sent (a Responses error event is numbered after them)
        self.finished = False  # the response's last byte went out

    async def _send(self, message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.finished = True  # (before the send: the watcher may run during it)
        await self._client_send(message)

    async def run(self, receive: Receive) -> None:
        drain = self.gw.drain
        drain.enlist(self._on_drain)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_client, receive, tg.cancel_scope)
                try:
                    await self._respond(tg)
                finally:
                    tg.cancel_scope.cancel()
        finally:
            drain.discharge(self._on_drain)

    async def _watch_client(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        if not self.finished:  # (after the last byte, Uvicorn reports the end as a disconnect)
            self.status, self.outcome = 499, "cancelled"
            scope.cancel()

    def _on_drain(self) -> None:
        """The drain's grace period ended: the work stops, the request is answered as a
        shutdown."""
        self.stopping = True
        self.work.cancel()

    async def _respond(self, tg: Any) -> None:
        source: Source | None = None
        reply: tuple[dict[str, Any], Deferred] | None = None
        try:
            with self.work:
                source = await self._open()
                if self.req.stream:
                    await self._start_stream()
                    tg.start_soon(self._keepalive)
                    self.outcome = await stream_reply(
                        self.api, self.req, source, self.events, self.emit, self.gw.config.on_abort
                    )
                else:
                    reply = await whole_reply(self.api, self.req, source, self.events)
        except ApiError as err:  # (before the reply began: the stream reports its own)
            self.gw.redact.error(err)
            self.status, self.outcome, self.code = err.status, "upstream_error", err.code
            await send_json(self._send, err.status, self.api.error_body(err), _headers(err))
            return
        finally:
            if source is not None:
                with anyio.CancelScope(shield=True):
                    await source.aclose()
        if self.stopping and self.work.cancelled_caught:
            await self._shutdown()
        elif reply is not None:
            await send_json(self._send, 200, reply[0], deferred=reply[1])
        elif self.started:
            async with self._lock:
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _open(self) -> Source:
        config = self.gw.config
        if config.upstream is None:
            return ReplaySource(config.transcript_text, config.chunk_size, config.delay_ms)
        assert self.payload is not None
        return await open_upstream(
            self.gw.client, config, self.payload, self.gw.redact, stream=self.req.stream
        )

    async def _start_stream(self) -> None:
        await self._send({"type": "http.response.start", "status": 200, "headers": _SSE})
        self.started = True
        self._last = anyio.current_time()

    async def emit(self, text: str, frames: int) -> None:
        """Write ``frames`` frames (one write); raises ``UnicodeEncodeError`` before writing
        anything if they cannot be encoded."""
        data = text.encode("utf-8")
        self.sent += frames
        async with self._lock:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})
        self._last = anyio.current_time()

    async def _keepalive(self) -> None:
        frame = self.api.keepalive.encode()
        interval = self.gw.config.keepalive_interval
        if not frame or not interval:
            return
        while True:
            await anyio.sleep(max(self._last + interval - anyio.current_time(), 0.01))
            if anyio.current_time() - self._last >= interval:
                async with self._lock:
                    if self.finished:  # (the last byte went out while this one waited)
                        return
                    await self._send(
                        {"type": "http.response.body", "body": frame, "more_body": True}
                    )
                self._last = anyio.current_time()

    async def _shutdown(self) -> None:
        err = ApiError(503, _SHUTDOWN, code="shutting_down", headers={"Retry-After": "1"})
        self.outcome, self.status, self.code = "shutdown", 503, err.code
        if self.started:
            async with self._lock:
                await self._send(
                    {
                        "type": "http.response.body",
                        "more_body": False,
                        "body": self.api.error_frame(err, self.sent).encode("utf-8"),
                    }
                )
            self.status = 200
        else:
            await send_json(self._send, 503, self.api.error_body(err), _headers(err))

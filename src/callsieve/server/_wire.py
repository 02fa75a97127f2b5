"""Strategy: every HTTP request's deadlines on the wire and its one access-log line, in the
outermost ASGI middleware, so no route can forget them.

What it does: ``Wire(app, config)`` wraps the whole app (both ports). For each request it
tells the connection's guard (``_conn``) that the head is complete, then:
  - each ``receive()`` of the body waits at most ``body_timeout`` seconds; a body that stalls
    longer is ``ApiError(408, body_timeout)``, answered by the route in the API's shape with
    ``Connection: close``;
  - each ``send()`` waits at most ``send_timeout`` seconds (in upstream mode, nor longer than
    ``idle_timeout``: the upstream is not read meanwhile), and never past ``total_timeout``
    from the request's start: a client that does not read is dropped (``abort()``), so its
    request ends as a client gone (the upstream connection is closed with it);
  - when it ends, one log line on ``callsieve.server``: the client, the method and path,
    the status, the outcome and code (``log_answer`` from a route; else by status), the
    duration and the body bytes sent — ``127.0.0.1:50312 "POST /v1/messages" 200 ok -
    12.3ms 1841B``. The method, path and client are escaped (``escape``): a byte outside
    printable ASCII, a quote or a backslash is written ``\\xNN``, so no request can forge a
    line or a field. The query string is never logged (a Gemini key may be in it).
What it guarantees: one line per HTTP request that reached the app, whatever its end.
What it costs: two wrapped calls per message and one log line per request.
"""

from __future__ import annotations

import logging
import time

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._config import ServerConfig
from ._conn import GUARD_KEY
from ._errors import ApiError
from ._http import RECORD_KEY, Record

__all__ = ["Wire", "escape"]

log = logging.getLogger("callsieve.server")
_PLAIN = frozenset(range(0x21, 0x7F)) - {ord('"'), ord("\\")}


def escape(text: str) -> str:
    """``text`` with every character outside printable ASCII, a quote and a backslash
    written as ``\\xNN`` (``\\uNNNN`` beyond a byte)."""
    if text.isascii() and all(ord(c) in _PLAIN for c in text):
        return text
    return "".join(
        c if ord(c) in _PLAIN else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")
        for c in text
    )


class Wire:
    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config
        #: A write waits no longer than this (upstream mode: nor than the upstream's idle
        #: deadline, since the upstream is not read meanwhile).
        self.longest_write = (
            min(config.send_timeout, config.idle_timeout)
            if config.upstream
            else config.send_timeout
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        guard = (scope.get("state") or {}).get(GUARD_KEY)
        if guard is not None:
            guard.request_started()
        record = Record(time.perf_counter())
        scope[RECORD_KEY] = record
        config = self.config
        deadline = anyio.current_time() + config.total_timeout
        longest = self.longest_write
        body_done = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            with anyio.move_on_after(config.body_timeout):
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body", False):
                    body_done = True
                return message
            raise ApiError(
                408,
                f"the request body stalled: nothing came for {config.body_timeout:g} s",
                code="body_timeout",
                headers={"Connection": "close"},
            )

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = int(message["status"])
            else:
                record.bytes += len(message.get("body", b""))
            wait = min(longest, deadline - anyio.current_time())
            with anyio.move_on_after(max(wait, 0.0)) as waited:
                await send(message)
            if waited.cancelled_caught:
                record.note = "send_timeout"
                if guard is not None:
                    guard.abort()
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                record.complete = True
                if guard is not None:
                    guard.response_done()

        try:
            await self.app(scope, timed_receive, timed_send)
        finally:
            _log(scope, record)


def _log(scope: Scope, record: Record) -> None:
    status = record.status
    outcome, _, code = (record.outcome or _by_status(status)).partition(" ")
    if record.note:
        code = f"{code},{record.note}" if code else record.note
    client = scope.get("client")
    where = f"{client[0]}:{client[1]}" if client else "-"
    ms = (time.perf_counter() - record.started) * 1000
    log.log(
        logging.WARNING if status >= 500 else logging.INFO,
        '%s "%s %s" %d %s %s %.1fms %dB',
        escape(where),
        escape(str(scope.get("method", "-"))),
        escape(str(scope.get("path", "-"))),
        status,
        escape(outcome),
        escape(code or "-"),
        ms,
        record.bytes,
    )


def _by_status(status: int) -> str:
    if status == 0:  # (no answer began: the client went away first)
        return "cancelled"
    if status < 400:
        return "ok"
    return "client_error" if status < 500 else "server_error"

"""Strategy: connection hygiene below HTTP — the one place that knows Uvicorn's protocol
class. Uvicorn has no header timeout, no per-worker connection cap that answers in the
API's shape, and no way to close a connection from the app; this adapter adds them around
Uvicorn's own HTTP protocol, through its public constructor and asyncio's protocol calls.

What it does: ``Uvicorn(http=ConnectionGuard)`` makes one ``ConnectionGuard`` per accepted
connection. It sets ``TCP_NODELAY`` on the socket (so a head and a body written apart do not
wait for the client's delayed ACK), then finds the worker's ``Connections`` in the lifespan
state (the app's lifespan puts it there, ``STATE_KEY``) and:
  - below ``max_connections`` open connections, hands the connection to Uvicorn's protocol
    (``AutoHTTPProtocol``), with itself in the requests' ``scope["state"]`` (``GUARD_KEY``),
    over a transport that joins a small write to the next one (``Joined``: a response's
    head and a small body go out in one system call, so the client wakes once);
  - at the cap, answers it itself: it reads the request head for up to a second, answers 503
    ``too_many_connections`` in the shape of the API the path belongs to (``Retry-After:
    1``, ``Connection: close``), half-closes, and drops what else comes for a second. A
    connection over the cap while many are being refused (``_REFUSING``) is closed at once.
The header deadline runs from the connection's start, and from the end of each response,
to the next request's headers (``request_started``, called by the ASGI layer, ``_wire``):
when it passes, the connection is closed (after a ``408`` if part of a head came). The idle
keep-alive deadline is Uvicorn's own ``timeout_keep_alive``. ``abort()`` drops the
connection (the send deadline, ``_wire``). ``quiet_accept_errors(loop)`` turns asyncio's
``socket.accept() out of system resource`` traceback into one line every ten seconds.
What it guarantees: a worker holds at most ``max_connections`` connections besides those
being refused; a connection that never sends a whole head is closed at ``header_timeout``.
What it costs: one timer per connection and two method calls per read; a small write is
copied once more and waits at most for the end of the event loop's step.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from dataclasses import dataclass
from typing import Any

from ._errors import ApiError
from ._reply.apis import error_shape

__all__ = [
    "GUARD_KEY",
    "STATE_KEY",
    "ConnectionGuard",
    "ConnectionLimits",
    "Connections",
    "Joined",
    "quiet_accept_errors",
]

log = logging.getLogger("callsieve.server")
#: Where the lifespan state holds the worker's ``Connections``.
STATE_KEY = "callsieve.connections"
#: Where a request's ``scope["state"]`` holds its connection's ``ConnectionGuard``.
GUARD_KEY = "callsieve.connection"
#: Seconds a refused connection has to send its request head, and then to go away.
_REFUSE_WAIT = 1.0
_REFUSING = 64
_HEAD_MAX = 16384
_LOG_EVERY = 10.0
_TIMEOUT_408 = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    header_timeout: float


class Connections:
    """One worker's open connections and their limits (made by the app's lifespan)."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: set[ConnectionGuard] = set()
        self.refusing = 0
        self.refused = 0  # since the last log line
        self._logged = -_LOG_EVERY

    def note_refused(self) -> None:
        self.refused += 1
        now = time.monotonic()
        if now - self._logged >= _LOG_EVERY:
            log.warning(
                "refused %d connection(s) over the cap of %d per worker (max_connections)",
                self.refused,
                self.limits.max_connections,
            )
            self.refused, self._logged = 0, now


def _http_protocol() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return AutoHTTPProtocol


class ConnectionGuard(asyncio.Protocol):
    """Uvicorn's ``http`` protocol class: Uvicorn's own, behind the checks above."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._loop = _loop or asyncio.get_event_loop()
        self._made = (config, server_state, app_state)
        self.conns: Connections | None = app_state.get(STATE_KEY)
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._head_bytes = False  # part of a request head came since the deadline was set
        self._busy = False  # a request is running

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:  # pragma: no cover - the connection is already gone
                pass
        conns = self.conns
        if conns is not None and len(conns.open) >= conns.limits.max_connections:
            self.inner = _Refusal(conns, self._loop)
            self.inner.connection_made(transport)
            return
        config, server_state, app_state = self._made
        state = {**app_state, GUARD_KEY: self}
        self.inner = _http_protocol()(  # type: ignore[call-arg]
            config=config, server_state=server_state, app_state=state, _loop=self._loop
        )
        if conns is not None:
            conns.open.add(self)
            self._arm()
        self.inner.connection_made(Joined(transport, self._loop))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        if not self._busy:
            self._head_bytes = True
        assert self.inner is not None
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        assert self.inner is not None
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self.conns is not None:
            self.conns.open.discard(self)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    # The ASGI layer's calls (``_wire``).
    def request_started(self) -> None:
        """A request's head is complete: its deadline no longer runs."""
        self._busy = True
        self._cancel()

    def response_done(self) -> None:
        """The response went out: the next head's deadline starts."""
        self._busy = False
        if self.conns is not None and self.transport and not self.transport.is_closing():
            self._arm()

    def abort(self) -> None:
        """Drop the connection now (what is buffered is not sent)."""
        if self.transport is not None:
            self.transport.abort()

    def _arm(self) -> None:
        assert self.conns is not None
        self._cancel()
        self._head_bytes = False
        self._timer = self._loop.call_later(self.conns.limits.header_timeout, self._expire)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        transport = self.transport
        if self._busy or transport is None or transport.is_closing():
            return
        if self._head_bytes:
            transport.write(_TIMEOUT_408)
        transport.close()


class _Refusal(asyncio.Protocol):
    """A connection over the cap: a 503 in its API's shape, then a lingering close."""

    def __init__(self, conns: Connections, loop: asyncio.AbstractEventLoop) -> None:
        self.conns = conns
        self.loop = loop
        self.head = b""
        self.answered = False
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.conns.note_refused()
        if self.conns.refusing >= _REFUSING:
            transport.abort()
            return
        self.conns.refusing += 1
        self.timer = self.loop.call_later(_REFUSE_WAIT, self._answer)

    def data_received(self, data: bytes) -> None:
        if self.answered:
            return
        self.head += data
        if b"\r\n\r\n" in self.head or len(self.head) > _HEAD_MAX:
            self._answer()

    def eof_received(self) -> bool | None:
        if self.transport is not None:
            self.transport.close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.conns.refusing -= 1
            self.timer = None

    def _answer(self) -> None:
        transport = self.transport
        if self.answered or transport is None or transport.is_closing():
            return
        self.answered = True
        if self.timer is not None:
            self.timer.cancel()
        err = ApiError(
            503,
            f"the gateway has its {self.conns.limits.max_connections} connections open "
            "(max_connections); retry later",
            code="too_many_connections",
        )
        body = json.dumps(error_shape(_path(self.head))(err)).encode()
        transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" % len(body) + body
        )
        if transport.can_write_eof():
            transport.write_eof()
        self.timer = self.loop.call_later(_REFUSE_WAIT, transport.abort)


def _path(head: bytes) -> str:
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    return parts[1].decode("latin-1") if len(parts) == 3 else "/"


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """One log line every ten seconds, without a traceback, for ``accept()`` failing for
    want of file descriptors (asyncio retries it every second, with a traceback each time)."""
    previous = loop.get_exception_handler()
    last = [-_LOG_EVERY]

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == "socket.accept() out of system resource":
            now = time.monotonic()
            if now - last[0] >= _LOG_EVERY:
                last[0] = now
                log.warning(
                    "accept() failed: %s; lower max_connections or raise the file limit "
                    "(ulimit -n)",
                    context.get("exception"),
                )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


#: The largest write ``Joined`` holds or joins (a response head, a small body or frame).
_JOIN = 16 * 1024


class Joined:
    """The transport Uvicorn's protocol writes to: a write is held until the next one or
    the end of the event loop's step, whichever comes first, so a response's head and its
    first body bytes go out in one system call (one wake-up for the client, not two).
    Everything else is the connection's own transport."""

    __slots__ = ("_transport", "_loop", "_held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        held, self._held = self._held, None
        if held is not None:  # (the next write: both in one call, if it is small)
            if len(data) <= _JOIN:
                self._transport.write(held + bytes(data))
                return
            self._transport.write(held)
        elif len(data) <= _JOIN:  # (held until the next write or the step's end)
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
            return
        self._transport.write(data)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

"""Strategy: a graceful shutdown the clients can read — on SIGTERM (or SIGINT) the gateway
stops taking requests, lets the ones in flight finish for ``shutdown_grace`` seconds, then
ends each one that is left in its API's own terms.

What it does: ``Drain(grace)`` is shared by the app's requests. ``start()`` (at the app's
start-up, inside the event loop) makes its events and, in the main thread, chains a handler
in front of Uvicorn's for SIGTERM and SIGINT: the signal calls ``begin()`` in the loop, then
Uvicorn's own handler (which closes the listening sockets and waits for the requests in
flight). ``begin()`` marks the drain (``stopping``: new requests are answered 503) and, after
the grace period, sets ``expired`` and calls the ``on_expiry`` of every request still
running (each registers one with ``enlist``): it is then ended by its exchange
(``_reply.exchange``): a stream with the API's error event, a whole request with a 503 in
the API's shape. ``stop()`` puts the previous handlers back.
What it guarantees: a stream that finishes within the grace period finishes normally; the
process then exits as Uvicorn's shutdown completes (``serve`` makes that exit 0).
What it costs: a set's add and discard per request (no task waits per request).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import anyio

__all__ = ["Drain"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Drain:
    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.stopping = False
        self.expired: anyio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Any] = {}
        self._running: set[Callable[[], None]] = set()

    def start(self) -> None:
        self.expired = anyio.Event()
        self._loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            return  # (an app served from a thread, as the tests do: no signals there)
        for sig in _SIGNALS:
            self._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, self._on_signal)

    def stop(self) -> None:
        for sig, handler in self._previous.items():
            if signal.getsignal(sig) == self._on_signal:
                signal.signal(sig, handler)
        self._previous.clear()

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.begin)
        previous = self._previous.get(sig)
        if callable(previous):
            previous(sig, frame)

    def begin(self) -> None:
        """Start draining: refuse new requests, end the others after the grace period."""
        if self.stopping or self._loop is None:
            return
        self.stopping = True
        self._loop.call_later(self.grace, self._expire)

    def enlist(self, on_expiry: Callable[[], None]) -> None:
        """Call ``on_expiry`` when the grace period ends (at once if it has); ``discharge``
        it when the request ends."""
        if self.expired is not None and self.expired.is_set():
            on_expiry()
        else:
            self._running.add(on_expiry)

    def discharge(self, on_expiry: Callable[[], None]) -> None:
        self._running.discard(on_expiry)

    def _expire(self) -> None:
        if self.expired is not None:
            self.expired.set()
        running, self._running = self._running, set()
        for on_expiry in running:
            on_expiry()

"""Loopback helpers for the gateway's tests: real HTTP over 127.0.0.1, no mocks.

``openai_client(base)`` and ``anthropic_client(base)`` are the real SDK clients pointed at a
gateway (no retries); ``close_clients()`` closes every one made (the tests' conftest does it
after each test, so no connection is left for the garbage collector to complain about).
``running(config)`` serves ``callsieve.server.create_app(config)`` with Uvicorn in a thread on
an ephemeral port and yields its base URL; leaving the ``with`` shuts it down and joins the
thread. ``scripted(*scripts)`` runs a ``ScriptedModel``, the model on the other side of upstream mode: a real HTTP server
(``http.server``, in a thread, on an ephemeral port) that answers ``POST /v1/chat/completions``
by streaming the next ``Script`` as OpenAI SSE, and records what it was sent (``requests``) and
whether a client hung up mid-stream (``disconnected``). A script can also answer an error
status, hang before answering, die mid-stream or stream without end.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import uvicorn

from callsieve.server import ServerConfig, create_app

__all__ = ["Script", "ScriptedModel", "anthropic_client", "close_clients", "closed_port",
           "openai_client", "running", "scripted"]

_CLIENTS: list[Any] = []


def openai_client(base: str) -> openai.OpenAI:
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    _CLIENTS.append(client)
    return client


def anthropic_client(base: str) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)
    _CLIENTS.append(client)
    return client


def close_clients() -> None:
    while _CLIENTS:
        _CLIENTS.pop().close()


@contextmanager
def running(config: ServerConfig) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="warning",
                                           timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the gateway did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
        assert not thread.is_alive(), "the gateway did not stop"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def scripted(*scripts: Script) -> Iterator[ScriptedModel]:
    """A running ``ScriptedModel`` answering ``scripts`` in turn (the last one repeats)."""
    model = ScriptedModel(*scripts)
    model.start()
    try:
        yield model
    finally:
        model.close()


@dataclass
class Script:
    """One upstream answer: ``text`` streamed ``chunk`` characters per event (``reasoning``
    first, as ``reasoning_content``), then ``finish`` and ``usage``; or ``status`` with
    ``error``; ``hang`` seconds before answering; ``die_after`` events, then the connection
    closes without ``[DONE]``; ``endless``: events every 10 ms until the client goes away."""

    text: str = ""
    chunk: int = 4
    reasoning: str = ""
    finish: str = "stop"
    usage: tuple[int, int] = (11, 7)
    status: int = 200
    error: dict[str, Any] | None = None
    hang: float = 0.0
    die_after: int | None = None
    endless: bool = False


class ScriptedModel:
    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        self.disconnected = threading.Event()
        self.stop = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                model.requests.append(json.loads(self.rfile.read(length)))
                script = model.scripts.pop(0) if len(model.scripts) > 1 else model.scripts[0]
                model.answer(self, script)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)

    def answer(self, h: BaseHTTPRequestHandler, s: Script) -> None:
        if s.hang and self.stop.wait(s.hang):
            return
        if s.status != 200:
            body = json.dumps(s.error or {}).encode()
            h.send_response(s.status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.end_headers()
        deltas = [{"role": "assistant", "content": ""}]
        deltas += [{"reasoning_content": s.reasoning[i:i + s.chunk]}
                   for i in range(0, len(s.reasoning), s.chunk)]
        deltas += [{"content": s.text[i:i + s.chunk]} for i in range(0, len(s.text), s.chunk)]
        try:
            for n, delta in enumerate(deltas):
                if s.die_after is not None and n == s.die_after:
                    return  # the connection closes without [DONE]
                self._event(h, {"choices": [{"index": 0, "delta": delta,
                                             "finish_reason": None}]})
            while s.endless and not self.stop.is_set():
                self._event(h, {"choices": [{"index": 0, "delta": {"content": "la "},
                                             "finish_reason": None}]})
                time.sleep(0.01)
            self._event(h, {"choices": [{"index": 0, "delta": {}, "finish_reason": s.finish}]})
            self._event(h, {"choices": [], "usage": {"prompt_tokens": s.usage[0],
                                                     "completion_tokens": s.usage[1],
                                                     "total_tokens": sum(s.usage)}})
            h.wfile.write(b"data: [DONE]\n\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.disconnected.set()

    @staticmethod
    def _event(h: BaseHTTPRequestHandler, obj: dict[str, Any]) -> None:
        h.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
        h.wfile.flush()

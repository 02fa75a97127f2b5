"""Loopback helpers for the gateway's tests: real HTTP over 127.0.0.1, no mocks.

``openai_client(base)``, ``anthropic_client(base)`` and ``genai_client(base)`` are the real
SDK clients pointed at a gateway (no retries); ``close_clients()`` closes every one made (the
tests' conftest does it after each test, so no connection is left for the garbage collector
to complain about). ``running(config)`` serves ``callsieve.server.create_app(config)`` with
Uvicorn in a thread on an ephemeral port, with the settings ``callsieve serve`` gives it
(``_run.uvicorn_config``: the connection guard, the keep-alive), and yields its base URL
(``running_server``: and the server); leaving the ``with`` shuts it down and joins the
thread. ``serving(*args)`` runs ``callsieve serve`` as a real process (``Served``: its URL,
pid, resident memory, log). ``scripted(*scripts)`` runs a
``ScriptedModel``, the model on the other side of upstream mode: a real HTTP server on
127.0.0.1 (raw sockets, one thread per connection, ``Connection: close``) that answers each
POST with the next ``Script``, written byte by byte as the script says — OpenAI SSE events
(or, to a request that does not ask for a stream, the same script as one chat completion:
``whole_reply``),
an error status, raw frames (comments, multi-line ``data:``, CRLF), a line of hundreds of
megabytes without a newline, a stall, a trickle of comments — and records what it was sent
(``requests``, ``headers``) and, per connection, when the gateway closed it (``conns``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
import uvicorn

from callsieve.server import ServerConfig, create_app
from callsieve.server._run import uvicorn_config

__all__ = [
    "Conn",
    "Script",
    "ScriptedModel",
    "Served",
    "anthropic_client",
    "close_clients",
    "closed_port",
    "genai_client",
    "openai_client",
    "running",
    "running_server",
    "scripted",
    "serving",
    "whole_reply",
]

_CLIENTS: list[Any] = []
ROOT = Path(__file__).resolve().parents[1]


def openai_client(base: str, key: str = "unused") -> openai.OpenAI:
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    _CLIENTS.append(client)
    return client


def anthropic_client(base: str, key: str = "unused") -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=base, api_key=key, max_retries=0)
    _CLIENTS.append(client)
    return client


def genai_client(base: str, key: str = "unused") -> Any:
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key=key,
        http_options=types.HttpOptions(
            base_url=base, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    _CLIENTS.append(client)
    return client


def close_clients() -> None:
    while _CLIENTS:
        _CLIENTS.pop().close()


@contextmanager
def running(config: ServerConfig) -> Iterator[str]:
    with running_server(config) as (url, _):
        yield url


@contextmanager
def running_server(config: ServerConfig) -> Iterator[tuple[str, uvicorn.Server]]:
    """``running``, with the Uvicorn server (its lifespan state holds the worker's
    connections, ``callsieve.server._conn``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn_config(config, create_app(config), log_level="warning", timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the gateway did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", server
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


@dataclass
class Served:
    """A ``callsieve serve`` process: its base URL, the process, and its log (stderr)."""

    url: str
    proc: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    def rss(self, field_name: str = "VmRSS") -> int:
        """Resident memory in bytes (``VmHWM``: the peak)."""
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"no {field_name}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)


@contextmanager
def serving(
    *args: str, port: int | None = None, env: dict[str, str] | None = None, ready: str = "/healthz"
) -> Iterator[Served]:
    """``callsieve serve ARGS --port PORT`` as a process, once it answers ``ready``."""
    import httpx

    port = port or closed_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "callsieve", "serve", *args, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served(f"http://127.0.0.1:{port}", proc)
    reader = threading.Thread(
        target=lambda: served.log.extend(iter(proc.stderr.readline, "")), daemon=True
    )  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(served.url + ready, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, "".join(served.log)
                assert time.monotonic() < deadline, "callsieve serve did not start"
                time.sleep(0.05)
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(20)
        reader.join(5)
        if proc.stderr:
            proc.stderr.close()


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
    """One upstream answer. By default: ``text`` streamed ``chunk`` characters per event
    (``reasoning`` first, as ``reasoning_content``; then ``tool_calls``, each a
    ``delta.tool_calls`` list of its own), then ``finish`` and ``usage``, ``data: [DONE]``.
    Or: ``status`` with ``error`` as its JSON body (``headers`` added); ``hang`` seconds
    before answering; ``die_after`` events, then the connection closes without ``[DONE]``;
    ``endless``: events (of ``endless_text``) every 10 ms until the client goes away; ``stall``: after the events,
    nothing more until the client goes away; ``trickle``: after the events, an SSE comment
    every ``trickle`` seconds until the client goes away; ``raw``: these bytes as the whole
    body, written piece by piece (``delay`` seconds apart); ``huge_line``: that many bytes
    without a newline after the first event; ``deltas``: these deltas instead, in this
    order. ``delay`` seconds between events. A request without ``stream`` gets the same
    answer whole (``whole_reply``), unless it is ``raw`` or ``deltas`` (streamed anyway)."""

    text: str = ""
    chunk: int = 4
    reasoning: str = ""
    finish: str | None = "stop"
    usage: tuple[int, int] = (11, 7)
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0
    die_after: int | None = None
    endless: bool = False
    endless_text: str = "la "
    stall: bool = False
    trickle: float | None = None
    raw: list[bytes] | None = None
    huge_line: int = 0
    tool_calls: list[list[dict[str, Any]]] | None = None
    deltas: list[dict[str, Any]] | None = None
    delay: float = 0.0
    content_type: str = "text/event-stream"


@dataclass
class Conn:
    """One connection to the model: when it opened, whether its answer is still going, and
    when the gateway closed it (``None``: it did not, before the answer ended)."""

    opened: float
    closed_at: float | None = None
    done: bool = False


class _Closed(Exception):
    pass


class ScriptedModel:
    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.conns: list[Conn] = []
        self.disconnected = threading.Event()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(256)
        self._sock.settimeout(0.05)  # (accept() wakes to see ``stop``)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self._sock.close()

    def still_open(self) -> int:
        """Connections whose answer has not ended and that the gateway has not closed."""
        return sum(1 for c in self.conns if c.closed_at is None and not c.done)

    def wait_requests(self, n: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests) < n:
            assert time.monotonic() < deadline, f"{len(self.requests)} of {n} requests came"
            time.sleep(0.005)

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                sock, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # (as model servers do)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        conn = Conn(time.monotonic())
        with self._lock:
            self.conns.append(conn)
        try:
            with sock:
                headers, body = _read_request(sock)
                with self._lock:
                    script = self.scripts.pop(0) if len(self.scripts) > 1 else self.scripts[0]
                    self.headers.append(headers)
                    self.requests.append(request := json.loads(body) if body else {})
                streams = script.raw is not None or script.deltas is not None
                if request.get("stream") or script.status != 200 or streams:
                    self._answer(sock, script)
                else:
                    self._whole(sock, script)
        except (_Closed, ConnectionResetError, BrokenPipeError):
            conn.closed_at = time.monotonic()
            self.disconnected.set()
        except OSError:
            pass
        finally:
            conn.done = True

    def _wait(self, sock: socket.socket, seconds: float) -> None:
        """Sleep, noticing the gateway closing the connection (raises ``_Closed``)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.stop.is_set():
                return
            readable, _, _ = select.select([sock], [], [], min(left, 0.02))
            if readable and sock.recv(1, socket.MSG_PEEK) == b"":
                raise _Closed

    def _write(self, sock: socket.socket, data: bytes) -> None:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            raise _Closed from None

    def _answer(self, sock: socket.socket, s: Script) -> None:
        if s.hang:
            self._wait(sock, s.hang)
        extra = "".join(f"{k}: {v}\r\n" for k, v in s.headers.items())
        if s.status != 200:
            body = json.dumps(s.error or {}).encode()
            self._write(
                sock,
                f"HTTP/1.1 {s.status} Error\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n".encode()
                + body,
            )
            return
        self._write(
            sock,
            f"HTTP/1.1 200 OK\r\nContent-Type: {s.content_type}\r\n{extra}"
            "Connection: close\r\n\r\n".encode(),
        )
        if s.raw is not None:
            for piece in s.raw:
                self._write(sock, piece)
                self._wait(sock, s.delay)
            return
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [
            {"reasoning_content": s.reasoning[i : i + s.chunk]}
            for i in range(0, len(s.reasoning), s.chunk)
        ]
        deltas += [{"content": s.text[i : i + s.chunk]} for i in range(0, len(s.text), s.chunk)]
        deltas += [{"tool_calls": calls} for calls in s.tool_calls or []]
        if s.deltas is not None:
            deltas = [{"role": "assistant", "content": ""}, *s.deltas]
        for n, delta in enumerate(deltas):
            if s.die_after is not None and n == s.die_after:
                return  # the connection closes without [DONE]
            self._event(sock, {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            if s.huge_line and n == 0:
                self._huge(sock, s.huge_line)
                return
            self._wait(sock, s.delay)
        self._tail(sock, s)
        self._event(sock, {"choices": [{"index": 0, "delta": {}, "finish_reason": s.finish}]})
        self._event(
            sock,
            {
                "choices": [],
                "usage": {
                    "prompt_tokens": s.usage[0],
                    "completion_tokens": s.usage[1],
                    "total_tokens": sum(s.usage),
                },
            },
        )
        self._write(sock, b"data: [DONE]\n\n")

    def _whole(self, sock: socket.socket, s: Script) -> None:
        """A request that did not ask for a stream: the same script as one chat completion
        (``reasoning`` as ``reasoning_content``, the ``tool_calls`` pieces merged as a
        client would). ``hang``: before answering; ``die_after``: half the body, then the
        connection closes; ``stall``, ``endless`` or ``trickle``: half the body, then nothing
        until the gateway goes away; ``huge_line``: a body of that many bytes."""
        if s.hang:
            self._wait(sock, s.hang)
        if s.huge_line:
            self._write(
                sock,
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                b'{"choices":[{"index":0,"message":{"content":"',
            )
            self._huge(sock, s.huge_line)
            return
        body = json.dumps(whole_reply(s)).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in s.headers.items())
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        if s.die_after is not None:
            self._write(sock, head + body[: len(body) // 2])
            return  # the connection closes before the body's end
        if s.stall or s.endless or s.trickle:
            self._write(sock, head + body[: len(body) // 2])
            while not self.stop.is_set():
                self._wait(sock, 0.05)
            return
        self._write(sock, head + body)

    def _tail(self, sock: socket.socket, s: Script) -> None:
        while s.endless and not self.stop.is_set():
            self._event(
                sock,
                {
                    "choices": [
                        {"index": 0, "delta": {"content": s.endless_text}, "finish_reason": None}
                    ]
                },
            )
            self._wait(sock, 0.01)
        while s.stall and not self.stop.is_set():
            self._wait(sock, 0.05)
        while s.trickle and not self.stop.is_set():
            self._write(sock, b": ping\n\n")
            self._wait(sock, s.trickle)

    def _huge(self, sock: socket.socket, size: int) -> None:
        piece = b"x" * (1 << 20)
        sent = 0
        self._write(sock, b"data: ")
        while sent < size and not self.stop.is_set():
            self._write(sock, piece)
            sent += len(piece)

    def _event(self, sock: socket.socket, obj: dict[str, Any]) -> None:
        self._write(sock, f"data: {json.dumps(obj)}\n\n".encode())


def whole_reply(s: Script) -> dict[str, Any]:
    """The chat completion a script stands for, as a server answers a request that did not
    ask for a stream: its pieces merged (``deltas`` are always streamed: one body cannot say
    which of content and reasoning came first)."""
    deltas: list[dict[str, Any]] = [{"reasoning_content": s.reasoning}] if s.reasoning else []
    deltas += [{"content": s.text}] if s.text else []
    deltas += [{"tool_calls": calls} for calls in s.tool_calls or []]
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        for key in ("content", "reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                message[key] = (message.get(key) or "") + delta[key]
        for i, piece in enumerate(delta.get("tool_calls") or []):
            call = calls.setdefault(
                piece.get("index", i),
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            call["id"] = piece.get("id") or call["id"]
            fn = piece.get("function") or {}
            call["function"]["name"] += fn.get("name") or ""
            call["function"]["arguments"] += fn.get("arguments") or ""
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": s.finish}],
        "usage": {
            "prompt_tokens": s.usage[0],
            "completion_tokens": s.usage[1],
            "total_tokens": sum(s.usage),
        },
    }


def _read_request(sock: socket.socket) -> tuple[dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        if not part:
            raise _Closed
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        part = sock.recv(65536)
        if not part:
            raise _Closed
        body += part
    return headers, body

"""Connection hygiene by default (issue 33, item 1), each probe against a gateway on
127.0.0.1 with small limits set by its flags: a connection that sends nothing, a head
trickled a byte at a time, a head and no body, an idle keep-alive connection; the cap per
worker and its fast 503 in the API's shape; a client that does not read (the send and
total deadlines); TCP_NODELAY; the upstream pool's size and its honest 503."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from gateway_probe_helpers import CHAT, MESSAGES, gateway, raw_request, read_answer
from helpers import ROOT
from loopback import (
    Script,
    anthropic_client,
    openai_client,
    running,
    running_server,
    scripted,
)

from callsieve import ConfigurationError
from callsieve.server import ServerConfig, load_toml
from callsieve.server._conn import STATE_KEY, Joined, quiet_accept_errors
from callsieve.server._run import bind

TRANSCRIPT = str(ROOT / "examples" / "transcript.txt")
ASK = [{"role": "user", "content": "hi"}]


def replay(**settings: Any) -> Any:
    return running(ServerConfig.build(transcript=TRANSCRIPT, **settings))


def connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)))


def models(sock: socket.socket) -> bytes:
    """One ``GET /v1/models`` on a kept-alive connection: the whole answer."""
    sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        data += sock.recv(65536)
    return data


def closed_after(sock: socket.socket, limit: float = 10) -> tuple[float, bytes]:
    """Seconds until the gateway closes ``sock``, and what it wrote before."""
    started = time.monotonic()
    sock.settimeout(limit)
    data = b""
    with sock:
        while part := sock.recv(65536):
            data += part
    return time.monotonic() - started, data


def test_the_defaults_are_no_looser_than_nginx() -> None:
    config = ServerConfig.build(transcript=TRANSCRIPT)
    assert config.header_timeout <= 60 and config.body_timeout <= 60
    assert config.keepalive_timeout <= 75 and config.send_timeout <= 60
    assert config.max_connections == 512 and config.upstream_pool == 512
    assert ServerConfig.build(transcript=TRANSCRIPT, upstream_max_connections=9).upstream_pool == 9
    with pytest.raises(ConfigurationError, match="header_timeout must be a number above 0"):
        ServerConfig.build(transcript=TRANSCRIPT, header_timeout=0)
    with pytest.raises(ConfigurationError, match="max_connections must be an integer"):
        ServerConfig.build(transcript=TRANSCRIPT, max_connections=0)


def test_each_limit_is_a_flag_and_a_config_key(tmp_path: Path) -> None:
    from callsieve.__main__ import build_parser
    from callsieve._cli_serve import serve_settings

    path = tmp_path / "gateway.toml"
    path.write_text(
        "[server]\nheader_timeout = 7\nbody_timeout = 8\nkeepalive_timeout = 2\n"
        "send_timeout = 9\nmax_connections = 40\n[upstream]\nurl = 'http://127.0.0.1:1/v1'\n"
        "max_connections = 20\n",
        encoding="utf-8",
    )
    config = ServerConfig.build(**load_toml(str(path)))
    assert (config.header_timeout, config.body_timeout, config.keepalive_timeout) == (7, 8, 2)
    assert (config.send_timeout, config.max_connections, config.upstream_pool) == (9, 40, 20)
    flags = "--header-timeout 1 --body-timeout 2 --keepalive-timeout 3 --send-timeout 4 "
    flags += "--max-connections 5 --upstream-max-connections 6"
    args = build_parser().parse_args(["serve", "--config", str(path), *flags.split()])
    config = ServerConfig.build(**serve_settings(args, load_toml))
    assert (config.header_timeout, config.body_timeout, config.keepalive_timeout) == (1, 2, 3)
    assert (config.send_timeout, config.max_connections, config.upstream_pool) == (4, 5, 6)


# --- the header deadline ---------------------------------------------------------------


def test_a_connection_that_sends_nothing_is_closed_at_the_header_timeout() -> None:
    with replay(header_timeout=0.5) as base:
        waited, data = closed_after(connect(base))
    assert 0.4 <= waited < 3 and data == b""


def test_a_head_sent_a_byte_at_a_time_is_closed_at_the_header_timeout() -> None:
    with replay(header_timeout=0.6) as base:
        sock = connect(base)
        started = time.monotonic()
        head = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
        with pytest.raises(OSError):  # (reset or a broken pipe once it is closed)
            for byte in head:
                sock.send(bytes([byte]))
                time.sleep(0.05)
        waited = time.monotonic() - started
        sock.close()
    assert 0.5 <= waited < 3


def test_a_keepalive_connection_gets_the_header_deadline_again_after_each_response() -> None:
    with replay(header_timeout=0.6, keepalive_timeout=30) as base:
        sock = connect(base)
        assert models(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /v1/mo")  # the next head begins, and never ends
        waited, data = closed_after(sock)
    assert 0.4 <= waited < 3 and data.startswith(b"HTTP/1.1 408")


def test_an_idle_keepalive_connection_is_closed_at_the_keepalive_timeout() -> None:
    with replay(keepalive_timeout=0.5) as base:
        sock = connect(base)
        assert models(sock).startswith(b"HTTP/1.1 200")
        waited, data = closed_after(sock)
    assert 0.3 <= waited < 3 and data == b""


# --- the body deadline -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "shape"),
    [
        ("/v1/chat/completions", CHAT, "openai"),
        ("/v1/messages", MESSAGES, "anthropic"),
    ],
)
def test_a_head_without_its_body_is_a_408_in_the_apis_shape(
    path: str, body: dict[str, Any], shape: str
) -> None:
    with replay(body_timeout=0.5) as base:
        data = json.dumps(body).encode()
        sock = raw_request(base, path, b"", headers={"Content-Length": str(len(data))})
        sock.sendall(data[:10])  # a start, then nothing
        started = time.monotonic()
        status, text = read_answer(sock)
        waited = time.monotonic() - started
    error = json.loads(text)
    assert status == 408 and 0.4 <= waited < 3
    if shape == "openai":
        assert error["error"]["code"] == "body_timeout"
    else:
        assert error["type"] == "error" and "stalled" in error["error"]["message"]


# --- the cap per worker ----------------------------------------------------------------


def test_past_the_cap_a_fast_503_in_the_apis_shape_and_the_cap_frees_up() -> None:
    with replay(max_connections=8, header_timeout=30) as base:
        idle = [connect(base) for _ in range(8)]
        time.sleep(0.2)  # (the gateway has taken them)
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as info:
            openai_client(base).chat.completions.create(model="m", messages=ASK)
        assert time.monotonic() - started < 2
        assert info.value.status_code == 503
        assert info.value.body["code"] == "too_many_connections"  # type: ignore[index]
        assert info.value.response.headers["retry-after"] == "1"
        with pytest.raises(anthropic.APIStatusError) as refused:
            anthropic_client(base).messages.create(model="m", max_tokens=5, messages=ASK)
        assert refused.value.status_code == 503
        assert refused.value.body["type"] == "error"  # type: ignore[index]
        for sock in idle:
            sock.close()
        time.sleep(0.2)
        reply = openai_client(base).chat.completions.create(model="m", messages=ASK)
        assert reply.choices[0].message.content


# --- a client that does not read -------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "bound"),
    [({"send_timeout": 0.5}, 0.5), ({"idle_timeout": 1.0}, 1.0), ({"total_timeout": 1.5}, 1.5)],
    ids=["send_timeout", "idle_timeout", "total_timeout"],
)
def test_a_client_that_does_not_read_loses_its_stream_and_upstream_at_the_deadline(
    settings: dict[str, Any], bound: float
) -> None:
    with (
        scripted(Script(endless=True, endless_text="x" * 8000)) as model,
        gateway(model, **settings) as base,
    ):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        host, port = base.removeprefix("http://").split(":")
        sock.connect((host, int(port)))
        data = json.dumps({**CHAT, "stream": True}).encode()
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data
        )
        model.wait_requests(1)
        started = time.monotonic()
        assert model.disconnected.wait(bound + 8), "the upstream connection stayed open"
        waited = time.monotonic() - started
        sock.close()
    assert waited < bound + 5, waited


# --- TCP_NODELAY -----------------------------------------------------------------------


def test_every_accepted_connection_has_tcp_nodelay() -> None:
    listening = bind("127.0.0.1", 0)
    assert listening.proto == socket.IPPROTO_TCP  # (asyncio then sets it on each connection)
    listening.close()
    config = ServerConfig.build(transcript=TRANSCRIPT)
    with running_server(config) as (base, server):  # (a socket of protocol 0, as before)
        client = openai_client(base)
        client.chat.completions.create(model="m", messages=ASK)
        guards = list(server.lifespan.state[STATE_KEY].open)
        assert guards
        for guard in guards:
            sock = guard.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_a_small_write_waits_for_the_next_one_or_the_end_of_the_step() -> None:
    """A response's head and a small body go out in one system call (the client wakes
    once); a write alone goes out when the event loop's step ends; a large one at once."""

    async def main() -> list[bytes]:
        loop = asyncio.get_running_loop()
        ours, peer = socket.socketpair()
        peer.setblocking(False)
        transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
        joined = Joined(transport, loop)  # type: ignore[arg-type]
        seen: list[bytes] = []

        def read() -> bytes:
            try:
                return peer.recv(1 << 20)
            except BlockingIOError:
                return b""

        joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
        seen.append(read())  # (held)
        joined.write(b"{}")
        seen.append(read())  # (both, in one piece)
        joined.write(b"data: 1\n\n")
        seen.append(read())
        await asyncio.sleep(0)  # (the step ends)
        await asyncio.sleep(0)
        seen.append(read())
        joined.write(b"x" * 20_000)  # (larger than a head or a frame: at once)
        seen.append(read())
        joined.close()
        peer.close()
        return seen

    held, both, alone, later, large = asyncio.run(main())
    assert held == b"" and both == b"HTTP/1.1 200 OK\r\n\r\n{}"
    assert alone == b"" and later == b"data: 1\n\n"
    assert large == b"x" * 20_000


# --- the upstream pool -----------------------------------------------------------------


def test_a_full_upstream_pool_is_an_honest_503_at_once() -> None:
    with (
        scripted(Script(text="a", stall=True)) as model,
        gateway(model, upstream_max_connections=2) as base,
    ):
        held = [raw_request(base, "/v1/chat/completions", {**CHAT, "stream": True}) for _ in "ab"]
        model.wait_requests(2)
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as info:
            openai_client(base).chat.completions.create(model="m", messages=ASK)
        waited = time.monotonic() - started
        assert info.value.status_code == 503
        assert info.value.body["code"] == "upstream_pool_full"  # type: ignore[index]
        assert len(model.requests) == 2  # the upstream was never asked
        for sock in held:
            sock.close()
    assert waited < 3, waited


def test_the_cap_holds_under_a_burst_of_clients() -> None:
    """Sixteen clients at once against a cap of 4: each is served or refused with a 503,
    never left hanging."""
    results: list[int] = []
    with (
        scripted(Script(text="hello " * 20, delay=0.01)) as model,
        gateway(model, max_connections=4) as base,
    ):

        def one() -> None:
            sock = raw_request(base, "/v1/chat/completions", CHAT, headers={"Connection": "close"})
            results.append(read_answer(sock, timeout=10)[0])

        threads = [threading.Thread(target=one) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
    assert len(results) == 16 and set(results) <= {200, 503}, results
    assert 200 in results


def test_accept_out_of_descriptors_is_one_line_not_a_traceback_a_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop)
        caplog.set_level(logging.WARNING)
        failure = {
            "message": "socket.accept() out of system resource",
            "exception": OSError(24, "Too many open files"),
        }
        for _ in range(50):  # (asyncio retries once a second, per listening socket)
            loop.call_exception_handler(failure)
        other = {"message": "something else", "exception": ValueError("x")}
        loop.call_exception_handler(other)
    finally:
        loop.close()
    accept = [r for r in caplog.records if "accept()" in r.getMessage()]
    assert len(accept) == 1 and accept[0].exc_info is None
    assert "Too many open files" in accept[0].getMessage()
    assert any(r.getMessage() == "something else" for r in caplog.records)

"""Small helpers the probe tests share: a raw request over a socket (for the probes that are
about bytes: Host, Origin, Content-Type, a client that drops), SSE lines of a streamed
answer, and the gateway in front of a scripted model."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlparse

from loopback import ScriptedModel, running

from callsieve.server import ServerConfig

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = (
    '<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
    '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n'
    "</|DSML|invoke>\n</|DSML|tool_calls>"
)


def gateway(model: ScriptedModel, **settings: Any) -> Any:
    return running(ServerConfig.build(upstream=model.url, **settings))


def raw_request(
    base: str,
    path: str,
    body: bytes | dict[str, Any],
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> socket.socket:
    """Send one HTTP/1.1 request over a fresh socket; the socket, to read or to drop."""
    url = urlparse(base)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = {
        "Host": f"127.0.0.1:{url.port}",
        "Content-Type": "application/json",
        "Content-Length": str(len(data)),
        **(headers or {}),
    }
    sock = socket.create_connection((url.hostname, url.port))
    sock.sendall(
        f"{method} {path} HTTP/1.1\r\n".encode()
        + "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode()
        + b"\r\n"
        + data
    )
    return sock


def read_answer(sock: socket.socket, timeout: float = 10) -> tuple[int, str]:
    """Status and body of the answer on ``sock`` (read to the connection's close)."""
    sock.settimeout(timeout)
    data = b""
    with sock:
        sock.sendall(b"")
        while True:
            part = sock.recv(65536)
            if not part:
                break
            data += part
            if b"\r\n\r\n" in data and _complete(data):
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode("utf-8", "replace")


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return body.endswith(b"0\r\n\r\n")


def sse_data(text: str) -> list[Any]:
    """The JSON of each ``data:`` line of a streamed answer."""
    return [
        json.loads(line[5:])
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")
    ]

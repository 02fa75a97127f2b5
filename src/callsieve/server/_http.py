"""Strategy: the few raw ASGI steps every route shares — read a body under a limit, send a
JSON answer (at once, or in slices), and log one line per answer — so no route writes them
twice and no answer goes unlogged or logs twice.

What it does: ``header(scope, name)`` reads a request header; ``read_body(receive, scope,
limit)`` reads the body (a ``Content-Length`` over ``limit`` is refused before reading; a
chunked body as it passes it); ``send_json(send, status, obj, headers)`` answers a JSON
object, in ``_json.dumps_sliced`` pieces with a checkpoint between them when it is large;
``log_answer(scope, status, what, started)`` gives the answer's status and outcome to the
request's ``Record`` (``_wire`` writes its one log line: never a header, a body or a key).
What it guarantees: a body over the limit is an ``ApiError(413)``; a client that closes the
connection while its body is read is ``ClientGone``.
What it costs: one copy of the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from starlette.types import Receive, Scope, Send

from ._errors import ApiError
from ._json import Deferred, dumps_sliced

__all__ = [
    "RECORD_KEY",
    "ClientGone",
    "Record",
    "header",
    "log_answer",
    "read_body",
    "send_json",
]

_JSON = [(b"content-type", b"application/json")]
#: Where a request's scope holds its ``Record`` (set by ``_wire``).
RECORD_KEY = "callsieve.record"


@dataclass
class Record:
    """What one request's access-log line says, filled in as it runs."""

    started: float
    status: int = 0
    #: The outcome and code a route gave (``"client_error invalid_json"``).
    outcome: str | None = None
    bytes: int = 0
    #: What the wire itself did (``send_timeout``).
    note: str | None = None
    complete: bool = False


class ClientGone(Exception):
    """The client closed its connection."""


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def read_body(receive: Receive, scope: Scope, limit: int) -> bytes:
    declared = header(scope, b"content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body is larger than {limit} bytes", code="body_too_large")
    data = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        data += message.get("body", b"")
        if len(data) > limit:
            raise ApiError(413, f"request body is larger than {limit} bytes", code="body_too_large")
        if not message.get("more_body", False):
            return bytes(data)


async def send_json(
    send: Send,
    status: int,
    obj: Any,
    headers: list[tuple[bytes, bytes]] | None = None,
    deferred: Deferred | None = None,
) -> None:
    pieces = dumps_sliced(obj, deferred)
    first = next(pieces)
    rest = next(pieces, None)
    head = [*_JSON, *(headers or [])]
    if rest is None:
        body = first.encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*head, (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": first.encode("utf-8"), "more_body": True})
    while rest is not None:
        await send({"type": "http.response.body", "body": rest.encode("utf-8"), "more_body": True})
        await anyio.lowlevel.checkpoint()  # (the other replies run between slices)
        rest = next(pieces, None)
    await send({"type": "http.response.body", "body": b""})


def log_answer(scope: Scope, status: int, what: str, started: float) -> None:
    """Give the request's ``Record`` its status and outcome (``_wire`` logs it once, at the
    request's end, with the duration it measured from the start)."""
    record = scope.get(RECORD_KEY)
    if isinstance(record, Record):
        record.status, record.outcome = status, what

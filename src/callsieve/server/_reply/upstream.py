"""Strategy: upstream mode's model — one OpenAI chat-completions request to the upstream,
streamed for a streamed client request and whole for a whole one, read into pieces of text
and reasoning under deadlines and size limits, its faults mapped to our own errors.

What it does: ``open_upstream(transport, config, payload, redact, stream=…)`` sends the
request over the app's connection pool (``Accept-Encoding: identity``, so what is counted
is what is sent) and returns its source once the upstream has answered with its status.
**Streamed** (``stream: true`` with ``stream_options.include_usage``): an ``UpstreamSource``,
read as Server-Sent Events (``sse``); ``pieces()`` yields a ``Piece(text, reasoning)`` per
data event that carries ``delta.content`` or ``delta.reasoning_content`` (or
``delta.reasoning``), and records ``finish_reason``, ``usage``
(``input_tokens``/``output_tokens``) and the upstream's own ``delta.tool_calls`` (merged by
``index``: ``calls()`` gives them as ``ToolCall``s at the end). **Whole** (no ``stream``):
``read_whole`` reads the body at once and ``WholeSource`` gives the message's text and
reasoning as one ``Piece``, with its ``tool_calls``, ``finish_reason`` and ``usage`` — the
same source for the responder, so both take one path from there; an upstream that streams
anyway is read as a stream. A body over ``INLINE_PARSE`` is parsed in a worker thread a
slice at a time (``_json.loads_sliced``), so the event loop goes on. ``aclose()`` closes
the upstream connection; the responder calls it whatever happens, so a client that goes
away cancels the upstream request.
Deadlines (``ServerConfig``): ``connect_timeout`` for the connection; ``first_byte_timeout``
from sending a streamed request to the first data event (the response headers included);
``idle_timeout`` between two data events — SSE comments and empty events do not count, so a
trickle of keep-alive comments cannot hold a request open — or between two reads of a whole
body; ``total_timeout`` for the whole reply, and the only one before a whole reply's headers
(they come when the model is done). Each read has one cancel scope; a whole reply's body has
one, its deadline moved as the body comes. Limits: ``max_line_bytes`` per SSE line,
``max_event_bytes`` per event, ``max_reply_bytes`` for the whole body (a whole body declared
larger is refused before it is read).
What it guarantees: faults are ``ApiError``s: the upstream unreachable ``502``, a deadline
``504``, an error status mapped by ``_errors.from_upstream`` (its body is never read into an
answer: it is logged, redacted, in one line); no free connection in the gateway's own
pool (``upstream_pool``) within ``POOL_WAIT`` seconds is a ``503`` (``upstream_pool_full``);
a whole body that is not a chat completion is a ``502`` (``upstream_bad_reply``); after the
stream has begun, a broken
connection, a deadline, a limit, an ``error`` event, an event that is not JSON, text that is
not encodable (a lone surrogate escaped in the JSON), a tool call whose arguments are not a
JSON object, or a stream that ends before ``[DONE]`` and without a ``finish_reason`` raise
``ApiError(502/504)`` from ``pieces()`` (a whole reply: the same, before any answer). Memory:
a line, an event and one read chunk at a time (``sse``'s bounds), besides what the reply
itself keeps; a whole body, at most ``max_reply_bytes``, and what it parses to.
What it costs: one ``json.loads`` per upstream event and a search for surrogates in its text;
a whole reply, one parse of its body.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx

from ... import ToolCall
from .._errors import ApiError, from_upstream
from .._json import loads_sliced
from .sse import SSEDecoder, SSEError

if TYPE_CHECKING:
    from .._config import ServerConfig

__all__ = [
    "INLINE_PARSE",
    "POOL_WAIT",
    "Piece",
    "UpstreamSource",
    "WholeSource",
    "open_upstream",
    "read_whole",
    "unencodable",
]

log = logging.getLogger("callsieve.server")
_ERROR_BODY_LOG = 300
#: Seconds a request waits for a free upstream connection (``upstream_pool``) before its 503.
POOL_WAIT = 1.0
#: A whole reply larger than this is parsed a slice at a time in a worker thread
#: (``_json.loads_sliced``); a smaller one costs less than the hand-over.
INLINE_PARSE = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Piece:
    """What the model sent in one event: answer text and reasoning text."""

    text: str
    reasoning: str = ""


def unencodable(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it cannot be written as UTF-8)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _timeout(what: str, seconds: float) -> ApiError:
    return ApiError(
        504,
        f"the upstream {what} within {seconds:g} s",
        code="upstream_timeout",
        kind="timeout_error",
    )


async def open_upstream(
    client: httpx.AsyncHTTPTransport,
    config: ServerConfig,
    payload: dict[str, Any],
    redact: Callable[[str], str] = str,
    *,
    stream: bool = True,
) -> UpstreamSource | WholeSource:
    """The upstream's reply: streamed (``UpstreamSource``), or, with ``stream=False``, asked
    for and read whole (``WholeSource``; an upstream that streams anyway is read as a
    stream)."""
    kind = "text/event-stream" if stream else "application/json"
    headers = {"Accept": kind, "Accept-Encoding": "identity"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    body = (
        {**payload, "stream": True, "stream_options": {"include_usage": True}}
        if stream
        else payload
    )
    timeouts = {"connect": config.connect_timeout, "read": None, "write": None, "pool": POOL_WAIT}
    request = httpx.Request(
        "POST",
        f"{config.upstream}/chat/completions",
        json=body,
        headers=headers,
        extensions={"timeout": timeouts},
    )
    now = anyio.current_time()
    total = now + config.total_timeout
    first = min(now + config.first_byte_timeout, total)
    # (a whole reply's headers come when the model is done: only the total deadline holds)
    answered = first if stream else total
    try:
        with anyio.fail_after(max(answered - now, 0)):
            response = await client.handle_async_request(request)
    except httpx.PoolTimeout:  # (the upstream was not contacted: our own pool is full)
        raise ApiError(
            503,
            f"all {config.upstream_pool} upstream connections of this gateway worker are in "
            "use (upstream max_connections); retry later",
            code="upstream_pool_full",
            headers={"Retry-After": "1"},
        ) from None
    except (TimeoutError, httpx.TimeoutException):
        raise _timeout(
            "did not answer",
            min(config.first_byte_timeout, config.total_timeout)
            if stream
            else config.total_timeout,
        ) from None
    except httpx.HTTPError as exc:
        raise ApiError(
            502,
            f"the upstream cannot be reached ({type(exc).__name__})",
            code="upstream_unreachable",
        ) from None
    if response.status_code >= 400:
        await _log_error(response, redact)
        raise from_upstream(response.status_code, response.headers.get("retry-after"))
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if kind == "text/event-stream" and encoding in ("", "identity"):
        return UpstreamSource(response, config, first, total)
    if not stream and _is_json(kind) and encoding in ("", "identity"):
        return await read_whole(response, config, total)
    await response.aclose()
    raise ApiError(
        502,
        f"the upstream did not answer with an uncompressed "
        f"{'event stream' if stream else 'JSON body or event stream'} "
        f"(Content-Type {kind or 'none'}, Content-Encoding {encoding})",
        code="upstream_bad_event" if stream else "upstream_bad_reply",
    )


def _is_json(kind: str) -> bool:
    return kind == "application/json" or kind.endswith("+json")


async def _log_error(response: httpx.Response, redact: Callable[[str], str]) -> None:
    """One log line with the start of an upstream's error body (redacted); never more than
    a few kB are read."""
    data = b""
    try:
        with anyio.move_on_after(2):
            async for part in response.aiter_raw():
                data += part
                if len(data) >= 4096:
                    break
    except httpx.HTTPError:
        pass
    finally:
        await response.aclose()
    text = " ".join(data[:_ERROR_BODY_LOG].decode("utf-8", "replace").split())
    log.warning("upstream answered HTTP %d: %s", response.status_code, redact(text))


class UpstreamSource:
    def __init__(
        self, response: httpx.Response, config: ServerConfig, first: float, total: float
    ) -> None:
        self._response = response
        self._config = config
        self._first = first  # the first data event's deadline
        self._total = total
        self._decoder = SSEDecoder(config.max_line_bytes, config.max_event_bytes)
        self._received = 0
        self._calls = UpstreamCalls()
        self.finish_reason: str | None = None
        self.usage: dict[str, int] | None = None

    def _deadline(self, seen_data: bool) -> tuple[float, str]:
        """The next read's deadline, and which one it is (its error is made only when it
        passes: ``_late``)."""
        if not seen_data:
            when, which = self._first, "first_byte"
        else:
            when, which = anyio.current_time() + self._config.idle_timeout, "idle"
        if self._total <= when:
            when, which = self._total, "total"
        return when, which

    def _late(self, which: str) -> ApiError:
        config = self._config
        if which == "first_byte":
            return _timeout("sent no data", config.first_byte_timeout)
        if which == "idle":
            return _timeout("sent nothing", config.idle_timeout)
        return _timeout("did not finish", config.total_timeout)

    async def pieces(self) -> AsyncIterator[Piece]:
        raw: Any = self._response.aiter_raw()
        when, late = self._deadline(False)
        try:
            while True:
                try:
                    with anyio.fail_after(max(when - anyio.current_time(), 0)):
                        chunk = await raw.__anext__()
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise self._late(late) from None
                self._received += len(chunk)
                if self._received > self._config.max_reply_bytes:
                    raise ApiError(
                        502,
                        f"the upstream's reply is larger than {self._config.max_reply_bytes} bytes",
                        code="upstream_reply_too_large",
                    )
                for event in self._decoder.feed(chunk):
                    if event.data.strip() == "":
                        continue  # (an empty event: no data, and no sign of life)
                    when, late = self._deadline(True)  # (a data event: a sign of life)
                    if event.data == "[DONE]":
                        self._check_done()
                        return
                    piece = self._read(event.event, event.data)
                    if piece is not None:
                        yield piece
        except SSEError as exc:
            raise ApiError(
                502,
                f"the upstream's stream broke a limit: {exc}",
                code=f"upstream_{exc.kind}_too_large"
                if exc.kind != "encoding"
                else "upstream_bad_text",
            ) from None
        except httpx.HTTPError as exc:
            raise _disconnected(exc) from None
        finally:
            await raw.aclose()
        if self.finish_reason is None:
            raise ApiError(
                502, "the upstream's stream ended before it finished", code="upstream_disconnected"
            )
        self._check_done()

    def _check_done(self) -> None:
        self.calls()  # (a call whose arguments are not an object fails the reply here)

    def _read(self, kind: str, data: str) -> Piece | None:
        try:
            event = json.loads(data)
        except ValueError:
            raise ApiError(
                502, "the upstream sent an event that is not JSON", code="upstream_bad_event"
            ) from None
        if not isinstance(event, dict):
            return None
        if kind == "error" or event.get("error") is not None:
            log.warning("upstream sent an error event: %s", " ".join(data[:300].split()))
            raise ApiError(502, "the upstream failed while streaming", code="upstream_error")
        usage = _usage(event.get("usage"))
        if usage is not None:
            self.usage = usage
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return None
        if isinstance(delta.get("tool_calls"), list):
            self._calls.merge(delta["tool_calls"])
        return _piece(delta)

    def calls(self) -> list[ToolCall]:
        """The upstream's own tool calls (``delta.tool_calls``), in index order."""
        return self._calls.finished()

    async def aclose(self) -> None:
        await self._response.aclose()


def _usage(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    return {
        "input_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
    }


def _piece(message: dict[str, Any]) -> Piece | None:
    """The text and reasoning of a ``delta`` or a whole ``message``."""
    text = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    text = text if isinstance(text, str) else ""
    reasoning = reasoning if isinstance(reasoning, str) else ""
    if unencodable(text) or unencodable(reasoning):
        raise ApiError(
            502,
            "the upstream sent text that cannot be encoded (a lone surrogate)",
            code="upstream_bad_text",
        )
    return Piece(text, reasoning) if text or reasoning else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class _CallParts:
    """One upstream call as its pieces come: its id, its name and its argument pieces."""

    ident: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class UpstreamCalls:
    """The upstream's own tool calls, merged by ``index`` from their pieces
    (``delta.tool_calls``, or a whole ``message.tool_calls``). The LiteLLM hook reads them
    so too."""

    def __init__(self) -> None:
        self._calls: dict[int, _CallParts] = {}

    def merge(self, pieces: list[Any]) -> None:
        """Pieces that are not objects are skipped; a name or id that cannot be encoded is
        a 502."""
        for i, piece in enumerate(pieces):
            if not isinstance(piece, dict):
                continue
            index = piece.get("index", i)
            call = self._calls.setdefault(index if isinstance(index, int) else i, _CallParts())
            fn = piece["function"] if isinstance(piece.get("function"), dict) else {}
            ident, name = _encodable(piece.get("id")), _encodable(fn.get("name"))
            call.ident = ident or call.ident
            call.name += name
            arguments = fn.get("arguments")
            if isinstance(arguments, str):
                call.arguments.append(arguments)

    def finished(self) -> list[ToolCall]:
        """The calls in index order. One without a name, or whose arguments are not a JSON
        object, is a 502."""
        out = []
        for _, call in sorted(self._calls.items()):
            text = "".join(call.arguments)
            try:
                value = json.loads(text) if text.strip() else {}
            except ValueError:
                value = None
            if not call.name or not isinstance(value, dict) or unencodable(text):
                raise ApiError(
                    502,
                    "the upstream sent a tool call without a name or whose "
                    "arguments are not a JSON object",
                    code="upstream_bad_call",
                )
            out.append(ToolCall(call.name, value, id=call.ident))
        return out


def _encodable(value: Any) -> str:
    """A piece's id or name, ``""`` when it is not a string."""
    if not isinstance(value, str):
        return ""
    if unencodable(value):
        raise ApiError(
            502, "the upstream sent a tool call that cannot be encoded", code="upstream_bad_text"
        )
    return value


def _disconnected(exc: Exception) -> ApiError:
    return ApiError(
        502,
        f"the upstream connection broke ({type(exc).__name__})",
        code="upstream_disconnected",
    )


def _too_large(limit: int) -> ApiError:
    return ApiError(
        502,
        f"the upstream's reply is larger than {limit} bytes",
        code="upstream_reply_too_large",
    )


def _bad_reply(what: str) -> ApiError:
    return ApiError(502, f"the upstream's reply {what}", code="upstream_bad_reply")


async def read_whole(response: httpx.Response, config: ServerConfig, total: float) -> WholeSource:
    """A whole (not streamed) reply read and parsed, under one deadline: ``total``, and no
    more than ``idle_timeout`` between two reads of the body; no more than
    ``max_reply_bytes`` of it (a larger ``Content-Length`` is refused before reading)."""
    limit = config.max_reply_bytes
    try:
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        data = bytearray()
        late = False
        with anyio.CancelScope(deadline=total) as scope:
            async for chunk in response.aiter_raw():
                data += chunk
                if len(data) > limit:
                    raise _too_large(limit)
                scope.deadline = min(total, anyio.current_time() + config.idle_timeout)
        late = scope.cancelled_caught
    except httpx.HTTPError as exc:
        raise _disconnected(exc) from None
    finally:
        if not response.is_closed:  # (read to its end, it is closed already)
            with anyio.CancelScope(shield=True):  # (closed even when the client went away)
                await response.aclose()
    if late:
        if anyio.current_time() >= total:
            raise _timeout("did not finish", config.total_timeout)
        raise _timeout("sent nothing", config.idle_timeout)
    try:  # (a large body a slice at a time in a worker thread: the event loop goes on)
        body = (
            json.loads(data.decode("utf-8"))  # (strict UTF-8, as ``loads_sliced`` and ``sse``)
            if len(data) <= INLINE_PARSE
            else await anyio.to_thread.run_sync(loads_sliced, bytes(data))
        )
    except (ValueError, RecursionError):
        raise _bad_reply("is not UTF-8 JSON") from None
    return WholeSource.of(body)


class WholeSource:
    """A whole reply, read: its text and reasoning are one ``Piece``."""

    def __init__(
        self,
        piece: Piece | None,
        calls: list[ToolCall],
        finish_reason: str | None,
        usage: dict[str, int] | None,
    ) -> None:
        self._piece = piece
        self._calls = calls
        self.finish_reason = finish_reason
        self.usage = usage

    @classmethod
    def of(cls, body: Any) -> WholeSource:
        """The source of a chat completion's JSON body (an ``error`` body is a 502)."""
        if not isinstance(body, dict):
            raise _bad_reply("is not a JSON object")
        if body.get("error") is not None:
            log.warning(
                "upstream answered an error: %s", " ".join(str(body["error"])[:300].split())
            )
            raise ApiError(502, "the upstream failed", code="upstream_error")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise _bad_reply("has no choices")
        choice = choices[0]
        message = choice.get("message")
        message = message if isinstance(message, dict) else {}
        calls = UpstreamCalls()
        if isinstance(message.get("tool_calls"), list):
            calls.merge(message["tool_calls"])
        finish = choice.get("finish_reason")
        return cls(
            _piece(message),
            calls.finished(),
            finish if isinstance(finish, str) else None,
            _usage(body.get("usage")),
        )

    async def pieces(self) -> AsyncIterator[Piece]:
        if self._piece is not None:
            yield self._piece

    def calls(self) -> list[ToolCall]:
        return self._calls

    async def aclose(self) -> None:
        pass  # (the response was closed as it was read)

"""Strategy: upstream mode's model — one streamed OpenAI chat-completions request to the
upstream, read as Server-Sent Events (``sse``) into pieces of text and reasoning, under
deadlines and size limits, its faults mapped to our own errors.

What it does: ``open_upstream(client, config, payload, redact)`` sends the request (always
``stream: true`` with ``stream_options.include_usage``, so streamed and whole client requests
take one path; ``Accept-Encoding: identity``, so what is counted is what is sent) and returns
an ``UpstreamSource`` once the upstream has answered with its status. ``pieces()`` yields a
``Piece(text, reasoning)`` per data event that carries ``delta.content`` or
``delta.reasoning_content`` (or ``delta.reasoning``), and records ``finish_reason``,
``usage`` (``input_tokens``/``output_tokens``) and the upstream's own ``delta.tool_calls``
(merged by ``index``: ``calls()`` gives them as ``ToolCall``s at the end). ``aclose()``
closes the upstream connection; the responder calls it whatever happens, so a client that
goes away cancels the upstream request.
Deadlines (``ServerConfig``): ``connect_timeout`` for the connection; ``first_byte_timeout``
from sending the request to the first data event (the response headers included);
``idle_timeout`` between two data events — SSE comments and empty events do not count, so a
trickle of keep-alive comments cannot hold a request open; ``total_timeout`` for the whole
reply. Limits: ``max_line_bytes`` per SSE line, ``max_event_bytes`` per event,
``max_reply_bytes`` for the whole body.
What it guarantees: faults are ``ApiError``s: the upstream unreachable ``502``, a deadline
``504``, an error status mapped by ``_errors.from_upstream`` (its body is never read into an
answer: it is logged, redacted, in one line); no free connection in the gateway's own
pool (``upstream_pool``) within a second is a ``503`` (``upstream_pool_full``); after the stream has begun, a broken
connection, a deadline, a limit, an ``error`` event, an event that is not JSON, text that is
not encodable (a lone surrogate escaped in the JSON), a tool call whose arguments are not a
JSON object, or a stream that ends before ``[DONE]`` and without a ``finish_reason`` raise
``ApiError(502/504)`` from ``pieces()``. Memory: a line, an event and one read chunk at a
time (``sse``'s bounds), besides what the reply itself keeps.
What it costs: one ``json.loads`` per upstream event and a search for surrogates in its text.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from ... import ToolCall
from .._errors import ApiError, from_upstream
from .sse import SSEDecoder, SSEError

if TYPE_CHECKING:
    from .._config import ServerConfig

__all__ = ["Piece", "UpstreamSource", "open_upstream", "unencodable"]

log = logging.getLogger("callsieve.server")
_ERROR_BODY_LOG = 300
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
    client: httpx.AsyncClient,
    config: ServerConfig,
    payload: dict[str, Any],
    redact: Callable[[str], str] = str,
) -> UpstreamSource:
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    body = {**payload, "stream": True, "stream_options": {"include_usage": True}}
    request = client.build_request(
        "POST", f"{config.upstream}/chat/completions", json=body, headers=headers
    )
    now = anyio.current_time()
    total = now + config.total_timeout
    first = min(now + config.first_byte_timeout, total)
    try:
        with anyio.fail_after(max(first - now, 0)):
            response = await client.send(request, stream=True)
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
            "did not answer", min(config.first_byte_timeout, config.total_timeout)
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
    if kind != "text/event-stream" or encoding not in ("", "identity"):
        await response.aclose()
        raise ApiError(
            502,
            f"the upstream did not answer with an uncompressed event stream "
            f"(Content-Type {kind or 'none'}, Content-Encoding {encoding})",
            code="upstream_bad_event",
        )
    return UpstreamSource(response, config, first, total)


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
        self._calls: dict[int, list[Any]] = {}  # index -> [id, name, argument pieces]
        self.finish_reason: str | None = None
        self.usage: dict[str, int] | None = None

    def _deadline(self, seen_data: bool) -> tuple[float, ApiError]:
        now = anyio.current_time()
        config = self._config
        if not seen_data:
            when, err = self._first, _timeout("sent no data", config.first_byte_timeout)
        else:
            when, err = now + config.idle_timeout, _timeout("sent nothing", config.idle_timeout)
        if self._total <= when:
            when, err = self._total, _timeout("did not finish", config.total_timeout)
        return when, err

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
                    raise late from None
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
            raise ApiError(
                502,
                f"the upstream connection broke ({type(exc).__name__})",
                code="upstream_disconnected",
            ) from None
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
        usage = event.get("usage")
        if isinstance(usage, dict):
            self.usage = {
                "input_tokens": _count(usage.get("prompt_tokens")),
                "output_tokens": _count(usage.get("completion_tokens")),
            }
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return None
        text = delta.get("content")
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        text = text if isinstance(text, str) else ""
        reasoning = reasoning if isinstance(reasoning, str) else ""
        if unencodable(text) or unencodable(reasoning):
            raise ApiError(
                502,
                "the upstream sent text that cannot be encoded (a lone surrogate)",
                code="upstream_bad_text",
            )
        if isinstance(delta.get("tool_calls"), list):
            self._call_pieces(delta["tool_calls"])
        return Piece(text, reasoning) if text or reasoning else None

    def _call_pieces(self, pieces: list[Any]) -> None:
        for i, piece in enumerate(pieces):
            if not isinstance(piece, dict):
                continue
            index = piece.get("index", i)
            entry = self._calls.setdefault(index if isinstance(index, int) else i, ["", "", []])
            fn = piece["function"] if isinstance(piece.get("function"), dict) else {}
            for slot, value in ((0, piece.get("id")), (1, fn.get("name"))):
                if isinstance(value, str) and value:
                    if unencodable(value):
                        raise ApiError(
                            502,
                            "the upstream sent a tool call that cannot be encoded",
                            code="upstream_bad_text",
                        )
                    entry[slot] = value if slot == 0 else entry[slot] + value
            arguments = fn.get("arguments")
            if isinstance(arguments, str):
                entry[2].append(arguments)

    def calls(self) -> list[ToolCall]:
        """The upstream's own tool calls (``delta.tool_calls``), in index order."""
        out = []
        for _, (ident, name, pieces) in sorted(self._calls.items()):
            text = "".join(pieces)
            try:
                value = json.loads(text) if text.strip() else {}
            except ValueError:
                value = None
            if not name or not isinstance(value, dict) or unencodable(text):
                raise ApiError(
                    502,
                    "the upstream sent a tool call without a name or whose "
                    "arguments are not a JSON object",
                    code="upstream_bad_call",
                )
            out.append(ToolCall(name, value, id=ident))
        return out

    async def aclose(self) -> None:
        await self._response.aclose()


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

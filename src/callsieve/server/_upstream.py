"""Strategy: upstream mode's model — one streamed OpenAI chat-completions request to the
upstream, read as Server-Sent Events into pieces of text and reasoning.

What it does: ``open_upstream(client, config, payload)`` sends the request (always
``stream: true`` with ``stream_options.include_usage``, so streamed and whole client requests
take one path) and returns an ``UpstreamSource`` once the upstream has answered with its
status: ``pieces()`` yields a ``Piece(text, reasoning)`` per event that carries
``delta.content`` or ``delta.reasoning_content`` (or ``delta.reasoning``, as some servers
name it), and records ``finish_reason`` and ``usage`` (``input_tokens``/``output_tokens``)
as they come. ``aclose()`` closes the upstream connection; the responder calls it whatever
happens, so a client that disconnects cancels the upstream request.
What it guarantees: faults are ``ApiError``s: the upstream unreachable ``502``, a timeout
``504``, an error status passed on with the upstream's status and message (``from_upstream``);
after the stream has begun, a broken connection, a read timeout, an ``error`` event or a
stream that ends before ``[DONE]`` and without a ``finish_reason`` raise
``ApiError(502/504)`` from ``pieces()``.
What it costs: one line split and one ``json.loads`` per upstream event; at most 64 kB of an
error body is read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from ._errors import ApiError, from_upstream

if TYPE_CHECKING:
    from ._config import ServerConfig

__all__ = ["Piece", "UpstreamSource", "open_upstream"]

_ERROR_BODY_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True)
class Piece:
    """What the model sent in one event: answer text and reasoning text."""

    text: str
    reasoning: str = ""


async def open_upstream(client: httpx.AsyncClient, config: ServerConfig,
                        payload: dict[str, Any]) -> UpstreamSource:
    headers = {"Accept": "text/event-stream"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    body = {**payload, "stream": True, "stream_options": {"include_usage": True}}
    request = client.build_request("POST", f"{config.upstream}/chat/completions", json=body,
                                   headers=headers)
    try:
        response = await client.send(request, stream=True)
    except httpx.TimeoutException:
        raise ApiError(504, "the upstream did not answer in time", code="upstream_timeout",
                       kind="timeout_error") from None
    except httpx.HTTPError as exc:
        raise ApiError(502, f"the upstream cannot be reached ({type(exc).__name__})",
                       code="upstream_unreachable") from None
    if response.status_code >= 400:
        try:
            data = b""
            async for part in response.aiter_bytes():
                data += part
                if len(data) >= _ERROR_BODY_LIMIT:
                    break
        except httpx.HTTPError:
            pass
        finally:
            await response.aclose()
        raise from_upstream(response.status_code, data)
    return UpstreamSource(response)


class UpstreamSource:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.finish_reason: str | None = None
        self.usage: dict[str, int] | None = None

    async def pieces(self) -> AsyncIterator[Piece]:
        done = False
        try:
            async for line in self._response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    break
                piece = self._read(data)
                if piece is not None:
                    yield piece
        except httpx.TimeoutException:
            raise ApiError(504, "the upstream stopped sending (read timeout)",
                           code="upstream_timeout", kind="timeout_error") from None
        except httpx.HTTPError as exc:
            raise ApiError(502, f"the upstream connection broke ({type(exc).__name__})",
                           code="upstream_disconnected") from None
        if not done and self.finish_reason is None:
            raise ApiError(502, "the upstream's stream ended before it finished",
                           code="upstream_disconnected")

    def _read(self, data: str) -> Piece | None:
        try:
            event = json.loads(data)
        except ValueError:
            raise ApiError(502, "the upstream sent an event that is not JSON",
                           code="upstream_bad_event") from None
        if not isinstance(event, dict):
            return None
        if event.get("error") is not None:
            error = event["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise ApiError(502, f"the upstream failed: {message}", code="upstream_error")
        usage = event.get("usage")
        if isinstance(usage, dict):
            self.usage = {"input_tokens": _count(usage.get("prompt_tokens")),
                          "output_tokens": _count(usage.get("completion_tokens"))}
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
        return Piece(text, reasoning) if text or reasoning else None

    async def aclose(self) -> None:
        await self._response.aclose()


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

"""Strategy: one reply, from a model source through a ``Sieve`` to a client API — streamed as
Server-Sent Events, or whole.

What it does: ``stream_reply(api, req, source, options)`` is the body of a streamed response:
each piece of the model's text goes through ``Sieve.feed`` and the API's ``StreamRenderer``,
and the frames of one piece are sent as one write; a piece's reasoning (an upstream's
``reasoning_content``) goes to the renderer first, as a ``Reasoning`` event; at the end
``Sieve.close()`` and the renderer's ``close(finish_reason, usage)``, then the API's end
marker. ``whole_reply`` collects the text and the reasoning and answers
``render_response(parse(text))``, the upstream's reasoning first (``with_reasoning``). ``sieve_options(config, req, defaults)`` is the
keyword options of the request's sieve: the app's defaults, the server's settings over them,
the request's tools, and ``mode="off"`` (without a policy) when the reply is text only (no
tools, or ``tool_choice="none"``).
What it guarantees: a fault after the stream began (``ApiError`` from the source; an
unexpected exception, logged, as a 500) ends the stream with the API's error event; what was sent before stays valid (held text and an open
block are not released: the reply is broken). Whatever ends the reply — the end, a fault, the
client going away (the task is cancelled) — the source is closed, shielded from the
cancellation, so the upstream connection is closed too.
What it costs: the sieve and the renderer per piece; a whole reply holds its text.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol

import anyio

from .._base.errors import ConfigurationError
from .._base.events import Reasoning
from .._config.options import SieveOptions
from .._facade.results import ParseResult, parse
from .._facade.sieve import Sieve
from ._apis import Api
from ._config import ServerConfig
from ._errors import ApiError
from ._turns import ModelRequest
from ._upstream import Piece

__all__ = ["Source", "sieve_options", "stream_reply", "whole_reply"]

log = logging.getLogger("callsieve.server")
#: Options that judge calls; a text-only reply has none (and has no tools to judge by).
_JUDGING = ("policy", "on_reject")
_FINISH = ("stop", "length", "content_filter", "tool_calls")


class Source(Protocol):
    finish_reason: str | None
    usage: dict[str, int] | None

    def pieces(self) -> AsyncIterator[Piece]: ...

    async def aclose(self) -> None: ...


def sieve_options(config: ServerConfig, req: ModelRequest,
                  defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    options = {**(defaults or {}), **config.sieve}
    if not req.parses:  # text only: nothing is parsed, so there is no call to judge
        options["mode"] = "off"
        for name in _JUDGING:
            options.pop(name, None)
    options["tools"] = req.tools or None
    try:
        SieveOptions(**options)
    except ConfigurationError as exc:
        raise ApiError(400, f"tools: {exc}", param="tools") from None
    return options


def _finish(source: Source) -> str | None:
    return source.finish_reason if source.finish_reason in _FINISH else None


async def stream_reply(api: Api, req: ModelRequest, source: Source,
                       options: dict[str, Any]) -> AsyncIterator[str]:
    frame = api.frame
    sent = 0
    try:
        try:
            sieve = Sieve(**options)
            renderer = api.stream_renderer(req)
            async for piece in source.pieces():
                objs = renderer.feed([Reasoning(piece.reasoning)]) if piece.reasoning else []
                if piece.text:
                    objs += renderer.feed(sieve.feed(piece.text))
                if objs:
                    sent += len(objs)
                    yield "".join([frame(o) for o in objs])
            usage = (source.usage or {}) if api.wants_usage(req) else None
            objs = renderer.feed(sieve.close()) + renderer.close(_finish(source), usage=usage)
        except ApiError as err:
            yield api.error_frame(err, sent)
            return
        except Exception as exc:  # a bug, not the model's fault: logged, and the stream ends
            log.exception("unexpected error while streaming a reply")
            yield api.error_frame(ApiError(500, f"internal error ({type(exc).__name__})",
                                           code="internal_error"), sent)
            return
        yield "".join([frame(o) for o in objs]) + api.end
    finally:
        with anyio.CancelScope(shield=True):
            await source.aclose()


async def whole_reply(api: Api, req: ModelRequest, source: Source,
                      options: dict[str, Any]) -> dict[str, Any]:
    text: list[str] = []
    thought: list[str] = []  # (an upstream's reasoning_content, sent before its text)
    try:
        async for piece in source.pieces():
            text.append(piece.text)
            thought.append(piece.reasoning)
    finally:
        with anyio.CancelScope(shield=True):
            await source.aclose()
    result = parse("".join(text), **options)
    return api.whole(with_reasoning(result, "".join(thought)), req, _finish(source),
                     source.usage or {})


def with_reasoning(result: ParseResult, reasoning: str) -> ParseResult:
    """``result`` with an upstream's separate reasoning first (as a stream sends it): a
    copy, its ``reasoning`` and ``parts`` led by it; ``result`` itself if there is none."""
    if not reasoning:
        return result
    out = copy.copy(result)
    out.reasoning = reasoning + result.reasoning
    out.parts = (Reasoning(reasoning), *result.parts)
    return out

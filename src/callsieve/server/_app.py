"""Strategy: the gateway's HTTP face — a Starlette app whose routes read a request, open the
model source (replay or upstream) and hand both to the responder.

What it does: ``create_app(config)`` serves ``POST /v1/chat/completions``,
``POST /v1/responses``, ``POST /v1/messages`` (each streamed as SSE when the request says
``stream: true``, else one JSON object), ``GET /v1/models`` (the one model the gateway
serves), ``GET /healthz`` and, when ``prometheus_client`` is installed, ``GET /metrics``
(``_metrics``: the gateway's answers and the library's counters). Each POST: the body is read up to ``max_body_bytes`` (a ``Content-Length``
over it is refused before reading), parsed as a JSON object, read by the API's reader, its
sieve options checked, and the source opened — all before the response starts, so every
fault up to the upstream's answer has its own status. The upstream client
(``httpx.AsyncClient``, one per app, pooled) lives for the app's lifespan.
What it guarantees: every answer that is not a success is the API's own error shape
(``_errors``): 400 bad JSON or field, 404 unknown path, 405 wrong method, 413 body too large,
501 a prompt writer missing, 502/504 upstream faults and an upstream's own error status; an
unexpected exception is logged and answered 500 in the same shape — never a traceback.
Streams are ``DisconnectingStream``s: a client that goes away cancels the reply, and with it
the upstream request.
What it costs: a few dict operations per request besides the reply itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ._apis import CHAT, MESSAGES, RESPONSES, Api
from ._config import ServerConfig
from ._errors import ApiError, anthropic_body, openai_body
from ._metrics import Metrics
from ._prompting import upstream_payload
from ._replay import ReplaySource
from ._respond import Source, sieve_options, stream_reply, whole_reply
from ._upstream import open_upstream

__all__ = ["create_app"]

log = logging.getLogger("callsieve.server")
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class DisconnectingStream(StreamingResponse):
    """A streamed response that always watches for the client's disconnect and cancels the
    body when it comes (Starlette does so only before ASGI spec 2.4, where it relies on a
    failing write instead: a reply waiting on a slow upstream would never notice)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = {**scope, "asgi": {**scope.get("asgi", {}), "spec_version": "2.3"}}
        await super().__call__(scope, receive, send)


def create_app(config: ServerConfig) -> Starlette:
    metrics = Metrics()
    state: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            if config.upstream:
                timeout = httpx.Timeout(config.read_timeout, connect=config.connect_timeout)
                limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
                async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
                    state["client"] = client
                    yield
            else:
                yield
        finally:
            metrics.close()

    async def open_source(req: Any) -> Source:
        if config.upstream is None:
            return ReplaySource(config.transcript_text, config.chunk_size, config.delay_ms)
        return await open_upstream(state["client"], config, upstream_payload(config, req))

    async def handle(request: Request, api: Api) -> Response:
        try:
            body = await _read_json(request, config.max_body_bytes)
            req = api.read(body)
            options = sieve_options(config, req, metrics.sieve_defaults)
            source = await open_source(req)
        except ApiError as err:
            metrics.answered(api.name, err.status)
            return JSONResponse(api.error_body(err), status_code=err.status)
        if req.stream:
            metrics.answered(api.name, 200)
            return DisconnectingStream(stream_reply(api, req, source, options),
                                       media_type="text/event-stream", headers=_SSE_HEADERS)
        try:
            reply = await whole_reply(api, req, source, options)
        except ApiError as err:
            metrics.answered(api.name, err.status)
            return JSONResponse(api.error_body(err), status_code=err.status)
        metrics.answered(api.name, 200)
        return JSONResponse(reply)

    async def chat(request: Request) -> Response:
        return await handle(request, CHAT)

    async def responses(request: Request) -> Response:
        return await handle(request, RESPONSES)

    async def messages(request: Request) -> Response:
        return await handle(request, MESSAGES)

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": config.model_name, "object": "model", "created": 0,
             "owned_by": "callsieve"}]})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok",
                             "mode": "upstream" if config.upstream else "replay"})

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]),
              Route("/v1/responses", responses, methods=["POST"]),
              Route("/v1/messages", messages, methods=["POST"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/healthz", healthz, methods=["GET"])]
    if metrics.enabled:
        routes.append(Route("/metrics", metrics.endpoint, methods=["GET"]))
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={
        HTTPException: _http_error, Exception: _unexpected})


async def _read_json(request: Request, limit: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body is larger than {limit} bytes", code="body_too_large")
    data = bytearray()
    async for part in request.stream():
        data += part
        if len(data) > limit:
            raise ApiError(413, f"request body is larger than {limit} bytes",
                           code="body_too_large")
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON ({exc})", code="invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object", code="invalid_json")
    return body


def _shape(request: Request, err: ApiError) -> JSONResponse:
    body = anthropic_body(err) if request.url.path == "/v1/messages" else openai_body(err)
    return JSONResponse(body, status_code=err.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "error"
    return _shape(request, ApiError(status, f"{detail}: {request.method} {request.url.path}"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error answering %s %s", request.method, request.url.path)
    return _shape(request, ApiError(500, f"internal error ({type(exc).__name__})",
                                    code="internal_error"))

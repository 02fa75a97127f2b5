"""Strategy: the gateway's HTTP face — one Starlette app whose routes hand each API request
to an ``_reply.exchange.Endpoint``, behind the ``_access`` checks, with the state every request
shares (``Gateway``) made once.

What it does: ``create_app(config)`` serves ``POST /v1/chat/completions``,
``POST /v1/responses``, ``POST /v1/messages``, ``POST /v1beta/models/{model}:generateContent``
and ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (Gemini; the same under
``/v1/``, google-genai's default), ``GET /v1/models``
(the one model the gateway serves), ``GET /healthz`` and, when ``prometheus_client`` is
installed, ``GET /metrics`` (``_metrics``) — on the main port behind the API keys, or, with
``metrics_port``, only on that port, behind the same Host and Origin checks (``ByPort`` sends
each connection to the app of the port it came in on); all of it behind ``_wire.Wire`` (the
body and send deadlines, one access-log line per request). ``Gateway`` holds the settings, the metrics, the drain (``_drain``), the
redactor of configured keys (``_errors.Redactor``, also on the ``callsieve.server`` log) and
the upstream's connection pool (``httpx.AsyncHTTPTransport``, one per app: ``upstream_pool``
connections, a request waits ``UPSTREAM_POOL_WAIT`` seconds for one), which lives for the
app's lifespan; the lifespan state holds the worker's ``_conn.Connections``, for the
connection guard.
What it guarantees: every answer that is not a success is the API's own error shape
(``_errors``): 400 bad JSON or field, 401 no key, 403 a foreign origin, 404 unknown path, 405
wrong method, 408 a stalled body, 413 body too large, 415 not JSON, 502/504 upstream faults,
503 shutting down, too many connections or a full upstream pool;
an unexpected exception is logged and answered 500 in the same shape — never a traceback to
the client.
What it costs: a few dict operations per request besides the reply itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ._access import Access
from ._config import ServerConfig
from ._conn import STATE_KEY, ConnectionLimits, Connections, quiet_accept_errors
from ._drain import Drain
from ._errors import ApiError, RedactingFilter, Redactor
from ._metrics import Metrics
from ._reply.apis import CHAT, GEMINI, GEMINI_VERSIONS, MESSAGES, RESPONSES, error_shape
from ._reply.exchange import Endpoint
from ._reply.upstream import POOL_WAIT
from ._wire import Wire

__all__ = ["UPSTREAM_POOL_WAIT", "ByPort", "Gateway", "create_app"]

log = logging.getLogger("callsieve.server")
#: Seconds a request waits for a free upstream connection before its 503.
UPSTREAM_POOL_WAIT = POOL_WAIT


class Gateway:
    """What every request of one app shares."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.metrics = Metrics()
        self.drain = Drain(config.shutdown_grace)
        self.redact = Redactor(config.secrets)
        self.client: httpx.AsyncHTTPTransport = None  # type: ignore[assignment]  # (lifespan)
        #: The worker thread large bodies are parsed in, one at a time (``exchange``).
        self.parsing: anyio.CapacityLimiter | None = None

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[dict[str, Any]]:
        redacting = RedactingFilter(self.redact)
        log.addFilter(redacting)
        self.drain.start()
        quiet_accept_errors(asyncio.get_running_loop())
        config = self.config
        connections = Connections(ConnectionLimits(config.max_connections, config.header_timeout))
        try:
            limits = httpx.Limits(
                max_connections=config.upstream_pool,
                max_keepalive_connections=min(100, config.upstream_pool),
            )
            # (the transport, not a client: no cookie jar shared by every client's requests,
            # no redirects, no environment's proxy — and a fifth less time per request)
            async with httpx.AsyncHTTPTransport(limits=limits, trust_env=False) as transport:
                self.client = transport
                yield {STATE_KEY: connections}
        finally:
            self.drain.stop()
            self.metrics.close()
            log.removeFilter(redacting)

    async def metrics_endpoint(self, request: Request) -> Response:
        body, kind = self.metrics.render()
        return Response(body, media_type=kind)


def _gemini(stream: bool) -> Any:
    def params(scope: Scope) -> dict[str, str]:
        if stream and b"alt=sse" not in scope.get("query_string", b"").split(b"&"):
            raise ApiError(
                400,
                "streamGenerateContent is served as server-sent events only: add ?alt=sse",
                param="alt",
            )
        return {"model": str(scope["path_params"]["model"]), "stream": "1" if stream else "0"}

    return params


def create_app(config: ServerConfig) -> ASGIApp:
    gw = Gateway(config)

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": config.model_name,
                        "object": "model",
                        "created": 0,
                        "owned_by": "callsieve",
                    }
                ],
            }
        )

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "stopping" if gw.drain.stopping else "ok",
                "mode": "upstream" if config.upstream else "replay",
            },
            status_code=503 if gw.drain.stopping else 200,
        )

    routes = [
        Route("/v1/chat/completions", Endpoint(gw, CHAT), methods=["POST"]),
        Route("/v1/responses", Endpoint(gw, RESPONSES), methods=["POST"]),
        Route("/v1/messages", Endpoint(gw, MESSAGES), methods=["POST"]),
        *[
            Route(
                f"/{version}/models/{{model}}:{verb}",
                Endpoint(gw, GEMINI, _gemini(stream)),
                methods=["POST"],
            )
            for version in GEMINI_VERSIONS
            for verb, stream in (("generateContent", False), ("streamGenerateContent", True))
        ],
        Route("/v1/models", models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    metrics = (
        [Route("/metrics", gw.metrics_endpoint, methods=["GET"])] if gw.metrics.enabled else []
    )
    handlers: Any = {HTTPException: _http_error, Exception: _unexpected}
    main = Starlette(
        routes=routes + ([] if config.metrics_port else metrics),
        lifespan=gw.lifespan,
        exception_handlers=handlers,
    )
    app: ASGIApp = Access(main, config)
    if config.metrics_port:  # (its own port: no key, but the same Host and Origin checks)
        scrape = Starlette(routes=metrics, exception_handlers=handlers)
        app = ByPort(app, {config.metrics_port: Access(scrape, config, keys=False)})
    return Wire(app, config)


class ByPort:
    """Each connection to the app of the port it came in on (``scope["server"]``); the
    lifespan to the main app."""

    def __init__(self, main: ASGIApp, others: dict[int, ASGIApp]) -> None:
        self.main = main
        self.others = others

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") or ("", 0)
        app = (
            self.others.get(int(server[1] or 0), self.main)
            if scope["type"] == "http"
            else self.main
        )
        await app(scope, receive, send)


def _shape(request: Request, err: ApiError) -> JSONResponse:
    return JSONResponse(error_shape(request.url.path)(err), status_code=err.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "error"
    return _shape(request, ApiError(status, f"{detail}: {request.method} {request.url.path}"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error answering %s %s", request.method, request.url.path)
    return _shape(
        request, ApiError(500, f"internal error ({type(exc).__name__})", code="internal_error")
    )

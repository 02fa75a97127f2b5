"""Strategy: who may call the gateway, decided before any route runs — one ASGI middleware
that checks, in order, the ``Host`` header, a browser's ``Origin``, the API key and a POST
body's ``Content-Type``, and refuses in the shape of the API the path belongs to.

What it does: ``Access(app, config)`` wraps the gateway's routes.
  - ``Host`` must name one of ``allowed_hosts`` (the loopback names by default, and the bind
    address when it is one address; ``*`` allows any): a page on another name that resolves
    here (DNS rebinding) is refused (400 ``host_not_allowed``). ``/healthz`` is exempt, for
    load balancers that probe by address.
  - A request with an ``Origin`` header comes from a browser page: it is refused (403
    ``origin_not_allowed``) unless the origin is in ``cors_origins`` (``*`` allows any); an
    allowed one gets ``Access-Control-Allow-Origin``, and its preflight (``OPTIONS`` with
    ``Access-Control-Request-Method``) is answered 204 with the methods and headers it asked
    for, before any key is checked (a browser sends none on a preflight).
  - With ``api_keys`` set, every path but ``/healthz`` needs one of them, as
    ``Authorization: Bearer KEY`` (OpenAI clients), ``x-api-key: KEY`` (Anthropic's) or
    ``x-goog-api-key: KEY`` (google-genai's); a missing or wrong key is 401 in the API's
    shape (``invalid_api_key``; Anthropic ``authentication_error``; Google
    ``UNAUTHENTICATED``). Keys are compared by their SHA-256 digests with
    ``hmac.compare_digest``, every configured key each time: the time taken does not depend
    on the key given.
  - A POST must say ``Content-Type: application/json`` (parameters such as ``charset`` are
    allowed): a form or ``text/plain`` post — what a page can send without a preflight — is
    415 ``unsupported_media_type``.
What it guarantees: a refused request never reaches a route (so never the upstream), and is
logged in one line that holds no header value.
What it costs: a few header lookups and one digest per configured key per request.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._config import ServerConfig
from ._errors import ApiError
from ._http import header, log_answer, send_json
from ._reply.apis import error_shape

__all__ = ["Access"]

_OPEN = ("/healthz",)


class Access:
    def __init__(self, app: ASGIApp, config: ServerConfig, *, keys: bool = True) -> None:
        self.app = app
        self._hosts = {h.lower().strip("[]") for h in config.allowed_hosts}
        self._any_host = "*" in self._hosts
        self._origins = set(config.cors_origins)
        self._digests = (
            [hashlib.sha256(k.encode()).digest() for k in config.api_keys] if keys else []
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            cors = self._check(scope)
        except ApiError as err:
            log_answer(scope, err.status, f"client_error {err.code or err.kind}", started)
            await send_json(
                send,
                err.status,
                error_shape(scope["path"])(err),
                [(k.lower().encode(), v.encode()) for k, v in err.headers.items()],
            )
            return
        if cors is None:
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and header(scope, b"access-control-request-method"):
            asked = header(scope, b"access-control-request-headers") or ""
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *cors,
                        (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
                        (b"access-control-allow-headers", asked.encode("latin-1")),
                        (b"access-control-max-age", b"600"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            log_answer(scope, 204, "ok preflight", started)
            return

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *cors]}
            await send(message)

        await self.app(scope, receive, with_cors)

    def _check(self, scope: Scope) -> list[tuple[bytes, bytes]] | None:
        """The CORS headers to add (``None``: not a browser's request); raises to refuse."""
        path = scope["path"]
        if path in _OPEN:
            return None
        if not self._any_host and _hostname(header(scope, b"host")) not in self._hosts:
            raise ApiError(
                400,
                "the Host header names no host this gateway serves (allowed_hosts)",
                code="host_not_allowed",
            )
        origin = header(scope, b"origin")
        cors = None
        if origin is not None:
            if origin not in self._origins and "*" not in self._origins:
                raise ApiError(
                    403,
                    "requests from a web page of another origin are refused (cors_origins)",
                    kind="permission_error",
                    code="origin_not_allowed",
                )
            cors = [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"vary", b"Origin"),
            ]
            if scope["method"] == "OPTIONS":
                return cors
        if self._digests and not self._key_ok(scope):
            raise ApiError(
                401,
                "a valid API key is required (Authorization: Bearer KEY, or x-api-key)",
                kind="invalid_request_error",
                code="invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if scope["method"] == "POST":
            kind = (header(scope, b"content-type") or "").split(";")[0].strip().lower()
            if kind != "application/json":
                raise ApiError(
                    415,
                    "the body must be JSON (Content-Type: application/json)",
                    code="unsupported_media_type",
                )
        return cors

    def _key_ok(self, scope: Scope) -> bool:
        given = []
        auth = header(scope, b"authorization")
        if auth is not None and auth[:7].lower() == "bearer ":
            given.append(auth[7:].strip())
        for name in (b"x-api-key", b"x-goog-api-key"):
            value = header(scope, name)
            if value is not None:
                given.append(value.strip())
        ok = False
        for key in given:
            digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()
            for known in self._digests:
                ok |= hmac.compare_digest(digest, known)
        return ok


def _hostname(host: str | None) -> str:
    if not host:
        return ""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0].rstrip(".") if host.count(":") <= 1 else host

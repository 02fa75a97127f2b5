"""Strategy: every fault the gateway answers, as one ``ApiError`` value, written in the shape
of the API the client speaks — never a traceback, never a secret.

What it does: ``ApiError(status, message, *, kind=..., param=None, code=None, headers=None)``
is raised anywhere in the server (bad JSON, a missing field, a refused caller, the body limit,
an upstream that is unreachable, times out or answers an error). ``openai_body(err)`` is
OpenAI's ``{"error": {"message", "type", "param", "code"}}``; ``anthropic_body(err)``
Anthropic's ``{"type": "error", "error": {"type", "message"}}``, its ``type`` chosen by status
as the Messages API does (400 ``invalid_request_error``, 401 ``authentication_error``, 403
``permission_error``, 404 ``not_found_error``, 413 ``request_too_large``, 429
``rate_limit_error``, 504 ``timeout_error``, 529 ``overloaded_error``, other 5xx
``api_error``); ``gemini_body(err)`` Google's ``{"error": {"code", "message", "status"}}``.
``from_upstream(status, retry_after)`` maps an upstream's error status to ours — the status
class and a short message of our own, never the upstream's body (it may echo a key): 401 and
403 are a 502 "upstream authentication failed" (not the client's fault), 429 and 503 keep
their status and ``Retry-After``, 408 is a 504, other 4xx keep their status, other 5xx are a
502. ``Redactor(secrets)`` replaces every configured key in a text with ``[redacted]``; the
app passes each error message and log line through it.
What it guarantees: the status is an HTTP status (400–599); the message is one readable line
that never holds the body of the request.
What it costs: nothing until a fault.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ApiError",
    "RedactingFilter",
    "Redactor",
    "anthropic_body",
    "anthropic_type",
    "from_upstream",
    "gemini_body",
    "openai_body",
]

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    408: "DEADLINE_EXCEEDED",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MAX_MESSAGE = 500


class ApiError(Exception):
    """A fault answered to the client: status, message, and OpenAI's ``type``, ``param`` and
    ``code`` (Anthropic's and Google's shapes read their ``type`` from the status), and the
    response ``headers`` it needs (``Retry-After``, ``WWW-Authenticate``)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str | None = None,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status if 400 <= status <= 599 else 502
        self.message = " ".join(message.split())[:_MAX_MESSAGE]
        self.kind = kind or ("invalid_request_error" if self.status < 500 else "server_error")
        self.param = param
        self.code = code
        self.headers = dict(headers or {})


def openai_body(err: ApiError) -> dict[str, Any]:
    return {
        "error": {"message": err.message, "type": err.kind, "param": err.param, "code": err.code}
    }


def anthropic_type(status: int) -> str:
    return _ANTHROPIC_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


def anthropic_body(err: ApiError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": anthropic_type(err.status), "message": err.message}}


def gemini_body(err: ApiError) -> dict[str, Any]:
    status = _GOOGLE_STATUS.get(
        err.status, "FAILED_PRECONDITION" if err.status < 500 else "INTERNAL"
    )
    return {"error": {"code": err.status, "message": err.message, "status": status}}


def from_upstream(status: int, retry_after: str | None = None) -> ApiError:
    """Our answer to an upstream's error status (see the module's docstring)."""
    headers = {"Retry-After": retry_after} if retry_after and status in (429, 503) else {}
    if status in (401, 403):
        return ApiError(
            502,
            f"upstream authentication failed (HTTP {status}): the gateway's "
            "upstream key was refused",
            code="upstream_auth_failed",
        )
    if status == 429:
        return ApiError(
            429,
            "the upstream is rate-limited; retry later",
            kind="rate_limit_error",
            code="upstream_rate_limited",
            headers=headers,
        )
    if status == 408:
        return ApiError(
            504, "the upstream timed out (HTTP 408)", kind="timeout_error", code="upstream_timeout"
        )
    if status < 500:
        return ApiError(
            status, f"the upstream refused the request (HTTP {status})", code="upstream_refused"
        )
    if status in (503, 529):
        return ApiError(
            status,
            f"the upstream is overloaded (HTTP {status}); retry later",
            code="upstream_unavailable",
            headers=headers,
        )
    if status == 504:
        return ApiError(
            504, "the upstream timed out (HTTP 504)", kind="timeout_error", code="upstream_timeout"
        )
    return ApiError(502, f"the upstream failed (HTTP {status})", code="upstream_error")


class Redactor:
    """Replaces each configured secret in a text (longest first, so a key that holds
    another is replaced whole)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "[redacted]")
        return text

    def error(self, err: ApiError) -> ApiError:
        if self._secrets:
            err.message = self(err.message)
        return err


class RedactingFilter(logging.Filter):
    """A log filter that passes every record's message through a ``Redactor``."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self._redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True

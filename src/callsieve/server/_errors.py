"""Strategy: every fault the gateway answers, as one ``ApiError`` value, written in the shape
of the API the client speaks — never a traceback.

What it does: ``ApiError(status, message, *, kind=..., param=None, code=None)`` is raised
anywhere in the server (bad JSON, a missing field, the body limit, an upstream that is
unreachable, times out or answers an error). ``openai_body(err)`` is OpenAI's
``{"error": {"message", "type", "param", "code"}}``; ``anthropic_body(err)`` Anthropic's
``{"type": "error", "error": {"type", "message"}}``, its ``type`` chosen by status as the
Messages API does (400 ``invalid_request_error``, 404 ``not_found_error``, 413
``request_too_large``, 429 ``rate_limit_error``, 504 ``timeout_error``, 529
``overloaded_error``, other 5xx ``api_error``). ``from_upstream(status, body)`` turns an
upstream's error answer into an ``ApiError`` with the upstream's status and message.
What it guarantees: the status is an HTTP status (400–599); the message is one readable line
that never holds the body of the request.
What it costs: nothing until a fault.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ApiError", "anthropic_body", "anthropic_type", "from_upstream", "openai_body"]

_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                    403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                    429: "rate_limit_error", 504: "timeout_error", 529: "overloaded_error"}
_MAX_MESSAGE = 500


class ApiError(Exception):
    """A fault answered to the client: status, message, and OpenAI's ``type``, ``param`` and
    ``code`` (Anthropic's shape reads its ``type`` from the status)."""

    def __init__(self, status: int, message: str, *, kind: str | None = None,
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status if 400 <= status <= 599 else 502
        self.message = " ".join(message.split())[:_MAX_MESSAGE]
        self.kind = kind or ("invalid_request_error" if self.status < 500 else "server_error")
        self.param = param
        self.code = code


def openai_body(err: ApiError) -> dict[str, Any]:
    return {"error": {"message": err.message, "type": err.kind, "param": err.param,
                      "code": err.code}}


def anthropic_type(status: int) -> str:
    return _ANTHROPIC_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")


def anthropic_body(err: ApiError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": anthropic_type(err.status),
                                       "message": err.message}}


def from_upstream(status: int, body: bytes) -> ApiError:
    """The upstream's error answer, passed on: its status, and its message if its body is
    either API's error shape (else the start of the body as text)."""
    message = body[:_MAX_MESSAGE].decode("utf-8", "replace").strip() or f"HTTP {status}"
    code = None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        inner = data.get("error")
        if isinstance(inner, dict):
            message = str(inner.get("message") or message)
            raw_code = inner.get("code")
            code = str(raw_code) if raw_code is not None else None
        elif isinstance(inner, str):
            message = inner
        elif isinstance(data.get("message"), str):
            message = data["message"]
    return ApiError(status, f"upstream error {status}: {message}", code=code or "upstream_error")

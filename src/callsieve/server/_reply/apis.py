"""Strategy: what differs between the client APIs, in one small table — how a request is
read, which renderer answers, how a stream is framed, kept alive and ended, and how an error
is shaped — so the responder and the routes are written once.

What it does: ``Api`` has ``read`` (the body and the route's parameters to a
``ModelRequest``), ``stream_renderer(req, on_abort)`` and ``whole(result, req, finish_reason,
usage)`` (the ``callsieve.render`` module's ``StreamRenderer`` and ``render_response``, with
the request's model and ``echo``), ``frame(obj)`` (one SSE frame: ``data:`` for OpenAI Chat
and Gemini, ``event:`` + ``data:`` for Responses and Anthropic), ``end`` (``data: [DONE]`` for
Chat), ``keepalive`` (what is sent while the upstream thinks: an SSE comment, Anthropic's own
``ping`` event, nothing for Gemini, whose client reads every line as JSON),
``error_body(err)`` and ``error_frame(err, sent)`` (a fault after the stream began: OpenAI
Chat's ``data: {"error": …}``, which the openai client raises as an ``APIError``; a Responses
``error`` event numbered after the ``sent`` events; Anthropic's ``event: error``; Gemini's
``data: {"error": …}``, which google-genai raises). ``CHAT``, ``RESPONSES``, ``MESSAGES`` and
``GEMINI`` are the four; ``error_shape(path)`` is the error body of the API a path belongs to.
What it guarantees: usage reaches a Chat stream only when the request asked for it
(``stream_options.include_usage``), as OpenAI sends it.
What it costs: one ``json.dumps`` per wire object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ... import ParseResult
from ...render import anthropic, gemini, openai_chat, openai_responses
from .._errors import ApiError, anthropic_body, gemini_body, openai_body
from .._read.anthropic import read_messages
from .._read.gemini import read_generate
from .._read.openai import read_chat, read_responses
from .._read.turns import ModelRequest

__all__ = [
    "CHAT",
    "GEMINI",
    "GEMINI_VERSIONS",
    "MESSAGES",
    "RESPONSES",
    "Api",
    "dumps",
    "error_shape",
]

#: The API versions Gemini's routes are served under (google-genai calls ``v1`` by default).
GEMINI_VERSIONS = ("v1beta", "v1")

Usage = dict[str, int]
Reader = Callable[[dict[str, Any], dict[str, str]], ModelRequest]


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _data(obj: dict[str, Any]) -> str:
    return f"data: {dumps(obj)}\n\n"


def _event(obj: dict[str, Any]) -> str:
    return f"event: {obj['type']}\ndata: {dumps(obj)}\n\n"


@dataclass(frozen=True)
class Api:
    name: str
    read: Reader
    stream_renderer: Callable[[ModelRequest, str], Any]
    whole: Callable[[ParseResult, ModelRequest, str | None, Usage | None], dict[str, Any]]
    frame: Callable[[dict[str, Any]], str]
    end: str
    keepalive: str
    error_body: Callable[[ApiError], dict[str, Any]]
    error_frame: Callable[[ApiError, int], str]
    #: Whether ``close(usage=…)`` is sent for this request.
    wants_usage: Callable[[ModelRequest], bool]


def _responses_frame(err: ApiError, sent: int) -> str:
    return _event(
        {
            "type": "error",
            "code": err.code or err.kind,
            "message": err.message,
            "param": err.param,
            "sequence_number": sent,
        }
    )


def _api(
    name: str,
    read: Reader,
    module: Any,
    frame: Callable[[dict[str, Any]], str],
    end: str,
    keepalive: str,
    error_body: Callable[[ApiError], dict[str, Any]],
    error_frame: Callable[[ApiError, int], str],
    wants_usage: Callable[[ModelRequest], bool],
) -> Api:
    """An ``Api`` answered by a ``callsieve.render`` module, given the request's model and
    what it echoes."""
    return Api(
        name=name,
        read=read,
        stream_renderer=lambda req, on_abort: module.StreamRenderer(
            model=req.model, on_abort=on_abort, **req.echo
        ),
        whole=lambda result, req, finish, usage: module.render_response(
            result, model=req.model, finish_reason=finish, usage=usage, **req.echo
        ),
        frame=frame,
        end=end,
        keepalive=keepalive,
        error_body=error_body,
        error_frame=error_frame,
        wants_usage=wants_usage,
    )


_COMMENT = ": keep-alive\n\n"
CHAT = _api(
    "chat",
    read_chat,
    openai_chat,
    _data,
    "data: [DONE]\n\n",
    _COMMENT,
    openai_body,
    lambda err, sent: _data(openai_body(err)),
    lambda req: req.include_usage,
)
RESPONSES = _api(
    "responses",
    read_responses,
    openai_responses,
    _event,
    "",
    _COMMENT,
    openai_body,
    _responses_frame,
    lambda req: True,
)
MESSAGES = _api(
    "messages",
    read_messages,
    anthropic,
    _event,
    "",
    'event: ping\ndata: {"type":"ping"}\n\n',
    anthropic_body,
    lambda err, sent: _event(anthropic_body(err)),
    lambda req: True,
)
GEMINI = _api(
    "gemini",
    read_generate,
    gemini,
    _data,
    "",
    "",
    gemini_body,
    lambda err, sent: _data(gemini_body(err)),
    lambda req: True,
)


def error_shape(path: str) -> Callable[[ApiError], dict[str, Any]]:
    """The error body of the API ``path`` belongs to (OpenAI's for anything else)."""
    if path.startswith("/v1/messages"):
        return anthropic_body
    if path.startswith("/v1beta/") or (path.startswith("/v1/models/") and ":" in path):
        return gemini_body
    return openai_body

"""Strategy: callsieve as a LiteLLM proxy callback — the model's text in, the API's tool
calls out, for whole replies and streams.

What it does: ``CallsieveHook`` is a LiteLLM ``CustomLogger``. The proxy runs
``async_post_call_success_hook`` on every whole reply: each choice's ``content`` is parsed
(``parse``) and rendered as Chat Completions renders it (``render.openai_chat``): the text
stays in ``content``, calls become ``tool_calls``, a thought at the start becomes
``reasoning_content``, and ``finish_reason`` says ``tool_calls`` (``length`` for a reply cut
off inside a call, whose call is not made). The proxy runs
``async_post_call_streaming_iterator_hook`` over a stream's chunks: each chunk's
``delta.content`` goes through one ``Sieve`` (``early_emit="arguments"`` unless the model's
options say otherwise) and ``openai_chat.StreamRenderer``; text goes on at once, a call goes
out as ``delta.tool_calls`` (its name first, then argument fragments), never half a tag. A
call that began streaming and then is not made (cut off, rejected by the policy, a failed
block) raises ``ToolCallAbortedError``: the proxy ends the stream with its error event, which
the ``openai`` SDK raises (SPEC §17). What the upstream separates itself passes through:
``reasoning_content`` (the content is then read as answer only) and native ``tool_calls``.
The options: ``CALLSIEVE_LITELLM_OPTIONS`` for every model, the model's
``model_info: {callsieve: ...}`` in ``config.yaml`` over them (``false``: that model is left
alone), and the request's tools (``_options``).
What it guarantees: a request without tools, or with ``tool_choice="none"``, passes
untouched; a chunk the sieve decided nothing on is not sent; the chunks keep the upstream's
id, model and created time.
What it costs: per chunk, one ``Sieve.feed`` and one small object per rendered piece.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from litellm.integrations.custom_logger import CustomLogger
from litellm.types.utils import (
    ChatCompletionMessageToolCall,
    ModelResponse,
    ModelResponseStream,
    StreamingChoices,
)

from ... import CallsieveError, Sieve, parse
from ...render import openai_chat
from ._options import MODEL_KEY, default_options, read_options, request_options

__all__ = ["CallsieveHook", "ToolCallAbortedError"]

log = logging.getLogger("callsieve.litellm")
_FINISH = ("stop", "tool_calls", "length", "content_filter")


class ToolCallAbortedError(CallsieveError):
    """A call began streaming and then was not made; the proxy sends this as its error
    event. ``message``, ``type`` and ``status_code`` are what the proxy puts there."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.message = str(error.get("message", "tool call aborted"))
        self.type = str(error.get("type", "server_error"))
        self.code = str(error.get("code", ""))
        self.status_code = 500
        super().__init__(self.message)


def _finish(reason: Any) -> str | None:
    return reason if reason in _FINISH else None


def _model_setting(model: Any) -> Any:
    """The model's ``model_info.callsieve`` in the proxy's router (absent: ``None``)."""
    try:
        from litellm.proxy.proxy_server import llm_router
    except ImportError:  # (the proxy's extra is not installed: the SDK alone)
        return None
    if llm_router is None or not isinstance(model, str):
        return None
    for deployment in llm_router.get_model_list(model_name=model) or []:
        info = deployment.get("model_info") or {}
        if MODEL_KEY in info:
            return info[MODEL_KEY]
    return None


class CallsieveHook(CustomLogger):  # type: ignore[misc,unused-ignore]
    """The proxy callback (see the module docstring). ``options``: ``Sieve`` options for
    every model (default: ``CALLSIEVE_LITELLM_OPTIONS``); ``models``: a model name's own
    options, or ``False``, over them (default: each model's ``model_info.callsieve``)."""

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        models: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._options = default_options() if options is None else read_options(options, "options")
        self._models = dict(models) if models is not None else None

    def options_for(self, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``Sieve`` options for request ``data``'s reply, or ``None`` (left alone)."""
        model = data.get("model")
        if self._models is not None:
            own = self._models.get(model) if isinstance(model, str) else None
        else:
            own = _model_setting(model)
        base = self._options
        if own is not None:  # the model's own setting, over the defaults (false: off)
            mine = read_options(own, f"model {model!r}: model_info.{MODEL_KEY}")
            base = None if mine is None else {**(base or {}), **mine}
        return request_options(base, data)

    # ------------------------------------------------------------ whole replies
    async def async_post_call_success_hook(
        self, data: dict[str, Any], user_api_key_dict: Any, response: Any
    ) -> Any:
        if not isinstance(response, ModelResponse):
            return response
        options = self.options_for(data)
        if options is None:
            return response
        for choice in response.choices:
            _read_choice(choice, options)
        return response

    # ------------------------------------------------------------ streams
    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        options = self.options_for(request_data)
        if options is None:
            async for chunk in response:
                yield chunk
            return
        stream = _Stream(options)
        async for chunk in response:
            for out in stream.feed(chunk):
                yield out
        for out in stream.close():
            yield out


def _read_choice(choice: Any, options: dict[str, Any]) -> None:
    """One whole choice's message read again (see the module docstring)."""
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if message is None or not isinstance(content, str) or not content:
        return
    separated = getattr(message, "reasoning_content", None)
    opts = {**options, "reasoning": "off"} if separated else options
    result = parse(content, **opts)
    rendered = openai_chat.render_response(result, finish_reason=_finish(choice.finish_reason))
    out = rendered["choices"][0]
    made = out["message"]
    message.content = made["content"]
    if made.get("reasoning_content"):
        message.reasoning_content = made["reasoning_content"]
    if made.get("tool_calls"):
        native = list(getattr(message, "tool_calls", None) or [])
        message.tool_calls = native + [
            ChatCompletionMessageToolCall(**call) for call in made["tool_calls"]
        ]
    if choice.finish_reason in _FINISH or choice.finish_reason is None:
        choice.finish_reason = out["finish_reason"]


class _Stream:
    """One stream's sieve and renderer (see the module docstring)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = {"early_emit": "arguments", **options}
        self.sieve: Sieve | None = None
        self.renderer = openai_chat.StreamRenderer(on_abort="error")
        self.separated = False  # the upstream sent reasoning_content
        self.last: Any = None  # the latest upstream chunk (its id, model, created)
        self.held: list[Any] = []  # chunks after the finish (usage)
        self.finish: str | None = None
        self.closed = False

    def _sieve(self) -> Sieve:
        if self.sieve is None:
            opts = {**self.options, "reasoning": "off"} if self.separated else self.options
            self.sieve = Sieve(**opts)
        return self.sieve

    def feed(self, chunk: Any) -> list[Any]:
        if not isinstance(chunk, ModelResponseStream) or self.closed:
            return [chunk]
        self.last = chunk
        if not chunk.choices:  # (a usage chunk: after ours)
            self.held.append(chunk)
            return []
        choice = chunk.choices[0]
        delta = choice.delta
        out: list[Any] = []
        if getattr(delta, "reasoning_content", None) or getattr(delta, "tool_calls", None):
            self.separated = self.separated or bool(getattr(delta, "reasoning_content", None))
            out.append(self._passed(chunk))  # what the upstream separated itself
        text = delta.content
        if isinstance(text, str) and text:
            out += self._render(self.renderer.feed(self._sieve().feed(text)))
        if choice.finish_reason is not None:
            self.finish = choice.finish_reason
            usage = getattr(chunk, "usage", None)
            out += self.close()
            if usage is not None and out:
                out[-1].usage = usage
        return out

    def close(self) -> list[Any]:
        if self.closed:
            return []
        self.closed = True
        if self.last is None:  # (no Chat Completions chunk came: another route's stream)
            return self.held
        sieve = self._sieve()
        out = self._render(self.renderer.feed(sieve.close()))
        if self.renderer.aborted is None:
            out += self._render(self.renderer.close(_finish(self.finish), blocks=sieve.blocks))
        return out + self.held

    def _passed(self, chunk: Any) -> Any:
        """The upstream's own reasoning and calls, without its content (the sieve's)."""
        copy = chunk.model_copy(deep=True)
        copy.choices[0].delta.content = None
        copy.choices[0].finish_reason = None
        return copy

    def _render(self, pieces: list[dict[str, Any]]) -> list[Any]:
        out = []
        for piece in pieces:
            if "error" in piece:
                raise ToolCallAbortedError(piece["error"])
            if not piece.get("choices"):
                continue
            choice = piece["choices"][0]
            last = self.last
            out.append(
                ModelResponseStream(
                    id=getattr(last, "id", piece["id"]),
                    created=getattr(last, "created", piece["created"]),
                    model=getattr(last, "model", piece["model"]),
                    choices=[
                        StreamingChoices(
                            index=0, delta=choice["delta"], finish_reason=choice["finish_reason"]
                        )
                    ],
                )
            )
        return out

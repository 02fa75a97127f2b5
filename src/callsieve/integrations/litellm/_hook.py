"""Strategy: callsieve as a LiteLLM proxy callback — the model's text in, the API's tool
calls out, for whole replies and streams, each choice read as the gateway reads a reply.

What it does: ``CallsieveHook`` is a LiteLLM ``CustomLogger``. Each choice of a reply gets its
own ``Sieve``, wrapped in the gateway's ``ReplyEvents`` (``server._reply.respond``), so the
hook decides what the gateway decides, in the gateway's code:

- the reading the request asks for (``_options.reply_plan``: its thinking switch, a guessed
  thought held until it is settled);
- reasoning the upstream separates itself (``reasoning_content``): the content is then read
  as the answer only;
- a named ``tool_choice`` (a call of another tool is dropped whole) and
  ``parallel_tool_calls=false`` (the first call only);
- the upstream's own ``tool_calls``, numbered after the calls read from the text (indexes
  0, 1, 2, … and each call's id unique, as one list).

The proxy runs ``async_post_call_success_hook`` on every whole reply: each choice's
``content`` and native calls go through its reading, and ``render.openai_chat`` renders the
message. The text stays in ``content``, calls become ``tool_calls``, a thought becomes
``reasoning_content``, and ``finish_reason`` says ``tool_calls`` (``length`` for a reply cut
off inside a call, whose call is not made). The proxy runs
``async_post_call_streaming_iterator_hook`` over a stream's chunks. Each chunk's choices go
to their own reading (``early_emit="arguments"`` unless the model's options say otherwise)
and their own ``openai_chat.StreamRenderer``. Text goes on at once. A call goes out as
``delta.tool_calls`` (its name first, then argument fragments), never half a tag. The
upstream's own calls go out at the choice's end, after the text's. A choice ends at its
``finish_reason``, or at the stream's end (LiteLLM 1.108 passes on only one choice's).
A call that began streaming and then is not made (cut off, rejected by the policy, a failed
block) raises ``ToolCallAbortedError``. The proxy ends the stream with its error event,
which the ``openai`` SDK raises (SPEC §17); with ``n > 1`` that ends every choice.
``tool_choice="required"`` is not enforced on the reply, as in the gateway: a reply
without a call is its text, finished ``stop``.
The options: ``CALLSIEVE_LITELLM_OPTIONS`` for every model, the model's
``model_info: {callsieve: ...}`` in ``config.yaml`` over them (``false``: that model is left
alone), and the request (``_options``).
What it guarantees: a request without tools, or with ``tool_choice="none"``, passes
untouched; a chunk the sieve decided nothing on is not sent; the chunks keep the upstream's
id, model and created time. An upstream call without a name, or whose arguments are not a
JSON object, raises ``UpstreamCallError`` (the gateway's 502 ``upstream_bad_call``).
What it costs: per chunk, one ``Sieve.feed`` per choice and one small object per rendered
piece; importing the hook imports the gateway's modules (Starlette and Uvicorn, which the
proxy has).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import Any

from litellm.integrations.custom_logger import CustomLogger
from litellm.types.utils import (
    ChatCompletionMessageToolCall,
    ModelResponse,
    ModelResponseStream,
    StreamingChoices,
)

from ... import (
    CallsieveError,
    Event,
    ParseResult,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
)
from ...render import openai_chat
from ...server._errors import ApiError
from ...server._reply.respond import ReplyEvents
from ...server._reply.upstream import UpstreamCalls
from ._options import MODEL_KEY, ReplyPlan, default_options, read_options, reply_plan

__all__ = ["CallsieveHook", "ToolCallAbortedError", "UpstreamCallError"]

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


class UpstreamCallError(CallsieveError):
    """The upstream sent a tool call of its own that the gateway refuses (no name, or
    arguments that are not a JSON object): the gateway's error, for the proxy to send."""

    def __init__(self, err: ApiError) -> None:
        self.message = err.message
        self.type = err.kind
        self.code = err.code or ""
        self.status_code = err.status
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

    def plan_for(self, data: Mapping[str, Any]) -> ReplyPlan | None:
        """How request ``data``'s reply is read, or ``None`` (left alone)."""
        model = data.get("model")
        if self._models is not None:
            own = self._models.get(model) if isinstance(model, str) else None
        else:
            own = _model_setting(model)
        base = self._options
        if own is not None:  # the model's own setting, over the defaults (false: off)
            mine = read_options(own, f"model {model!r}: model_info.{MODEL_KEY}")
            base = None if mine is None else {**(base or {}), **mine}
        return reply_plan(base, data)

    # ------------------------------------------------------------ whole replies
    async def async_post_call_success_hook(
        self, data: dict[str, Any], user_api_key_dict: Any, response: Any
    ) -> Any:
        if not isinstance(response, ModelResponse):
            return response
        plan = self.plan_for(data)
        if plan is None:
            return response
        for choice in response.choices:
            _read_choice(choice, plan)
        return response

    # ------------------------------------------------------------ streams
    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        plan = self.plan_for(request_data)
        if plan is None:
            async for chunk in response:
                yield chunk
            return
        stream = _Stream(plan)
        async for chunk in response:
            for out in stream.feed(chunk):
                yield out
        for out in stream.close():
            yield out


def _reading(plan: ReplyPlan, options: dict[str, Any]) -> ReplyEvents:
    """One choice's reading: its sieve in the gateway's ``ReplyEvents``."""
    return ReplyEvents(
        Sieve(**options), plan.max_calls, only=plan.only, options=options, guess=plan.guess
    )


def _merge(calls: UpstreamCalls, pieces: Iterable[Any]) -> None:
    """The upstream's tool-call pieces (a delta's, or a whole message's: LiteLLM's objects)
    merged by ``index`` into ``calls``, as the gateway merges them (a name or id that
    cannot be encoded is ``UpstreamCallError``)."""
    try:
        calls.merge([p if isinstance(p, dict) else p.model_dump() for p in pieces])
    except ApiError as err:
        raise UpstreamCallError(err) from None


def _native(calls: UpstreamCalls) -> list[ToolCall]:
    """The upstream's own calls, in index order (the gateway's check: a call without a name
    or whose arguments are not a JSON object is ``UpstreamCallError``)."""
    try:
        return calls.finished()
    except ApiError as err:
        raise UpstreamCallError(err) from None


class _Parts:
    """A whole choice's events gathered into a ``ParseResult`` (reasoning, text and calls
    in order), for ``render_response``."""

    def __init__(self) -> None:
        self.parts: list[str | Reasoning | ToolCall] = []

    def add(self, events: Iterable[Event]) -> None:
        for e in events:
            if isinstance(e, Text | Reasoning) and e.text:
                last = self.parts[-1] if self.parts else None
                if isinstance(e, Text) and isinstance(last, str):
                    self.parts[-1] = last + e.text
                elif isinstance(e, Reasoning) and isinstance(last, Reasoning):
                    self.parts[-1] = Reasoning(last.text + e.text)
                else:
                    self.parts.append(e.text if isinstance(e, Text) else Reasoning(e.text))
            elif isinstance(e, ToolCalls):
                self.parts.extend(e.calls)

    def result(self, sieve: Sieve) -> ParseResult:
        parts = tuple(self.parts)
        return ParseResult(
            "".join([p for p in parts if isinstance(p, str)]),
            tuple(p for p in parts if isinstance(p, ToolCall)),
            sieve.blocks,
            sieve.saw_tool_call_syntax,
            sieve.rejected_by_policy,
            sieve.rejected_tool_names,
            parts=parts,
            reasoning="".join([p.text for p in parts if isinstance(p, Reasoning)]),
            rejections=sieve.rejections,
        )


def _read_choice(choice: Any, plan: ReplyPlan) -> None:
    """One whole choice's message read again (see the module docstring)."""
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    content = content if isinstance(content, str) else ""
    upstream_calls = getattr(message, "tool_calls", None) or []
    if message is None or not (content or upstream_calls):
        return
    reading = _reading(plan, plan.options)
    parts = _Parts()
    separated = getattr(message, "reasoning_content", None)
    if isinstance(separated, str) and separated:
        parts.add(reading.upstream_reasoning())
        parts.add([Reasoning(separated)])
    native = UpstreamCalls()
    _merge(native, upstream_calls)
    if content:
        parts.add(reading.feed(content))
    parts.add(reading.close(_native(native), _finish(choice.finish_reason)))
    rendered = openai_chat.render_response(
        parts.result(reading.sieve), finish_reason=_finish(choice.finish_reason)
    )
    out = rendered["choices"][0]
    made = out["message"]
    message.content = made["content"]
    if made.get("reasoning_content"):
        message.reasoning_content = made["reasoning_content"]
    calls = made.get("tool_calls")
    message.tool_calls = [ChatCompletionMessageToolCall(**c) for c in calls] if calls else None
    if choice.finish_reason in _FINISH or choice.finish_reason is None:
        choice.finish_reason = out["finish_reason"]


class _Choice:
    """One streamed choice: its reading, its renderer and the upstream's own calls."""

    def __init__(self, plan: ReplyPlan, options: dict[str, Any]) -> None:
        self.reading = _reading(plan, options)
        self.renderer = openai_chat.StreamRenderer(on_abort="error")
        self.native = UpstreamCalls()
        self.closed = False

    def feed(self, delta: Any) -> list[dict[str, Any]]:
        """The rendered pieces for one upstream delta."""
        out: list[dict[str, Any]] = []
        reasoning = getattr(delta, "reasoning_content", None)
        if isinstance(reasoning, str) and reasoning:
            out += self.renderer.feed([*self.reading.upstream_reasoning(), Reasoning(reasoning)])
        _merge(self.native, getattr(delta, "tool_calls", None) or [])
        text = getattr(delta, "content", None)
        if isinstance(text, str) and text:
            out += self.renderer.feed(self.reading.feed(text))
        return out

    def close(self, finish: str | None) -> list[dict[str, Any]]:
        """The choice's last pieces: what the reading held, the upstream's calls, the
        finish reason."""
        self.closed = True
        out = self.renderer.feed(self.reading.close(_native(self.native), finish))
        if self.renderer.aborted is None:
            out += self.renderer.close(finish, blocks=self.reading.blocks)
        return out


class _Stream:
    """One stream's choices (see the module docstring)."""

    def __init__(self, plan: ReplyPlan) -> None:
        self.plan = plan
        self.options = {"early_emit": "arguments", **plan.options}
        self.choices: dict[int, _Choice] = {}
        self.last: Any = None  # the latest upstream chunk (its id, model, created)
        self.held: list[Any] = []  # chunks without choices (usage): after ours
        self.usage: Any = None
        self.closed = False

    def feed(self, chunk: Any) -> list[Any]:
        if not isinstance(chunk, ModelResponseStream) or self.closed:
            return [chunk]
        self.last = chunk
        if not chunk.choices:  # (a usage chunk: after ours)
            self.held.append(chunk)
            return []
        self.usage = getattr(chunk, "usage", None) or self.usage
        out: list[Any] = []
        for upstream in chunk.choices:
            index = getattr(upstream, "index", 0) or 0
            choice = self.choices.get(index)
            if choice is None:
                choice = self.choices[index] = _Choice(self.plan, self.options)
            if choice.closed:
                continue
            pieces = choice.feed(upstream.delta)
            if upstream.finish_reason is not None:
                pieces += choice.close(_finish(upstream.finish_reason))
            out += self._render(index, pieces)
        return self._with_usage(out)

    def close(self) -> list[Any]:
        if self.closed:
            return []
        if self.last is None:  # (no Chat Completions chunk came: another route's stream)
            self.closed = True
            return self.held
        if not self.choices:  # (no choice came: an empty reply is still one)
            self.choices[0] = _Choice(self.plan, self.options)
        out: list[Any] = []
        for index, choice in sorted(self.choices.items()):
            if not choice.closed:
                out += self._render(index, choice.close(None))
        return self._with_usage(out)

    def _with_usage(self, out: list[Any]) -> list[Any]:
        """Once every choice has ended: the usage on the last chunk, then the chunks held."""
        if self.closed or not all(c.closed for c in self.choices.values()):
            return out
        self.closed = True
        if self.usage is not None and out:
            out[-1].usage = self.usage
        held, self.held = self.held, []
        return out + held

    def _render(self, index: int, pieces: list[dict[str, Any]]) -> list[Any]:
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
                            index=index,
                            delta=choice["delta"],
                            finish_reason=choice["finish_reason"],
                        )
                    ],
                )
            )
        return out

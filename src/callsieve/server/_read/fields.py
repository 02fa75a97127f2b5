"""Strategy: every request field of every API the gateway speaks, in one table per API —
forwarded to the upstream, read by the API's reader, or refused with a 400 naming it — so no
field is ever silently dropped.

What it does: a table maps a field name to ``READ`` (the API's reader reads it: the
conversation, the tools, the limits, the stream flag), ``FORWARD`` (sent upstream as it is,
under the same name: sampling settings and the like, which an OpenAI-compatible server
takes), ``Forward("name")`` (sent upstream under the chat-completions name) or
``Refuse(*accepted)`` (a 400 naming the field unless its value is ``None`` or one of the
accepted no-op values: ``logprobs: false``, ``n: 1``). ``check(body, table, where)`` applies
a table: it raises for a refused field and for a field the table does not know — except in
Chat Completions, whose unknown fields (an OpenAI-compatible server's extensions:
``chat_template_kwargs``, ``min_p``, ``guided_json``, …) are forwarded as they are — and
returns the fields to forward.
What it guarantees: the 400's ``param`` is the field's name (``generationConfig.topK`` for a
nested one), its message says why.
What it costs: one dict lookup per field of the request.
"""

from __future__ import annotations

from typing import Any

from .._errors import ApiError

__all__ = [
    "ANTHROPIC",
    "CHAT",
    "FORWARD",
    "GEMINI",
    "GEMINI_GENERATION",
    "READ",
    "RESPONSES",
    "Forward",
    "Refuse",
    "check",
]

READ = "read"
FORWARD = "forward"


class Forward:
    """Sent upstream under the chat-completions name ``name``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class Refuse:
    """A 400 naming the field, unless its value is ``None`` or one of ``accepted``."""

    __slots__ = ("accepted", "why")

    def __init__(self, *accepted: Any, why: str = "the gateway does not support it") -> None:
        self.accepted = accepted
        self.why = why


_SAMPLING = {
    k: FORWARD
    for k in (
        "temperature",
        "top_p",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "user",
        "top_k",
        "min_p",
        "repetition_penalty",
        "reasoning_effort",
        "chat_template_kwargs",
        "metadata",
        "service_tier",
        "safety_identifier",
        "prompt_cache_key",
        "verbosity",
        "store",
    )
}
_NO_LOGPROBS = Refuse(False, why="token log-probabilities cannot follow text the sieve rewrites")

CHAT: dict[str, Any] = {
    **{
        k: READ
        for k in (
            "model",
            "messages",
            "tools",
            "tool_choice",
            "stream",
            "stream_options",
            "max_tokens",
            "max_completion_tokens",
            "parallel_tool_calls",
            "response_format",
            "n",
        )
    },
    **_SAMPLING,
    "logprobs": _NO_LOGPROBS,
    "top_logprobs": Refuse(0, why=_NO_LOGPROBS.why),
    "audio": Refuse(why="the gateway serves text only"),
    "modalities": Refuse(["text"], why="the gateway serves text only"),
    "prediction": Refuse(why="predicted outputs are not supported"),
    "web_search_options": Refuse(why="server-side tools are not supported"),
    "functions": Refuse(why="use tools (functions is deprecated)"),
    "function_call": Refuse(why="use tool_choice (function_call is deprecated)"),
}

RESPONSES: dict[str, Any] = {
    **{
        k: READ
        for k in (
            "model",
            "input",
            "instructions",
            "tools",
            "tool_choice",
            "stream",
            "max_output_tokens",
            "parallel_tool_calls",
            "max_tool_calls",
            "text",
            "reasoning",
            "stream_options",
        )
    },
    **{
        k: FORWARD
        for k in (
            "temperature",
            "top_p",
            "user",
            "metadata",
            "service_tier",
            "safety_identifier",
            "prompt_cache_key",
        )
    },
    "store": Refuse(False, why="the gateway keeps no responses: send store=false or leave it out"),
    "previous_response_id": Refuse(
        why="the gateway keeps no responses: send the whole conversation in input"
    ),
    "conversation": Refuse(why="the gateway keeps no conversations"),
    "background": Refuse(False, why="background responses are not supported"),
    "prompt": Refuse(why="stored prompts are not supported"),
    "truncation": Refuse("disabled", why="the gateway does not truncate conversations"),
    "include": Refuse([], why="the gateway has nothing more to include"),
    "top_logprobs": Refuse(0, why=_NO_LOGPROBS.why),
}

ANTHROPIC: dict[str, Any] = {
    **{
        k: READ
        for k in (
            "model",
            "messages",
            "max_tokens",
            "system",
            "tools",
            "tool_choice",
            "stream",
            "stop_sequences",
            "thinking",
            "metadata",
        )
    },
    **{k: FORWARD for k in ("temperature", "top_p", "top_k", "service_tier")},
    "container": Refuse(why="containers are not supported"),
    "mcp_servers": Refuse(why="server-side tools are not supported"),
    "context_management": Refuse(why="context management is not supported"),
}

GEMINI: dict[str, Any] = {
    **{
        k: READ
        for k in ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")
    },
    "safetySettings": Refuse([], why="the upstream has no safety settings to apply"),
    "cachedContent": Refuse(why="cached content is not supported"),
    "labels": Refuse(why="labels are not supported"),
}

GEMINI_GENERATION: dict[str, Any] = {
    "temperature": FORWARD,
    "seed": FORWARD,
    "topP": Forward("top_p"),
    "topK": Forward("top_k"),
    "maxOutputTokens": Forward("max_tokens"),
    "stopSequences": Forward("stop"),
    "presencePenalty": Forward("presence_penalty"),
    "frequencyPenalty": Forward("frequency_penalty"),
    "candidateCount": Refuse(1),
    "responseMimeType": READ,
    "thinkingConfig": READ,
    "responseModalities": Refuse(["TEXT"], why="the gateway serves text only"),
    "responseLogprobs": Refuse(False, why=_NO_LOGPROBS.why),
    "logprobs": Refuse(0, why=_NO_LOGPROBS.why),
    **{
        k: Refuse(why="the gateway does not support it")
        for k in (
            "responseSchema",
            "responseJsonSchema",
            "speechConfig",
            "mediaResolution",
            "audioTimestamp",
            "enableEnhancedCivicAnswers",
            "routingConfig",
            "modelSelectionConfig",
            "imageConfig",
        )
    },
}


def check(
    body: dict[str, Any], table: dict[str, Any], where: str = "", *, forward_unknown: bool = False
) -> dict[str, Any]:
    """The fields of ``body`` to send upstream (chat-completions names); a 400 for a refused
    or unknown one."""
    out: dict[str, Any] = {}
    for name, value in body.items():
        rule = table.get(name)
        if rule is None and forward_unknown:
            rule = FORWARD
        if rule is None:
            raise ApiError(
                400,
                f"{where}{name}: unknown field (the gateway neither forwards nor reads it)",
                param=f"{where}{name}",
            )
        if rule is READ or value is None:
            continue
        if isinstance(rule, Refuse):
            if any(type(a) is type(value) and a == value for a in rule.accepted):
                continue
            raise ApiError(400, f"{where}{name}: {rule.why}", param=f"{where}{name}")
        out[rule.name if isinstance(rule, Forward) else name] = value
    return out

"""Strategy: read an OpenAI Chat Completions or Responses request body into a
``ModelRequest`` (``turns``), checking each field it uses.

What it does: ``read_chat(body)`` takes ``model``, ``messages`` (roles ``system``,
``developer``, ``user``, ``assistant`` with ``tool_calls``, ``tool`` with ``tool_call_id``; text
content or text parts), ``tools``, ``tool_choice``, ``stream``, ``stream_options.include_usage``,
``max_completion_tokens`` (or ``max_tokens``), ``parallel_tool_calls`` (``false``: at most one
call), ``n`` (1 only) and ``response_format`` (forwarded, unless the reply is parsed for calls:
a JSON reply cannot hold a tool block). ``read_responses(body)`` takes ``model``,
``instructions``, ``input`` (a string, or items: messages with ``input_text``/``output_text``
parts, ``function_call`` and ``function_call_output``), ``tools`` (``type: "function"``
only), ``tool_choice``, ``stream``, ``max_output_tokens``, ``parallel_tool_calls``,
``max_tool_calls``, ``text.format`` (as Chat's ``response_format``) and ``text.verbosity``,
``reasoning.effort`` (forwarded as ``reasoning_effort``; ``reasoning.summary`` is accepted:
reasoning is shown as the model wrote it). Every other field is forwarded or refused as the
API's table in ``fields`` says. Both read the request's ``thinking`` from what they forward:
``chat_template_kwargs.thinking`` or ``enable_thinking`` (the chat template's own switch;
two that disagree are a 400), else ``reasoning_effort`` (``"none"``: off; any other effort:
on); neither: ``None``.
What it guarantees: a field of the wrong shape is an ``ApiError(400)`` naming it (``param``
as OpenAI writes it, e.g. ``messages[2].tool_calls[0].function.arguments``); the tools are
checked by the caller with ``SieveOptions``.
What it costs: one pass over the body.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import ApiError
from . import fields as _fields
from .turns import ModelRequest, Turn, need, text_of

__all__ = ["read_chat", "read_responses"]

_CHAT_PARTS = ("text",)
_RESPONSES_PARTS = ("input_text", "output_text", "text")
#: The chat template's thinking switches (DeepSeek's ``thinking``, Qwen's ``enable_thinking``).
_SWITCHES = ("thinking", "enable_thinking")


def read_chat(body: dict[str, Any], params: dict[str, str] | None = None) -> ModelRequest:
    sampling = _fields.check(body, _fields.CHAT, forward_unknown=True)
    model = need(body, "model", str)
    messages = need(body, "messages", list)
    if not messages:
        raise ApiError(400, "messages: must hold at least one message", param="messages")
    turns = [_chat_turn(m, f"messages[{i}]") for i, m in enumerate(messages)]
    options = need(body, "stream_options", dict, required=False) or {}
    n = need(body, "n", int, required=False)
    if n not in (None, 1):
        raise ApiError(400, "n: the gateway answers one choice per request (n=1)", param="n")
    _limit(body, "max_completion_tokens", "max_tokens", sampling)
    req = ModelRequest(
        model=model,
        turns=turns,
        tools=_tools(body, _chat_tool),
        tool_choice=_choice(body.get("tool_choice"), nested=True),
        stream=bool(need(body, "stream", bool, required=False)),
        include_usage=bool(options.get("include_usage")),
        sampling=sampling,
        max_calls=_max_calls(body),
        thinking=_thinking(sampling),
    )
    _format(need(body, "response_format", dict, required=False), "response_format", req)
    return req


def read_responses(body: dict[str, Any], params: dict[str, str] | None = None) -> ModelRequest:
    sampling = _fields.check(body, _fields.RESPONSES)
    model = need(body, "model", str)
    turns: list[Turn] = []
    instructions = need(body, "instructions", str, required=False)
    if instructions:
        turns.append(Turn("system", instructions))
    items = need(body, "input", (str, list))
    if isinstance(items, str):
        turns.append(Turn("user", items))
    else:
        for i, item in enumerate(items):
            _responses_item(item, f"input[{i}]", turns)
    if not any(t.role != "system" for t in turns):
        raise ApiError(400, "input: must hold at least one message", param="input")
    _limit(body, "max_output_tokens", None, sampling)
    most = need(body, "max_tool_calls", int, required=False)
    calls = _max_calls(body)
    if most is not None:
        calls = max(min(most, calls if calls is not None else most), 0)
    reasoning = need(body, "reasoning", dict, required=False) or {}
    effort = need(reasoning, "effort", str, "reasoning.", required=False)
    if effort is not None:
        sampling["reasoning_effort"] = effort
    req = ModelRequest(
        model=model,
        turns=turns,
        tools=_tools(body, _responses_tool),
        tool_choice=_choice(body.get("tool_choice"), nested=False),
        stream=bool(need(body, "stream", bool, required=False)),
        include_usage=True,
        sampling=sampling,
        max_calls=calls,
        echo={"tools": body.get("tools") or [], "tool_choice": body.get("tool_choice") or "auto"},
        thinking=_thinking(sampling),
    )
    text = need(body, "text", dict, required=False) or {}
    if need(text, "verbosity", str, "text.", required=False):
        sampling["verbosity"] = text["verbosity"]
    form = need(text, "format", dict, "text.", required=False)
    if form is not None and form.get("type") == "json_schema":  # (Chat nests the schema)
        form = {
            "type": "json_schema",
            "json_schema": {
                k: v for k, v in form.items() if k in ("name", "schema", "strict", "description")
            },
        }
    _format(form, "text.format", req)
    return req


# ---------------------------------------------------------------------- chat
def _chat_turn(msg: Any, where: str) -> Turn:
    if not isinstance(msg, dict):
        raise ApiError(400, f"{where}: expected an object", param=where)
    role = need(msg, "role", str, f"{where}.")
    text = text_of(msg.get("content"), f"{where}.content", _CHAT_PARTS)
    if role in ("system", "developer"):
        return Turn("system", text)
    if role == "user":
        return Turn("user", text)
    if role == "assistant":
        calls = need(msg, "tool_calls", list, f"{where}.", required=False) or []
        return Turn(
            "assistant",
            text,
            [_chat_call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls)],
        )
    if role == "tool":
        return Turn(
            "tool",
            text,
            call_id=need(msg, "tool_call_id", str, f"{where}."),
            name=str(msg.get("name") or ""),
        )
    raise ApiError(400, f"{where}.role: unknown role {role!r}", param=f"{where}.role")


def _chat_call(call: Any, where: str) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(call, dict):
        raise ApiError(400, f"{where}: expected an object", param=where)
    fn = need(call, "function", dict, f"{where}.")
    name = need(fn, "name", str, f"{where}.function.")
    return (
        str(call.get("id") or ""),
        name,
        _arguments(fn.get("arguments"), f"{where}.function.arguments"),
    )


def _chat_tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type", "function") != "function":
        raise ApiError(400, f"{where}: only function tools are supported", param=where)
    return tool


# ---------------------------------------------------------------------- responses
def _responses_item(item: Any, where: str, turns: list[Turn]) -> None:
    if not isinstance(item, dict):
        raise ApiError(400, f"{where}: expected an object", param=where)
    kind = item.get("type", "message")
    if kind == "message":
        role = need(item, "role", str, f"{where}.")
        if role not in ("system", "developer", "user", "assistant"):
            raise ApiError(400, f"{where}.role: unknown role {role!r}", param=f"{where}.role")
        text = text_of(item.get("content"), f"{where}.content", _RESPONSES_PARTS)
        turns.append(Turn("system" if role == "developer" else role, text))
    elif kind == "function_call":
        call = (
            need(item, "call_id", str, f"{where}."),
            need(item, "name", str, f"{where}."),
            _arguments(item.get("arguments"), f"{where}.arguments"),
        )
        if turns and turns[-1].role == "assistant":  # calls after text: one assistant turn
            turns[-1].calls.append(call)
        else:
            turns.append(Turn("assistant", "", [call]))
    elif kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        turns.append(Turn("tool", text, call_id=need(item, "call_id", str, f"{where}.")))
    elif kind != "reasoning":  # (a client sends its reasoning items back: not for upstream)
        raise ApiError(400, f"{where}.type: unsupported input item {kind!r}", param=f"{where}.type")


def _responses_tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        raise ApiError(400, f"{where}: only function tools are supported", param=where)
    return {
        "name": need(tool, "name", str, f"{where}."),
        "description": tool.get("description") or "",
        "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
    }


# ---------------------------------------------------------------------- shared
def _tools(body: dict[str, Any], read: Any) -> list[dict[str, Any]]:
    tools = need(body, "tools", list, required=False) or []
    return [read(t, f"tools[{i}]") for i, t in enumerate(tools)]


def _choice(value: Any, *, nested: bool) -> str:
    if value is None:
        return "auto"
    if value in ("auto", "none", "required"):
        return str(value)
    if isinstance(value, dict) and value.get("type") == "function":
        inner = value.get("function") if nested else value
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            return str(inner["name"])
    raise ApiError(
        400, "tool_choice: expected auto, none, required or a function", param="tool_choice"
    )


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise ApiError(400, f"{where}: not valid JSON", param=where) from None
    if not isinstance(parsed, dict):
        raise ApiError(400, f"{where}: expected a JSON object", param=where)
    return parsed


def _limit(body: dict[str, Any], name: str, other: str | None, sampling: dict[str, Any]) -> None:
    """The API's token limit, sent upstream as ``max_tokens``."""
    for key in (name, other):
        if key is not None and need(body, key, int, required=False) is not None:
            sampling["max_tokens"] = body[key]
            return


def _thinking(sampling: dict[str, Any]) -> bool | None:
    """Whether the request asks the model to think: the chat template's switch
    (``chat_template_kwargs.thinking`` / ``enable_thinking``), else ``reasoning_effort``."""
    kwargs = sampling.get("chat_template_kwargs")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ApiError(
            400, "chat_template_kwargs: expected an object", param="chat_template_kwargs"
        )
    said: dict[str, bool] = {}
    for key in _SWITCHES:
        value = (kwargs or {}).get(key)
        if value is None:
            continue
        if not isinstance(value, bool):
            where = f"chat_template_kwargs.{key}"
            raise ApiError(400, f"{where}: expected true or false", param=where)
        said[key] = value
    if len(set(said.values())) > 1:
        raise ApiError(
            400,
            "chat_template_kwargs: thinking and enable_thinking disagree",
            param="chat_template_kwargs",
        )
    if said:
        return next(iter(said.values()))
    effort = sampling.get("reasoning_effort")
    if effort is None:
        return None
    if not isinstance(effort, str):
        raise ApiError(400, "reasoning_effort: expected a string", param="reasoning_effort")
    return effort != "none"


def _max_calls(body: dict[str, Any]) -> int | None:
    parallel = need(body, "parallel_tool_calls", bool, required=False)
    return 1 if parallel is False else None


def _format(form: dict[str, Any] | None, where: str, req: ModelRequest) -> None:
    """A JSON reply format: forwarded as ``response_format``, or a 400 when the reply is
    parsed for calls (a JSON reply cannot hold a tool block)."""
    kind = None if form is None else form.get("type")
    if kind in (None, "text"):
        return
    if kind not in ("json_object", "json_schema"):
        raise ApiError(
            400, f"{where}.type: expected text, json_object or json_schema", param=f"{where}.type"
        )
    if req.parses:
        raise ApiError(
            400,
            f"{where}: a JSON reply cannot carry tool calls; send no tools "
            "(or tool_choice none) with it",
            param=where,
        )
    req.sampling["response_format"] = form

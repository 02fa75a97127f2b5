"""Strategy: read an Anthropic Messages request body into a ``ModelRequest`` (``turns``),
checking each field it uses.

What it does: ``read_messages(body)`` takes ``model``, ``max_tokens`` and ``messages``
(required, as the Messages API requires them), ``system`` (a string or text blocks), each
message's content (a string or ``text``, ``tool_use``, ``tool_result`` blocks; ``thinking``
blocks a client sends back are dropped), ``tools`` (custom tools with ``input_schema``),
``tool_choice`` (``auto``, ``any``, ``tool``, ``none``; ``disable_parallel_tool_use``: at most
one call), ``stream``, ``stop_sequences`` (sent as ``stop``), ``thinking`` (``enabled`` /
``adaptive`` / ``disabled``: the request's ``thinking``, which decides how the reply is read
and is sent upstream as the chat template's switch, ``_reply.thinking``) and
``metadata.user_id`` (sent as ``user``). A user message's ``tool_result`` blocks become tool
turns, its text a user turn after them. Every other field is forwarded (``temperature``,
``top_p``, ``top_k``, ``service_tier``) or refused as ``fields.ANTHROPIC`` says.
What it guarantees: a field of the wrong shape is an ``ApiError(400)`` naming it.
What it costs: one pass over the body.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import ApiError
from . import fields as _fields
from .turns import ModelRequest, Turn, need, text_of

__all__ = ["read_messages"]

_TEXT = ("text",)
_CHOICES = {"auto": "auto", "any": "required", "none": "none"}


def read_messages(body: dict[str, Any], params: dict[str, str] | None = None) -> ModelRequest:
    sampling = _fields.check(body, _fields.ANTHROPIC)
    model = need(body, "model", str)
    max_tokens = need(body, "max_tokens", int)
    messages = need(body, "messages", list)
    if not messages:
        raise ApiError(400, "messages: must hold at least one message", param="messages")
    turns: list[Turn] = []
    system = text_of(body.get("system"), "system", _TEXT)
    if system:
        turns.append(Turn("system", system))
    for i, msg in enumerate(messages):
        _message(msg, f"messages.{i}", turns)
    sampling["max_tokens"] = max_tokens
    stops = need(body, "stop_sequences", list, required=False)
    if stops:
        sampling["stop"] = stops
    metadata = need(body, "metadata", dict, required=False) or {}
    if need(metadata, "user_id", str, "metadata.", required=False):
        sampling["user"] = metadata["user_id"]
    thinking = _thinking(need(body, "thinking", dict, required=False))
    tools = need(body, "tools", list, required=False) or []
    choice = body.get("tool_choice")
    single = isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True
    return ModelRequest(
        model=model,
        turns=turns,
        tools=[_tool(t, f"tools.{i}") for i, t in enumerate(tools)],
        tool_choice=_choice(choice),
        stream=bool(need(body, "stream", bool, required=False)),
        include_usage=True,
        sampling=sampling,
        max_calls=1 if single else None,
        thinking=thinking,
    )


def _thinking(value: dict[str, Any] | None) -> bool | None:
    if value is None:
        return None
    kind = value.get("type")
    if kind in ("enabled", "adaptive"):
        return True
    if kind == "disabled":
        return False
    raise ApiError(
        400, "thinking.type: expected enabled, adaptive or disabled", param="thinking.type"
    )


def _message(msg: Any, where: str, turns: list[Turn]) -> None:
    if not isinstance(msg, dict):
        raise ApiError(400, f"{where}: expected an object", param=where)
    role = need(msg, "role", str, f"{where}.")
    if role not in ("user", "assistant"):
        raise ApiError(400, f"{where}.role: must be user or assistant", param=f"{where}.role")
    content = msg.get("content")
    if isinstance(content, str):
        turns.append(Turn(role, content))
        return
    if not isinstance(content, list):
        raise ApiError(
            400, f"{where}.content: expected a string or a list of blocks", param=f"{where}.content"
        )
    text: list[str] = []
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for j, block in enumerate(content):
        here = f"{where}.content.{j}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text.append(need(block, "text", str, f"{here}."))
        elif kind == "tool_use" and role == "assistant":
            calls.append(
                (
                    need(block, "id", str, f"{here}."),
                    need(block, "name", str, f"{here}."),
                    need(block, "input", dict, f"{here}."),
                )
            )
        elif kind == "tool_result" and role == "user":
            turns.append(
                Turn(
                    "tool",
                    _result_text(block.get("content"), here),
                    call_id=need(block, "tool_use_id", str, f"{here}."),
                )
            )
        elif kind not in ("thinking", "redacted_thinking"):
            raise ApiError(400, f"{here}: unsupported content block {kind!r}", param=here)
    if text or calls or role == "assistant":
        turns.append(Turn(role, "".join(text), calls))


def _result_text(content: Any, where: str) -> str:
    if isinstance(content, (str, type(None))) or (
        isinstance(content, list)
        and all(isinstance(b, dict) and b.get("type") == "text" for b in content)
    ):
        return text_of(content, f"{where}.content", _TEXT)
    return json.dumps(content, ensure_ascii=False)


def _tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
        raise ApiError(400, f"{where}: only custom tools are supported", param=where)
    need(tool, "name", str, f"{where}.")
    need(tool, "input_schema", dict, f"{where}.")
    return {k: v for k, v in tool.items() if k != "type"}


def _choice(value: Any) -> str:
    if value is None:
        return "auto"
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and kind in _CHOICES:
            return _CHOICES[kind]
        if kind == "tool" and isinstance(value.get("name"), str):
            return str(value["name"])
    raise ApiError(400, "tool_choice: expected auto, any, tool or none", param="tool_choice")

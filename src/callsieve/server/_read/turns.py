"""Strategy: one plain view of a client's request, whichever API it came in, so the upstream
side and the sieve side are written once.

What it does: ``Turn`` is a conversation message (``role`` one of ``system``, ``user``,
``assistant``, ``tool``; its ``text``; an assistant's ``calls`` as ``(id, name, input)``; a tool
result's ``call_id`` and ``name``). ``ModelRequest`` is the request: the model asked for, the
turns, the tool definitions in OpenAI's function shape (as the client sent them, for the
sieve and for echoing), ``tool_choice`` read to ``"auto"``, ``"none"``, ``"required"`` or a
tool's name, ``stream``, whether usage was asked for, ``sampling``: the fields sent upstream
as they are (``fields``: ``temperature``, ``max_tokens``, ``stop``, …), ``max_calls``: the
most calls the reply may carry (1 for ``parallel_tool_calls=false``; ``None``: no limit),
``thinking``: whether the client asked the model to think (Chat's ``chat_template_kwargs``
switch or ``reasoning_effort``, Responses' ``reasoning.effort``, Anthropic's ``thinking``,
Gemini's ``thinkingBudget`` 0; ``None``: it did not say), and ``echo``: keyword options of
the API's renderer (Responses' ``tools`` and ``tool_choice``, Gemini's ``include_reasoning``).
``ModelRequest.parses`` says whether the reply is read for calls: tools were given and
``tool_choice`` is not ``"none"``; otherwise the reply is text only. ``json_reply``: the
request asked for a JSON reply (``response_format``).
Small readers shared by the three request parsers: ``need`` (a field of a type, or a 400
naming it), ``text_of`` (a string, or a list of text parts, as text).
What it guarantees: every reader raises ``ApiError(400, param=...)`` for a field of the wrong
shape, never ``KeyError`` or ``TypeError``.
What it costs: one pass over the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._errors import ApiError

__all__ = ["ModelRequest", "Turn", "need", "text_of"]


@dataclass
class Turn:
    role: str
    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    call_id: str = ""
    name: str = ""


@dataclass
class ModelRequest:
    model: str
    turns: list[Turn]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str = "auto"
    stream: bool = False
    include_usage: bool = False
    sampling: dict[str, Any] = field(default_factory=dict)
    echo: dict[str, Any] = field(default_factory=dict)
    max_calls: int | None = None
    thinking: bool | None = None

    def __post_init__(self) -> None:
        choice = self.tool_choice
        if choice in ("auto", "none", "required"):
            return
        names = [_name(t) for t in self.tools]
        if choice not in names:
            raise ApiError(
                400,
                f"tool_choice names {choice!r}, which is not one of the tools",
                param="tool_choice",
            )

    @property
    def parses(self) -> bool:
        return bool(self.tools) and self.tool_choice != "none"

    @property
    def json_reply(self) -> bool:
        form = self.sampling.get("response_format")
        return isinstance(form, dict) and form.get("type") in ("json_object", "json_schema")


def _name(tool: dict[str, Any]) -> Any:
    """A tool's name, in OpenAI's function shape or Responses' and Anthropic's flat one."""
    inner = tool.get("function")
    return (inner if isinstance(inner, dict) else tool).get("name")


def need(
    obj: dict[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    where: str = "",
    *,
    required: bool = True,
) -> Any:
    """``obj[key]`` if it is of ``kind``; a 400 naming ``where + key`` if missing or not."""
    name = f"{where}{key}"
    if key not in obj or obj[key] is None:
        if required:
            raise ApiError(400, f"missing required field: {name}", param=name)
        return None
    value = obj[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ApiError(400, f"{name}: expected {_names(kind)}, got bool", param=name)
    if not isinstance(value, kind):
        raise ApiError(400, f"{name}: expected {_names(kind)}, got {_json_kind(value)}", param=name)
    return value


def text_of(value: Any, where: str, part_types: tuple[str, ...]) -> str:
    """A message's content as text: a string, or a list of parts of the given types (their
    ``text`` joined); ``None`` is empty."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ApiError(400, f"{where}: expected a string or a list of parts", param=where)
    out = []
    for i, part in enumerate(value):
        if not isinstance(part, dict) or part.get("type") not in part_types:
            raise ApiError(
                400,
                f"{where}[{i}]: expected a part of type {' or '.join(part_types)}",
                param=f"{where}[{i}]",
            )
        out.append(need(part, "text", str, f"{where}[{i}]."))
    return "".join(out)


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_json_kind(k) for k in kinds)


def _json_kind(value: Any) -> str:
    names = {
        dict: "object",
        list: "array",
        str: "string",
        int: "number",
        float: "number",
        bool: "boolean",
    }
    if isinstance(value, type):
        return names.get(value, value.__name__)
    return next((n for t, n in names.items() if type(value) is t), type(value).__name__)

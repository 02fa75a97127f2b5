"""Strategy: read what a server holds — tool definitions, past calls, tool results, in the
shapes of the OpenAI and Anthropic APIs or as callsieve's own objects — into plain tuples
for the prompt side (``callsieve.prompt``).

What it does: ``read_tools`` gives ``(name, description, schema)`` per tool, read by the
one tool reader (``_config.tools``: OpenAI ``{"type": "function", "function": {…}}``, flat
``{"name", "parameters"}`` and Anthropic ``{"name", "input_schema"}`` definitions, or SDK
objects); ``read_calls`` ``(name, input)`` per call from
``ToolCall``, ``(name, input)`` pairs, OpenAI assistant messages (``tool_calls``) and their
entries (``function.arguments`` a JSON string or an object), Anthropic assistant messages
and ``tool_use`` blocks, and flat ``{"name", "arguments"|"input"}``; ``read_results`` the
result text per result from strings, OpenAI ``tool`` messages, Anthropic ``tool_result``
blocks and the user messages that carry them (text parts joined, other content as JSON).
What it guarantees: anything else is a ``FormatError`` naming where (``calls[1].function``)
and what would have been accepted; nothing is silently dropped.
What it costs: one pass over the input; one JSON decode per string of arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._base.errors import FormatError
from .._base.events import ToolCall
from .._base.values import load_json
from .._config.tools import SHAPES as TOOL_SHAPES
from .._config.tools import read_tools as read_tools_of

__all__ = ["read_calls", "read_result_ids", "read_results", "read_tools"]

_CALL_SHAPES = (
    "ToolCall",
    "(name, input)",
    '{"role": "assistant", "tool_calls": […]}',
    '{"function": {"name", "arguments"}}',
    '{"type": "tool_use", "name", "input"}',
    '{"role": "assistant", "content": [tool_use blocks]}',
)
_RESULT_SHAPES = (
    "str",
    '{"role": "tool", "content"}',
    '{"type": "tool_result", "content"}',
    '{"role": "user", "content": [tool_result blocks]}',
)


def _seq(value: Any, what: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise FormatError(
            f"{what} must be a list, not {type(value).__name__}", expected=("a list",)
        )
    return list(value)


def read_tools(tools: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """``(name, description, schema)`` per tool, as the tool reader (``_config.tools``)
    reads the definitions; the prompt writes the schemas out, so each must be JSON too."""
    out = []
    for i, spec in enumerate(read_tools_of(_seq(tools, "tools"), FormatError)):
        try:
            json.dumps(spec.schema, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise FormatError(
                f"tools[{i}]: the schema is not JSON: {exc}", expected=TOOL_SHAPES
            ) from None
        out.append((spec.name, spec.description, dict(spec.schema)))
    return out


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = load_json(value) if value.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise FormatError(
                f"{where}: arguments are not JSON: {exc}", expected=("a JSON object",)
            ) from None
    if not isinstance(value, Mapping):
        raise FormatError(f"{where}: arguments are not a JSON object", expected=("an object",))
    if not all(isinstance(k, str) for k in value):
        raise FormatError(f"{where}: argument names must be strings", expected=("str keys",))
    return dict(value)


def _one_call(item: Any, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(item, ToolCall):
        return item.name, _arguments(item.input, where)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return item[0], _arguments(item[1], where)
    if not isinstance(item, Mapping):
        raise FormatError(f"{where}: not a tool call", expected=_CALL_SHAPES)
    fn = item.get("function")
    if isinstance(fn, Mapping):  # OpenAI: {"id", "type": "function", "function": {…}}
        name, args, at = fn.get("name"), fn.get("arguments", {}), f"{where}.function"
    elif "input" in item:  # Anthropic tool_use, or flat
        name, args, at = item.get("name"), item["input"], where
    else:
        name, args, at = item.get("name"), item.get("arguments", {}), where
    if not isinstance(name, str) or not name.strip():
        raise FormatError(f"{at}: a call needs a non-empty name", expected=_CALL_SHAPES)
    return name, _arguments(args, at)


def read_calls(calls: Any) -> list[tuple[str, dict[str, Any]]]:
    """Each message is flattened: its ``tool_calls`` or its ``tool_use`` content blocks."""
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(_seq(calls, "calls")):
        where = f"calls[{i}]"
        if isinstance(item, Mapping) and "role" in item:
            if isinstance(item.get("tool_calls"), list):
                out += [
                    _one_call(c, f"{where}.tool_calls[{k}]")
                    for k, c in enumerate(item["tool_calls"])
                ]
            elif isinstance(item.get("content"), list):
                out += [
                    _one_call(b, f"{where}.content[{k}]")
                    for k, b in enumerate(item["content"])
                    if isinstance(b, Mapping) and b.get("type") == "tool_use"
                ]
            elif item.get("role") != "assistant" or item.get("content") not in (None, ""):
                raise FormatError(f"{where}: a message without tool calls", expected=_CALL_SHAPES)
        else:
            out.append(_one_call(item, where))
    return out


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return "".join(p["text"] for p in content)
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(
            f"{where}: content is neither text nor JSON: {exc}", expected=_RESULT_SHAPES
        ) from None


def read_results(results: Any) -> list[str]:
    out: list[str] = []
    for i, item in enumerate(_seq(results, "results")):
        where = f"results[{i}]"
        if isinstance(item, str):
            out.append(item)
        elif (
            isinstance(item, Mapping)
            and item.get("type") == "tool_result"
            or isinstance(item, Mapping)
            and item.get("role") == "tool"
        ):
            out.append(_content_text(item.get("content"), f"{where}.content"))
        elif (
            isinstance(item, Mapping)
            and item.get("role") == "user"
            and isinstance(item.get("content"), list)
        ):
            blocks = [
                (k, b)
                for k, b in enumerate(item["content"])
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            ]
            if not blocks:
                raise FormatError(
                    f"{where}: a user message without tool_result blocks", expected=_RESULT_SHAPES
                )
            out += [
                _content_text(b.get("content"), f"{where}.content[{k}].content") for k, b in blocks
            ]
        else:
            raise FormatError(f"{where}: not a tool result", expected=_RESULT_SHAPES)
    return out


def read_result_ids(results: Any) -> list[str | None]:
    """The id of the call each result answers (OpenAI's ``tool_call_id``, Anthropic's
    ``tool_use_id``), None where it has none (a plain string), one per result as
    ``read_results`` reads them."""
    out: list[str | None] = []
    for item in _seq(results, "results"):
        if (
            isinstance(item, Mapping)
            and item.get("role") == "user"
            and isinstance(item.get("content"), list)
        ):
            out += [
                _id_of(b.get("tool_use_id"))
                for b in item["content"]
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            ]
        elif isinstance(item, Mapping):
            out.append(_id_of(item.get("tool_call_id", item.get("tool_use_id"))))
        else:
            out.append(None)
    return out


def _id_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

"""Strategy: read a Gemini ``generateContent`` / ``streamGenerateContent`` request (REST JSON,
camelCase, as the ``google-genai`` client sends it) into a ``ModelRequest`` (``turns``).

What it does: ``read_generate(body, params)`` takes the model and the stream flag from the
path (``params``: ``model``, ``stream``), ``contents`` (``user`` turns: ``text`` parts, and
``functionResponse`` parts as tool results; ``model`` turns: ``text`` and ``functionCall``
parts; ``thought`` parts a client sends back are dropped), ``systemInstruction``, ``tools``
(``functionDeclarations`` only: each becomes a function tool, its ``parameters`` — Gemini's
OpenAPI subset, upper-case type names — read as JSON Schema, or its
``parametersJsonSchema`` as it is), ``toolConfig.functionCallingConfig`` (``AUTO``,
``ANY`` — with one allowed name, that tool —, ``NONE``; ``allowedFunctionNames`` narrows the
tools taught), and ``generationConfig`` (forwarded under the chat-completions names as
``fields.GEMINI_GENERATION`` says; ``responseMimeType: application/json`` as a JSON
``response_format`` when no tools are parsed; ``thinkingConfig.includeThoughts`` — as Gemini,
thoughts are sent only when it is true — and ``thinkingBudget`` 0 (thinking off: the
request's ``thinking`` is ``False``) or -1 (the model decides: ``None``); both also in the
proto spelling google-genai sends, ``include_thoughts`` and ``thinking_budget``).
What it guarantees: a field of the wrong shape, or one the gateway cannot honour, is an
``ApiError(400)`` naming it (``contents[1].parts[0]``).
What it costs: one pass over the body.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import ApiError
from . import fields as _fields
from .turns import ModelRequest, Turn, need

__all__ = ["read_generate"]

#: Names Gemini also reads in their proto spelling (google-genai sends ``thinkingConfig``'s
#: fields so).
_PROTO_NAMES = {"thinking_budget": "thinkingBudget", "include_thoughts": "includeThoughts"}
_MODES = {
    "AUTO": "auto",
    "ANY": "required",
    "NONE": "none",
    "VALIDATED": "auto",
    "MODE_UNSPECIFIED": "auto",
}


def read_generate(body: dict[str, Any], params: dict[str, str] | None = None) -> ModelRequest:
    params = params or {}
    sampling = _fields.check(body, _fields.GEMINI)
    config = need(body, "generationConfig", dict, required=False) or {}
    sampling.update(_fields.check(config, _fields.GEMINI_GENERATION, "generationConfig."))
    turns: list[Turn] = []
    system = body.get("systemInstruction")
    if system is not None:
        text = _text(system, "systemInstruction")
        if text:
            turns.append(Turn("system", text))
    contents = need(body, "contents", list)
    if not contents:
        raise ApiError(400, "contents: must hold at least one content", param="contents")
    for i, content in enumerate(contents):
        _content(content, f"contents[{i}]", turns)
    tools, choice = _tools(body)
    thinking = need(config, "thinkingConfig", dict, "generationConfig.", required=False) or {}
    thinking = {_PROTO_NAMES.get(k, k): v for k, v in thinking.items()}
    include = need(
        thinking, "includeThoughts", bool, "generationConfig.thinkingConfig.", required=False
    )
    req = ModelRequest(
        model=params.get("model", ""),
        turns=turns,
        tools=tools,
        tool_choice=choice,
        stream=params.get("stream") == "1",
        include_usage=True,
        sampling=sampling,
        echo={"include_reasoning": bool(include)},
        thinking=_budget(thinking),
    )
    mime = need(config, "responseMimeType", str, "generationConfig.", required=False)
    if mime not in (None, "text/plain"):
        if mime != "application/json":
            raise ApiError(
                400,
                "generationConfig.responseMimeType: expected text/plain or application/json",
                param="generationConfig.responseMimeType",
            )
        if req.parses:
            raise ApiError(
                400,
                "generationConfig.responseMimeType: a JSON reply cannot carry function calls",
                param="generationConfig.responseMimeType",
            )
        sampling["response_format"] = {"type": "json_object"}
    return req


def _budget(thinking: dict[str, Any]) -> bool | None:
    """``False`` for a budget of 0 (no thinking); ``None`` when the model decides."""
    where = "generationConfig.thinkingConfig."
    for key in thinking:
        if key not in ("includeThoughts", "thinkingBudget"):
            raise ApiError(400, f"{where}{key}: not supported", param=f"{where}{key}")
    budget = need(thinking, "thinkingBudget", int, where, required=False)
    if budget is None or budget == -1:
        return None
    if budget != 0:
        raise ApiError(
            400,
            f"{where}thinkingBudget: only 0 (no thinking) or -1 (the model "
            "decides) can be honoured",
            param=f"{where}thinkingBudget",
        )
    return False


def _text(content: Any, where: str) -> str:
    if not isinstance(content, dict):
        raise ApiError(400, f"{where}: expected a content object", param=where)
    parts = need(content, "parts", list, f"{where}.", required=False) or []
    out = []
    for j, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise ApiError(
                400, f"{where}.parts[{j}]: expected a text part", param=f"{where}.parts[{j}]"
            )
        out.append(part["text"])
    return "".join(out)


def _content(content: Any, where: str, turns: list[Turn]) -> None:
    if not isinstance(content, dict):
        raise ApiError(400, f"{where}: expected a content object", param=where)
    role = content.get("role") or "user"
    if role not in ("user", "model", "function", "tool"):
        raise ApiError(400, f"{where}.role: expected user or model", param=f"{where}.role")
    parts = need(content, "parts", list, f"{where}.")
    text: list[str] = []
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for j, part in enumerate(parts):
        here = f"{where}.parts[{j}]"
        if not isinstance(part, dict):
            raise ApiError(400, f"{here}: expected a part object", param=here)
        if part.get("thought") is True:
            continue  # (thoughts a client sends back: not for the upstream)
        if isinstance(part.get("text"), str):
            text.append(part["text"])
        elif isinstance(part.get("functionCall"), dict) and role == "model":
            call = part["functionCall"]
            calls.append(
                (
                    str(call.get("id") or ""),
                    need(call, "name", str, f"{here}.functionCall."),
                    need(call, "args", dict, f"{here}.functionCall.", required=False) or {},
                )
            )
        elif isinstance(part.get("functionResponse"), dict) and role != "model":
            answer = part["functionResponse"]
            name = need(answer, "name", str, f"{here}.functionResponse.")
            value = answer.get("response")
            turns.append(
                Turn(
                    "tool",
                    json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value,
                    call_id=str(answer.get("id") or name),
                    name=name,
                )
            )
        elif "thoughtSignature" in part and len(part) == 1:
            continue
        else:
            raise ApiError(
                400,
                f"{here}: only text, functionCall and functionResponse parts are supported",
                param=here,
            )
    if role == "model":
        turns.append(Turn("assistant", "".join(text), calls))
    elif text:
        turns.append(Turn("user", "".join(text)))


def _tools(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    tools = need(body, "tools", list, required=False) or []
    out: list[dict[str, Any]] = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict) or set(tool) - {"functionDeclarations"}:
            raise ApiError(400, f"{where}: only functionDeclarations are supported", param=where)
        for j, decl in enumerate(need(tool, "functionDeclarations", list, f"{where}.")):
            here = f"{where}.functionDeclarations[{j}]"
            if not isinstance(decl, dict):
                raise ApiError(400, f"{here}: expected an object", param=here)
            schema = decl.get("parametersJsonSchema")
            if schema is None:
                schema = (
                    _json_schema(decl.get("parameters"))
                    if decl.get("parameters")
                    else {"type": "object", "properties": {}}
                )
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": need(decl, "name", str, f"{here}."),
                        "description": decl.get("description") or "",
                        "parameters": schema,
                    },
                }
            )
    config = need(body, "toolConfig", dict, required=False) or {}
    calling = need(config, "functionCallingConfig", dict, "toolConfig.", required=False) or {}
    mode = need(calling, "mode", str, "toolConfig.functionCallingConfig.", required=False)
    if mode is not None and mode not in _MODES:
        raise ApiError(
            400,
            "toolConfig.functionCallingConfig.mode: expected AUTO, ANY or NONE",
            param="toolConfig.functionCallingConfig.mode",
        )
    choice = _MODES[mode or "AUTO"]
    names = need(
        calling, "allowedFunctionNames", list, "toolConfig.functionCallingConfig.", required=False
    )
    if names is not None and not all(isinstance(n, str) for n in names):
        raise ApiError(
            400,
            "toolConfig.functionCallingConfig.allowedFunctionNames: expected a list of names",
            param="toolConfig.functionCallingConfig.allowedFunctionNames",
        )
    if names:
        out = [t for t in out if t["function"]["name"] in names]
        if choice == "required" and len(names) == 1:
            choice = str(names[0])
    return out, choice


def _json_schema(schema: Any) -> Any:
    """Gemini's schema (``type: "OBJECT"``, …) as JSON Schema (``type: "object"``)."""
    if isinstance(schema, dict):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _json_schema(v))
            for k, v in schema.items()
            if k != "propertyOrdering"
        }
    if isinstance(schema, list):
        return [_json_schema(v) for v in schema]
    return schema

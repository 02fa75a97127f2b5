"""Strategy: the conversation as a model without a tool parser must see it — the tools taught
in the system prompt, earlier calls and tool results written in the dialect's own format —
sent upstream as plain chat messages without ``tools``.

What it does: ``upstream_payload(config, req)`` is the chat-completions body for the
upstream: ``model`` (``--upstream-model``, else the client's), the sampling settings, the
chat template's thinking switch (``chat_template_kwargs`` ``thinking`` and
``enable_thinking``, when the request or the model's entry decides it: ``thinking``), and
``messages``. When the reply is parsed (tools given, ``tool_choice`` not ``"none"``), the
system prompt starts with ``callsieve.prompt.tool_instructions(tools, dialect=D)`` (only the
named tool, and a line asking for a call, when ``tool_choice`` names one or is
``"required"``; a line asking for one call at most when the request allows one,
``parallel_tool_calls=false``). An assistant turn's calls are appended to its text as
``format_calls(calls, dialect=D, tools=tools)`` (the request's tools: a raw-text family writes
a string-typed parameter's string as it is; a call those schemas cannot carry, as without
them); a run of tool results becomes one user message,
``format_results(results, dialect=D)``. A request without tools or history of calls is sent as
its text turns.
What it guarantees: the upstream never receives ``tools``, ``tool_choice`` or the roles
``tool``/``developer``; tool results stay in the order the client sent them; a call or tool the
dialect cannot write (``FormatError``) is a 400 naming it.
What it costs: one pass over the turns; the dialect's spelling is loaded once per process.
"""

from __future__ import annotations

from typing import Any

from ... import CallsieveError, FormatError, prompt
from .._config import ServerConfig
from .._errors import ApiError
from .._read.turns import ModelRequest, Turn
from .thinking import decide, with_switch

__all__ = ["upstream_payload"]


def upstream_payload(config: ServerConfig, req: ModelRequest) -> dict[str, Any]:
    try:
        messages = _messages(spelling_of(config), req)
    except CallsieveError as exc:  # FormatError: a name or value the dialect cannot write
        raise ApiError(
            400, f"cannot write this conversation for the model: {exc}", code="unwritable"
        ) from None
    payload = {"model": config.upstream_model or req.model, "messages": messages, **req.sampling}
    return with_switch(payload, decide(config, req).template)


def spelling_of(config: ServerConfig) -> dict[str, Any]:
    """How the prompt is written: the dialect, and the grammar folders it may come from."""
    return {"dialect": config.dialect, "grammar_dirs": config.sieve.get("grammar_dirs", ())}


def _messages(spelled: dict[str, Any], req: ModelRequest) -> list[dict[str, Any]]:
    system = [t.text for t in req.turns if t.role == "system" and t.text]
    if req.parses:
        system.insert(0, _instructions(spelled, req))
    out: list[dict[str, Any]] = (
        [{"role": "system", "content": "\n\n".join(system)}] if system else []
    )
    results: list[Turn] = []
    for turn in req.turns:
        if turn.role == "tool":
            results.append(turn)
            continue
        if results:
            out.append(_results(spelled, results))
            results = []
        if turn.role == "user":
            out.append({"role": "user", "content": turn.text})
        elif turn.role == "assistant":
            text = turn.text
            if turn.calls:
                written = _calls(spelled, req, turn)
                text = f"{text}\n\n{written}" if text else written
            out.append({"role": "assistant", "content": text})
    if results:
        out.append(_results(spelled, results))
    return out


def _calls(spelled: dict[str, Any], req: ModelRequest, turn: Turn) -> str:
    """The turn's calls, written under the request's tools (a raw-text family writes a
    string-typed parameter's string as it is); a call whose values those schemas' types
    cannot carry in the dialect (a number where the schema says string) as without them,
    which the model reads as well. One no form carries (a string holding the family's
    closing tag) is the ``FormatError`` ``upstream_payload`` answers with a 400."""
    calls = [{"id": i, "name": n, "input": a} for i, n, a in turn.calls]
    try:
        return prompt.format_calls(calls, **spelled, tools=req.tools)
    except FormatError:
        return prompt.format_calls(calls, **spelled)


def _instructions(spelled: dict[str, Any], req: ModelRequest) -> str:
    tools = req.tools
    if req.tool_choice not in ("auto", "required"):
        tools = [t for t in tools if _tool_name(t) == req.tool_choice] or tools
    text = prompt.tool_instructions(tools, **spelled)
    if req.tool_choice == "required":
        text += "\n\nAnswer with at least one tool call."
    elif req.tool_choice != "auto":
        text += f"\n\nAnswer with a call of the tool {req.tool_choice}."
    if req.max_calls == 1:
        text += "\n\nMake at most one tool call in your reply."
    elif req.max_calls is not None:
        text += f"\n\nMake at most {req.max_calls} tool calls in your reply."
    return text


def _results(spelled: dict[str, Any], results: list[Turn]) -> dict[str, Any]:
    texts = [t.text for t in results]
    return {"role": "user", "content": prompt.format_results(texts, **spelled)}


def _tool_name(tool: dict[str, Any]) -> str:
    fn = tool.get("function")
    return str((fn if isinstance(fn, dict) else tool).get("name", ""))

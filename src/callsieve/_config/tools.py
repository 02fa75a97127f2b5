"""Strategy: read tool definitions — the shapes the APIs send them in — into what the rest
of callsieve needs of them.

What it does: ``schemas_from_tools`` maps each tool's name to its parameters schema.
What it guarantees: lenient: an entry it cannot read is skipped (``SieveOptions`` validates
the definitions first).
What it costs: linear in the number of definitions, once per ``Sieve``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["schemas_from_tools"]


def schemas_from_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """``{tool name: parameters schema}`` from OpenAI-style
    ``{"type": "function", "function": {"name", "parameters"}}``, flat ``{"name",
    "parameters"}`` or Anthropic-style ``{"name", "input_schema"}`` entries (a ``None``
    schema counts as absent; no schema reads as ``{}``; a later tool of the same name wins).
    Lenient: an entry it cannot read is skipped — ``SieveOptions`` (``options``) validates
    and normalises the definitions before they get here."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        spec: dict[str, Any] = fn if isinstance(fn, dict) else tool
        name = spec.get("name")
        if not isinstance(name, str):
            continue
        schema = spec.get("parameters")
        if schema is None:
            schema = spec.get("input_schema")
        out[name] = schema if isinstance(schema, dict) else {}
    return out

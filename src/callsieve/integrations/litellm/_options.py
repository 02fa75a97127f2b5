"""Strategy: which ``Sieve`` options a proxied request gets — the operator's defaults, the
model's own entry in the proxy's ``config.yaml``, and the request's tools.

What it does: ``read_options(value, where)`` (``integrations._options``) checks one object
of ``Sieve`` options, or ``false`` (the hook leaves that model alone). ``default_options()`` reads
``CALLSIEVE_LITELLM_OPTIONS`` (JSON; unset: ``{}``). ``request_options(base, data)`` turns a
request into the options of its reply: ``None`` when the hook does not act (no tools, or
``tool_choice="none"``: the reply passes untouched); the tools themselves; a named
``tool_choice`` leaves only that tool and sets ``policy="allowlist"`` unless the model set a
policy.
What it guarantees: pure data and functions; no LiteLLM import. Options are checked once per
distinct value (cached), so a request pays a dictionary look-up.
What it costs: one ``Sieve`` built per distinct setting, at the first request that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._options import env_options, read_options

__all__ = ["ENV_OPTIONS", "MODEL_KEY", "default_options", "read_options", "request_options"]

#: The environment variable with every model's options (a JSON object).
ENV_OPTIONS = "CALLSIEVE_LITELLM_OPTIONS"
#: The key of a model's own options in its ``model_info`` (``config.yaml``).
MODEL_KEY = "callsieve"


def default_options(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The options in ``CALLSIEVE_LITELLM_OPTIONS`` (``{}`` when unset), checked."""
    return env_options(ENV_OPTIONS, environ)


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, Mapping):
        return None
    fn = tool.get("function")
    return (fn if isinstance(fn, Mapping) else tool).get("name")


def request_options(
    base: Mapping[str, Any] | None, data: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The ``Sieve`` options for the reply to request ``data``, or ``None`` (the hook does
    not act: the model is off, the request has no tools, or ``tool_choice`` is ``"none"``)."""
    tools = list(data.get("tools") or [])
    choice = data.get("tool_choice")
    if base is None or not tools or choice == "none":
        return None
    options = dict(base)
    if isinstance(choice, Mapping):  # a named tool: only it may be called
        named = _tool_name(choice)
        tools = [t for t in tools if _tool_name(t) == named]
        options.setdefault("policy", "allowlist")
        if not tools:
            return None
    options["tools"] = tools
    return options

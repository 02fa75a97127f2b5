"""Strategy: which ``Sieve`` options a proxied request gets — the operator's defaults, the
model's own entry in the proxy's ``config.yaml``, and the request's tools.

What it does: ``read_options(value, where)`` checks one JSON object of ``Sieve`` options
(``dialects``, ``reasoning``, ``policy``, ``on_reject``, ``early_emit``, ...), or ``false``
(the hook leaves that model alone), by building a ``Sieve`` with it once; a bad value is a
``ConfigurationError`` naming where it came from. ``default_options()`` reads
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

import functools
import json
import os
from collections.abc import Mapping
from typing import Any

from ... import CallsieveError, ConfigurationError, Sieve

__all__ = ["ENV_OPTIONS", "MODEL_KEY", "default_options", "read_options", "request_options"]

#: The environment variable with every model's options (a JSON object).
ENV_OPTIONS = "CALLSIEVE_LITELLM_OPTIONS"
#: The key of a model's own options in its ``model_info`` (``config.yaml``).
MODEL_KEY = "callsieve"
#: Options each request brings; a setting cannot fix them.
_PER_REQUEST = ("tools", "id_factory")


def read_options(value: Any, where: str) -> dict[str, Any] | None:
    """``value`` checked as ``Sieve`` options; ``None`` for ``false`` (the hook is off)."""
    if value is False:
        return None
    if value is None or value is True:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f"{where}: expected an object of Sieve options or false, got {value!r:.60}"
        )
    return dict(_checked(json.dumps(dict(value), sort_keys=True), where))


@functools.lru_cache(maxsize=64)
def _checked(raw: str, where: str) -> dict[str, Any]:
    options: dict[str, Any] = json.loads(raw)
    for name in _PER_REQUEST:
        if name in options:
            raise ConfigurationError(f"{where}: {name!r} comes from each request")
    try:  # (a policy is checked against a stand-in tool: the request brings the real ones)
        Sieve([{"name": "tool"}] if options.get("policy") else None, **options)
    except CallsieveError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    return options


def default_options(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The options in ``CALLSIEVE_LITELLM_OPTIONS`` (``{}`` when unset), checked."""
    raw = (os.environ if environ is None else environ).get(ENV_OPTIONS, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{ENV_OPTIONS}: not JSON ({exc})") from None
    return read_options(value, ENV_OPTIONS)


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

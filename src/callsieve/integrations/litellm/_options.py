"""Strategy: how a proxied request's reply is read — the operator's defaults, the model's own
entry in the proxy's ``config.yaml``, and what the request says (its tools, ``tool_choice``,
``parallel_tool_calls`` and thinking switch), decided as the gateway decides them.

What it does: ``read_options(value, where)`` (``integrations._options``) checks one object of
``Sieve`` options, or ``false`` (the hook leaves that model alone). ``default_options()``
reads ``CALLSIEVE_LITELLM_OPTIONS`` (JSON; unset: ``{}``). ``reply_plan(base, data)`` turns a
request into a ``ReplyPlan``, or ``None`` when the hook does not act (no tools, or
``tool_choice="none"``: the reply passes untouched). The plan holds:

- ``options``: the ``Sieve`` options, with the request's tools;
- ``only``: the tool a named ``tool_choice`` names (a call of another tool is dropped whole);
- ``max_calls``: 1 under ``parallel_tool_calls=false`` (later calls are dropped whole);
- ``guess``: the reply is read as starting inside a thought only because the request asked
  for thinking, so that thought is held until it is settled (the gateway's rule,
  ``server._reply.respond``).

The reasoning setting follows the gateway's order (``server._reply.thinking``), with the
model's options as its entry. ``reasoning="off"`` in the options stands: the upstream splits
the thought itself. Else the request decides: ``request_thinking(data)`` reads
``chat_template_kwargs.thinking`` / ``enable_thinking``, then ``reasoning_effort``
(``"none"``: off), then Anthropic's ``thinking`` (``enabled``, ``adaptive``, ``disabled``).
Thinking on reads the reply as starting inside the thought (``"open"``). It is a guess
unless the options say ``"open"`` too. Thinking off reads ``"tags"``. A request that says
nothing keeps the options' setting. A grammar without reasoning tags keeps it too.
``tool_choice="required"`` changes nothing here: the gateway asks for a call but does not
refuse a reply without one, and neither does the hook (docs/integrations.md).
What it guarantees: pure data and functions; no LiteLLM import. Options are checked once per
distinct value (cached), so a request pays a dictionary look-up.
What it costs: one ``Sieve`` built per distinct setting, at the first request that uses it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import ConfigurationError, Sieve
from .._options import env_options, read_options

__all__ = [
    "ENV_OPTIONS",
    "MODEL_KEY",
    "ReplyPlan",
    "default_options",
    "read_options",
    "reply_plan",
    "request_thinking",
]

#: The environment variable with every model's options (a JSON object).
ENV_OPTIONS = "CALLSIEVE_LITELLM_OPTIONS"
#: The key of a model's own options in its ``model_info`` (``config.yaml``).
MODEL_KEY = "callsieve"
#: The chat template's thinking switches (DeepSeek's ``thinking``, Qwen's ``enable_thinking``).
_SWITCHES = ("thinking", "enable_thinking")
#: Anthropic's ``thinking.type``: whether the model thinks.
_THINKING_TYPES = {"enabled": True, "adaptive": True, "disabled": False}


@dataclass(frozen=True)
class ReplyPlan:
    """How one request's reply is read (see the module docstring)."""

    options: dict[str, Any]
    only: str | None = None
    max_calls: int | None = None
    guess: bool = False


def default_options(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The options in ``CALLSIEVE_LITELLM_OPTIONS`` (``{}`` when unset), checked."""
    return env_options(ENV_OPTIONS, environ)


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, Mapping):
        return None
    fn = tool.get("function")
    return (fn if isinstance(fn, Mapping) else tool).get("name")


def request_thinking(data: Mapping[str, Any]) -> bool | None:
    """Whether request ``data`` asks the model to think (``None``: it does not say). Two
    switches that disagree say nothing; the proxy has already accepted the request."""
    kwargs = data.get("chat_template_kwargs")
    said = set()
    if isinstance(kwargs, Mapping):
        said = {kwargs[k] for k in _SWITCHES if isinstance(kwargs.get(k), bool)}
    if said:
        return said.pop() if len(said) == 1 else None
    effort = data.get("reasoning_effort")
    if isinstance(effort, str):
        return effort != "none"
    thinking = data.get("thinking")
    if isinstance(thinking, Mapping):
        return _THINKING_TYPES.get(str(thinking.get("type")))
    return None


def reply_plan(base: Mapping[str, Any] | None, data: Mapping[str, Any]) -> ReplyPlan | None:
    """How the reply to request ``data`` is read, or ``None`` (the hook does not act: the
    model is off, the request has no tools, or ``tool_choice`` is ``"none"``)."""
    tools = list(data.get("tools") or [])
    choice = data.get("tool_choice")
    if base is None or not tools or choice == "none":
        return None
    options = {**base, "tools": tools}
    guess = False
    thinking = request_thinking(data)
    said = options.get("reasoning")
    if thinking is not None and said != "off" and _has_reasoning_tags(base):
        options["reasoning"] = "open" if thinking else "tags"
        guess = thinking and said != "open"
    only = _tool_name(choice) if isinstance(choice, Mapping) else None
    max_calls = 1 if data.get("parallel_tool_calls") is False else None
    return ReplyPlan(options, only, max_calls, guess)


def _has_reasoning_tags(options: Mapping[str, Any]) -> bool:
    """Whether the options' grammar can read a reply as starting inside a thought."""
    return _reads_open(json.dumps(dict(options), sort_keys=True))


@functools.lru_cache(maxsize=64)
def _reads_open(raw: str) -> bool:
    try:
        Sieve([{"name": "tool"}], **{**json.loads(raw), "reasoning": "open"}).close()
    except ConfigurationError:
        return False
    return True

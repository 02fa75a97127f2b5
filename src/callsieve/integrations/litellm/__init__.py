"""Strategy: callsieve inside LiteLLM's proxy — one line in its ``config.yaml`` turns tool
calls a model writes as text into the API's ``tool_calls`` (docs/integrations.md).

What it does: ``pip install 'callsieve[litellm]'``, then in the proxy's ``config.yaml``::

    litellm_settings:
      callbacks: callsieve.integrations.litellm.hook

``hook`` is a ``CallsieveHook`` with the options of ``CALLSIEVE_LITELLM_OPTIONS`` and each
model's ``model_info: {callsieve: {...}}``; a module of one's own may build another
(``CallsieveHook(options=..., models=...)``).
What it guarantees: the core never imports it; importing this package needs no LiteLLM
(``hook``, ``CallsieveHook`` and the two errors import it when first asked for).
What it costs: nothing until the proxy runs a request with tools.
"""

from __future__ import annotations

from typing import Any

from ._options import (
    ENV_OPTIONS,
    MODEL_KEY,
    ReplyPlan,
    default_options,
    read_options,
    reply_plan,
    request_thinking,
)

__all__ = [
    "ENV_OPTIONS",
    "MODEL_KEY",
    "CallsieveHook",
    "ReplyPlan",
    "ToolCallAbortedError",
    "UpstreamCallError",
    "default_options",
    "hook",
    "read_options",
    "reply_plan",
    "request_thinking",
]

_LAZY = ("CallsieveHook", "ToolCallAbortedError", "UpstreamCallError")


def __getattr__(name: str) -> Any:
    """``hook`` (the instance the proxy's ``callbacks:`` line names, made once) and the
    classes, imported with LiteLLM on first use."""
    if name in _LAZY or name == "hook":
        from . import _hook

        if name == "hook":
            made = globals().get("_made")
            if made is None:
                made = globals()["_made"] = _hook.CallsieveHook()
            return made
        return getattr(_hook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

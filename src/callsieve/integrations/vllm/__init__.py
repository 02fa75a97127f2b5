"""Strategy: callsieve inside vLLM — its tool parser and reasoning parser, loaded through
vLLM's ``vllm.general_plugins`` entry point (docs/vllm.md).

What it does: ``pip install 'callsieve[vllm]'`` installs the entry point; vLLM runs
``register()`` at start-up, which makes the names of ``VARIANTS`` (``callsieve``,
``callsieve_deepseek_r1``, ...) known to ``--tool-call-parser`` and ``--reasoning-parser``.
This package imports no vLLM module itself: the parsers (``_parsers``) are imported by vLLM
when a server names them, after the release check (``SUPPORTED``, ``check_vllm``).
What it guarantees: the core never imports it; importing it needs no vLLM.
What it costs: nothing until vLLM loads a parser.
"""

from __future__ import annotations

from ._contract import (
    BACKENDS,
    ENV_CONSTRAIN,
    ENV_OPTIONS,
    SUPPORTED,
    CallAbortedError,
    IncompatibleVllmError,
    check_vllm,
    constrain_setting,
    operator_options,
    version_problem,
)
from ._plugin import register
from ._variants import (
    ENV_MODEL_DIR,
    VARIANTS,
    Variant,
    active_variants,
    reasoning_setting,
    resolved,
    thinking_requested,
)

__all__ = [
    "BACKENDS",
    "ENV_CONSTRAIN",
    "ENV_MODEL_DIR",
    "ENV_OPTIONS",
    "SUPPORTED",
    "VARIANTS",
    "CallAbortedError",
    "IncompatibleVllmError",
    "Variant",
    "active_variants",
    "check_vllm",
    "constrain_setting",
    "operator_options",
    "reasoning_setting",
    "register",
    "resolved",
    "thinking_requested",
    "version_problem",
]

"""Strategy: the ``vllm.general_plugins`` entry point — what vLLM runs in each of its
processes at start-up when callsieve is installed.

What it does: ``register()`` reads the operator's ``CALLSIEVE_VLLM_OPTIONS`` (a bad setting
stops vLLM at start-up, naming it) and registers every active variant's name with vLLM's
``ToolParserManager`` and ``ReasoningParserManager`` lazily: the parser module is imported
only when a server names it (``--tool-call-parser callsieve``), so the plugin costs nothing
to a vLLM that uses other parsers. On a vLLM outside the supported range it logs why and
registers the names all the same: naming them then fails at start-up with
``IncompatibleVllmError``'s message (the range, and the command that installs a supported
vLLM), while a server using other parsers runs as before.
What it guarantees: no callsieve name shadows one of vLLM's own (every name starts with
``callsieve``); registering twice (vLLM loads plugins once per process, in several processes)
changes nothing.
What it costs: a metadata read and a few dictionary entries.
"""

from __future__ import annotations

import logging

from ._contract import constrain_setting, installed_vllm, operator_options, version_problem
from ._variants import active_variants

__all__ = ["PARSERS_MODULE", "register"]

PARSERS_MODULE = "callsieve.integrations.vllm._parsers"
log = logging.getLogger("callsieve.vllm")


def register() -> None:
    """Make callsieve's parsers known to vLLM (the ``vllm.general_plugins`` entry point)."""
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    problem = version_problem(installed_vllm())
    if problem is not None:
        log.warning("%s (the callsieve parsers are not usable)", problem)
    operator_options()
    constrain_setting()
    for variant in active_variants():
        ToolParserManager.register_lazy_module(
            variant.name, PARSERS_MODULE, f"{variant.class_stem}ToolParser"
        )
        ReasoningParserManager.register_lazy_module(
            variant.name, PARSERS_MODULE, f"{variant.class_stem}ReasoningParser"
        )

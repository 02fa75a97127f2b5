"""Strategy: callsieve inside SGLang — its tool-call detector and reasoning detector, added
through SGLang's general plugin entry point (``sglang.srt.plugins``; docs/integrations.md).

What it does: ``pip install 'callsieve[sglang]'`` installs the entry point; SGLang runs
``register()`` in each of its processes (``load_plugins()``, before the server arguments
are read), which adds every active variant's name (``callsieve``, ``callsieve_deepseek_r1``,
``callsieve_hermes``, ...: the rows of the vLLM plugin's ``VARIANTS``) to
``FunctionCallParser.ToolCallParserEnum`` and ``ReasoningParser.DetectorMap``, so that
``--tool-call-parser callsieve --reasoning-parser callsieve`` are accepted. Every model's
``Sieve`` options may be set with ``CALLSIEVE_SGLANG_OPTIONS`` (a JSON object, checked at
start-up).
What it guarantees: the core never imports it; importing this package needs no SGLang.
What it costs: SGLang's two parser registries are imported at start-up (SGLang imports them
anyway to serve).
"""

from __future__ import annotations

from ._options import ENV_OPTIONS, operator_options

__all__ = ["ENV_OPTIONS", "register"]


def register() -> None:
    """Add callsieve's detectors to SGLang's registries (the ``sglang.srt.plugins`` entry
    point)."""
    from ._plugin import install

    operator_options()  # (a bad setting stops SGLang at start-up, naming it)
    install()

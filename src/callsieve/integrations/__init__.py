"""Strategy: adapters that put callsieve inside other people's servers — one subpackage per
host (``callsieve.integrations.vllm``: vLLM's tool parser and reasoning parser plugin).

What it guarantees: the core never imports anything here, and nothing here is imported by
``import callsieve``; each subpackage imports its host only when the host loads it, so a
missing or incompatible host costs nothing to everyone else.
What it costs: nothing until a host loads an adapter.
"""

from __future__ import annotations

__all__: list[str] = []

"""Strategy: the operator's ``Sieve`` options for every model SGLang serves with callsieve.

What it does: ``operator_options()`` reads ``CALLSIEVE_SGLANG_OPTIONS`` (a JSON object of
``Sieve`` options; unset: ``{}``), checked once (``integrations._options``).
What it guarantees: no SGLang import; a bad value is a ``ConfigurationError`` naming it.
What it costs: a cached look-up per request.
"""

from __future__ import annotations

from typing import Any

from .._options import env_options

__all__ = ["ENV_OPTIONS", "operator_options"]

#: The environment variable with every model's ``Sieve`` options (a JSON object).
ENV_OPTIONS = "CALLSIEVE_SGLANG_OPTIONS"


def operator_options() -> dict[str, Any]:
    """The options in ``CALLSIEVE_SGLANG_OPTIONS`` (``{}`` when unset or ``false``)."""
    return env_options(ENV_OPTIONS) or {}

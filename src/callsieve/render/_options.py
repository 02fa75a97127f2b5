"""Strategy: the options every renderer takes the same way — token counts and id factories —
read once, when a renderer is built or closed, never per event.

What it guarantees: ``usage`` is ``None`` (zeros) or a mapping with ``input_tokens`` and/or
``output_tokens``, each a non-negative ``int``; anything else is a ``ConfigurationError``,
so a typo never turns into a silent zero. An id factory is any ``Callable[[], str]``; what it
returns is checked (a ``str``, and where the API constrains ids, their pattern) and a factory
that raises or returns something else becomes a ``ConfigurationError`` chained to the cause.
Deterministic factories (a counter) make every rendered object reproducible in tests.
What it costs: a regular-expression match per id (one per response and one per call).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .._base.errors import ConfigurationError
from .._config.options import make_call_id

__all__ = ["USAGE_KEYS", "Usage", "make_id", "token_counts"]

#: The token counts a caller may give: what the prompt cost and what the reply cost.
Usage = Mapping[str, int]
USAGE_KEYS = ("input_tokens", "output_tokens")


def token_counts(usage: Usage | None) -> tuple[int, int]:
    """``(input_tokens, output_tokens)`` of ``usage`` (``None`` and missing keys are 0)."""
    if usage is None:
        return 0, 0
    if not isinstance(usage, Mapping):
        raise ConfigurationError(
            f"usage must be a mapping of {USAGE_KEYS}, not {type(usage).__name__}",
            expected=USAGE_KEYS,
        )
    unknown = sorted(str(k) for k in usage if k not in USAGE_KEYS)
    if unknown:
        raise ConfigurationError(
            f"usage has unknown keys {unknown}; it takes {USAGE_KEYS}", expected=USAGE_KEYS
        )
    counts = []
    for key in USAGE_KEYS:
        value = usage.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigurationError(f"usage[{key!r}] must be a non-negative int, not {value!r}")
        counts.append(value)
    return counts[0], counts[1]


def make_id(
    factory: Callable[[], str],
    option: str,
    pattern: re.Pattern[str] | None = None,
) -> str:
    """One id from ``factory`` (the option ``option``), checked against ``pattern``."""
    return make_call_id(factory, option, pattern)  # (the one id validator: the core's)

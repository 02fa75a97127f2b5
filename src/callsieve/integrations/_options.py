"""Strategy: the operator's ``Sieve`` options for an integration, read once and checked —
shared by the LiteLLM hook and the SGLang plugin.

What it does: ``read_options(value, where)`` checks one JSON object of ``Sieve`` options
(``dialects``, ``reasoning``, ``policy``, ``on_reject``, ``early_emit``, ...), or ``false``
(the integration leaves that model alone: ``None``), by building a ``Sieve`` with it once; a
bad value is a ``ConfigurationError`` naming where it came from. ``env_options(name)`` reads
such a value from the environment variable ``name`` (unset: ``{}``).
What it guarantees: pure data and functions, no host import; the options a request brings
(``tools``, ``id_factory``) cannot be set here.
What it costs: one ``Sieve`` built per distinct value (cached).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from typing import Any

from .. import CallsieveError, ConfigurationError, Sieve

__all__ = ["env_options", "read_options"]

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


def env_options(name: str, environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The options in the environment variable ``name`` (``{}`` when unset), checked."""
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{name}: not JSON ({exc})") from None
    return read_options(value, name)

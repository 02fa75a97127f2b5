"""Strategy: what the vLLM plugin promises and checks before it touches vLLM — the vLLM
releases it supports, and the operator's options for every request's ``Sieve``.

What it does: ``SUPPORTED`` is the range of vLLM releases the plugin is built and tested
against (the ``callsieve[vllm]`` extra declares the same range; a test keeps the two equal).
``version_problem(version)`` says, in one sentence a person can act on, why a vLLM release is
outside it (``None`` inside). ``check_vllm()`` raises ``IncompatibleVllmError`` with that
sentence. ``operator_options()`` reads ``CALLSIEVE_VLLM_OPTIONS`` — a JSON object of
``Sieve`` options (``early_emit``, ``policy``, ``on_reject``, ``dialects``, ``reasoning``,
``calls_in_reasoning``, ``max_block_chars``, ``metrics``, ``grammar_dirs``, ``mode``) laid
over the plugin's defaults for every request — and checks it as a ``Sieve`` would.
``constrain_setting()`` reads ``CALLSIEVE_VLLM_CONSTRAIN``: the structured-output backend
the constraint for a forced ``tool_choice`` is made for (``auto``, ``xgrammar``,
``guidance``), or ``off``.
What it guarantees: no vLLM import (the version is read from the installed metadata), so the
check runs before any vLLM module that might have moved; every problem is a
``CallsieveError`` naming the setting and what was expected.
What it costs: one metadata read and one JSON parse, at start-up.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from ... import CallsieveError, ConfigurationError, Sieve

__all__ = [
    "BACKENDS",
    "ENV_CONSTRAIN",
    "ENV_OPTIONS",
    "SUPPORTED",
    "CallAbortedError",
    "IncompatibleVllmError",
    "check_vllm",
    "constrain_setting",
    "installed_vllm",
    "operator_options",
    "version_problem",
]

#: ``(lowest, first unsupported)`` (major, minor) of vLLM: ``vllm>=0.33,<0.34``.
SUPPORTED: tuple[tuple[int, int], tuple[int, int]] = ((0, 33), (0, 34))
ENV_OPTIONS = "CALLSIEVE_VLLM_OPTIONS"
#: How the plugin enforces ``tool_choice``: vLLM's structured-output backend, or ``off``.
ENV_CONSTRAIN = "CALLSIEVE_VLLM_CONSTRAIN"
BACKENDS = ("auto", "xgrammar", "guidance", "off")
#: Options the plugin sets from each request, which the operator cannot set for all.
_PER_REQUEST = ("tools", "id_factory")


class IncompatibleVllmError(CallsieveError, ImportError):
    """The installed vLLM is one the plugin does not support (or vLLM is missing)."""


class CallAbortedError(CallsieveError, RuntimeError):
    """A tool call began streaming and then was not made (SPEC §17): raised from the tool
    parser, it ends vLLM's stream with the API's error event. ``reason`` is the
    ``CallAborted`` event's: ``"cut_off"`` (the reply ended inside it), ``"failed"``,
    ``"rejected"``, ``"repeated_name"``, ... (docs/rendering.md lists them)."""

    def __init__(self, index: int, name: str, reason: str = "failed") -> None:
        super().__init__(
            f"tool call {index} ({name!r}) began streaming but was not made (reason: {reason}); "
            "discard it and retry"
        )
        self.index = index
        self.name = name
        self.reason = reason


def _range() -> str:
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    return f"vllm>={lo_major}.{lo_minor},<{hi_major}.{hi_minor}"


def installed_vllm() -> str | None:
    try:
        return metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return None


def version_problem(version: str | None) -> str | None:
    """Why vLLM ``version`` cannot host the plugin, or ``None`` when it can."""
    fix = f"install a supported one with: pip install 'callsieve[vllm]' ({_range()})"
    if version is None:
        return f"callsieve's vLLM plugin needs vLLM, which is not installed; {fix}"
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        return f"callsieve's vLLM plugin cannot read the vLLM version {version!r}; {fix}"
    release = (int(found.group(1)), int(found.group(2)))
    if SUPPORTED[0] <= release < SUPPORTED[1]:
        return None
    return (
        f"callsieve's vLLM plugin supports {_range()}, but vLLM {version} is installed; "
        f"{fix}, or a callsieve release built for vLLM {release[0]}.{release[1]}"
    )


def check_vllm() -> None:
    problem = version_problem(installed_vllm())
    if problem is not None:
        raise IncompatibleVllmError(problem)


def operator_options(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``Sieve`` options in ``CALLSIEVE_VLLM_OPTIONS`` (``{}`` when unset), checked."""
    raw = (os.environ if environ is None else environ).get(ENV_OPTIONS, "").strip()
    return dict(_read_options(raw)) if raw else {}


@functools.lru_cache(maxsize=8)
def _read_options(raw: str) -> dict[str, Any]:
    """One setting, read and checked once (a request reads it again from this cache)."""
    try:
        options = json.loads(raw)
    except ValueError as exc:
        raise ConfigurationError(f"{ENV_OPTIONS}: not JSON ({exc})") from None
    if not isinstance(options, dict):
        raise ConfigurationError(
            f"{ENV_OPTIONS}: expected a JSON object of Sieve options, got {raw[:40]!r}"
        )
    for name in _PER_REQUEST:
        if name in options:
            raise ConfigurationError(
                f"{ENV_OPTIONS}: {name!r} comes from each request; it cannot be set here"
            )
    try:  # (a policy is checked against a stand-in tool: the request brings the real ones)
        Sieve([{"name": "tool"}] if options.get("policy") else None, **options)
    except CallsieveError as exc:
        raise ConfigurationError(f"{ENV_OPTIONS}: {exc}") from None
    return options


def constrain_setting(environ: Mapping[str, str] | None = None) -> str:
    """``CALLSIEVE_VLLM_CONSTRAIN`` (``auto`` when unset), checked."""
    raw = (os.environ if environ is None else environ).get(ENV_CONSTRAIN, "").strip()
    setting = raw.lower() or "auto"
    if setting not in BACKENDS:
        raise ConfigurationError(
            f"{ENV_CONSTRAIN}: expected one of {BACKENDS}, got {raw!r}", expected=BACKENDS
        )
    return setting

"""Strategy: what the operator knows of each model behind the gateway — how its chat template
starts a reply when it thinks, whether it thinks unless told not to, whether the server in
front of it splits the reasoning off itself — written once in the config file, keyed by
model name or pattern, so that every request to that model is read right.

What it does: ``read_models(table)`` reads the config file's ``[models]`` table (``[models.
"deepseek-ai/DeepSeek-R1*"]``: a name, or a pattern with ``*``, ``?`` and ``[…]`` as
``fnmatch`` reads them) into ``ModelProfile``s, in the file's order. Each entry may say:

- ``thinking``: ``"always"`` (the template thinks whatever the request says: DeepSeek R1,
  QwQ, Qwen3-Thinking-2507, MiniMax M2), ``"on"`` (on unless the request turns it off:
  Qwen3, GLM-4.5 and later, Kimi K2.5, DeepSeek V4), ``"off"`` (off unless the request turns
  it on: DeepSeek V3.1, V3.2) or ``"never"`` (the model does not think); unset, the request
  alone decides;
- ``prewrites_think``: the template ends the prompt with ``<think>`` when thinking is on, so
  the reply starts inside the thought (default ``true``: a reply that thinks is read so, which
  reads a model that writes ``<think>`` itself right too; ``false`` for a model that may answer
  without a thought when thinking is on);
- ``upstream_reasoning``: the server in front of the model separates the reasoning itself
  (vLLM or SGLang started with a reasoning parser, llama.cpp's default ``--reasoning-format``):
  what it sends as content is the answer only (default ``false``).

Whether a call may end a thought the model never closes (Kimi K2.5, GLM-4.7, Qwen3.5,
DeepSeek V4) is no entry's setting: the dialect declares it (SPEC §15, ``//%calls_end_thought``),
so the ``[sieve]`` dialects bring it to every model they read.

``profile_for(profiles, name)`` is the entry for a model: the one whose key is the name
(compared without case), else the first whose pattern matches it, else ``None``.
What it guarantees: a malformed table is a ``ConfigurationError`` naming the entry and the
key (``[models."r1*"] thinking must be one of …``), raised at start-up.
What it costs: one pass over the table at start-up; per request a few ``fnmatch`` calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .. import ConfigurationError

__all__ = ["THINKING", "ModelProfile", "profile_for", "read_models"]

#: The values of an entry's ``thinking``.
THINKING = ("always", "on", "off", "never")
_KEYS = ("thinking", "prewrites_think", "upstream_reasoning")


@dataclass(frozen=True)
class ModelProfile:
    pattern: str
    thinking: str | None = None
    prewrites_think: bool = True
    upstream_reasoning: bool = False


def read_models(table: Any) -> tuple[ModelProfile, ...]:
    if not isinstance(table, dict):
        raise ConfigurationError(
            '[models] must hold one table per model ([models."NAME"] thinking = …)'
        )
    return tuple(_entry(pattern, body) for pattern, body in table.items())


def _entry(pattern: Any, body: Any) -> ModelProfile:
    where = f'[models."{pattern}"]' if isinstance(pattern, str) else "[models]"
    if not isinstance(pattern, str) or not pattern.strip():
        raise ConfigurationError("[models]: a model's name or pattern must not be empty")
    if not isinstance(body, dict):
        raise ConfigurationError(
            f"{where} must be a table of settings ({', '.join(_KEYS)}), not {body!r}"
        )
    for key in body:
        if key not in _KEYS:
            raise ConfigurationError(f"{where} has no setting {key!r}; it has {', '.join(_KEYS)}")
    thinking = body.get("thinking")
    if thinking is not None and thinking not in THINKING:
        raise ConfigurationError(
            f"{where} thinking must be one of {', '.join(THINKING)}, not {thinking!r}"
        )
    for key in ("prewrites_think", "upstream_reasoning"):
        if key in body and not isinstance(body[key], bool):
            raise ConfigurationError(f"{where} {key} must be true or false, not {body[key]!r}")
    return ModelProfile(
        pattern.strip(),
        thinking,
        body.get("prewrites_think", True),
        body.get("upstream_reasoning", False),
    )


def profile_for(profiles: tuple[ModelProfile, ...], name: str) -> ModelProfile | None:
    """The entry for ``name``: its own, else the first pattern that matches (no case)."""
    folded = name.lower()
    for p in profiles:
        if p.pattern.lower() == folded:
            return p
    for p in profiles:
        if fnmatchcase(folded, p.pattern.lower()):
            return p
    return None

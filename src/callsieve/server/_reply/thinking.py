"""Strategy: how one reply's reasoning is read, decided per request from what the request and
the model say (SPEC §17), in one place — the sieve's ``reasoning`` setting, and the chat
template switch sent upstream so that the template and the reading agree.

What it does: ``decide(config, req)`` gives a ``Reading``:

- ``reasoning``, the sieve's ``reasoning=`` for the reply (``None``: the ``[sieve]`` setting
  stands). In order, the first that applies decides:

  1. the model's entry (``[models]``, ``_models``) says its server separates the reasoning
     itself (``upstream_reasoning``): ``"off"``, the content is the answer only;
  2. the model's entry says it thinks ``"always"`` or ``"never"``: thinking is on or off,
     whatever the request says;
  3. the request says (``ModelRequest.thinking``: ``chat_template_kwargs.thinking`` /
     ``enable_thinking``, ``reasoning_effort``, Anthropic's ``thinking``, Gemini's
     ``thinkingBudget`` 0);
  4. the model's entry gives a default (``thinking = "on"`` / ``"off"``);
  5. nothing: the ``[sieve]`` setting (``"tags"`` unless the operator set another).

  Thinking on reads the reply as starting inside the thought, ``"open"`` (the template
  pre-wrote ``<think>``; a model that writes ``<think>`` itself is read right too), unless
  the entry says ``prewrites_think = false``: then ``"tags"``. Thinking off: ``"tags"`` (a
  ``<think>`` the model writes anyway is still split off). A grammar without reasoning tags
  (``ServerConfig.reasoning_tags``) leaves the ``[sieve]`` setting alone.
- ``guess``: the reply is read as starting inside a thought only because the request asked
  for thinking — no entry says how the model's template starts a reply, and a model that
  does not think at all would have its whole answer taken for a thought. ``respond``
  holds such a thought until it is settled (``ReplyEvents``: the rule is written there).
- ``unknown``: nothing above decided, and the ``[sieve]`` settings name no ``reasoning``:
  the reply is read with ``"tags"``, but a template that pre-wrote ``<think>`` would leave
  only a ``</think>`` in it, and the calls before it would be drafts. ``respond`` holds the
  calls until the reply shows which side they stand on (``ReplyEvents``).
- ``template``, the thinking switch sent upstream in ``chat_template_kwargs`` (``thinking``
  and ``enable_thinking``, the names the DeepSeek, Qwen, GLM and Kimi templates read, as
  vLLM, SGLang and llama.cpp pass them to the template): the request's choice, else the
  entry's default; ``None`` sends nothing of ours.

The model is the one the upstream is asked for: ``--upstream-model``, else the client's.
While the reply arrives, ``respond.ReplyEvents`` changes the reading once more: an upstream
that sends reasoning of its own (``reasoning_content``) separates it, and its content is
then read as the answer only (the rule is written there).
What it guarantees: the reading and the switch are computed from the request and the
settings alone, the same for the sieve and for the upstream.
What it costs: a dictionary lookup and a few ``fnmatch`` calls per request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._config import ServerConfig
from .._read.turns import ModelRequest

__all__ = ["SWITCHES", "Reading", "decide", "with_switch"]

#: The chat template's thinking switches, both sent (each template reads its own).
SWITCHES = ("thinking", "enable_thinking")
_FIXED = {"always": True, "never": False}
_DEFAULT = {"on": True, "off": False}


@dataclass(frozen=True)
class Reading:
    reasoning: str | None = None
    template: bool | None = None
    guess: bool = False
    #: Nothing says whether the template pre-writes ``<think>`` (no entry, nothing in the
    #: request, no ``[sieve] reasoning``): ``respond`` holds the calls until the reply shows
    #: which side of a ``</think>`` they stand on.
    unknown: bool = False


def decide(config: ServerConfig, req: ModelRequest) -> Reading:
    profile = config.profile(config.upstream_model or req.model)
    said = profile.thinking if profile is not None else None
    default = _DEFAULT.get(said) if said is not None else None
    template = req.thinking if req.thinking is not None else default
    fixed = _FIXED.get(said) if said is not None else None
    thinking = fixed if fixed is not None else template
    if not config.reasoning_tags:
        reasoning = None
    elif profile is not None and profile.upstream_reasoning:
        reasoning = "off"
    elif thinking is None:
        reasoning = None
    elif thinking and (profile is None or profile.prewrites_think):
        reasoning = "open"
    else:
        reasoning = "tags"
    unknown = reasoning is None and config.reasoning_tags and "reasoning" not in config.sieve
    return Reading(reasoning, template, reasoning == "open" and profile is None, unknown)


def with_switch(payload: dict[str, Any], switch: bool | None) -> dict[str, Any]:
    """``payload`` with the thinking switch in its ``chat_template_kwargs`` (a key the
    client set itself is kept as it is)."""
    if switch is None:
        return payload
    kwargs = dict(payload.get("chat_template_kwargs") or {})
    for key in SWITCHES:
        kwargs.setdefault(key, switch)
    return {**payload, "chat_template_kwargs": kwargs}

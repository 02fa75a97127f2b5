"""Strategy: one request's state, shared by the tool parser and the reasoning parser vLLM
makes for it, so that both read the reply with one ``Sieve`` (SPEC §15: reasoning and calls in
one pass).

What it does: vLLM's serving layer makes one ``Parser`` per request (per choice), whose
constructor builds the reasoning parser and then, at once and on the same thread, the tool
parser. ``RequestState`` is what they share: the variant rows, the request's
``chat_template_kwargs`` and prompt marker (from the reasoning parser), whether a reasoning
parser of ours stands in front, and the reply's ``Sieve`` options. The hand-over is
``offer(state)`` in the reasoning parser's constructor and ``claim(tokenizer)`` in the tool
parser's: a thread-local slot, taken once, only by a tool parser built for the same tokenizer
object. ``think_ids(tokenizer)`` finds the tokenizer's thought markers — the added tokens the
grammar reads as ``THINK_OPEN`` / ``THINK_CLOSE`` (Python names no tag) — for the token-id
questions vLLM's engine asks (``is_reasoning_end``); ``prompt_marker`` reads a prompt's last
marker. ``sieve_options(state, request, ...)`` turns the request into ``Sieve`` options:
``tools`` (schemas coerce values, SPEC §9), ``tool_choice`` (``"none"``: blocks stay text; a
named tool: only it may be called, ``policy="allowlist"``), the reasoning setting, argument
streaming, vLLM's own call ids, and the operator's ``CALLSIEVE_VLLM_OPTIONS`` over them.
What it guarantees: a tool parser that finds no offer (no reasoning parser of ours, or one
made for another tokenizer) works alone; a stale offer is never claimed across tokenizers,
and each offer is claimed at most once.
What it costs: the marker probe runs two small sieves per added token, once per tokenizer
(cached by identity); per request, one small object.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import Reasoning, Sieve
from ._contract import operator_options
from ._variants import VARIANTS, PromptMarker, Variant, reasoning_setting

__all__ = [
    "RequestState",
    "ThinkIds",
    "claim",
    "offer",
    "prompt_marker",
    "sieve_options",
    "think_ids",
    "with_grammar_dirs",
]


@dataclass(frozen=True)
class ThinkIds:
    opens: frozenset[int] = frozenset()
    closes: frozenset[int] = frozenset()
    #: One spelling of each, as the tokenizer has it (vLLM asks for the strings too).
    open_text: str | None = None
    close_text: str | None = None


@dataclass
class RequestState:
    tokenizer: Any
    reasoning_variant: Variant = VARIANTS[0]
    tool_variant: Variant = VARIANTS[0]
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    marker: PromptMarker = None
    #: The rendered prompt's token ids (the reasoning parser is given them).
    prompt_ids: Sequence[int] | None = None
    #: A reasoning parser of ours made this state; a tool parser of ours claimed it.
    has_reasoning_side: bool = False
    has_tool_side: bool = False
    #: The whole-reply result the reasoning side computed for the tool side: (answer, out).
    whole: tuple[str, Any] | None = None

    @property
    def paired(self) -> bool:
        return self.has_reasoning_side and self.has_tool_side

    def reasoning(self) -> str:
        return reasoning_setting(self.reasoning_variant, self.chat_template_kwargs, self.marker)


_slot = threading.local()


def offer(state: RequestState) -> None:
    """The reasoning parser's half of the hand-over (see the module docstring)."""
    _slot.offer = state


def claim(tokenizer: Any) -> RequestState | None:
    """The tool parser's half: the state just offered for this tokenizer, at most once."""
    state: RequestState | None = getattr(_slot, "offer", None)
    _slot.offer = None
    if state is None or state.tokenizer is not tokenizer or state.has_tool_side:
        return None
    return state


# ---------------------------------------------------------------- the tokenizer's markers
_think_cache: dict[int, tuple[weakref.ref[Any] | None, ThinkIds]] = {}


def _reads_as_tag(token: str, reasoning: str, inside_after: bool) -> bool:
    sieve = Sieve(reasoning=reasoning)
    return sieve.feed(token) == [Reasoning("", raw=token)] and sieve.in_reasoning == inside_after


def _probe(tokens: Iterable[tuple[str, int]]) -> ThinkIds:
    opens: dict[int, str] = {}
    closes: dict[int, str] = {}
    for token, token_id in sorted(tokens, key=lambda item: item[1]):
        if not isinstance(token, str) or not 0 < len(token) <= 32:
            continue
        if _reads_as_tag(token, "tags", True):
            opens[token_id] = token
        elif _reads_as_tag(token, "open", False):
            closes[token_id] = token
    return ThinkIds(
        frozenset(opens),
        frozenset(closes),
        next(iter(opens.values()), None),
        next(iter(closes.values()), None),
    )


def think_ids(tokenizer: Any) -> ThinkIds:
    """The token ids of the tokenizer's thought markers (none when it has no added tokens the
    grammar reads as ``<think>`` / ``</think>``)."""
    key = id(tokenizer)
    cached = _think_cache.get(key)
    if cached is not None and (cached[0] is None or cached[0]() is tokenizer):
        return cached[1]
    try:
        added = dict(tokenizer.get_added_vocab())
    except (AttributeError, NotImplementedError, TypeError, ValueError):  # (no such method)
        added = {}
    ids = _probe(added.items())
    try:
        ref: weakref.ref[Any] | None = weakref.ref(tokenizer)
    except TypeError:
        ref = None
    _think_cache[key] = (ref, ids)
    return ids


def prompt_marker(ids: ThinkIds, token_ids: Sequence[int]) -> PromptMarker:
    """The last thought marker in ``token_ids``: ``"open"`` (the prompt ends inside a
    thought), ``"close"``, or ``None`` (no marker, or the tokenizer has none)."""
    if not ids.opens and not ids.closes:
        return None
    for token_id in reversed(token_ids):
        if token_id in ids.opens:
            return "open"
        if token_id in ids.closes:
            return "close"
    return None


# ---------------------------------------------------------------- the request's options
def _tool_name(tool: Any) -> str | None:
    fn = getattr(tool, "function", None)
    return getattr(fn if fn is not None else tool, "name", None)


def named_choice(tool_choice: Any) -> str | None:
    """The tool a ``tool_choice`` names (Chat Completions' or Responses' shape), else None."""
    if tool_choice is None or isinstance(tool_choice, str):
        return None
    return _tool_name(tool_choice)


def with_grammar_dirs(options: dict[str, Any], variant: Variant) -> dict[str, Any]:
    """``options`` with the variant's grammar folders after the operator's (a model folder's
    compiled ``response_template``)."""
    if variant.grammar_dirs:
        given = [str(d) for d in options.get("grammar_dirs") or ()]
        options["grammar_dirs"] = [*given, *variant.grammar_dirs]
    return options


def sieve_options(
    state: RequestState, request: Any, *, reasoning: str, calls: bool, id_factory: Callable[[], str]
) -> dict[str, Any]:
    """The ``Sieve`` options for one reply (see the module docstring)."""
    tools = list(getattr(request, "tools", None) or [])
    options: dict[str, Any] = {
        "dialects": state.tool_variant.dialects,
        "reasoning": reasoning,
        "id_factory": id_factory,
        "early_emit": "arguments" if calls else "block",
    }
    options.update(operator_options())
    with_grammar_dirs(options, state.tool_variant)
    if not calls:  # tool_choice "none": nothing is judged, blocks go out as text
        options["early_emit"] = "block"
        options.pop("policy", None)
    named = named_choice(getattr(request, "tool_choice", None)) if calls else None
    if named is not None:
        tools = [t for t in tools if _tool_name(t) == named]
        options.setdefault("policy", "allowlist")
    options["tools"] = tools or None
    if not tools:  # no tools to judge by (a request without tools has tool_choice "none")
        options.pop("policy", None)
    return options

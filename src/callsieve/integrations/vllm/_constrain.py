"""Strategy: vLLM enforces ``tool_choice`` with callsieve's own grammars (SPEC §18, issue 35).

What it does: the tool parser's ``adjust_request`` gives vLLM a constraint when a request
forces calls. That is ``tool_choice="required"``, a named tool, or
``parallel_tool_calls=false``. ``callsieve.constrain`` exports it for the request's tools,
choice and parallel setting. It is in the dialect the model writes (``writing_dialect``).
It goes into ``request.structured_outputs``, and vLLM's own backend compiles it.
xgrammar takes a structural tag; guidance (llguidance) takes a Lark grammar.
``CALLSIEVE_VLLM_CONSTRAIN`` names vLLM's backend: ``auto`` (the default), ``xgrammar``,
``guidance``, or ``off``. Under ``auto``, markup and native dialects get a structural tag.
The template families get their Lark grammar: xgrammar refuses it, and vLLM falls back to
guidance. A structural tag leaves the free text before the block to xgrammar's any-text,
less the openers and fences (``free_text="engine"``): the exact free text
(``"checked"``) costs a thousand times more CPU per token to mask (docs/vllm.md).
``supports_required_and_named`` stays False. In vLLM 0.33, True makes the serving layer
read a required or named reply as JSON, not through the tool parser.
``"auto"`` with parallel calls, and ``"none"``, are left free. A constraint there would
hold back plain answers too (no Markdown fences in the free text, say).
What it guarantees: the plugin never fails a request. When nothing can be exported, the
request stays as it came, and the parser reads the reply as before. That happens for a
dialect with no export, a schema keyword no export enforces, or a prompt showing no
dialect. The log says why, once per process and reason.
What it costs: per forced request, one export (cached per tool set). A row of several
dialects also decodes the prompt once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ... import CallsieveError
from ...constrain import lark_grammar, shape_name, structural_tag
from ...constrain._shapes import shape_of
from ._contract import constrain_setting, operator_options
from ._request import RequestState, named_choice, think_ids
from ._variants import Variant

__all__ = [
    "Constraint",
    "Context",
    "enforce",
    "forced_choice",
    "plan",
    "writing_dialect",
]

log = logging.getLogger("callsieve.vllm")
_said: set[tuple[str, ...]] = set()


def say_once(key: tuple[str, ...], message: str, *args: Any) -> None:
    """Log ``message`` at warning level, once per process for ``key``."""
    if key not in _said:
        _said.add(key)
        log.warning(message, *args)


@dataclass(frozen=True)
class Constraint:
    """What goes into vLLM's ``StructuredOutputsParams``: one field and its text."""

    dialect: str
    field: Literal["structural_tag", "grammar"]
    text: str


def forced_choice(tool_choice: Any, parallel: bool | None, named: str | None) -> Any:
    """The ``tool_choice`` to export, or None when the request forces nothing."""
    if named is not None:
        return {"name": named}
    if tool_choice == "required":
        return "required"
    if tool_choice in ("auto", None) and parallel is False:
        return "auto"  # (at most one call: only a grammar can count them)
    return None


def openers(dialects: Sequence[str], grammar_dirs: Sequence[str] = ()) -> dict[str, str]:
    """Each exportable dialect's block opener, as its spelling file writes it."""
    out = {}
    for d in dialects:
        try:
            opener = shape_of(d, tuple(grammar_dirs)).opener
        except CallsieveError:  # (no exported shape: the model is not held to it)
            continue
        if opener:
            out[d] = opener
    return out


def writing_dialect(
    variant: Variant,
    dialects: Sequence[str],
    prompt: Callable[[], str | None],
    grammar_dirs: Sequence[str] = (),
) -> str | None:
    """The dialect the model writes: a row's one dialect, else the one whose opener the
    rendered prompt shows last (the template's instructions, or past calls), else the row's
    ``writes``. ``prompt`` is asked only when the row reads several dialects."""
    if len(dialects) == 1:
        return dialects[0]
    text = prompt()
    if text:
        found = {d: text.rfind(o) for d, o in openers(dialects, grammar_dirs).items()}
        best = max(found, key=lambda d: found[d], default=None)
        if best is not None and found[best] >= 0:
            return best
    return variant.writes if variant.writes in dialects else None


@dataclass(frozen=True)
class Context:
    """What a request's constraint is made with, beside the request itself."""

    #: The dialects the reply is read with (the row's, or the operator's ``dialects``).
    dialects: tuple[str, ...]
    grammar_dirs: tuple[str, ...] = ()
    #: The rendered prompt's text (asked only for a row of several dialects).
    prompt: Callable[[], str | None] = lambda: None
    #: The tokenizer's special tokens' texts (asked only for a Lark grammar).
    specials: Callable[[], Collection[str]] = frozenset
    setting: str = "auto"


def _export(
    tools: Any, dialect: str, choice: Any, parallel: bool, ctx: Context
) -> Constraint | None:
    shape = shape_of(dialect, ctx.grammar_dirs)
    kind = shape_name(dialect, ctx.grammar_dirs)
    common: dict[str, Any] = {
        "parallel_tool_calls": parallel,
        "parse_dialects": ctx.dialects,
        "grammar_dirs": ctx.grammar_dirs,
    }
    if kind != "template" and ctx.setting in ("auto", "xgrammar"):
        exported = structural_tag(tools, dialect, choice, **common)  # (free text: the engine's)
        return Constraint(dialect, "structural_tag", json.dumps(exported, ensure_ascii=False))
    if ctx.setting == "xgrammar":
        say_once(
            ("xgrammar", dialect),
            "callsieve: dialect %r has no structural tag (its shape is %s), and "
            "CALLSIEVE_VLLM_CONSTRAIN=xgrammar takes nothing else: tool_choice is not "
            "enforced for it (set guidance or auto to enforce it with its Lark grammar)",
            dialect,
            kind,
        )
        return None
    specials = ctx.specials()
    marker = next((m for m in (shape.opener, shape.closer) if m and m in specials), None)
    if marker is not None:  # llguidance never matches a grammar's text to a special token
        say_once(
            ("special", dialect),
            "callsieve: dialect %r opens or closes its block with %r, a special token of "
            "this tokenizer, which guidance's grammars cannot produce: tool_choice is not "
            "enforced for it under guidance (xgrammar's structural tag can: set auto)",
            dialect,
            marker,
        )
        return None
    return Constraint(dialect, "grammar", lark_grammar(tools, dialect, choice, **common))


def _asks_a_format(request: Any) -> bool:
    """Does the request ask for its own output format (``response_format`` and the like)?"""
    extract = getattr(request, "extract_structured_outputs", None)
    return callable(extract) and extract() is not None


def plan(variant: Variant, request: Any, named: str | None, ctx: Context) -> Constraint | None:
    """The constraint for ``request``, or None (nothing forced, or not exportable: logged
    once per reason)."""
    parallel = getattr(request, "parallel_tool_calls", None)
    choice = forced_choice(getattr(request, "tool_choice", None), parallel, named)
    if ctx.setting == "off" or choice is None or not getattr(request, "tools", None):
        return None
    if choice == "auto" and _asks_a_format(request):
        say_once(
            ("format",),
            "callsieve: parallel_tool_calls=false is not enforced beside the request's own "
            "response format under tool_choice=auto (the request's format applies)",
        )
        return None
    dialect = writing_dialect(variant, ctx.dialects, ctx.prompt, ctx.grammar_dirs)
    if dialect is None:
        say_once(
            ("no dialect", variant.name),
            "callsieve: %s reads several dialects and the prompt shows none of their "
            "openers: tool_choice is not enforced for such requests",
            variant.name,
        )
        return None
    try:
        return _export(request.tools, dialect, choice, parallel is not False, ctx)
    except CallsieveError as exc:
        kind = "tools" if "tools[" in str(exc) else "dialect"
        say_once(
            (kind, dialect),
            "callsieve: tool_choice is not enforced for dialect %r (%s); the reply is "
            "read as before. (Said once per process.)",
            dialect,
            exc,
        )
        return None


def apply(request: Any, constraint: Constraint) -> Any:
    """Put ``constraint`` into the request, as vLLM's own tool-call constraint is put."""
    from vllm.sampling_params import StructuredOutputsParams

    request.structured_outputs = StructuredOutputsParams(**{constraint.field: constraint.text})
    if hasattr(request, "response_format"):
        request.response_format = None
    elif hasattr(request, "text"):  # (the Responses API's format)
        request.text = None
    return request


def special_texts(tokenizer: Any) -> frozenset[str]:
    """The texts of the tokenizer's special added tokens (Hugging Face's tokenizers)."""
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    return frozenset(
        getattr(t, "content", "") for t in added.values() if getattr(t, "special", False)
    )


def _prompt_text(state: RequestState) -> str | None:
    """The rendered prompt, decoded (None when vLLM gave none to our reasoning parser)."""
    if state.prompt_ids is None:
        return None
    try:
        return str(state.tokenizer.decode(list(state.prompt_ids)))
    except (AttributeError, TypeError, ValueError):
        return None


def enforce(state: RequestState, request: Any, *, starts_in_thought: bool) -> Any:
    """The tool parser's ``adjust_request``: the request with the constraint, when one
    applies (see the module docstring)."""
    if getattr(request, "tool_choice", None) == "none" or not getattr(request, "tools", None):
        return request
    # vLLM constrains after the thought only where its reasoning parser can see the thought
    # end: a reply that starts inside one, with no such end to wait for, is left free.
    waits = state.paired and getattr(request, "include_reasoning", True) is not False
    if starts_in_thought and not (waits and think_ids(state.tokenizer).closes):
        say_once(
            ("thought",),
            "callsieve: tool_choice is not enforced where the reply starts inside a "
            "thought that vLLM would constrain too (no reasoning parser of ours, "
            "include_reasoning=false, or a tokenizer with no thought-end token)",
        )
        return request
    options = operator_options()
    ctx = Context(
        tuple(options.get("dialects") or state.tool_variant.dialects),
        (*(str(d) for d in options.get("grammar_dirs") or ()), *state.tool_variant.grammar_dirs),
        prompt=lambda: _prompt_text(state),
        specials=lambda: special_texts(state.tokenizer),
        setting=constrain_setting(),
    )
    found = plan(state.tool_variant, request, named_choice(request.tool_choice), ctx)
    return request if found is None else apply(request, found)

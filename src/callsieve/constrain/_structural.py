"""Strategy: the constraint as a structural tag — the ``response_format`` object vLLM and
SGLang accept (``{"type": "structural_tag", "format": …}``, xgrammar's format objects) —
built from the same layouts as the grammars (``_shapes``).

What it does: each call is a ``tag`` (its leading literal the ``begin``, its trailing
literal the ``end``), the block a ``tag`` from the dialect's opener to its closer around
them (``tags_with_separator``, the shape's separator; ``stop_after_first`` without parallel
calls). The layout between literals maps one to one: literals to ``const_string``, sequences,
choices and repeats to ``sequence``, ``or``, ``optional``/``star``/``plus``/``repeat``, free
names to a ``regex``, JSON values and raw string bodies to a ``grammar``: our GBNF (which
xgrammar's EBNF reads), not a ``json_schema`` — xgrammar's JSON Schema converter reads
``allOf`` of several schemas as any value and drops ``minLength``/``maxLength`` beside a
``pattern``, with a warning only, so the schema, made safe for its context, would come out
looser than it says; our converter refuses what it cannot enforce.
The text before the block: with ``free_text="engine"``, ``triggered_tags`` with the opener
as the trigger (``"auto"``; at most one block, then the end), or any text up to the opener
(``"required"``, a named tool: a ``tag`` whose ``end`` is the opener); the other canonical
openers of the parse dialects (their spelling files) and the Markdown fences are excluded
from it. With ``free_text="checked"``, the free text is ``_text``'s grammar.
What it guarantees: the block is constrained as in ``lark_grammar``; with ``"engine"`` the
free text is only what the engine's any-text allows (docs/constrained-decoding.md says what
that cannot rule out). What it costs: one walk over the layouts; cached like the grammars.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .._base.errors import ConfigurationError
from .._grammar.compiled import load_grammar
from .._grammar.names import SPELLINGS
from .._grammar.spelling import spelling
from ._bodies import Target
from ._export import Request, calls
from ._ir import Alt, Grammar, Lit, Rep, Seq, gbnf
from ._product import STRUCTURAL_STATES
from ._shapes import JsonSlot, NameSlot, RawSlot, Template, lower, shape_of
from ._strings import regex_text
from ._text import free_text as text_rules

__all__ = ["FREE_TEXT", "structural", "structural_text"]

FREE_TEXT = ("engine", "checked")
#: Markdown fence runs: a fence in the free text would hide the block (SPEC §6).
_FENCES = ("```", "~~~")


def structural(req: Request, free_text: str) -> dict[str, Any]:
    """The ``response_format`` object for ``req`` (a fresh object: the cache holds JSON)."""
    return json.loads(structural_text(req, free_text))  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=256)
def structural_text(req: Request, free_text: str) -> str:
    """The ``response_format`` object for ``req`` as JSON, cached."""
    return json.dumps(_structural(req, free_text), ensure_ascii=False)


def _structural(req: Request, free_text: str) -> dict[str, Any]:
    if free_text not in FREE_TEXT:
        raise ConfigurationError(
            f"free_text must be one of {FREE_TEXT}, not {free_text!r}", expected=FREE_TEXT
        )
    shape = shape_of(req.dialect, req.dirs)
    if isinstance(shape, Template):  # (a block per call, or none closed: not built yet)
        raise ConfigurationError(
            f"dialect {req.dialect!r}: structural tags are exported for the markup and "
            "native shapes only; use lark_grammar or gbnf",
            expected=("a markup or native dialect",),
        )
    excludes = _excludes(req, shape.opener)
    text: dict[str, Any] = (
        {"type": "grammar", "grammar": _text_grammar(req)}
        if free_text == "checked"
        else {"type": "any_text", "excludes": excludes}
    )
    if req.choice == "none":
        return _wrap(text)
    tags = [_call_tag(node) for _, node in calls(req)]
    inner = {
        "type": "tags_with_separator",
        "tags": tags,
        "separator": shape.separator,
        "at_least_one": True,
        "stop_after_first": not req.parallel,
    }
    opener, closer = shape.opener, shape.closer
    content = _sequence([_const(shape.lead), inner, _const(shape.trail)])
    block = {"type": "tag", "begin": opener, "content": content, "end": closer}
    if free_text == "checked":
        both = {"type": "sequence", "elements": [text, block]}
        return _wrap(both if req.choice != "auto" else {"type": "or", "elements": [both, text]})
    if req.choice == "auto":
        return _wrap(
            {
                "type": "triggered_tags",
                "triggers": [opener],
                "tags": [block],
                "at_least_one": False,
                "stop_after_first": True,
                "excludes": excludes,
            }
        )
    before = {"type": "tag", "begin": "", "content": text, "end": opener}
    return _wrap(_sequence([before, content, _const(closer)]))


def _wrap(fmt: dict[str, Any]) -> dict[str, Any]:
    return {"type": "structural_tag", "format": fmt}


def _excludes(req: Request, opener: str) -> list[str]:
    out = []
    for d in req.parse_dialects:
        try:
            other = spelling(d, req.dirs).get(SPELLINGS.CALLS_OPEN)
        except ConfigurationError:  # (a dialect with no spelling file: nothing to name)
            continue
        if other and other != opener and other not in out:
            out.append(other)
    return out + list(_FENCES)


def _text_grammar(req: Request) -> str:
    g = Grammar()
    start = g.reserve("root")
    g.rules[start] = text_rules(g, load_grammar(req.parse_dialects, req.dirs), "gbnf")
    return gbnf(g)


def _call_tag(node: Any) -> dict[str, Any]:
    items = list(node.items) if isinstance(node, Seq) else [node]
    first, last = items[0], items[-1]
    begin = first.text if isinstance(first, Lit) else ""
    items = items[1:] if isinstance(first, Lit) else items
    end = last.text if isinstance(last, Lit) and items else ""
    items = items[:-1] if end else items
    return {
        "type": "tag",
        "begin": begin,
        "content": _sequence([_fmt(i) for i in items]),
        "end": end,
    }


def _const(text: str) -> dict[str, Any] | None:
    return {"type": "const_string", "value": text} if text else None


def _sequence(parts: list[dict[str, Any] | None]) -> dict[str, Any]:
    kept = [p for p in parts if p is not None]
    if not kept:
        return {"type": "const_string", "value": ""}
    return kept[0] if len(kept) == 1 else {"type": "sequence", "elements": kept}


def _fmt(node: Any) -> dict[str, Any] | None:
    if isinstance(node, Lit):
        return _const(node.text)
    if isinstance(node, Seq):
        return _sequence([_fmt(i) for i in node.items])
    if isinstance(node, Alt):
        return {"type": "or", "elements": [_fmt(i) or _const_empty() for i in node.items]}
    if isinstance(node, Rep):
        inner = _fmt(node.item) or _const_empty()
        kind = {(0, 1): "optional", (0, None): "star", (1, None): "plus"}.get((node.lo, node.hi))
        if kind is not None:
            return {"type": kind, "content": inner}
        return {
            "type": "repeat",
            "min": node.lo,
            "max": -1 if node.hi is None else node.hi,
            "content": inner,
        }
    if isinstance(node, (JsonSlot, RawSlot)):  # (our GBNF, see the module docstring)
        g = Grammar()
        start = g.reserve("root")
        g.rules[start] = lower(node, Target("gbnf", g, STRUCTURAL_STATES))
        return {"type": "grammar", "grammar": gbnf(g)}
    if isinstance(node, NameSlot):
        return {"type": "regex", "pattern": regex_text(Rep(node.chars, 1, 64))}
    raise TypeError(f"no structural tag for {type(node).__name__}")


def _const_empty() -> dict[str, Any]:
    return {"type": "const_string", "value": ""}

"""Strategy: one export request — tools, dialect, ``tool_choice`` and options — read and
checked once, then the grammar built and printed, cached per request.

What it does: ``Request.make`` reads the tools (``callsieve.prompt``'s reader: OpenAI,
Anthropic or flat definitions), ``tool_choice`` (``"auto"``, ``"required"``, ``"none"``,
OpenAI's ``{"type": "function", "function": {"name": …}}``, Anthropic's ``{"type": "auto" |
"any" | "none"}`` and ``{"type": "tool", "name": …}``, or ``{"name": …}``), checks every
schema for the target (``_schema.check``) and every name for the dialect, and makes the
cache key: the tools as canonical JSON and the options. ``build(request)`` makes the reply
grammar — the free text (``_text``) then, per the choice, the block (``_shapes``) — or, for
``arguments_grammar``, one call's arguments alone; ``printed`` caches the printed text.
What it guarantees: equal requests (equal tool JSON, equal options) share one export; a
request that cannot be exported exactly raises ``ConfigurationError`` (or ``FormatError``
for a malformed tool definition) before anything is built.
What it costs: reading the request is linear in the tools (one ``json.dumps`` for the key);
a cache hit is a dictionary lookup; a miss builds the grammar (linear in the schemas) and
loads the parse dialects' grammar once per process.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._base.errors import ConfigurationError
from .._grammar.compiled import load_grammar
from .._grammar.files import DEFAULT_DIALECTS
from .._prompt.inputs import read_tools
from ._bodies import Target
from ._ir import Grammar, Lit, alt, gbnf, lark, seq, star
from ._schema import check
from ._shapes import Tool, lower, shape_of
from ._text import free_text

__all__ = ["CHOICES", "Request", "build", "printed"]

CHOICES = ("auto", "required", "none")
_ANTHROPIC = {"auto": "auto", "any": "required", "none": "none"}
#: Whose JSON Schema subset each format enforces (a structural tag's JSON is our GBNF).
_SCHEMA_TARGET = {"lark": "lark", "gbnf": "gbnf", "structural-tag": "gbnf"}


@dataclass(frozen=True)
class Request:
    """A checked export request (hashable: the cache key)."""

    target: str
    dialect: str
    choice: str  # "auto" | "required" | "none" | "named"
    name: str  # the tool a named choice names
    parallel: bool
    free_names: bool
    parse_dialects: tuple[str, ...]
    dirs: tuple[str, ...]
    tools_json: str

    @staticmethod
    def make(
        tools: Any,
        target: str,
        dialect: str,
        tool_choice: Any,
        parallel: bool,
        free_names: bool,
        parse_dialects: Sequence[str] | None,
        grammar_dirs: Sequence[str],
    ) -> Request:
        dirs = tuple(str(d) for d in grammar_dirs)
        parse = _parse_dialects(dialect, parse_dialects)
        defs = read_tools(tools if tools is not None else [])
        seen: set[str] = set()
        for i, (name, _, schema) in enumerate(defs):
            if name in seen:
                raise ConfigurationError(
                    f"tools[{i}]: a second tool named {name!r}",
                    expected=("tool names that differ",),
                )
            seen.add(name)
            check(schema, _SCHEMA_TARGET[target], f"tools[{i}].parameters")
        choice, named = _read_choice(tool_choice, seen, free_names)
        if not defs and not free_names and choice in ("required", "named"):
            raise ConfigurationError(
                f"tool_choice {tool_choice!r} needs tools", expected=("tools", "free_names=True")
            )
        shape = shape_of(dialect, dirs)
        if not free_names:
            for i, (name, _, schema) in enumerate(defs):
                shape.check_name(Tool(name, schema, f"tools[{i}]"))
        # (not sorted: the order of properties is the order the grammar writes them in)
        key = json.dumps([[n, s] for n, _, s in defs], ensure_ascii=False)
        return Request(
            target, dialect, choice, named, bool(parallel), bool(free_names), parse, dirs, key
        )

    def tools(self) -> list[Tool]:
        found = [
            Tool(n, s, f"tools[{i}].parameters")
            for i, (n, s) in enumerate(json.loads(self.tools_json))
        ]
        return [t for t in found if self.choice != "named" or t.name == self.name]


def _parse_dialects(dialect: str, given: Sequence[str] | None) -> tuple[str, ...]:
    if not isinstance(dialect, str):
        raise ConfigurationError(
            f"dialect must be a dialect name, not {dialect!r}", expected=DEFAULT_DIALECTS
        )
    if given is None:
        return tuple(dict.fromkeys((*DEFAULT_DIALECTS, dialect)))
    if isinstance(given, str) or not all(isinstance(d, str) for d in given):
        raise ConfigurationError(
            "parse_dialects must be a sequence of dialect names", expected=DEFAULT_DIALECTS
        )
    if dialect not in given:
        raise ConfigurationError(
            f"parse_dialects {tuple(given)!r} leave out {dialect!r}: the block would never be read",
            expected=(dialect,),
        )
    return tuple(given)


def _read_choice(choice: Any, names: set[str], free: bool) -> tuple[str, str]:
    if isinstance(choice, str) and choice in CHOICES:
        return choice, ""
    if isinstance(choice, Mapping):
        kind = choice.get("type")
        if kind in _ANTHROPIC and "name" not in choice:
            return _ANTHROPIC[kind], ""
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else choice.get("name")
        if isinstance(name, str) and name:
            if name not in names and not free:
                raise ConfigurationError(
                    f"tool_choice names {name!r}, which is not among the tools",
                    expected=tuple(sorted(names)),
                )
            return "named", name
    raise ConfigurationError(
        f"tool_choice must be one of {CHOICES} or name a tool, not {choice!r}",
        expected=(*CHOICES, ('{"type": "function", "function": {"name": …}}')),
    )


def calls(req: Request) -> list[tuple[str, Any]]:
    """Each call the request allows, as (tool name or "", its layout, holes unfilled)."""
    shape = shape_of(req.dialect, req.dirs)
    if req.choice == "named":  # that tool (with any arguments, if free names named it)
        tool = (req.tools() or [Tool(req.name, {"type": "object"}, "tool_choice")])[0]
        shape.check_name(tool)
        return [(tool.name, shape.call(tool))]
    if req.free_names:
        return [("", shape.free_call())]
    return [(t.name, shape.call(t)) for t in req.tools()]


def _rule_name(name: str) -> str:
    """A rule name for a tool's call (``call_any`` for free names)."""
    return "call_" + (
        "".join(c if c.isascii() and c.isalnum() else "_" for c in name).lower() or "any"
    )


def build(req: Request) -> Grammar:
    """The grammar of a whole reply for ``req`` (targets ``"lark"`` and ``"gbnf"``)."""
    g = Grammar()
    start = g.reserve("start")
    target = Target(req.target, g)
    text = free_text(g, load_grammar(req.parse_dialects, req.dirs), req.target)
    if req.choice == "none":
        g.rules[start] = text
        return g
    shape = shape_of(req.dialect, req.dirs)
    sep, trail = shape.separator, shape.trail
    # A call that ends with the separator, where the separator also ends the last call
    # (markup: a line break), so that what follows a call is a call or the closer: two
    # tokens that part at once. llguidance's lexer never backs up: "\n" then "<invoke"
    # against "\n</tool_calls>" would fail.
    fold = sep == trail
    each = [
        g.define(_rule_name(name), lower(seq(node, Lit(sep)) if fold else node, target))
        for name, node in calls(req)
    ]
    call = g.define("call", alt(*each)) if len(each) > 1 else each[0]
    more = call if fold else seq(Lit(sep), call)
    layout = seq(
        Lit(shape.opener + shape.lead),
        call,
        star(more) if req.parallel else Lit(""),
        Lit(shape.closer if fold else trail + shape.closer),
    )
    block = g.define("block", lower(layout, target))
    g.rules[start] = (
        seq(text, block) if req.choice in ("required", "named") else alt(seq(text, block), text)
    )
    return g


def arguments(req: Request) -> Grammar:
    """The grammar of one call's arguments (the named tool's): what stands between its
    header and its tail."""
    g = Grammar()
    start = g.reserve("start")
    tool = req.tools()[0]
    g.rules[start] = lower(shape_of(req.dialect, req.dirs).arguments(tool), Target(req.target, g))
    return g


@functools.lru_cache(maxsize=256)
def printed(req: Request, only_arguments: bool = False) -> str:
    """The grammar text for ``req`` (or its named tool's arguments alone), cached."""
    g = arguments(req) if only_arguments else build(req)
    return lark(g) if req.target == "lark" else gbnf(g)

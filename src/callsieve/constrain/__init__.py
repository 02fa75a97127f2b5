"""Strategy: the grammar that parses also constrains (SPEC §18) — export, for a set of tools,
the constraint a decoding engine applies so that the model can only write a reply that
``parse()`` reads back as calls to those tools with arguments their schemas allow.

What it does: ``lark_grammar`` (llguidance's Lark syntax, arguments as ``%json``), ``gbnf``
(llama.cpp; our own JSON Schema converter) and ``structural_tag`` (the ``response_format``
object vLLM and SGLang take) each describe a whole reply: free text that the parser will
release as text — no opener, no call begun, code closed (``_text``) — then, per
``tool_choice``, one tool block in the dialect's canonical spelling (``_shapes``: laid out
as ``callsieve.prompt.format_calls`` writes it), naming offered tools, each argument under
its tool's JSON Schema, and no value able to end the block early (a CDATA section's end,
the closing fence, a tag lead in a plain body: ``_bodies``). ``arguments_grammar`` is one
call's arguments alone, for a framework that writes the header itself (SPEC §11; the loop
is in docs/constrained-decoding.md). A dialect is exported from its grammar data — its
spelling file and the parser's terminals — so a family whose spelling file fits a shape
(``Markup``, ``Native``, or ``Template``: a call template whose ``ARGS`` is ``"envelope"``,
``"json"`` or ``"raw"``) is exported with no code of its own.
What it guarantees: what the constraint accepts, ``parse()`` reads back as the calls it
spells (tested with llguidance's matcher and the parser, as properties, for every default
dialect); what cannot be constrained exactly is a ``ConfigurationError`` naming the tool and
the keyword, never a looser grammar. The core never imports this package; it needs nothing
beyond the core.
What it costs: an export is cached per request (tools as JSON, options): a repeat is a
dictionary lookup; a new tool set of 50 tools takes milliseconds
(``benchmarks/bench_constrain.py``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._base.errors import ConfigurationError
from ._export import CHOICES, Request, printed
from ._shapes import MARKUP_NAMES, NATIVE_NAMES, shape_of
from ._structural import structural

__all__ = [
    "CHOICES",
    "FORMATS",
    "MARKUP_NAMES",
    "NATIVE_NAMES",
    "arguments_grammar",
    "export",
    "gbnf",
    "lark_grammar",
    "shape_name",
    "structural_tag",
]

#: The export formats, as the CLI names them.
FORMATS = ("lark", "gbnf", "structural-tag")


def lark_grammar(
    tools: Any,
    dialect: str = "dsml",
    tool_choice: Any = "auto",
    *,
    parallel_tool_calls: bool = True,
    free_names: bool = False,
    parse_dialects: Sequence[str] | None = None,
    grammar_dirs: Sequence[str] = (),
) -> str:
    """The reply grammar in llguidance's Lark syntax (see the module docstring).

    ``tool_choice``: ``"auto"`` (free text, then optionally one block), ``"required"`` (a
    block must follow), ``"none"`` (text only), or a named tool (OpenAI's or Anthropic's
    shape, or ``{"name": …}``); ``parallel_tool_calls``: several calls in the block;
    ``free_names``: any name the dialect spells, arguments any JSON object (the SPEC §11
    protocol's choice: the framework checks the name); ``parse_dialects``: the dialects the
    reply will be parsed with (default ``DEFAULT_DIALECTS``), whose openers the free text
    must not hold.

    >>> print(lark_grammar([{"name": "now", "parameters": {"type": "object"}}], "xml",
    ...                    "required").splitlines()[0])
    start: text block
    """
    return printed(
        Request.make(
            tools,
            "lark",
            dialect,
            tool_choice,
            parallel_tool_calls,
            free_names,
            parse_dialects,
            grammar_dirs,
        )
    )


def gbnf(
    tools: Any,
    dialect: str = "dsml",
    tool_choice: Any = "auto",
    *,
    parallel_tool_calls: bool = True,
    free_names: bool = False,
    parse_dialects: Sequence[str] | None = None,
    grammar_dirs: Sequence[str] = (),
) -> str:
    """The same constraint in GBNF, for llama.cpp (JSON Schema keywords: the subset
    llama.cpp's converter supports; anything else is a ``ConfigurationError``)."""
    return printed(
        Request.make(
            tools,
            "gbnf",
            dialect,
            tool_choice,
            parallel_tool_calls,
            free_names,
            parse_dialects,
            grammar_dirs,
        )
    )


def structural_tag(
    tools: Any,
    dialect: str = "dsml",
    tool_choice: Any = "auto",
    *,
    parallel_tool_calls: bool = True,
    free_names: bool = False,
    parse_dialects: Sequence[str] | None = None,
    grammar_dirs: Sequence[str] = (),
    free_text: str = "engine",
) -> dict[str, Any]:
    """The ``response_format`` object vLLM and SGLang accept: ``{"type": "structural_tag",
    "format": …}`` (xgrammar's format objects). The dialect's opener is the trigger; the
    block is laid out as in ``lark_grammar``. ``free_text="engine"`` leaves the text before
    the block to the engine (any text that does not hold the trigger; see
    docs/constrained-decoding.md for what that cannot rule out); ``"checked"`` constrains it
    as ``lark_grammar`` does (a grammar in place of the trigger)."""
    req = Request.make(
        tools,
        "structural-tag",
        dialect,
        tool_choice,
        parallel_tool_calls,
        free_names,
        parse_dialects,
        grammar_dirs,
    )
    return structural(req, free_text)


def arguments_grammar(
    tools: Any,
    name: str,
    dialect: str = "deepseek_native",
    format: str = "lark",
    *,
    grammar_dirs: Sequence[str] = (),
) -> str:
    """One call's arguments to tool ``name``, as the dialect writes them between the call's
    header and its tail (``deepseek_native``: the JSON object between the fences), in
    ``format`` ``"lark"`` or ``"gbnf"``: for the SPEC §11 loop, where the framework writes
    the header and the tail itself."""
    if format not in ("lark", "gbnf"):
        raise ConfigurationError(
            f"format must be 'lark' or 'gbnf', not {format!r}", expected=("lark", "gbnf")
        )
    req = Request.make(tools, format, dialect, {"name": name}, True, False, None, grammar_dirs)
    return printed(req, only_arguments=True)


def export(
    tools: Any, format: str, dialect: str = "dsml", tool_choice: Any = "auto", **options: Any
) -> str:
    """The constraint as text in one of ``FORMATS`` (a structural tag as JSON): what the
    command line prints."""
    if format == "structural-tag":
        return json.dumps(
            structural_tag(tools, dialect, tool_choice, **options), ensure_ascii=False, indent=2
        )
    if format == "gbnf":
        return gbnf(tools, dialect, tool_choice, **options)
    if format == "lark":
        return lark_grammar(tools, dialect, tool_choice, **options)
    raise ConfigurationError(f"format must be one of {FORMATS}, not {format!r}", expected=FORMATS)


def shape_name(dialect: str, grammar_dirs: Sequence[str] = ()) -> str:
    """``"markup"``, ``"native"`` or ``"template"``: the shape ``dialect`` is exported in."""
    return type(shape_of(dialect, tuple(str(d) for d in grammar_dirs))).__name__.lower()

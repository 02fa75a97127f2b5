"""Strategy: the ``callsieve grammar`` command — the constraint ``callsieve.constrain``
exports for a tools file, printed for a decoding engine (SPEC §18).

What it does: ``add_constrain(sub)`` adds the subcommand to the CLI's argparse:
``--dialect D`` (default ``dsml``), ``--tools FILE`` (a JSON list of tool definitions),
``--format lark|gbnf|structural-tag`` (default ``lark``), ``--tool-choice
auto|required|none|NAME``, ``--no-parallel-calls``, ``--free-names``, ``--parse-dialects
A,B`` and, for structural tags, ``--free-text engine|checked``. ``run_constrain(args, out,
load_tools)`` exports and prints: a grammar as its text, a structural tag as indented JSON.
What it guarantees: what cannot be exported exactly (an unsupported schema keyword, a name
the dialect cannot spell, an unknown tool in ``--tool-choice``) is a ``CallsieveError``: the
CLI prints one line and exits 2. What it costs: ``callsieve.constrain`` is imported only
when the command runs.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["FORMATS", "add_constrain", "run_constrain"]

#: The ``--format`` values (``callsieve.constrain.FORMATS``, named here so ``--help`` needs
#: no import of the package).
FORMATS = ("lark", "gbnf", "structural-tag")
_CHOICES = ("auto", "required", "none")


def add_constrain(sub: Any) -> None:
    cmd = sub.add_parser(
        "grammar",
        help="print the constraint a decoding engine applies for a tools file",
        description="Export the grammar of a reply that calls the given tools in a dialect "
        "(llguidance's Lark, llama.cpp's GBNF, or the structural_tag response_format vLLM "
        "and SGLang take): free text, then a tool block whose arguments follow each tool's "
        "JSON Schema (docs/constrained-decoding.md).",
    )
    cmd.add_argument(
        "--tools",
        metavar="FILE",
        required=True,
        help="JSON list of tool definitions (OpenAI or Anthropic style)",
    )
    cmd.add_argument("--dialect", default="dsml", help="the dialect of the block (default dsml)")
    cmd.add_argument(
        "--format",
        choices=FORMATS,
        default="lark",
        dest="grammar_format",
        help="lark (llguidance), gbnf (llama.cpp) or structural-tag (vLLM, SGLang); default lark",
    )
    cmd.add_argument(
        "--tool-choice",
        default="auto",
        metavar="CHOICE",
        help="auto (text, then a block or not), required, none, or a tool's name (default auto)",
    )
    cmd.add_argument(
        "--no-parallel-calls", dest="parallel", action="store_false", help="one call per block"
    )
    cmd.add_argument(
        "--free-names",
        action="store_true",
        help="any name the dialect spells, arguments any JSON object",
    )
    cmd.add_argument(
        "--parse-dialects",
        metavar="A,B",
        help="the dialects the reply is parsed with (default: the defaults)",
    )
    cmd.add_argument(
        "--free-text",
        choices=("engine", "checked"),
        default="engine",
        help="structural-tag: the text before the block is the engine's any "
        "text, or constrained as the grammars do (default engine)",
    )


def run_constrain(args: argparse.Namespace, out: TextIO, load_tools: Callable[[str], Any]) -> int:
    constrain = importlib.import_module("callsieve.constrain")
    choice: Any = args.tool_choice
    if choice not in _CHOICES:
        choice = {"name": choice}
    options: dict[str, Any] = {"parallel_tool_calls": args.parallel, "free_names": args.free_names}
    if args.parse_dialects:
        options["parse_dialects"] = tuple(d.strip() for d in args.parse_dialects.split(","))
    if args.grammar_format == "structural-tag":
        options["free_text"] = args.free_text
    text = constrain.export(
        load_tools(args.tools), args.grammar_format, args.dialect, choice, **options
    )
    out.write(text if text.endswith("\n") else text + "\n")
    out.flush()
    return 0

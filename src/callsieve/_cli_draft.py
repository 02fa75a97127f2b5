"""Strategy: ``callsieve draft-dialect TEMPLATE|tokenizer_config.json [--out DIR]`` — a
dialect drafted from a model's chat template (docs/model-metadata.md).

What it does: reads the file, drafts the dialect (``callsieve.draft``: differential
renderings in jinja2's sandbox), writes ``NAME.lark``, ``spelling/NAME.lark`` and
``NAME.report.md`` into DIR (default: ``./grammars``), and prints the report.
What it guarantees: the files written load as ``Sieve(grammar_dirs=[DIR])`` would; a
template with no tool-call structure is an error saying why (exit code 2).
What it costs: about ten renders and a few grammar loads. jinja2 (the ``draft`` extra) is
imported only by this command.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any, TextIO

from ._base.errors import CallsieveError

__all__ = ["add_draft", "run_draft"]


def add_draft(sub: Any) -> None:
    draft = sub.add_parser(
        "draft-dialect",
        help="draft a dialect from a chat template (needs callsieve[draft])",
        description="Render a chat template (a .jinja file or a tokenizer_config.json) "
        "with and without tool calls, and write a draft grammar, spelling and report.",
    )
    draft.add_argument("file", metavar="FILE", help="a chat template or tokenizer_config.json")
    draft.add_argument("--out", metavar="DIR", default="grammars", help="where to write")
    draft.add_argument("--name", metavar="NAME", help="the dialect's name (default: draft_FILE)")


def run_draft(args: argparse.Namespace, out: TextIO) -> int:
    try:
        module = importlib.import_module("callsieve.draft")
    except ImportError:
        raise CallsieveError("draft-dialect needs jinja2: pip install 'callsieve[draft]'") from None
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CallsieveError(f"{path}: {exc.strerror or exc}") from None
    name = args.name or module.dialect_name(str(path))
    d = module.draft(text, name, path.name)
    paths = module.write(d, args.out)
    out.write(d.report())
    out.writelines(f"wrote {p}\n" for p in paths)
    out.flush()
    return 0

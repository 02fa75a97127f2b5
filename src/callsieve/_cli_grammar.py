"""Strategy: the command line's grammar commands — ``callsieve dialects`` (what there is),
``callsieve check-grammar FILE`` (what the loader would say about a grammar file of one's
own), ``callsieve export-response-template`` (a dialect's shape as a transformers
``response_template``, docs/model-metadata.md), and the ``--dialects`` / ``--grammar-dir``
options of ``parse`` and ``stream``.

What it does: ``dialects`` prints one line per dialect — its name, ``default`` for the
default dialects, ``write`` for those the prompt side can write, and the one-line summary
its file starts with (``callsieve.dialects()``); ``--grammar-dir`` adds a folder of one's
own. ``check-grammar FILE`` loads a dialect file (its folder as a grammar folder, the
dialect named after the file; or a ``common.lark``, or a file in a ``spelling/`` folder, with
the dialect it spells) exactly as ``Sieve`` would, and prints either ``FILE: ok`` and what
was found (the block's entries, the lead characters prose is searched for, whether a
spelling for writing is there) or the loader's refusal, which names the file and line. It
also warns of a rule alias that is close to a contract name but is none (``-> call_nmae``),
which the loader accepts and the contract then ignores. A dialect file is loaded alone, then
beside the default dialects and beside ``"all"`` (dialect isolation, a conflict between
dialects), and the loader's warnings (``GrammarWarning``) are printed.
What it guarantees: the same checks ``Sieve`` makes, nothing else refused; exit code 0 for a
file the loader takes, 1 for one it refuses (one line per problem, ``FILE:LINE: …``).
What it costs: one grammar load (cold: ~100 ms).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import warnings
from pathlib import Path
from typing import Any, TextIO

from ._base.errors import CallsieveError, GrammarError, GrammarWarning
from ._config.response_export import response_template_for
from ._grammar.compiled import DEFAULT_DIALECTS, load_grammar
from ._grammar.files import ALL, all_dialects, dialect_summaries
from ._grammar.names import BODY_PREFIX
from ._grammar.namespace import CONTRACT
from ._grammar.rule_sets import REPAIR_PREFIX
from ._grammar.spelling import SPELLING_DIR, spelling, spelling_file

__all__ = ["add_dialect_options", "add_grammar_commands", "dialect_options", "run_grammar"]

EXIT_OK = 0
EXIT_REFUSED = 1
_ALIAS = re.compile(r"->\s*([a-z_][a-z0-9_]*)")
_NODES = sorted(n for n in CONTRACT if n.islower())


def add_dialect_options(parser: argparse.ArgumentParser) -> None:
    """``--dialects`` and ``--grammar-dir``, for the commands that read model output."""
    parser.add_argument(
        "--dialects",
        metavar="D,D|all",
        help="the dialects to enable, comma-separated, or all (default: the default "
        "dialects, and those of --grammar-dir)",
    )
    parser.add_argument(
        "--grammar-dir",
        metavar="DIR",
        action="append",
        default=[],
        help="a folder of grammar files of your own (may be repeated)",
    )


def dialect_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Sieve`` options ``--dialects`` and ``--grammar-dir`` give."""
    out: dict[str, Any] = {}
    if args.dialects is not None:
        names = [d.strip() for d in args.dialects.split(",") if d.strip()]
        out["dialects"] = ALL if names == [ALL] else names
    if args.grammar_dir:
        out["grammar_dirs"] = tuple(args.grammar_dir)
    return out


def add_grammar_commands(sub: Any) -> None:
    dialects = sub.add_parser(
        "dialects",
        help="list the dialects, one line each",
        description="List every dialect: name, default / write, and its one-line summary.",
    )
    dialects.add_argument(
        "--grammar-dir",
        metavar="DIR",
        action="append",
        default=[],
        help="a folder of grammar files of your own (may be repeated)",
    )
    check = sub.add_parser(
        "check-grammar",
        help="check a grammar file as the loader would",
        description="Load a dialect file (or a common.lark, or a spelling file) as Sieve "
        "would, and print what the loader refuses, or what it found.",
    )
    check.add_argument("file", metavar="FILE", help="a .lark file")
    export = sub.add_parser(
        "export-response-template",
        help="print a dialect's shape as a transformers response_template",
        description="Print the response_template (JSON) that transformers' parse_response "
        "reads a dialect's calls with. Dialects the format cannot express are an error "
        "saying why (docs/model-metadata.md).",
    )
    export.add_argument("--dialect", required=True, metavar="D", help="the dialect's name")
    export.add_argument(
        "--start-anchor",
        required=True,
        metavar="TEXT",
        help="the chat template's text just before a reply, e.g. '<|im_start|>assistant\\n'",
    )
    export.add_argument(
        "--grammar-dir",
        metavar="DIR",
        action="append",
        default=[],
        help="a folder of grammar files of your own (may be repeated)",
    )


def run_grammar(args: argparse.Namespace, out: TextIO) -> int:
    if args.command == "dialects":
        return _list(tuple(args.grammar_dir), out)
    if args.command == "export-response-template":
        anchor = args.start_anchor.replace("\\n", "\n").replace("\\t", "\t")
        spec = response_template_for(args.dialect, anchor, tuple(args.grammar_dir))
        out.write(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
        out.flush()
        return EXIT_OK
    return _check(Path(args.file), out)


def _list(dirs: tuple[str, ...], out: TextIO) -> int:
    summaries = dialect_summaries(dirs)
    width = max(len(n) for n in summaries)
    for name, summary in summaries.items():
        flags = ("default" if name in DEFAULT_DIALECTS else "") + (
            " write" if _writable(name, dirs) else ""
        )
        out.write(f"{name:<{width}}  {flags.strip():<13}  {summary}\n")
    out.flush()
    return EXIT_OK


def _writable(name: str, dirs: tuple[str, ...]) -> bool:
    return spelling_file(name, dirs) is not None  # (its own, or the one of a dialect it reads)


def _check(path: Path, out: TextIO) -> int:
    if not path.is_file() or path.suffix != ".lark":
        raise CallsieveError(f"{path}: not a .lark file")
    folder, name = path.parent, path.stem
    spelled = folder.name == SPELLING_DIR
    if spelled:
        folder = folder.parent
    dirs = (str(folder),)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GrammarWarning)
        try:
            if name == "common":
                g = load_grammar(DEFAULT_DIALECTS, dirs)
            else:
                g = load_grammar((name,), dirs)
                if spelled or (folder / SPELLING_DIR / f"{name}.lark").is_file():
                    spelling(name, dirs)
                _beside_others(name, dirs)
        except GrammarError as exc:
            out.writelines(f"{line}\n" for line in str(exc).splitlines())
            out.flush()
            return EXIT_REFUSED
    out.writelines(f"warning: {w.message}\n" for w in caught if w.category is GrammarWarning)
    out.writelines(f"{warning}\n" for warning in _warnings(path))
    entries = ", ".join(sorted({e.terminal for e in g.entries if e.synthetic is None}))
    out.write(
        f"{path}: ok — dialects {', '.join(g.dialects)}; {len(g.states)} parser states; "
        f"opened by {entries}; prose searched for {g.openers.lead_chars!r}"
        + (
            f" (at the reply's start, for {g.openers.start_lead_chars!r})"
            if g.openers.start_lead_chars != g.openers.lead_chars
            else ""
        )
        + "\n"
    )
    out.flush()
    return EXIT_OK


def _beside_others(name: str, dirs: tuple[str, ...]) -> None:
    """Load dialect ``name`` as ``Sieve(grammar_dirs=dirs)`` and ``Sieve(dialects="all",
    grammar_dirs=dirs)`` would: beside the default dialects, and beside every dialect (a
    conflict or an opener another dialect shadows shows only there). A refusal says which."""
    for company, dialects in (
        ("the default dialects", (*DEFAULT_DIALECTS, name)),
        (f"{ALL!r}", all_dialects(dirs)),
    ):
        try:
            load_grammar(tuple(dict.fromkeys(dialects)), dirs)
        except GrammarError as exc:
            raise GrammarError(f"loaded beside {company}: {exc}", expected=exc.expected) from None


def _warnings(path: Path) -> list[str]:
    """Aliases close to a contract name that are none (the contract would ignore them)."""
    out: list[str] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("//", 1)[0]
        for m in _ALIAS.finditer(code):
            alias = m.group(1)
            if alias in _NODES or alias.startswith((REPAIR_PREFIX, BODY_PREFIX)):
                continue
            close = difflib.get_close_matches(alias, _NODES, n=1, cutoff=0.8)
            if close:
                out.append(
                    f"{path}:{n}: warning: alias {alias!r} is no contract name (did you "
                    f"mean {close[0]!r}?); a node of that name is ignored"
                )
    return out

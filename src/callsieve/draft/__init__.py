"""Strategy: draft a dialect from a model's chat template (``callsieve draft-dialect``).

What it does: ``draft(text, name)`` renders the template in jinja2's sandbox differentially
(``_probe``), extracts the markers (``_extract``) and writes a grammar file, a spelling
file and a report (``Draft``). ``write(draft, folder)`` saves them, the spelling under
``spelling/``. The draft is loaded as ``Sieve`` would before it is handed out: the opener
takes the lowest priority that loads beside every other dialect.
What it guarantees: a draft returned loads (``load_grammar``) alone and beside ``"all"``; it
reads the template's own renderings. It is an authoring tool: the user reviews it.
What it costs: about ten renders and a few grammar loads (a second or so). Needs the
``draft`` extra (jinja2); the core never imports this package.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._base.errors import GrammarError
from .._facade.results import parse
from .._grammar.compiled import load_grammar
from .._grammar.files import all_dialects
from .._grammar.spelling import SPELLING_DIR, spelling
from ._emit import draft_files
from ._extract import Shape, describe, extract
from ._probe import KEY1, KEY2, NAME1, NAME2, NUMBER, OBJECT, VAL1, VAL2, Probe, probe
from ._render import DraftError, Template, template_source

__all__ = ["Draft", "DraftError", "Rendering", "dialect_name", "draft", "write"]

_PRIORITIES = (0, 2, 3, 4, 5, 6)


@dataclass(frozen=True)
class Rendering:
    """One rendering of the template: ``what`` it shows, its ``text``, its ``calls``."""

    what: str
    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...]


def _renderings(p: Probe) -> tuple[Rendering, ...]:
    one = {KEY1: VAL1}
    wanted: list[tuple[str, str | None, tuple[tuple[str, dict[str, Any]], ...]]] = [
        ("one call", p.one if NAME1 in (p.one or "") else p.id_named, ((NAME1, one),)),
        ("two parameters", p.two_params, ((NAME1, {KEY1: VAL1, KEY2: VAL2}),)),
        ("no parameter", p.no_params, ((NAME1, {}),)),
        ("two calls", p.two_calls, ((NAME1, one), (NAME2, one))),
        ("a number", p.number, ((NAME1, {KEY1: NUMBER}),)),
        ("an object", p.obj, ((NAME1, {KEY1: OBJECT}),)),
    ]
    return tuple(
        Rendering(what, text, calls)
        for what, text, calls in wanted
        if text is not None and NAME1 in text and "{'" not in text
    )


@dataclass(frozen=True)
class Draft:
    """A drafted dialect: its ``name``, grammar and spelling files, the ``shape`` found and
    the ``notes`` of what the renderings could not tell."""

    name: str
    grammar: str
    spelling: str
    shape: Shape
    notes: tuple[str, ...]
    #: the template's own renderings: (what, text, the calls it holds)
    renderings: tuple[Rendering, ...] = ()

    def report(self) -> str:
        """What was found and what was not, as Markdown."""
        lines = [f"# Draft dialect `{self.name}`", "", "## Markers found", ""]
        for key, value in describe(self.shape).items():
            lines.append(f"- {key}: `{value!r}`")
        lines += ["", "## What the renderings could not tell", ""]
        lines += [f"- {n}" for n in self.notes] or ["- nothing: review the draft all the same"]
        lines += ["", "## The template's renderings, read back with the draft", ""]
        lines += [f"- {r.what}: {'read' if ok else 'NOT read'}" for r, ok in self.check()]
        return "\n".join(lines) + "\n"

    def check(self) -> list[tuple[Rendering, bool]]:
        """Each rendering, and whether the draft alone reads its calls from it."""
        with tempfile.TemporaryDirectory() as tmp:
            write(self, tmp, report=False)
            out = []
            for r in self.renderings:
                got = parse(r.text, dialects=[self.name], grammar_dirs=[tmp]).calls
                out.append((r, [(c.name, c.input) for c in got] == list(r.calls)))
        return [(r, ok) for r, ok in out]


def dialect_name(path: str) -> str:
    """A dialect name for a template file: ``draft_`` and its stem, lower case."""
    stem = Path(path).stem
    if stem == "tokenizer_config":
        stem = Path(path).resolve().parent.name or "model"
    return "draft_" + (re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_") or "model")


def write(d: Draft, folder: str | Path, report: bool = True) -> list[Path]:
    """Save ``d`` in ``folder``: ``NAME.lark``, ``spelling/NAME.lark``, ``NAME.report.md``."""
    root = Path(folder)
    (root / SPELLING_DIR).mkdir(parents=True, exist_ok=True)
    paths = [
        root / f"{d.name}.lark",
        root / SPELLING_DIR / f"{d.name}.lark",
        root / f"{d.name}.report.md",
    ]
    texts = (d.grammar, d.spelling, d.report() if report else "")
    for path, text in zip(paths, texts, strict=True):
        if text:
            path.write_text(text, encoding="utf-8")
    return paths if report else paths[:2]


def _loads(d: Draft) -> str | None:
    """None if ``d`` loads alone and beside every dialect, else the loader's refusal."""
    with tempfile.TemporaryDirectory() as tmp:
        write(d, tmp, report=False)
        try:
            load_grammar((d.name,), (tmp,))
            spelling(d.name, (tmp,))
            load_grammar(tuple(dict.fromkeys(all_dialects((tmp,)))), (tmp,))
        except GrammarError as exc:
            return str(exc)
    return None


def draft(text: str, name: str, source: str = "the chat template") -> Draft:
    """Draft dialect ``name`` from a chat template (or a ``tokenizer_config.json``'s text).
    ``DraftError``: no structure found, or no draft the loader takes (its refusal)."""
    renders = probe(Template(template_source(text)))
    shape = extract(renders)
    refusals: list[str] = []
    # (a plural word's s left out where the draft still loads beside every dialect: the
    # looser tags may clash with another dialect's opener)
    for plural in (True, False):
        refusals.clear()
        drafts = [
            _loading(name, shape, source, renders, (repair, plural), refusals)
            for repair in (True, False)
        ]
        found = [d for d in drafts if d is not None]
        if found:
            # (the repair of a value left open, where it costs no rendering: some formats'
            # tags leave no room for it)
            return max(found, key=lambda d: sum(ok for _, ok in d.check()))
    raise DraftError(f"the draft does not load: {refusals[0]}")


def _loading(
    name: str,
    shape: Shape,
    source: str,
    renders: Probe,
    tolerance: tuple[bool, bool],
    refusals: list[str],
) -> Draft | None:
    """The draft at the lowest priority that loads beside every dialect, or None.
    ``tolerance``: the repair of a value left open, and a plural's ``s`` left out."""
    repair, plural = tolerance
    for priority in _PRIORITIES:
        grammar, spelled = draft_files(name, shape, source, priority, repair, plural)
        d = Draft(name, grammar, spelled, shape, shape.notes, _renderings(renders))
        why = _loads(d)
        if why is None:
            return d
        refusals.append(why)
    return None

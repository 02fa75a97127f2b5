"""Strategy: the canonical spelling of a dialect's tags, for writing — read from the grammar.

What it does: ``spelling(dialect)`` reads ``grammar/spelling/<dialect>.lark`` (the first
found in the grammar folders; a data section the parser never loads), a Lark file of
string terminals, with Lark itself: each terminal is named after the parser terminal it
spells (``CALLS_OPEN`` is the dialect's wrapper opener), or is template text no parser
terminal has (``RESULT_OPEN``, ``USER``, …). ``{}`` in a spelling is the slot of a value.
What it guarantees: every spelling named after a terminal of the dialect's compiled grammar
is matched *in full* by that terminal (a slot filled with a sample value; a terminal that
looks ahead may be followed by another spelling of the file), and ``CALLS_OPEN`` by one of
the dialect's wrapper openers; a template spelling named after one of the special tokens
``grammar/_leaks.lark`` defines (DeepSeek's ``BEGIN_OF_SENTENCE``, ``USER``, …: their one
definition, which the sanitizer reads too) is matched in full by it — all checked when the
file is first read, so the writer can only write what the parser (and the sanitizer) reads;
a spelling that breaks this, or a file Lark cannot read, is a
``GrammarError`` naming the file and the terminal; a dialect with no spelling file a
``ConfigurationError``. Python names no tag: the spellings are the grammar's.
What it costs: once per process and dialect, one small Lark build (~5 ms) and the
dialect's grammar load (cached, ``compiled.load_grammar``); then a dict lookup.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from lark import Lark
from lark.exceptions import LarkError

from .._base.errors import ConfigurationError, GrammarError
from .compiled import CompiledGrammar, available_dialects, grammar_dirs, load_grammar
from .files import _find, reads, unknown_dialect
from .files import _read as _read_grammar
from .lark_internals import terminal_source
from .names import SPELLINGS
from .specs import TokenSpec

__all__ = ["SLOT", "SPELLING_DIR", "Spelling", "spelling", "spelling_file"]

#: Where the spelling files are, in each grammar folder.
SPELLING_DIR = "spelling"
#: The slot of a value in a spelling (``" name=\"{}\""``).
SLOT = "{}"
#: The sample a slot is filled with to check a spelling against its terminal.
_SAMPLE = {SPELLINGS.NAME_ATTR: "f", SPELLINGS.ATTR: "true", SPELLINGS.NATIVE_NAME_LINE: "f"}
#: The spelling of the dialect's wrapper opener (checked against its entry terminals).
OPENER = SPELLINGS.CALLS_OPEN


class Spelling:
    """A dialect's spellings: ``sp[SPELLINGS.INVOKE_OPEN]``, ``sp.get(name)`` ("" when the file has
    none), ``sp.fill(name, value)`` (the slot filled), and the compiled grammar it was
    checked against (``grammar``), whose terminals the writer may test values with."""

    __slots__ = ("dialect", "grammar", "path", "texts")

    def __init__(
        self, dialect: str, path: str, texts: dict[str, str], grammar: CompiledGrammar
    ) -> None:
        self.dialect = dialect
        self.path = path
        self.texts = texts
        self.grammar = grammar

    def __getitem__(self, name: str) -> str:
        try:
            return self.texts[name]
        except KeyError:
            raise GrammarError(
                f"{self.path}: no spelling {name!r} (the writer of dialect "
                f"{self.dialect!r} needs it)",
                expected=(name,),
            ) from None

    def __contains__(self, name: str) -> bool:
        return name in self.texts

    def get(self, name: str) -> str:
        return self.texts.get(name, "")

    def fill(self, name: str, value: str) -> str:
        return self[name].replace(SLOT, value, 1)

    def terminal(self, name: str) -> Any:
        """The compiled pattern of the dialect's parser terminal ``name`` (its own name in
        the dialect file or a shared one), or None."""
        return _terminal(self.grammar, self.dialect, name)


def _terminal(g: CompiledGrammar, dialect: str, name: str) -> Any:
    for key in (f"{dialect.upper()}__{name}", f"_{dialect.upper()}__{name}", name):
        spec = g.terminals.get(key)
        if isinstance(spec, TokenSpec) and spec.source is not None:
            return spec.pattern
    return None


def _read(path: Path) -> dict[str, str]:
    """The file's terminals as ``{name: text}``, in file order, read by Lark."""
    text = path.read_text(encoding="utf-8")
    names = re.findall(r"^([A-Z][A-Z0-9_]*)\s*:", text, flags=re.MULTILINE)
    if not names:
        raise GrammarError(f"{path}: defines no spelling", expected=('NAME: "text"',))
    try:
        lark = Lark(
            f"{text}\nspelling_start: {' '.join(names)}\n",
            start="spelling_start",
            parser="lalr",
            lexer="basic",
        )
    except LarkError as exc:
        raise GrammarError(f"{path}: {exc}".strip()) from None
    defs = {t.name: t.pattern for t in lark.terminals}
    out: dict[str, str] = {}
    for name in names:
        pattern = defs.get(name)
        if pattern is None or pattern.type != "str":
            raise GrammarError(
                f"{path}: spelling {name} is not one string literal", expected=('"text"',)
            )
        out[name] = str(pattern.value)
    return out


def _matches(pattern: Any, text: str, others: list[str]) -> bool:
    if pattern.fullmatch(text):
        return True
    for after in others:  # a terminal that looks ahead: followed by another tag
        m = pattern.match(text + after)
        if m is not None and m.end() == len(text):
            return True
    return False


def _check(path: Path, dialect: str, texts: dict[str, str], g: CompiledGrammar) -> None:
    others = [t.replace(SLOT, "f") for t in texts.values()]
    if texts.get("ARGS") in ("envelope", "json"):  # (a template's JSON object may follow)
        others.append("{")
    for name, text in texts.items():
        sample = text.replace(SLOT, _SAMPLE.get(name, "x"))
        if name == OPENER:
            pats = [
                _terminal(g, dialect, e.terminal)
                for e in g.entries
                if e.dialect == dialect and e.synthetic is None
            ]
            pats = [p for p in pats if p is not None]
            if not any(_matches(p, sample, others) for p in pats):
                raise GrammarError(
                    f"{path}: {name} {text!r} is not an opener of dialect {dialect!r}"
                )
            continue
        pattern = _terminal(g, dialect, name)
        if pattern is not None and not _matches(pattern, sample, others):
            raise GrammarError(
                f"{path}: {name} {text!r} is not matched in full by the "
                f"terminal {name} of dialect {dialect!r}",
                expected=(pattern.pattern[:200],),
            )
        special = _special_tokens().get(name) if pattern is None else None
        if special is not None and not special.fullmatch(sample):
            raise GrammarError(
                f"{path}: {name} {text!r} is not matched in full by the special token "
                f"{name} of {_SPECIAL_FILE}.lark",
                expected=(special.pattern[:200],),
            )


#: The data file (not a dialect) where DeepSeek's special tokens are defined, once.
_SPECIAL_FILE = "_leaks"


@functools.cache
def _special_tokens() -> dict[str, Any]:
    """The terminals the built-in ``_leaks.lark`` defines (after ``common.lark``, whose
    alias pieces they use), compiled, by name."""
    folder = grammar_dirs()[-1]
    texts = [(folder / f"{f}.lark").read_text(encoding="utf-8") for f in ("common", _SPECIAL_FILE)]
    names = re.findall(r"^([A-Z][A-Z0-9_]*)\s*:", texts[1], flags=re.MULTILINE)
    try:
        lark = Lark(
            "\n".join(texts) + f"\nspecial_start: {' | '.join(names)}\n",
            start="special_start",
            parser="lalr",
        )
    except LarkError as exc:  # pragma: no cover - the built-in file is tested
        raise GrammarError(f"{folder / _SPECIAL_FILE}.lark: {exc}".strip()) from None
    return {t.name: re.compile(terminal_source(t)) for t in lark.terminals if t.name in names}


@functools.lru_cache(maxsize=64)
def spelling(dialect: str, extra_dirs: tuple[str, ...] = ()) -> Spelling:
    """The checked spellings of ``dialect`` (see the module docstring)."""
    if not isinstance(dialect, str) or dialect not in available_dialects(extra_dirs):
        raise unknown_dialect(dialect, extra_dirs)
    path = spelling_file(dialect, extra_dirs)
    if path is None:
        raise ConfigurationError(
            f"dialect {dialect!r} has no writer: no spelling file for writing "
            f"({SPELLING_DIR}/{dialect}.lark in a grammar folder); the dialects written are "
            + ", ".join(_written(extra_dirs)),
            expected=_written(extra_dirs),
        )
    texts = _read(path)
    g = load_grammar((dialect,), extra_dirs)
    _check(path, dialect, texts, g)
    return Spelling(dialect, str(path), texts, g)


def spelling_file(dialect: str, extra_dirs: tuple[str, ...]) -> Path | None:
    """The dialect's spelling file, else that of the dialect whose grammar it reads
    (``//%reads``), else None."""
    dirs = grammar_dirs(extra_dirs)
    for name in (dialect, reads(_read_grammar(_find(dialect, dirs, extra_dirs))[1])):
        for d in dirs if name is not None else ():
            path = d / SPELLING_DIR / f"{name}.lark"
            if path.is_file():
                return path
    return None


def _written(extra_dirs: tuple[str, ...]) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for d in grammar_dirs(extra_dirs):
        for f in sorted((d / SPELLING_DIR).glob("*.lark")):
            names.setdefault(f.stem, None)
    return tuple(names)

"""Strategy: the compiled grammar — one Lark LALR parser and the tables the scanner reads —
built once per process and set of dialects, from tables kept in a cache where possible.

What it does: ``common.lark`` plus one file per enabled dialect (``<dialect>.lark``, whose
block rule is named after the dialect, its other names in a namespace of its own) are
joined and a ``start`` rule listing the dialects is added. On a cache miss ``_grammar.derive``
namespaces and compiles that with Lark and derives a *blueprint* (plain data: what each
terminal and parser state is, the entries, the entry automaton's NFA, Lark's own
serialisation), every pattern's compiled form is frozen (``_grammar.patterns``) and
``_grammar.cache`` stores it all, keyed by the text and the versions. From a blueprint,
just derived or read back, ``CompiledGrammar`` builds what the scanner reads: a spec per
terminal (``TokenSpec``, ``RunSpec`` or ``BalancedSpec``), a ``StateSpec`` per parser state
(``_grammar.specs``), and a few parts that each own one concern: the parser (``ParserTables``),
the terminals' roles (``TerminalRoles``), the dialects per parser state (``DialectMap``: the
dialect a block's parse is in), the entries (``EntryIndex``: tag leads, the entry tables and
their lazy automata) and where blocks end (``BlockEnds``).
What it guarantees: the grammar files are the only place a tag spelling is written down.
``load_grammar`` returns one object per (dialects, folders) and builds it once, however many
threads ask at once; a warm load gives a grammar equal to a cold one. Every grammar problem
is a ``GrammarError`` naming the file; a missing dialect or grammar folder is a
``ConfigurationError``. The caches of answers shared by all sieves are safe under threads
without help from the GIL (see ``CompiledGrammar``).
What it costs: a warm load reads the grammar files and one cache file and rebuilds Lark's
parser from its serialisation (~5 ms for the built-in grammar) and makes each terminal's
patterns from their frozen forms (~10 µs each; a prefix closure waits for its first use).
A cold load (~150 ms: Lark ~25 ms, the derivation ~50 ms, freezing ~70 ms) happens once per
machine and grammar version, or in every process with no cache to write (then without
freezing, each pattern compiled from its source). Nothing per chunk; ``dialect_of`` a few
lookups per block (and per call emitted early).
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark, Token
from lark.exceptions import LarkError

from .._base.errors import ConfigurationError, GrammarError, GrammarWarning
from . import cache
from .dialects import DialectMap
from .directives import NO_TRAITS, DialectTraits
from .directives import read as read_traits
from .endings import BlockEnds
from .entry_tables import DECISION_LIMIT, EntryIndex, thought_enders
from .files import (
    DEFAULT_DIALECTS,
    DIRECTIVE,
    READS_DIRECTIVE,
    _declared,
    _find,
    _is_dialect_name,
    _read,
    available_dialects,
    default_dialects,
    grammar_dirs,
    unknown_dialect,
)
from .lark_internals import load_lark
from .names import CDATA_CLOSE, CDATA_OPEN, CLOSE_GROUP
from .namespace import defined_names, renamed_rule
from .no_lexer import NoLexer
from .patterns import freeze as freeze_pattern
from .patterns import learn as learn_patterns
from .rule_sets import ParserTables, TerminalRoles
from .specs import (
    CLOSES_CDATA,
    OPENS_CALL,
    OPENS_CDATA,
    BalancedSpec,
    EntrySpec,
    RunSpec,
    RunTerminal,
    StateSpec,
    TerminalSpec,
    TokenSpec,
    _class_source,
    _shell_chars,
    _viable_source,
    terminal_spec,
)

__all__ = [
    "DEFAULT_DIALECTS",
    "CompiledGrammar",
    "EntrySpec",
    "Opening",
    "StateSpec",
    "TerminalSpec",
    "available_dialects",
    "default_dialects",
    "grammar_dirs",
    "load_grammar",
]

#: Grammars kept loaded (per dialects and folders); past it the oldest loaded is dropped.
LOADED_LIMIT = 32


#: The only globals a cached blueprint may name: Lark's options hold the lexer class, and Lark
#: before 1.2 serialises rule names as ``Token``s (a ``str`` subclass).
_CACHE_GLOBALS: dict[tuple[str, str], Any] = {
    (NoLexer.__module__, "NoLexer"): NoLexer,
    (Token.__module__, "Token"): Token,
}


class Opening(NamedTuple):
    """What a block opened at an entry reads next, after a few bounded tokens
    (``CompiledGrammar.opening``): the parser ``state`` there if it takes bounded
    terminals (a token may come), the balanced ``run`` it starts where none does (or None),
    and the block's ``dialect`` while it reads that run."""

    state: StateSpec | None
    run: BalancedSpec | None
    dialect: str


class CompiledGrammar:
    """One compiled grammar and everything derived from it, built from a blueprint (see
    ``_grammar.derive``). Its parts each own one concern:

    - ``terminals``, ``states``, ``entries``: the specs the scanner reads (``_grammar.specs``);
    - ``parser``: the LALR parser every block's parser is made from (``ParserTables``);
    - ``roles``: the terminals below each node the argument stream reads (``TerminalRoles``);
    - ``dialect_map``: a parse's dialect and its value reading (``_grammar.dialects``);
    - ``openers``: what prose is searched for, and each entry's index and groups
      (``EntryIndex``, ``_grammar.entry_tables``);
    - ``ends``: where blocks may end (``BlockEnds``, ``_grammar.endings``).

    Immutable after construction, except for caches that only hold what is already
    determined, each safe to share between threads: the entry automata's DFA states (see
    ``EntryAutomaton``), each entry table's settled tag leads (``EntryTable.settle``), the
    scanner's decisions per parser state (``remember``) and the openings (``opening``).
    The decisions are filled under a lock (a miss only: a hit is one lock-free ``dict``
    lookup), with values built before they are stored, and bounded by ``DECISION_LIMIT``."""

    def __init__(
        self,
        blueprint: dict[str, Any],
        lark: Lark | None = None,
        text: str = "",
        traits: dict[str, DialectTraits] | None = None,
    ) -> None:
        self.dialects: tuple[str, ...] = tuple(blueprint["dialects"])
        #: What each dialect's file declares of its family (``_grammar.directives``).
        self.traits: dict[str, DialectTraits] = {
            d: (traits or {}).get(d, NO_TRAITS) for d in self.dialects
        }
        learn_patterns(blueprint.get("patterns", {}))
        self.text = text
        if lark is None:  # (read back from the cache: Lark's parser from its serialisation)
            lark = load_lark(*blueprint["lark"])
        parser = self.parser = ParserTables(lark)
        self.roles = TerminalRoles.of(lark.rules)
        terms: dict[str, TerminalSpec] = {
            kw["name"]: terminal_spec(kw) for kw in blueprint["terminals"]
        }
        self.terminals = terms
        self.states: dict[int, StateSpec] = {
            s: StateSpec(
                tuple(_token(terms[n]) for n in bounded),
                _run(terms[run]) if run else None,
                end_ok,
                parser.table.states[s][call][1] if call is not None else None,
                parser.table.states[s][default][1] if default is not None else None,
                sure,
            )
            for s, (bounded, run, end_ok, call, default, sure) in blueprint["states"].items()
        }
        self.entries = tuple(EntrySpec(*e) for e in blueprint["entries"])
        self.dialect_map = DialectMap(self.dialects, dict(blueprint["state_dialects"]), self.traits)
        enders = thought_enders(
            self.entries,
            parser.table.states[parser.start_state],
            self.dialect_map,
            self.traits,
        )
        self.openers = EntryIndex(blueprint, self.entries, terms, enders)
        _mark(terms, self.openers.call_openers, OPENS_CALL)
        _mark(terms, (CDATA_OPEN,), OPENS_CDATA)
        _mark(terms, (CDATA_CLOSE,), CLOSES_CDATA)
        self.ends = BlockEnds(
            parser.table, parser.start_state, terms, blueprint.get("raw_rest", False)
        )
        self._lock = threading.Lock()  # taken to store a decision (``remember``)
        self._remembered = 0  # decisions stored in the states' caches since the last clear
        #: Per entry and path, what a block opened at it reads first (``opening``), filled on
        #: first use.
        self._openings: dict[tuple[int, tuple[str, ...]], Opening | None] = {}

    def opening(self, k: int, path: tuple[str, ...] = ()) -> Opening | None:
        """What a block opened at entry ``k`` reads next, after the bounded tokens ``path``,
        where no call can complete before (``Opening``): the parser state there, if it takes
        bounded terminals, and its run, if it is balanced. None where the block may end
        there, or a token on the way completes a call, opens a CDATA or is a call opener (a
        checkpoint, ``_blocks.lessons``), or the parser refuses a token. Derived once per
        entry and path by feeding a parser what a capture feeds it (its own table decides)."""
        key = (k, path)
        if key in self._openings:
            return self._openings[key]
        plan = self._opening(self.entries[k], path)
        self._openings[key] = plan  # (the same answer whoever stores it first: no lock needed)
        return plan

    def entered(self, entry: EntrySpec) -> Any:
        """A new parser's state after ``entry``'s opener: what a capture of it feeds first
        (its synthetic token, if any, then the opener). Raises Lark's error where refused."""
        ps = self.parser.new_parser()
        if entry.synthetic is not None:
            ps.feed_token(Token(entry.synthetic, ""))
        ps.feed_token(Token(entry.terminal, ""))
        return ps

    def _opening(self, entry: EntrySpec, path: tuple[str, ...]) -> Opening | None:
        call_openers = self.openers.call_openers
        try:
            ps = self.entered(entry)
            for name in path:
                ps.feed_token(Token(name, ""))
                if name in call_openers or name == CDATA_OPEN:
                    return None
                if self.states[ps.state_stack[-1]].call_rule is not None:
                    return None
        except LarkError:
            return None
        spec = self.states[ps.state_stack[-1]]
        if spec.end_ok:
            return None
        run, dialect = spec.run, ""
        if isinstance(run, BalancedSpec):
            try:
                ps.feed_token(run.placeholder)
            except LarkError:
                run = None
            else:  # (the dialect a block reading that run has: its ``dialect_now``)
                dialect = self.dialect_map.dialect_of(ps.state_stack, entry.dialect)
        else:
            run = None
        if run is None and not spec.bounded:
            return None
        return Opening(spec if spec.bounded else None, run, dialect)

    def pattern_sources(self) -> set[str]:
        """The source of every pattern this grammar may compile (what the cache freezes)."""
        tables = self.openers.entry_tables.values()
        out = {t.source for t in tables}
        for t in self.terminals.values():
            out.update(s for s in (t.source, t.stop_source) if s is not None)
            if isinstance(t, RunSpec) and t.tail_source is not None:
                out.add(t.tail_source)
            if isinstance(t, TokenSpec):
                if t.closure:
                    out.add(_viable_source(t.closure))
                if t.end_chars:
                    out.add(_class_source(frozenset(t.end_chars)))
        for spec in self.states.values():
            ends = _shell_chars(spec.bounded)
            if ends:
                out.add(_class_source(ends))
        for table in tables:
            out.update(table.automaton.move_sources())
        return out

    def remember(self, memo: dict[str, Any], key: str, decision: Any) -> None:
        """Store a scanner decision in one state's ``decisions``; past ``DECISION_LIMIT``
        in all, every state's are dropped first (so their memory is bounded, and a text
        seen again is simply decided again)."""
        with self._lock:
            if self._remembered >= DECISION_LIMIT:
                for spec in self.states.values():
                    spec.decisions.clear()
                self._remembered = 0
            memo[key] = decision
            self._remembered += 1

    def after_cdata(self, state: int) -> StateSpec | None:
        """The state a CDATA closed in parser state ``state`` (inside its run: after the run's
        placeholder) goes to — the terminals it accepts are where the loose-CDATA repair
        may cut an unclosed CDATA (``_repair``), which argument streaming must not send
        past before ``]]>`` (``_blocks.argstream``). None: ``state`` shifts no CDATA close.
        (The close is a shift, never after a reduce: ``cdata: CDATA_OPEN CDATA_RUN?
        CDATA_CLOSE``; a look-up in the parse table.)"""
        target = self.parser.shift_target(state, CDATA_CLOSE)
        return None if target is None else self.states.get(target)

    def dialect_of_close(self, close_value: str, fallback: str) -> str:
        """The dialect a closing wrapper is spelled in (for blocks whose opener was repaired):
        ``fallback`` (the parse's) if the opener of that spelling opens it too, else the
        opener's. The opener's spelling is the closer's text without what its terminal's
        group ``close`` matched (the grammar says what makes a tag a closing one); a closer
        whose terminal has no such group keeps ``fallback``."""
        for t in self.ends.block_enders:
            m = t.pattern.match(close_value) if CLOSE_GROUP in t.pattern.groupindex else None
            if m is not None and m.end() == len(close_value) and m.start(CLOSE_GROUP) >= 0:
                opened = close_value[: m.start(CLOSE_GROUP)] + close_value[m.end(CLOSE_GROUP) :]
                break
        else:
            return fallback
        parser = self.parser
        for e in self.entries:
            term = self.terminals[e.terminal]
            if e.synthetic is None and isinstance(term, TokenSpec) and term.pattern.match(opened):
                after = parser.table.states[parser.start_state][e.terminal][1]
                if (
                    fallback in self.dialects
                    and self.dialect_map.mask(after) >> self.dialects.index(fallback) & 1
                ):
                    return fallback
                return e.dialect
        return fallback


def _token(spec: TerminalSpec) -> TokenSpec:
    """``spec``, which the blueprint lists among a state's bounded terminals."""
    if not isinstance(spec, TokenSpec):
        raise GrammarError(f"terminal {spec.name} is a run, listed as a bounded terminal")
    return spec


def _mark(terms: dict[str, TerminalSpec], names: Any, mark: int) -> None:
    """Set ``mark`` in the ``marks`` of the bounded terminals ``names`` (what they mean to a
    capture)."""
    for name in names:
        spec = terms.get(name)
        if isinstance(spec, TokenSpec):
            spec.marks |= mark


def _run(spec: TerminalSpec) -> RunTerminal:
    """``spec``, which the blueprint names as a state's run."""
    if not isinstance(spec, RunTerminal):
        raise GrammarError(f"terminal {spec.name} is bounded, named as a run")
    return spec


_loaded: cache.OncePerKey[tuple[tuple[str, ...], tuple[str, ...]], CompiledGrammar] = (
    cache.OncePerKey(LOADED_LIMIT)
)


def load_grammar(
    dialects: tuple[str, ...] = DEFAULT_DIALECTS, extra_dirs: tuple[str, ...] = ()
) -> CompiledGrammar:
    """The grammar for ``dialects`` with files from ``extra_dirs`` first (memoised: same
    arguments, same object; built once however many threads ask at once)."""
    key = (tuple(dialects), tuple(str(d) for d in extra_dirs))
    g = _loaded.get(key)
    return g if g is not None else _loaded.get_or_make(key, _load)


def _load(key: tuple[tuple[str, ...], tuple[str, ...]]) -> CompiledGrammar:
    """Read the grammar files; build from the cache's blueprint if it has one, else derive
    one (``_build``) and store it."""
    dialects, extra_dirs = key
    if not dialects:
        raise ConfigurationError("at least one dialect must be enabled")
    for name in dialects:
        if not _is_dialect_name(name):  # (not a name a file could be for)
            raise unknown_dialect(name, extra_dirs)
    dirs = grammar_dirs(extra_dirs)
    common = _read(_find("common", dirs, extra_dirs))
    _declared(*common, dirs)  # (a malformed declaration is an error wherever it is read)
    dialects, parts, traits = _dialect_parts(dialects, dirs, extra_dirs)
    parts.insert(0, common)
    parts.append(("<start rule>", "start: " + " | ".join(dialects) + "\n"))
    text = "\n".join(t for _, t in parts)
    digest = cache.digest(text, dialects)
    blueprint = cache.read(digest, _CACHE_GLOBALS)
    if blueprint is not None:
        try:
            warm = CompiledGrammar(blueprint, None, text, traits)
        except Exception:  # noqa: BLE001 - a stale or damaged blueprint: rebuilt below
            warm = None
        if warm is not None:
            return _warned(warm, blueprint)
    blueprint, lark = _build(dialects, parts)
    g = CompiledGrammar(blueprint, lark, text, traits)

    def with_patterns() -> dict[str, Any]:
        # Every pattern's compiled form, so a warm process compiles none (``_grammar.patterns``).
        frozen = ((s, freeze_pattern(s)) for s in sorted(g.pattern_sources()))
        return {**blueprint, "patterns": {s: f for s, f in frozen if f is not None}}

    cache.write(digest, with_patterns)
    return _warned(g, blueprint)


def _dialect_parts(
    named: tuple[str, ...], dirs: tuple[Path, ...], extra_dirs: tuple[str, ...]
) -> tuple[tuple[str, ...], list[tuple[str, str]], dict[str, DialectTraits]]:
    """The dialects loaded, each one's (file, text) as Lark reads it, and its traits. A
    dialect that reads another's grammar (``//%reads NAME``) is that file, its block rule
    named after the dialect, with its own traits. Of dialects that read one grammar (a
    dialect and those that read it), the first named is loaded and the others are left out:
    one grammar twice would be a conflict, and its blocks are the first one's."""
    kept: list[str] = []
    parts: list[tuple[str, str]] = []
    traits: dict[str, DialectTraits] = {}
    grammars: set[str] = set()
    for name in named:
        path, text = _read(_find(name, dirs, extra_dirs))
        own = read_traits(path, text)
        target = own.reads
        if target is not None:
            path, text = _reads_part(name, path, text, target, dirs, extra_dirs)
        if (target or name) in grammars:
            continue
        grammars.add(target or name)
        kept.append(name)
        parts.append((path, text))
        traits[name] = own
    return tuple(kept), parts, traits


def _reads_part(
    name: str,
    path: str,
    text: str,
    target: str,
    dirs: tuple[Path, ...],
    extra_dirs: tuple[str, ...],
) -> tuple[str, str]:
    """The (file, text) of dialect ``name``, which reads ``target``'s grammar: ``target``'s
    file with its block rule named ``name``. Refused at the file: a rule of its own, reading
    itself, a dialect no file is for, or one that reads another in turn."""
    defined = defined_names(text)
    why = (
        f"defines {defined[0]!r}, but a dialect that reads another's grammar holds no rule"
        if defined
        else "reads itself"
        if target == name
        else None
    )
    if why is None:
        if target not in available_dialects(extra_dirs):
            why = f"reads {target!r}, which no grammar file is for"
        else:
            t_path, t_text = _read(_find(target, dirs, extra_dirs))
            if read_traits(t_path, t_text).reads is not None:
                why = f"reads {target!r}, which reads another dialect in turn"
            else:
                return t_path, renamed_rule(t_text, target, name)
    raise GrammarError(
        f"{path}: {DIRECTIVE}{READS_DIRECTIVE} {target}: {name} {why}",
        expected=(f"{DIRECTIVE}{READS_DIRECTIVE} NAME, comments and other directives",),
    )


def _warned(g: CompiledGrammar, blueprint: dict[str, Any]) -> CompiledGrammar:
    """``g``, once the blueprint's warnings are issued (once a process: loads are memoised)."""
    for message in blueprint.get("widened", ()):
        warnings.warn(message, GrammarWarning, stacklevel=2)
    return g


def _build(dialects: tuple[str, ...], parts: list[tuple[str, str]]) -> tuple[dict[str, Any], Lark]:
    """The cold path: Lark's compile and the derivation (``_grammar.derive``), once per grammar
    and machine while the cache works. (Tests count calls to it.)"""
    from .derive import Sources, derive

    return derive(dialects, Sources(parts, (None, *dialects, None)))

"""Strategy: the compiled grammar — one Lark LALR parser and the tables the scanner reads —
built once per process and set of dialects, from tables kept in a cache where possible.

What it does: ``common.lark`` plus one file per enabled dialect (``<dialect>.lark``, whose
block rule is named after the dialect, its other names in a namespace of its own) are
joined and a ``start`` rule listing the dialects is added. On a cache miss ``_grammar.derive``
namespaces and compiles that with Lark and derives a *blueprint* (plain data: what each
terminal and parser state is, the entries, the entry automaton's NFA, Lark's own
serialisation), every pattern's compiled form is frozen (``_grammar.patterns``) and
``_grammar.cache`` stores it all, keyed by the text and the versions. From a blueprint,
just derived or read back, ``CompiledGrammar`` builds what the scanner reads: a
``TerminalSpec`` per terminal, a ``StateSpec`` per parser state (``_grammar.specs``), the entry
terminals with their lead characters, the exact ``re`` alternation of their patterns and
the lazy automaton that follows them (``_grammar.automaton``), and per parser state the dialects
whose rules it belongs to (``dialect_of``: the dialect a block's parse is in).
What it guarantees: the grammar files are the only place a tag spelling is written down.
``load_grammar`` returns one object per (dialects, folders) and builds it once, however many
threads ask at once; a warm load gives a grammar equal to a cold one. Every grammar problem
is a ``GrammarError`` naming the file; a missing dialect or grammar folder is a
``ConfigurationError``. The caches of answers shared by all sieves are safe under threads
without help from the GIL (see ``CompiledGrammar``).
What it costs: a warm load reads the grammar files and one cache file and rebuilds Lark's
parser from its serialisation (~5 ms for the built-in grammar); patterns are then made from
their frozen forms when first used (~10 µs each). A cold load (~150 ms: Lark ~25 ms, the
derivation ~50 ms, freezing ~70 ms) happens once per machine and grammar version, or in
every process with no cache to write (then without freezing: ~75 ms, and each pattern is
compiled from its source when first used). Nothing per chunk; ``dialect_of`` a few
lookups per block (and per call emitted early).
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark, Token
from lark.exceptions import LarkError

from .._base.errors import ConfigurationError, GrammarError, GrammarWarning
from . import cache
from .automaton import EntryAutomaton
from .directives import NO_TRAITS, PLAIN_VALUES, DialectTraits, ValueReading, value_reading
from .directives import read as read_traits
from .endings import end_call_key
from .entry_tables import DECISION_LIMIT, entry_tables
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
from .lark_internals import (
    END,
    InteractiveParser,
    ShareableParser,
    is_shift,
    load_lark,
    plain_rule_names,
)
from .names import CDATA_CLOSE, CDATA_OPEN, CLOSE_GROUP, START
from .namespace import defined_names, renamed_rule
from .no_lexer import NoLexer
from .patterns import freeze as freeze_pattern
from .patterns import learn as learn_patterns
from .rule_sets import (
    ARG_NODES,
    BODY_NODES,
    CDATA_NODES,
    ENVELOPE_NODES,
    JSON_NODES,
    RAW_NODES,
    STREAM_NODES,
    VALUE_NODES,
    discard,
    is_call,
    listening,
    repairing_calls,
    rules_above_calls,
    terminals_below,
)
from .specs import (
    EntrySpec,
    StateSpec,
    TerminalSpec,
    _class_source,
    _shell_chars,
    _viable_source,
    entry_group_prefix,
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
    run: TerminalSpec | None
    dialect: str


class CompiledGrammar:
    """One compiled grammar and everything derived from it, built from a blueprint (see
    ``_grammar.derive``). Immutable after construction, except for caches that only hold what is
    already determined, each safe to share between threads: the entry automaton's DFA
    states (see ``EntryAutomaton``), the patterns compiled on first use (a benign duplicate
    compile at worst), the scanner's decisions per parser state (``remember``) and the
    sieve's settled tag leads (``settle``). Those two are filled under a lock (a miss only:
    a hit is one lock-free ``dict`` lookup), with values built before they are stored, and
    each is bounded by ``DECISION_LIMIT``."""

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
        self.lark = lark
        plain_rule_names(lark)
        # Every block's parser is a fresh parser state around the grammar's shared
        # configuration (``lark_internals.ShareableParser``).
        self._parser = ShareableParser(lark)
        table = self.table = self._parser.table
        self.start_state: int = table.start_states[START]
        #: The tree-building callback of each rule that builds a call (the capture builds a
        #: call's tree itself, the moment its last token arrives, and assembles it). The
        #: parser's own callbacks for those rules and every rule above them return None: a
        #: block's parser keeps no tree of the calls it has read, so a block of many calls
        #: holds their values, not their trees, until it closes.
        self.build_call: dict[Any, Callable[[list[Any]], Any]] = {}
        callbacks = self._parser.rule_callbacks
        for rule in rules_above_calls(self.lark.rules):
            if is_call(rule):
                self.build_call[rule] = callbacks[rule]
            callbacks[rule] = discard
        #: Whether a call may end where its block ends (``_grammar.endings.end_call_key``):
        #: the capture then builds it when the block ends (``Capture._ends``).
        #: (and a raw body that runs to the end of its block: ``endings.raw_rest``).
        self.end_calls = blueprint.get("raw_rest", False) or any(
            end_call_key(actions) for actions in table.states.values()
        )
        #: The call rules whose tree may hold a ``repair_*`` node (the capture reads those).
        self.repairing_calls = repairing_calls(self.lark.rules)
        self._conf = self._parser.with_callbacks(callbacks, START)
        #: Argument streaming (``_blocks.argstream``): the rules whose nodes the stream reads as they
        #: are reduced, and the terminals that begin or hold a call's arguments (those below
        #: a ``param``, ``call_args`` or ``call_json``): a call has started once one is read.
        self.stream_rules = tuple(
            r for r in self.lark.rules if (r.alias or r.origin.name) in STREAM_NODES
        )
        self.arg_terminals = terminals_below(self.lark.rules, ARG_NODES)
        #: ... and those that hold a JSON object of arguments (``call_args``, ``call_json``)
        self.json_terminals = terminals_below(self.lark.rules, JSON_NODES)
        #: ... and those of a ``raw_value`` (a body taken as written, ``decode_raw``)
        self.raw_terminals = terminals_below(self.lark.rules, RAW_NODES)
        #: ... and those of a value node (``value_object``, …): the parameter goes out whole
        self.value_terminals = terminals_below(self.lark.rules, VALUE_NODES)
        #: ... and those of a JSON body that may be an envelope (``call_json`` in a call with
        #: no name yet, ``call_envelope``): its arguments stream once its name has closed
        self.envelope_terminals = terminals_below(self.lark.rules, ENVELOPE_NODES)
        #: ... and those of a body read by SPEC §5 (``param_value``): the argument stream reads
        #: no other run of a parameter as its body (``ArgStream._body_run``)
        self.body_terminals = terminals_below(self.lark.rules, BODY_NODES)
        #: ... of which those of a ``cdata`` node: its text verbatim, not a plain body's
        self.cdata_terminals = terminals_below(self.lark.rules, CDATA_NODES)
        self.terminals: dict[str, TerminalSpec] = {
            kw["name"]: TerminalSpec(**kw) for kw in blueprint["terminals"]
        }
        terms = self.terminals
        self.states: dict[int, StateSpec] = {
            s: StateSpec(
                tuple(terms[n] for n in bounded),
                terms[run] if run else None,
                end_ok,
                table.states[s][call][1] if call is not None else None,
                table.states[s][default][1] if default is not None else None,
                sure,
            )
            for s, (bounded, run, end_ok, call, default, sure) in blueprint["states"].items()
        }
        self._lock = threading.Lock()  # taken to store an answer in the caches below
        self._remembered = 0  # decisions stored in the states' caches since the last clear
        self.opener_dialect: dict[str, str] = dict(blueprint["opener_dialect"])
        #: Per parser state, the dialects (bit ``k``: ``dialects[k]``) whose rules its items
        #: belong to (``_grammar.dialects``); a state missing here could belong to any.
        self.state_dialects: dict[int, int] = dict(blueprint["state_dialects"])
        self.entries = tuple(EntrySpec(*e) for e in blueprint["entries"])
        #: Per entry, its own groups' names in ``entry_exact`` and in its pattern, filled on
        #: first use, not picked out of all the match's groups (benchmarks/README.md, "Fast
        #: paths", "entry groups").
        self._entry_groups: dict[int, tuple[tuple[str, str], ...]] = {}
        #: Per entry, what a block opened at it reads first (``opening``), filled on first use.
        self._openings: dict[tuple[int, tuple[str, ...]], Opening | None] = {}
        self.lead_chars: str = blueprint["lead_chars"]
        #: ... and those of the reply's start, where anchored entries are tried too.
        self.start_lead_chars: str = blueprint.get("start_lead_chars", self.lead_chars)
        #: What the prose hot path (``Sieve.feed``) tests an ASCII chunk for with one ``in``:
        #: the grammar's one ASCII tag lead. With none, a character no text needs ("\0": a
        #: chunk holding it takes the searching path); with several, "" (in every chunk: each
        #: takes the searching path, one regex search for all the leads).
        ascii_leads = [c for c in self.lead_chars if c.isascii()]
        self.prose_lead = ascii_leads[0] if len(ascii_leads) == 1 else "" if ascii_leads else "\0"
        self.entry_index = {e.terminal: k for k, e in enumerate(self.entries)}
        #: How each dialect's call values are read (its directives, ``ValueReading``); all
        #: SPEC §5's (``plain_values``), the capture asks no parser state for its dialect.
        self.value_readings = {d: value_reading(self.traits[d]) for d in self.dialects}
        self.plain_values = all(r is PLAIN_VALUES for r in self.value_readings.values())
        #: The entries that end a thought still open where they stand (SPEC §15): those of a
        #: dialect that declares ``calls_end_thought`` (``thought_enders``).
        self.thought_enders = thought_enders(self)
        #: What prose is searched for in each context of a reply (``_grammar.entry_tables``): the
        #: answer's block entries, and before the answer and in reasoning, the tags too.
        self.entry_tables = entry_tables(
            blueprint, EntryAutomaton(table=blueprint["nfa"]), self.entry_index
        )
        answer = self.entry_tables["answer"]
        #: fast: could the text after a lead character still become an entry?
        self.entry_automaton = answer.automaton
        #: What the sieve found following the tag leads of a short prose text from its
        #: first lead on (``EntryFinder.settles``), by that text: a cache, bounded by
        #: ``_grammar.entry_tables.DECISION_LIMIT`` on its own, so prose never pushes the scanner's
        #: decisions out, nor they it.
        self.settlements = answer.settlements
        self.settle = answer.settle
        #: Terminals that open a call and can also start a block whose opening wrapper is
        #: missing: captures note a checkpoint at each (see ``_blocks.lessons``).
        self.call_openers = frozenset(e.terminal for e in self.entries if e.synthetic is not None)
        #: The bounded terminals after which a block may end, and for a run after which it
        #: may, what its end can be: the bracket that closes a balanced run, any character
        #: for another run. Nothing completes a block where none of them matches further on.
        enders = {
            name
            for actions in table.states.values()
            for name, (action, arg) in actions.items()
            if is_shift(action) and END in table.states[arg] and name in self.terminals
        }
        #: The openers that are a block by themselves (a frame): the block may end right
        #: after one, whatever follows it.
        start = table.states[self.start_state]
        self.whole_openers = frozenset(
            name
            for name, (action, arg) in start.items()
            if is_shift(action) and END in table.states[arg] and name in self.terminals
        )
        self.block_enders = tuple(
            self.terminals[name] for name in sorted(enders) if not self.terminals[name].is_run
        ) + tuple(
            TerminalSpec(f"<end of {name}>", 0, _run_end(self.terminals[name]))
            for name in sorted(enders)
            if self.terminals[name].is_run
        )

    def entry_groups(self, m: re.Match[str], k: int) -> dict[str, str | None] | None:
        """The named groups of entry ``k``'s own pattern in an ``entry_exact`` match ``m``
        (None if it has none): what its token carries, as the scanner's tokens do."""
        names = self._entry_groups.get(k)
        if names is None:  # (the same tuple whoever stores it first: no lock needed)
            prefix = entry_group_prefix(k)
            own = self.terminals[self.entries[k].terminal].pattern.groupindex
            names = self._entry_groups[k] = tuple((prefix + name, name) for name in own)
        return {name: m.group(full) for full, name in names} if names else None

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

    def _opening(self, entry: EntrySpec, path: tuple[str, ...]) -> Opening | None:
        ps = self.new_parser().parser_state
        try:
            if entry.synthetic is not None:
                ps.feed_token(Token(entry.synthetic, ""))
            ps.feed_token(Token(entry.terminal, ""))
            for name in path:
                ps.feed_token(Token(name, ""))
                if name in self.call_openers or name == CDATA_OPEN:
                    return None
                if self.states[ps.state_stack[-1]].call_rule is not None:
                    return None
        except LarkError:
            return None
        spec = self.states[ps.state_stack[-1]]
        if spec.end_ok:
            return None
        run, dialect = spec.run, ""
        if run is not None and run.balanced:
            try:
                ps.feed_token(run.placeholder)
            except LarkError:
                run = None
            else:  # (the dialect a block reading that run has: its ``dialect_now``)
                dialect = self.dialect_of(ps.state_stack, entry.dialect)
        else:
            run = None
        if run is None and not spec.bounded:
            return None
        return Opening(spec if spec.bounded else None, run, dialect)

    @property
    def entry_exact(self) -> re.Pattern[str]:
        """exact: the highest-priority entry that matches completely at a position (one
        named group per entry terminal, its own groups renamed apart; compiled on first
        use)."""
        return self.entry_tables["answer"].exact

    def pattern_sources(self) -> set[str]:
        """The source of every pattern this grammar may compile (what the cache freezes)."""
        out = {t.source for t in self.entry_tables.values()}
        for t in self.terminals.values():
            out.update(s for s in (t.source, t.stop_source, t.tail_source) if s is not None)
            if t._closure:
                out.add(_viable_source(t._closure))
            if t.end_chars:
                out.add(_class_source(frozenset(t.end_chars)))
        for spec in self.states.values():
            ends = _shell_chars(spec.bounded)
            if ends:
                out.add(_class_source(ends))
        for table in self.entry_tables.values():
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

    def new_parser(self) -> InteractiveParser:
        """A Lark ``InteractiveParser`` at the start of a block (what
        ``lark.parse_interactive()`` returns, made cheaply)."""
        return self._parser.new_parser(self._conf, self.start_state)

    def listening_parser(self, listener: Callable[[Any], None]) -> InteractiveParser:
        """``new_parser`` whose ``stream_rules`` hand each node they build to ``listener``
        as well (its own callbacks: a few microseconds a block). Forks of it
        (``fork_parser``) do not listen."""
        callbacks: dict[Any, Callable[..., Any]] = dict(self._parser.rule_callbacks)
        for rule in self.stream_rules:
            callbacks[rule] = listening(callbacks[rule], listener)
        return self._parser.new_parser(
            self._parser.with_callbacks(callbacks, START), self.start_state
        )

    def fork_parser(self, ip: InteractiveParser) -> InteractiveParser:
        """A copy of ``ip`` that shares its values (``ip.copy(deepcopy_values=False)``,
        without copying the idle lexer thread)."""
        return self._parser.fork_parser(self._conf, ip)

    def after_cdata(self, state: int) -> StateSpec | None:
        """The state a CDATA closed in parser state ``state`` (inside its run: after the run's
        placeholder) goes to — the terminals it accepts are where the loose-CDATA repair
        may cut an unclosed CDATA (``_repair``), which argument streaming must not send
        past before ``]]>`` (``_blocks.argstream``). None: ``state`` shifts no CDATA close.
        (The close is a shift, never after a reduce: ``cdata: CDATA_OPEN CDATA_RUN?
        CDATA_CLOSE``; a look-up in the parse table.)"""
        action = self.table.states.get(state, {}).get(CDATA_CLOSE)
        if action is None or not is_shift(action[0]):
            return None
        return self.states.get(action[1])

    def dialect_of(self, stack: list[int], fallback: str) -> str:
        """The dialect a parser with state stack ``stack`` is reading: the first enabled of
        those every state on the stack can belong to (``fallback`` if none). Exact once the
        block is complete; before, the first of those whose rules fit the tokens so far.
        (Per block and per call emitted early: a few lookups.)"""
        mask = -1
        masks = self.state_dialects
        for s in stack:
            mask &= masks.get(s, -1)
        if mask <= 0:
            return fallback
        return self.dialects[(mask & -mask).bit_length() - 1]

    def value_reading_of(self, stack: list[int], fallback: str) -> ValueReading:
        """How the calls of the block a parser with state stack ``stack`` reads take their
        values (``dialect_of``'s dialect's ``ValueReading``; none asked where all are plain)."""
        if self.plain_values:
            return PLAIN_VALUES
        return self.value_readings[self.dialect_of(stack, fallback)]

    def dialect_of_close(self, close_value: str, fallback: str) -> str:
        """The dialect a closing wrapper is spelled in (for blocks whose opener was repaired):
        ``fallback`` (the parse's) if the opener of that spelling opens it too, else the
        opener's. The opener's spelling is the closer's text without what its terminal's
        group ``close`` matched (the grammar says what makes a tag a closing one); a closer
        whose terminal has no such group keeps ``fallback``."""
        for t in self.block_enders:
            m = t.pattern.match(close_value) if CLOSE_GROUP in t.pattern.groupindex else None
            if m is not None and m.end() == len(close_value) and m.start(CLOSE_GROUP) >= 0:
                opened = close_value[: m.start(CLOSE_GROUP)] + close_value[m.end(CLOSE_GROUP) :]
                break
        else:
            return fallback
        for e in self.entries:
            if e.synthetic is None and self.terminals[e.terminal].pattern.match(opened):
                after = self.table.states[self.start_state][e.terminal][1]
                if (
                    fallback in self.dialects
                    and self.state_dialects.get(after, -1) >> self.dialects.index(fallback) & 1
                ):
                    return fallback
                return e.dialect
        return fallback


def thought_enders(g: CompiledGrammar) -> frozenset[str]:
    """The entry terminals that end a thought still open (SPEC §15): an entry is one where a
    dialect it may begin declares ``calls_end_thought`` (with several dialects sharing an
    opener, as SGLang's Qwen3 detector ends the thought at ``<tool_call>`` in either of its
    families' formats). The dialects an entry may begin are those of the parser state its
    opener leads to. A missing-wrapper entry (a bare invoke) is none: its opener is not
    there, and its closer, not it, says whose block it is."""
    flagged = [g.traits[d].flag("calls_end_thought") for d in g.dialects]
    if not any(flagged):
        return frozenset()
    start = g.table.states[g.start_state]
    out = set()
    for e in g.entries:
        if e.synthetic is not None:
            continue
        action = start.get(e.terminal)
        mask = g.state_dialects.get(action[1], 0) if action is not None else 0
        if mask <= 0:  # (no state known: the entry's own dialect)
            mask = 1 << g.dialects.index(e.dialect) if e.dialect in g.dialects else 0
        if any(f and mask >> k & 1 for k, f in enumerate(flagged)):
            out.add(e.terminal)
    return frozenset(out)


def _run_end(run: TerminalSpec) -> str:
    """Where a run after which a block may end can end: after its closing bracket, for a
    balanced one; after any character, for another."""
    return re.escape(run.closer) if run.balanced else "[\\s\\S]"


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

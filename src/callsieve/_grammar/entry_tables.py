"""Strategy: what prose is searched for, in each context of a reply (SPEC §15).

What it does: an ``EntryTable`` is one set of entries — the terminals that can begin
something in prose — with what the sieve reads them with: the entry automaton (a lazy DFA),
the exact alternation, each entry's index, and the settled tag leads. A grammar has up to
five (``EntryIndex.entry_tables``):
  - ``"answer"``: the block entries (every grammar has it);
  - ``"preamble"``: the block entries and ``THINK_OPEN``, last — before the answer, where a
    ``<think>`` opens reasoning (only white space, reasoning or blocks stand before it);
  - ``"reasoning"``: the block entries and ``THINK_CLOSE``, last — inside reasoning;
  - ``"start"`` and ``"start_think"`` (``THINK_OPEN`` last), when some entries are anchored
    (``/^…/``, grammar/README.md): every entry, those too — at the start of the reply and
    right after reasoning, until its first text.
The reasoning tables exist when ``common.lark`` defines those terminals (``_grammar.derive``).
An ``EntryIndex`` is a compiled grammar's side of its entries: the tables, each entry's index
and own groups, the tag leads prose is searched for, and the entries that open a call or end a
thought.
What it guarantees: the block entries keep their index in every table (``entry_index``,
``entry_groups`` and the entries' groups are the grammar's), so a match means the same block
whichever table found it; a tag's own entry has the index after the last block entry.
What it costs: nothing per chunk; a table's DFA states are built as prose reaches them, and
each table's settled leads are a cache of its own, bounded like the grammar's.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from .automaton import EntryAutomaton
from .dialects import DialectMap
from .directives import DialectTraits
from .names import THINK_CLOSE, THINK_OPEN
from .patterns import compile as compile_pattern
from .specs import EntrySpec, TerminalSpec, TokenSpec, entry_group_prefix

__all__ = ["DECISION_LIMIT", "THINK_TABLES", "EntryIndex", "EntryTable", "entry_tables"]

#: The reasoning contexts' tables and the tag each adds (the terminals' names are part of the
#: grammar's contract, grammar/README.md).
THINK_TABLES = (("preamble", THINK_OPEN), ("reasoning", THINK_CLOSE))
#: The grammar's caches of answers — the scanner's decisions over all parser states
#: (``CompiledGrammar.remember``, which reads this name), each table's
#: settled tag leads — are each emptied when they hold this many (each a short text and its
#: answer: a few hundred bytes at most; the (c) benchmark's 200 blocks need 475 decisions,
#: the (b) benchmark's prose 2,202 settled leads).
DECISION_LIMIT = 4096


class EntryTable:
    """One context's entries: ``automaton``, ``exact`` (compiled on first use), ``index``
    (entry terminal -> its index), ``tag`` (the reasoning tag's terminal, or None) and
    ``settlements`` (what following the leads of a short text found: see ``settle``)."""

    __slots__ = (
        "automaton",
        "index",
        "tag",
        "settlements",
        "source",
        "_exact",
        "_lock",
        "_by_lead",
        "_by_state",
        "_by_sources",
    )

    def __init__(
        self, source: str, automaton: EntryAutomaton, index: dict[str, int], tag: str | None
    ) -> None:
        self.automaton = automaton
        self.index = index
        self.tag = tag
        self.settlements: dict[str, tuple[int, int]] = {}
        self.source = source  # (the exact alternation's pattern)
        self._exact: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        self._by_lead: dict[str, re.Pattern[str]] = {}  # (``exact_at``'s patterns)
        self._by_state: dict[int, re.Pattern[str]] = {}  # (``exact_in``'s patterns)
        self._by_sources: dict[tuple[int, ...], re.Pattern[str]] = {}  # (both's, by sources)

    @property
    def exact(self) -> re.Pattern[str]:
        """The highest-priority entry that matches completely at a position."""
        if self._exact is None:  # (a benign duplicate compile at worst)
            self._exact = compile_pattern(self.source)
        return self._exact

    def exact_at(self, lead: str) -> re.Pattern[str]:
        """Fast path ("entries by lead"): ``exact`` cut to the entries that may begin with
        ``lead``. A match at a position whose character is ``lead`` is the same. It buys
        trying every other alternative (under "all", a ``[`` leaves 4 of 91)."""
        pattern = self._by_lead.get(lead)
        if pattern is None:  # (a benign duplicate compile at worst)
            auto = self.automaton
            kept = tuple(auto.sources_at(auto.step(0, lead)))
            pattern = self._by_lead[lead] = _narrowed(self, kept)
        return pattern

    def exact_in(self, state: int) -> re.Pattern[str]:
        """Fast path ("entries by state"): ``exact`` cut to the sources the automaton still
        has in ``state``, the first accepting state of a walk from a position. A match there
        is the same: no alternative matches a shorter text (the walk would have accepted
        before), and one that matches a longer one is still possible. It buys trying the
        alternatives of every other entry that begins with the same character (under "all",
        a ``<`` leaves more than half of them: ``exact_at`` keeps them all)."""
        pattern = self._by_state.get(state)
        if pattern is None:  # (a benign duplicate compile at worst)
            if len(self._by_state) >= DECISION_LIMIT:
                self._by_state.clear()
            kept = tuple(self.automaton.sources_at(state))
            pattern = self._by_state[state] = _narrowed(self, kept)
        return pattern

    def settle(self, key: str, answer: tuple[int, int]) -> None:
        """Store a settled lead, dropping them all past ``DECISION_LIMIT``."""
        with self._lock:
            if len(self.settlements) >= DECISION_LIMIT:
                self.settlements.clear()
            self.settlements[key] = answer


def _narrowed(table: EntryTable, sources: tuple[int, ...]) -> re.Pattern[str]:
    """``table``'s exact alternation kept to the alternatives ``sources`` the automaton
    still has (after a lead, or in a state), in their order. An alternative it has not
    cannot match there: its NFA accepts a superset of what the alternative matches. The
    whole alternation where the source does not split into one named group per source of
    the automaton, or where over half stay. One compile per set of sources."""
    known = table._by_sources.get(sources)
    if known is not None:
        return known
    parts = _alternatives(table.source)
    auto = table.automaton
    if len(parts) != auto.source_count() or not all(p.startswith("(?P<") for p in parts):
        return table.exact
    kept = [parts[k] for k in sources]
    if not kept or 2 * len(kept) > len(parts):  # (a compile of ms that would buy little)
        return table.exact
    if len(table._by_sources) >= DECISION_LIMIT:
        table._by_sources.clear()
    pattern = table._by_sources[sources] = compile_pattern("|".join(kept))
    return pattern


def _alternatives(source: str) -> list[str]:
    """``source`` split at the ``|`` outside groups and character classes."""
    parts: list[str] = []
    depth = start = i = 0
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 1
        elif c == "[":  # (a class: a ``]`` first in it is a character)
            i += 2 if source.startswith("[^", i) else 1
            i += source[i] == "]" if i < n else 0
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
        i += 1
    parts.append(source[start:])
    return parts


def entry_tables(
    blueprint: dict[str, Any], answer: EntryAutomaton, index: dict[str, int]
) -> dict[str, EntryTable]:
    """The grammar's tables: ``"answer"`` around its own automaton, and a reasoning table for
    each tag the blueprint holds (``_grammar.derive._think_tables``)."""
    tables = {"answer": EntryTable(blueprint["entry_exact"], answer, index, None)}
    for name, t in blueprint.get("think", {}).items():
        tables[name] = EntryTable(
            t["exact"],
            EntryAutomaton(table=t["nfa"]),
            {**index, t["terminal"]: len(index)},
            t["terminal"],
        )
    start = blueprint.get("start")
    if start is not None:  # (anchored entries: ``derive._start_tables``)
        tables["start"] = EntryTable(
            start["exact"], EntryAutomaton(table=start["nfa"]), index, None
        )
        t = start["think"]
        if t is not None:
            tables["start_think"] = EntryTable(
                t["exact"],
                EntryAutomaton(table=t["nfa"]),
                {**index, t["terminal"]: len(index)},
                t["terminal"],
            )
    return tables


class EntryIndex:
    """A compiled grammar's entries as prose meets them (immutable after construction; the
    tables' caches are their own). ``entries`` and ``entry_index`` (terminal -> index);
    ``entry_tables``: what prose is searched for in each context of a reply (the answer's
    block entries, and before the answer and in reasoning, the tags too); ``lead_chars``:
    the characters a tag can begin with, and ``start_lead_chars`` those of the reply's
    start, where anchored entries are tried too; ``opener_dialect``: the dialect each
    opener begins; ``call_openers``: the terminals that open a call and can also start a
    block whose opening wrapper is missing (captures note a checkpoint at each, see
    ``_blocks.lessons``); ``thought_enders``: the entries that end a thought still open where
    they stand (SPEC §15, ``thought_enders``)."""

    __slots__ = (
        "entries",
        "entry_index",
        "entry_tables",
        "lead_chars",
        "start_lead_chars",
        "prose_lead",
        "opener_dialect",
        "call_openers",
        "thought_enders",
        "_groups",
    )

    def __init__(
        self,
        blueprint: dict[str, Any],
        entries: tuple[EntrySpec, ...],
        terminals: dict[str, TerminalSpec],
        enders: frozenset[str],
    ) -> None:
        self.entries = entries
        index = self.entry_index = {e.terminal: k for k, e in enumerate(entries)}
        self.entry_tables = entry_tables(blueprint, EntryAutomaton(table=blueprint["nfa"]), index)
        self.lead_chars: str = blueprint["lead_chars"]
        self.start_lead_chars: str = blueprint.get("start_lead_chars", self.lead_chars)
        #: What the prose hot path (``Sieve.feed``) tests an ASCII chunk for with one ``in``:
        #: the grammar's one ASCII tag lead. With none, a character no text needs ("\0": a
        #: chunk holding it takes the searching path); with several, "" (in every chunk: each
        #: takes the searching path, one regex search for all the leads).
        ascii_leads = [c for c in self.lead_chars if c.isascii()]
        self.prose_lead = ascii_leads[0] if len(ascii_leads) == 1 else "" if ascii_leads else "\0"
        self.opener_dialect: dict[str, str] = dict(blueprint["opener_dialect"])
        self.call_openers = frozenset(e.terminal for e in entries if e.synthetic is not None)
        self.thought_enders = enders
        #: Per entry, its own groups' names in ``exact`` and in its pattern: not picked out of
        #: all the match's groups (benchmarks/README.md, "Fast paths", "entry groups").
        self._groups = tuple(_own_groups(k, terminals[e.terminal]) for k, e in enumerate(entries))

    def entry_groups(self, m: re.Match[str], k: int) -> dict[str, str | None] | None:
        """The named groups of entry ``k``'s own pattern in an ``exact`` match ``m`` of the
        answer's table (None if it has none): what its token carries, as the scanner's
        tokens do."""
        names = self._groups[k]
        return {name: m.group(full) for full, name in names} if names else None


def _own_groups(k: int, term: TerminalSpec) -> tuple[tuple[str, str], ...]:
    """Entry ``k``'s own named groups: (its name in ``exact``, its name in its pattern)."""
    if not isinstance(term, TokenSpec) or term.pattern is None:
        return ()
    prefix = entry_group_prefix(k)
    return tuple((prefix + name, name) for name in term.pattern.groupindex)


def thought_enders(
    entries: tuple[EntrySpec, ...],
    start_row: dict[str, Any],
    dialect_map: DialectMap,
    traits: dict[str, DialectTraits],
) -> frozenset[str]:
    """The entry terminals that end a thought still open (SPEC §15): an entry is one where a
    dialect it may begin declares ``calls_end_thought`` (with several dialects sharing an
    opener, as SGLang's Qwen3 detector ends the thought at ``<tool_call>`` in either of its
    families' formats). The dialects an entry may begin are those of the parser state its
    opener leads to (``start_row``: the start state's row of the parse table). A
    missing-wrapper entry (a bare invoke) is none: its opener is not there, and its closer,
    not it, says whose block it is."""
    dialects = dialect_map.dialects
    flagged = [traits[d].flag("calls_end_thought") for d in dialects]
    if not any(flagged):
        return frozenset()
    out = set()
    for e in entries:
        if e.synthetic is not None:
            continue
        action = start_row.get(e.terminal)
        mask = dialect_map.mask(action[1], 0) if action is not None else 0
        if mask <= 0:  # (no state known: the entry's own dialect)
            mask = 1 << dialects.index(e.dialect) if e.dialect in dialects else 0
        if any(f and mask >> k & 1 for k, f in enumerate(flagged)):
            out.add(e.terminal)
    return frozenset(out)

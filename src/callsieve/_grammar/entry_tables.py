"""Strategy: what prose is searched for, in each context of a reply (SPEC §15).

What it does: an ``EntryTable`` is one set of entries — the terminals that can begin
something in prose — with what the sieve reads them with: the entry automaton (a lazy DFA),
the exact alternation, each entry's index, and the settled tag leads. A grammar has up to
five (``CompiledGrammar.entry_tables``):
  - ``"answer"``: the block entries (every grammar has it);
  - ``"preamble"``: the block entries and ``THINK_OPEN``, last — before the answer, where a
    ``<think>`` opens reasoning (only white space, reasoning or blocks stand before it);
  - ``"reasoning"``: the block entries and ``THINK_CLOSE``, last — inside reasoning;
  - ``"start"`` and ``"start_think"`` (``THINK_OPEN`` last), when some entries are anchored
    (``/^…/``, grammar/README.md): every entry, those too — at the start of the reply and
    right after reasoning, until its first text.
The reasoning tables exist when ``common.lark`` defines those terminals (``_grammar.derive``).
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
from .names import THINK_CLOSE, THINK_OPEN
from .patterns import compile as compile_pattern

__all__ = ["DECISION_LIMIT", "THINK_TABLES", "EntryTable", "entry_tables"]

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

    __slots__ = ("automaton", "index", "tag", "settlements", "source", "_exact", "_lock")

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

    @property
    def exact(self) -> re.Pattern[str]:
        """The highest-priority entry that matches completely at a position."""
        if self._exact is None:  # (a benign duplicate compile at worst)
            self._exact = compile_pattern(self.source)
        return self._exact

    def settle(self, key: str, answer: tuple[int, int]) -> None:
        """Store a settled lead, dropping them all past ``DECISION_LIMIT``."""
        with self._lock:
            if len(self.settlements) >= DECISION_LIMIT:
                self.settlements.clear()
            self.settlements[key] = answer


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

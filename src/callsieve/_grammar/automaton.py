"""Strategy: a lazily built DFA that follows, character by character, whether the text after
a possible tag lead can still become one of a set of terminals (the grammar's entries).

What it does: the entry terminals' patterns (as parsed by ``re``) become one Thompson NFA;
look-arounds are dropped, so the automaton accepts a superset — it may keep a candidate alive
one character longer than the exact pattern would, never end one early. DFA states are sets
of NFA states, created on first use; each state memoises its transitions per character.
``step(state, ch)`` returns the next state or ``DEAD``; ``accepting[state]`` says some
terminal may be complete here, which is when the caller asks the exact pattern. ``onward``
keeps the memoised transitions that stay open (live, not accepting) apart, so a held
candidate's walk is one lookup and one test per character. The NFA is plain data
(``nfa_table``: lists of ints and character-class sources), so a grammar cache can store it;
its per-character tests are compiled the first time a DFA state is built over them.
What it guarantees: deciding a candidate costs O(1) per character, and a candidate held
across chunks is advanced over the new characters only (never re-scanned). One automaton is
shared by every sieve of a grammar, across threads: readers (``walk``, the sieve's inlined
walks) take no lock; a memo miss builds the transition under the automaton's lock, and a
state's id is published (in ``_ids``, then in a ``trans`` memo) only once ``trans``,
``onward``, ``accepting`` and ``rank`` all hold its entry, so a reader never meets a state it
cannot look up. A transition, once known, never changes (a cleared memo learns it again).
What it costs: one NFA build per grammar (none when it comes from the cache); the DFA grows
with the characters actually seen (each state's memo is bounded: past ``_MEMO_LIMIT`` entries
it is cleared and rebuilt); one lock acquisition per memo miss, none per memo hit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from .._base import re_internals as _re
from .._base.errors import GrammarError
from .patterns import compile as compile_pattern

__all__ = ["DEAD", "UNKNOWN", "EntryAutomaton", "NfaTable", "nfa_table"]

DEAD = -1
UNKNOWN = -2  # no memoised transition yet
_WINDOW = 64  # characters sliced at a time by walk()
_MEMO_LIMIT = 4096
_UNROLL_LIMIT = 256

#: The NFA as plain data: per NFA state, the entry it belongs to, its epsilon moves and its
#: character moves (``(class source, target)``); the final states; the start state.
NfaTable = tuple[list[int], list[list[int]], list[list[tuple[str, int]]], frozenset[int], int]


def _char_class(op: str, av: Any) -> str:
    """The ``re`` source of a one-character test."""
    from .prefix import char_class_source  # (only when an NFA is built: not on a cache hit)

    try:
        return char_class_source(op, av)
    except ValueError as exc:
        raise GrammarError(f"unsupported character class item {exc} in an entry terminal") from None


class _NFA:
    def __init__(self) -> None:
        self.tag: list[int] = []  # which source (entry) each state belongs to
        self.current = 0
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[str, int]]] = []
        self.final: set[int] = set()

    def state(self) -> int:
        self.tag.append(self.current)
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def build(self, items: list[tuple[Any, Any]], s: int) -> int:
        for op, av in items:
            s = self._item(str(op), av, s)
        return s

    def _item(self, op: str, av: Any, s: int) -> int:
        if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            e = self.state()
            self.moves[s].append((_char_class(op, av), e))
            return e
        if op == "SUBPATTERN":
            if av[1] or av[2]:
                raise GrammarError("inline flags are not supported in entry terminals")
            return self.build(list(av[3]), s)
        if op == "BRANCH":
            e = self.state()
            for alt in av[1]:
                a = self.state()
                self.eps[s].append(a)
                self.eps[self.build(list(alt), a)].append(e)
            return e
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, body = av
            body = list(body)
            if lo > _UNROLL_LIMIT or (hi != _re.MAXREPEAT and hi > _UNROLL_LIMIT):
                raise GrammarError("repetition too long for an entry terminal")
            for _ in range(lo):
                s = self.build(body, s)
            if hi == _re.MAXREPEAT:
                loop = self.state()
                self.eps[s].append(loop)
                self.eps[self.build(body, loop)].append(loop)
                return loop
            e = self.state()
            self.eps[s].append(e)
            for _ in range(hi - lo):
                s = self.build(body, s)
                self.eps[s].append(e)
            return e
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            return s  # zero-width: dropped (superset, see module docstring)
        raise GrammarError(f"unsupported construct {op} in an entry terminal")


def nfa_table(sources: Sequence[str]) -> NfaTable:
    """The Thompson NFA of ``sources`` (one entry each, in order) as plain data."""
    nfa = _NFA()
    start = nfa.state()
    for k, source in enumerate(sources):
        nfa.current = k
        a = nfa.state()
        nfa.eps[start].append(a)
        nfa.final.add(nfa.build(_re.parse(source), a))
    return nfa.tag, nfa.eps, nfa.moves, frozenset(nfa.final), start


class EntryAutomaton:
    """The lazy DFA for a set of patterns (``sources``, or their NFA ``table``). State 0 is
    the start (before the lead char)."""

    __slots__ = (
        "_tag",
        "_eps",
        "_moves",
        "_final",
        "_tests",
        "_lock",
        "_ids",
        "_sets",
        "trans",
        "onward",
        "accepting",
        "rank",
    )

    def __init__(self, sources: Sequence[str] = (), table: NfaTable | None = None) -> None:
        tag, eps, moves, final, start = nfa_table(sources) if table is None else table
        self._tag = tag
        self._eps = eps
        self._moves = moves
        self._final = final
        self._tests: dict[str, re.Pattern[str]] = {}  # the moves' tests, compiled on first use
        self._lock = threading.Lock()  # held while a transition (and a state) is built
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self.trans: list[dict[str, int]] = []
        #: per state, the memoised transitions that lead to a live state that is not
        #: accepting (a subset of ``trans``): a walk that only asks "still open, nothing
        #: complete yet?" reads one table and one test per character
        self.onward: list[dict[str, int]] = []
        self.accepting: list[bool] = []
        self.rank: list[int] = []  # lowest source index still possible in each state
        self._intern(self._closure({start}))

    def move_sources(self) -> set[str]:
        """The source of every per-character test the NFA has."""
        return {source for moves in self._moves for source, _ in moves}

    def _closure(self, states: set[int]) -> frozenset[int]:
        stack = list(states)
        seen = set(states)
        eps = self._eps
        while stack:
            for t in eps[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    def _intern(self, nfa_set: frozenset[int]) -> int:
        """The id of a DFA state, made if new (with the lock held, or from ``__init__``).
        Every per-state list gets its entry before the id is published in ``_ids``."""
        if not nfa_set:
            return DEAD
        i = self._ids.get(nfa_set)
        if i is None:
            i = len(self._sets)
            self.trans.append({})
            self.onward.append({})
            self.accepting.append(bool(nfa_set & self._final))
            self.rank.append(min(self._tag[s] for s in nfa_set))
            self._sets.append(nfa_set)
            self._ids[nfa_set] = i
        return i

    def source_count(self) -> int:
        """How many sources the automaton follows."""
        return max(self._tag) + 1

    def sources_at(self, state: int) -> list[int]:
        """The sources (by index, in order) still possible in ``state``: every one that may
        match a text that led here (a superset: look-arounds are dropped)."""
        return sorted({self._tag[s] for s in self._sets[state]}) if state >= 0 else []

    def step(self, state: int, ch: str) -> int:
        memo = self.trans[state]
        nxt = memo.get(ch)
        if nxt is not None:
            return nxt
        with self._lock:
            nxt = memo.get(ch)  # (another thread may have built it meanwhile)
            if nxt is None:
                nxt = self._target(state, ch)
                onward = self.onward[state]
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                    onward.clear()
                memo[ch] = nxt  # published only now: ``nxt``'s lists are all filled
                if nxt >= 0 and not self.accepting[nxt]:
                    onward[ch] = nxt
        return nxt

    def _target(self, state: int, ch: str) -> int:
        """Where ``ch`` leads from ``state``, worked out (with the lock held)."""
        moves = self._moves
        tests = self._tests
        targets: set[int] = set()
        for s in self._sets[state]:
            for source, t in moves[s]:
                test = tests.get(source)
                if test is None:
                    test = tests[source] = compile_pattern(source)
                if test.match(ch):
                    targets.add(t)
        return self._intern(self._closure(targets)) if targets else DEAD

    def walk(self, state: int, text: str, pos: int, end: int) -> tuple[int, int]:
        """Advance over ``text[pos:end]`` until the automaton dies or accepts. Returns
        ``(state, index)``: ``DEAD`` and the index of the killing character; an accepting
        state and the index just after the character that reached it; or the live state
        and ``end``. The text is read in windows of ``_WINDOW`` characters (iterating a
        slice beats indexing; a bounded slice keeps a walk over a long text linear)."""
        onward = self.onward  # (the transitions that stay open: one test per character)
        j = pos
        while j < end:
            for ch in text[j:end] if end - j <= _WINDOW else text[j : j + _WINDOW]:
                nxt = onward[state].get(ch)
                if nxt is None:  # dead, accepting, or not known yet
                    nxt = self.trans[state].get(ch, UNKNOWN)
                    if nxt == UNKNOWN:
                        nxt = self.step(state, ch)
                    if nxt < 0:
                        return DEAD, j
                    if self.accepting[nxt]:
                        return nxt, j + 1
                state = nxt
                j += 1
        return state, end

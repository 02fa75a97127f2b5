"""Strategy: prose entry detection — does a tag lead in prose begin a block's opener?

What it does: ``EntryFinder`` answers the sieve's two questions about a tag lead, with the
entry automaton (a lazy DFA over the grammar's entry terminals) and the exact entry pattern:
``settles(text, found)`` — do all the leads from ``found`` on die within ``text`` (prose), is
one alive at the end (hold it), or must the machine decide? (a ``Lead``) — and
``candidate`` — at this lead: text, a held candidate (HOLD_SEEN if an entry may already be
complete), or an opener (the match)? The exact pattern is asked only where the automaton accepts. Both answer through
what they return: the finder keeps no scratch state.
What it guarantees: an answer that depends only on the text from the lead on, never on the
chunking: an opener is not taken while a higher-priority one may still complete.
What it costs: the automaton's transitions are dictionary lookups (a state's first visit
builds it); ``settles`` remembers its answer for short texts (the grammar's
``settlements``), since the same few non-tag leads (``a<b``, ``<br>``, ``<-``) come back
again and again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .._blocks.opening import Passed
from .._grammar.automaton import DEAD, UNKNOWN
from .._grammar.compiled import CompiledGrammar
from .._grammar.entry_tables import EntryTable
from .._scan.fences import FenceState

__all__ = ["ALL_PROSE", "HOLD", "HOLD_SEEN", "OPEN", "TEXT", "UNSETTLED", "EntryFinder", "Lead"]

ALL_PROSE = -1  # settles(): every lead died
UNSETTLED = -2  # settles(): the full machine must decide
TEXT = "text"  # candidate(): the lead is text
HOLD = "hold"  # ... a viable prefix of an opener: hold it (the value: its automaton state)
HOLD_SEEN = "hold, seen"  # ... as HOLD, and it passed an accepting state on the way
OPEN = "open"  # ... an opener (the value is its match)
_SHORT_WALK = 16  # characters _follow reads inline before it hands over to the walk
_SETTLE_SPAN = 16  # settles() remembers its answers for texts this short (from the lead)
_LIVE = FenceState.LIVE


class Lead(NamedTuple):
    """What ``EntryFinder.settles`` found following a text's tag leads."""

    #: ``ALL_PROSE``: every lead died; ``UNSETTLED``: the machine must decide; ``>= 0``: the
    #: lead this many characters after the first one is still alive at the text's end
    #: (every lead before it died).
    at: int
    #: The automaton state of that live lead (0 otherwise).
    state: int = 0


#: The two answers without a live lead, made once.
PROSE_LEAD = Lead(ALL_PROSE)
UNSETTLED_LEAD = Lead(UNSETTLED)


class EntryFinder:
    """One per sieve and entry table: ``table`` says which entries count (``_grammar.entry_tables``: the answer's, or, before
    the answer and in reasoning, the reasoning tag's too)."""

    __slots__ = (
        "table",
        "leads",
        "tracker",
        "auto",
        "lead_search",
        "_lead_state",
        "_settlements",
    )

    def __init__(
        self,
        g: CompiledGrammar,
        table: EntryTable,
        lead_search: Any,
        tracker: Any = None,
        leads: str | None = None,
    ) -> None:
        self.table = table
        #: The tag leads ``lead_search`` stops at (the grammar's; the start's, with anchored
        #: entries, more): the sieve sets its tracker's to them (``FenceTracker.use_leads``).
        self.leads = g.openers.lead_chars if leads is None else leads
        self.tracker = tracker  # (the fence tracker whose ``live_lead`` ``lead_search`` is)
        self.auto = table.automaton
        self.lead_search = lead_search
        self._settlements = table.settlements
        self._lead_state = {c: self.auto.step(0, c) for c in self.leads}

    def settles(self, text: str, found: Any) -> Lead:
        """Follow every lead character in ``text`` from ``found`` on (``Lead``): each dies
        within ``text`` (``ALL_PROSE``), or the one ``at`` characters after ``found`` is
        still alive at the end (all before it died), or the full machine decides
        (``UNSETTLED``: a backtick or tilde, or an opener that may be complete). The answer
        for a short text is the one remembered, not a new one."""
        i: int = found.start()
        if len(text) - i > _SETTLE_SPAN:
            return self._follow(text, found)
        key = text[i:] if i else text
        hit = self._settlements.get(key)
        if hit is None:
            hit = self._follow(text, found)
            self.table.settle(key, hit)
        return hit  # type: ignore[return-value]  # (what ``_follow`` made: a ``Lead``)

    def _follow(self, text: str, found: Any) -> Lead:
        """``settles``, worked out: the automaton follows each lead in turn."""
        n = len(text)
        auto = self.auto
        trans = auto.trans
        accepting = auto.accepting
        first: int = found.start()
        while found is not None:
            i = found.start()
            state = self._lead_state.get(text[i])
            if state is None:
                return UNSETTLED_LEAD
            # The automaton's walk, inlined for the short stretch a non-tag lead lives
            # (most die within a few characters); longer texts go on with ``walk``.
            j = i + 1
            nxt = state
            for ch in text[j : j + _SHORT_WALK]:
                nxt = trans[state].get(ch, UNKNOWN)
                if nxt < 0:
                    break
                state = nxt
                j += 1
                if accepting[state]:
                    return UNSETTLED_LEAD  # an opener may be complete: the machine decides
            if nxt == DEAD:
                state = DEAD
            elif j < n:  # a transition not yet known, or a longer stretch: the walk
                state, j = auto.walk(state, text, j, n)
            if state >= 0:
                if j < n or accepting[state]:
                    return UNSETTLED_LEAD
                return Lead(i - first, state)
            found = self.lead_search(text, i + 1)
        return PROSE_LEAD

    def candidate(
        self, buf: str, i: int, final: bool, state: int, j: int, seen: bool
    ) -> tuple[str, Any]:
        """Decide the possible opener at ``buf[i]``: (OPEN, match), (HOLD or HOLD_SEEN, its
        automaton state) or (TEXT, None). The automaton has already read ``buf[i:j]`` into ``state``; ``seen``:
        it passed an accepting state on the way (an entry may be complete)."""
        table = self.table
        auto = self.auto
        accepting = auto.accepting
        n = len(buf)
        while True:
            if accepting[state]:  # (the first on the walk, unless ``seen``: ``exact_in``)
                m = (table.exact_at(buf[i]) if seen else table.exact_in(state)).match(buf, i)
                seen = True
                if m is not None:
                    if final:
                        return OPEN, m
                    # A higher-priority entry still possible at the end of the buffer must
                    # be given the chance to complete: the answer may not depend on chunking.
                    k = table.index[str(m.lastgroup)]  # (see ``BlockLife.open``)
                    if auto.rank[state] >= k:  # (a walk only loses entries: none before k)
                        return OPEN, m
                    st, q = state, j
                    while q < n and st >= 0:
                        st, q = auto.walk(st, buf, q, n)
                    if st >= 0 and auto.rank[st] < k:
                        return HOLD_SEEN, st
                    return OPEN, m
            if j >= n and not final:
                return (HOLD_SEEN if seen else HOLD), state
            if j < n:
                state, j = auto.walk(state, buf, j, n)
            if state < 0 or j >= n and final:
                # No entry can grow any further: the best complete one, if any, wins (the
                # walk may have ended on an accepting state at the very end of the input).
                m = (
                    table.exact_at(buf[i]).match(buf, i)
                    if seen or (state >= 0 and accepting[state])
                    else None
                )
                return (TEXT, None) if m is None else (OPEN, m)

    def pass_over(self, buf: str, p: int, fails: Callable[[Any], bool]) -> Passed:
        """Pass over the sieve's leads from ``buf[p]`` on, as the sieve would, before the end
        of the input and in a context that does not end at the first text: the leads this
        finder says are text, and the openers whose block ``fails`` (given the match:
        a reasoning tag's, too) says fails at once (``_blocks.opening.fails_along``). Its ``stop`` is ``len(buf)``
        where every lead was passed over. Only in LIVE prose with no backtick or tilde
        run pending, where the sieve's ``advance`` only searches; it stops at a backtick
        or a tilde."""
        tracker = self.tracker
        last = -1
        if tracker is None or tracker.state is not _LIVE or tracker.run_len:
            return Passed(p, last)
        search = tracker.live_lead.search
        table = self.table
        seen = ""  # (the text the automaton read to its first accepting state, last time)
        exact: Any = None
        rank = 0
        while True:
            found = search(buf, p)
            if found is None:
                return Passed(len(buf), last)
            i: int = found.start()
            c = buf[i]
            if c == "`" or c == "~":
                return Passed(i, last)
            # An opener whose text up to the automaton's first accepting state is the last
            # one's: the automaton would walk it to the same state (``candidate``).
            m = exact.match(buf, i) if seen and buf.startswith(seen, i) else None
            if m is None or table.index[m.lastgroup] > rank:
                verdict, m = self.candidate(buf, i, False, 0, i, False)
                if verdict is TEXT:
                    p = i + 1
                    continue
                if verdict is not OPEN:
                    return Passed(i, last)
                state, j = self.auto.walk(0, buf, i, len(buf))
                if state >= 0 and self.auto.accepting[state] and not self.auto.accepting[0]:
                    seen, exact, rank = buf[i:j], table.exact_at(c), self.auto.rank[state]
            if not fails(m):
                return Passed(i, last)
            last, p = i, m.end()

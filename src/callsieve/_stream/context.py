"""Strategy: where the reply stands (SPEC §15), one owner: ``Where`` holds the context, the
entry finder and fence tracker prose is read with there, and what prose is released as.

What it does: ``Where.step(found)`` takes the context's step in ``modes.STEPS`` (a reasoning
tag, the first text, a block opening, calls that end the thought). It goes to the first
target the sieve has, and switches the finder, the tracker and the cursor's tracker with it.
What it guarantees: the context changes only in ``step``; a step not in the table raises
``IllegalStep``. Each context's finder is built once (``finders``).
What it costs: a context change is a table lookup and a few stores; nothing per chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._base.errors import ConfigurationError
from .._base.events import Reasoning, Text
from .._grammar.automaton import EntryAutomaton
from .._grammar.compiled import CompiledGrammar
from .._grammar.names import THINK_CLOSE
from .._scan.cursor import Cursor
from .._scan.fences import FenceTracker, lead_search
from .entries import EntryFinder, Lead
from .modes import ANSWER, CONTEXTS, FIRST_CONTEXT, START, STEPS, Context, Found, Mode, step

__all__ = ["Where", "finders"]


class Where:
    """Where one sieve's reply stands: its ``context`` and what that context reads with."""

    __slots__ = (
        "context",
        "finder",
        "fences",
        "kind",
        "home",
        "until_text",
        # The finder's parts the sieve's readers use, one hop away (resolved in ``_enter``).
        "lead_search",
        "settles",
        "auto",
        "accepting",
        "onward",
        "trans",
        "_finders",
        "_cur",
    )

    context: Context
    #: The context's entry finder (its automaton, its lead search, its tracker).
    finder: EntryFinder
    #: The fence tracker prose is read with (reasoning's sees no code).
    fences: FenceTracker
    #: What prose is released as (``Text`` or ``Reasoning``).
    kind: type[Text | Reasoning]
    #: The mode nothing-held prose is read in.
    home: Mode
    #: The context lasts only until the first text that is not white space.
    until_text: bool
    #: The finder's lead search and ``settles`` (``_read_prose``), and its entry automaton
    #: with the automaton's tables (``_read_candidate``).
    lead_search: Callable[..., Any]
    settles: Callable[[str, Any], Lead]
    auto: EntryAutomaton
    accepting: list[bool]
    onward: list[dict[str, int]]
    trans: list[dict[str, int]]

    def __init__(self, g: CompiledGrammar, cur: Cursor, reasoning: str) -> None:
        self._cur = cur
        self.fences = cur.fences
        self._finders = finders(g, cur.fences, reasoning)
        self._enter(next(c for c in FIRST_CONTEXT[reasoning] if c in self._finders))

    def step(self, found: Found) -> Context:
        """Take the step ``found`` from here (``STEPS``): the first target the sieve has."""
        to = next(c for c in step(self.context, found) if c in self._finders)
        if to is not self.context:
            self._enter(to)
        return self.context

    def _enter(self, context: Context) -> None:
        """What ``CONTEXTS`` says of ``context``: its finder (and the fence tracker: reasoning's
        sees no code), what it is released as, and its mode with nothing held."""
        spec = CONTEXTS[context]
        self.context = context
        finder = self.finder = self._finders[context]
        if finder.tracker is not self.fences:  # (reasoning's sees no code: SPEC §15)
            self.fences = finder.tracker
            self._cur.use_fences(finder.tracker)
        self.fences.use_leads(finder.leads)  # (the start's anchored entries lead with more)
        self.lead_search = finder.lead_search
        self.settles = finder.settles
        auto = self.auto = finder.auto
        self.accepting = auto.accepting
        self.onward = auto.onward
        self.trans = auto.trans
        self.until_text = context in _UNTIL_TEXT
        self.kind = spec.kind
        self.home = spec.home


#: The contexts that last only until the first text (those with a ``FIRST_TEXT`` step).
_UNTIL_TEXT = frozenset(c for c in CONTEXTS if (c, Found.FIRST_TEXT) in STEPS)


def finders(g: CompiledGrammar, fences: FenceTracker, reasoning: str) -> dict[Context, EntryFinder]:
    """An entry finder for each context the ``reasoning`` option can reach (SPEC §15) and
    the grammar has the tables of (``ContextSpec.tables``; a grammar without the reasoning
    tags has only the answer, as if it were ``"off"``; ``"open"`` needs ``THINK_CLOSE`` at
    least). The finders of contexts with code share the sieve's fence tracker, ``fences``;
    the others one that sees no code (its ``lead_search`` is the tracker's:
    ``EntryFinder.tracker``)."""
    tables = g.openers.entry_tables
    if reasoning == "open" and "reasoning" not in tables:
        raise ConfigurationError(
            f"reasoning='open' needs a {THINK_CLOSE} terminal in the grammar's common.lark",
            expected=(THINK_CLOSE,),
        )
    plain: FenceTracker | None = None
    found: dict[Context, EntryFinder] = {}
    for context, spec in CONTEXTS.items():
        if (reasoning == "off" and context not in (ANSWER, START)) or not all(
            t in tables for t in spec.tables
        ):
            continue
        tracker = fences
        if not spec.code:
            tracker = plain = plain or FenceTracker(g.openers.lead_chars, code=False)
        table = tables[spec.tables[0]]
        if context is ANSWER and reasoning == "tags" and "reasoning" in tables:
            # The answer's entries and THINK_CLOSE: a </think> there closes nothing — the sign
            # of a template that wrote <think> itself — and is noticed as the openers are,
            # with no search of its own (``SieveMachine._reasoning_tag``; docs/reasoning.md).
            table = tables["reasoning"]
        if context is START:
            # Anchored entries too, and a <think> where reasoning may open: their leads.
            if reasoning != "off" and "start_think" in tables:
                table = tables["start_think"]
            found[context] = EntryFinder(
                g,
                table,
                lead_search(g.openers.start_lead_chars, True),
                tracker,
                g.openers.start_lead_chars,
            )
            continue
        found[context] = EntryFinder(g, table, tracker.live_lead.search, tracker)
    return found

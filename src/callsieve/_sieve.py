"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes.
Between blocks the sieve is in PROSE: the fence tracker walks the text and stops at each
possible tag lead outside code; there the entry automaton (derived from the grammar's entry
terminals) follows the text, and the exact entry pattern is asked only when it accepts, so a
tail that may still become an opener is held back (bounded by the longest opener) and
everything else goes out at once. A complete entry starts a ``Capture`` (state CAPTURE),
which ends as calls or fails; a failed block is released from its opener and the rest is
scanned again as prose, so a mention followed by a real block works.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking, every character is released as text or belongs to exactly one parsed block, and
no ``str`` input raises. ``parse()`` is this machine run over one chunk.
What it costs: the common chunk never reaches the machine (see ``Sieve``'s fast modes): an
ASCII chunk of prose without the tag lead is two tests, a logged append and one ``Text``
(the fence tracker, offsets and line-start tail read the log, at most ``HOT_BUDGET`` chunks,
in one piece later); a chunk inside a streaming argument is a test for the run's stop
character and a list append; a held candidate reads only the new text. Everything else is
linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable
from typing import Any

from ._automaton import DEAD, UNKNOWN
from ._capture import COMPLETE, VIABLE, Capture
from ._errors import InputTypeError, SieveClosedError
from ._events import Block, Event, Text, ToolCall, ToolCalls
from ._fences import FenceState, FenceTracker, tail_after
from ._grammar import DEFAULT_DIALECTS, load_grammar
from ._lessons import Lessons
from ._options import (
    DEFAULT_MAX_BLOCK_CHARS,
    EARLY_EMIT,
    MODES,
    SieveOptions,
    make_call_id,
    new_call_id,
)

__all__ = ["EARLY_EMIT", "MODES", "Sieve", "SieveState", "new_call_id"]

HOT_BUDGET = 256  # chunks a hot path may take between two folds (it holds their references)
_NO_CANDIDATE = -2
_SHORT_WALK = 16  # characters _settles follows inline before it hands over to the walk
_SETTLE_SPAN = 16  # _settles remembers its answers for texts this short (from the first lead)
_ALL_PROSE = -1  # _settles(): every lead died
_UNSETTLED = -2  # _settles(): the full machine must decide
_TEXT = "text"
_HOLD = "hold"
_OPEN = "open"


def _group_of(m: Any) -> str:
    """Which entry terminal an ``entry_exact`` match is: its outermost named group, which is
    the last group to close (``lastgroup``), whatever groups the terminal has inside."""
    return str(m.lastgroup)


def _topped(live: list[Callable[[str], None]],
            refill: tuple[Callable[[str], None], ...]) -> list[Callable[[str], None]]:
    """A hot path's budget, refilled if it is spent (its log must have been folded)."""
    if not live:
        live.extend(refill)
    return live


class SieveState(enum.Enum):
    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


# The members as plain module globals (``SieveState.CLOSED`` costs an enum descriptor call,
# about 90 ns in CPython 3.11, on every chunk that reaches the machine).
_PROSE, _CAPTURE, _CLOSED = SieveState.PROSE, SieveState.CAPTURE, SieveState.CLOSED
_LIVE = FenceState.LIVE


class Sieve:
    """Pulls tool calls out of a stream of model text.

    ``Sieve(tools=None, *, early_emit="block", mode="on", max_block_chars=8 MiB,
    dialects=DEFAULT_DIALECTS, grammar_dirs=(), id_factory=new_call_id)``

    States (``SieveState``): PROSE between blocks, CAPTURE while a block is read, CLOSED.
    ``_process`` is the machine; ``feed`` first tries the fast mode ``_settle`` chose for
    the next chunk (at most one is on), each of which handles the common chunk without the
    machine and falls through to it otherwise:
      - ``_budget is _live``: PROSE, nothing held. In ``feed``, an ASCII chunk without
        the tag lead is text and is only logged; any other chunk goes to ``_feed_lead``,
        which looks for lead characters: a chunk whose tag leads all die in it is logged
        too; for one alive at its end the log is first folded into the offsets, the fence
        tracker and the tail (``_fold``), and outside code the lead is held. A spent
        budget sends the next chunk to ``_feed_more``, which folds and tops it up;
      - ``_cand``: a possible opener is held — its automaton reads the new text only
        (``_feed_cand``); one that dies is logged like a hot chunk;
      - ``_run_cap``: CAPTURE inside a run (an argument body) — look for the run's stop;
        a chunk ending in what may begin it keeps that tail held, and the next chunk looks
        again with it; a stop where a tag begins that the chunk cuts holds that tag (the
        shell mode below). With nothing held, ``feed`` only appends (``_rbudget``); the
        room under ``max_block_chars`` catches up in ``_feed_more`` (``_catch_up``), the
        offsets and the block length when a chunk leaves this mode (``_sync_run``);
      - ``_shell_probe``: CAPTURE with a tag cut by the chunk boundary — re-match only when
        a character that could complete it arrives (``_feed_shell``; the capture remembers
        its decisions per parser state, so a re-match is mostly a dictionary lookup), and
        once it completes, run the machine at once.
    """

    __slots__ = (
        "_blocks",
        "_cap",
        "_early",
        "_fences",
        "_g",
        "_held",
        "_id_factory",
        "_lessons",
        "_lead_search",
        "_lead",
        "_log",
        "_budget",
        "_live",
        "_idle",
        "_refill",
        "_lead_state",
        "_walk",
        "_step",
        "_trans",
        "_onward",
        "_settlements",
        "_accepting",
        "_limit",
        "_tail",
        "_cand",
        "_cand_seen",
        "_settled_state",
        "_run_cap",
        "_run_char",
        "_run_may_stop",
        "_pieces",
        "_rbudget",
        "_rlive",
        "_rrefill",
        "_mark",
        "_room",
        "_room0",
        "_total0",
        "_held0",
        "_shell_probe",
        "_shell_room",
        "_off",
        "_record",
        "_saw_syntax",
        "_schemas",
        "_state",
        "_total",
    )

    def __init__(
        self,
        tools: Iterable[Any] | None = None,
        *,
        early_emit: str = "block",
        mode: str = "on",
        max_block_chars: int = DEFAULT_MAX_BLOCK_CHARS,
        dialects: Iterable[str] = DEFAULT_DIALECTS,
        grammar_dirs: Iterable[str | os.PathLike[str]] = (),
        id_factory: Callable[[], str] = new_call_id,
        **unknown: Any,
    ) -> None:
        opts = SieveOptions(tools, early_emit=early_emit, mode=mode,
                            max_block_chars=max_block_chars, dialects=dialects,
                            grammar_dirs=grammar_dirs, id_factory=id_factory, **unknown)
        self._g = load_grammar(opts.dialects, opts.grammar_dirs)
        self._state = _PROSE
        self._cap: Capture | None = None
        self._held = ""
        self._total = 0
        self._fences = FenceTracker(self._g.lead_chars)
        self._lead_search = self._fences.live_lead.search
        # The prose hot path's one ``in`` test: the grammar's ASCII tag lead ("<"). With no
        # ASCII tag lead a character no text needs ("\0": a chunk holding it merely takes
        # the slower path); with more than one, "" (in every chunk: no hot path at all).
        ascii_leads = [c for c in self._g.lead_chars if c.isascii()]
        self._lead = ascii_leads[0] if len(ascii_leads) == 1 else "" if ascii_leads else "\0"
        # The hot path's log and budget (see ``feed``): each hot chunk pops one entry of
        # ``_budget`` (a bound ``_log.append``) and calls it; ``_feed_more`` folds the log
        # (``_fold``) and tops the budget up. ``_budget`` is ``_live`` while the hot path is
        # armed and the always-empty ``_idle`` while it is not.
        self._log: list[str] = []
        self._refill = (self._log.append,) * HOT_BUDGET
        self._live: list[Callable[[str], None]] = list(self._refill)
        self._idle: list[Callable[[str], None]] = []
        auto = self._g.entry_automaton
        self._walk = auto.walk
        self._step = auto.step
        self._trans = auto.trans
        self._onward = auto.onward
        self._settlements = self._g.settlements
        self._accepting = auto.accepting
        self._lead_state = {c: auto.step(0, c) for c in self._g.lead_chars}
        self._tail = "\n"  # the last characters before the unscanned text ("\n": a line start)
        self._cand = _NO_CANDIDATE  # automaton state of a possible opener held at _held[0]
        self._cand_seen = False  # ... which has passed an accepting state
        self._settled_state = 0  # scratch: _settles() leaves a live candidate's state here
        # PROSE, nothing held: the hot path and the one search are on (``_budget`` is
        # ``_live``, even once spent, until something turns them off).
        self._budget = self._live if opts.mode != "off" else self._idle
        # Inside a streaming run: its capture, the stop's single first character ("" if it
        # has none: "" is in every chunk, so ``may_stop`` is asked) and whether a chunk may
        # hold the stop (``bool`` until a run starts: "it may").
        self._run_cap: Capture | None = None
        self._run_char = ""
        self._run_may_stop: Callable[[str], bool] = bool
        # Every capture keeps its run's pieces in this one list, so the run hot path's
        # budget (like ``_budget``: a popped bound append is the record and the bound) is
        # built once. ``_rbudget`` is ``_rlive`` while that path is on, else ``_idle``.
        self._pieces: list[str] = []
        self._rrefill = (self._pieces.append,) * HOT_BUDGET
        self._rlive: list[Callable[[str], None]] = list(self._rrefill)
        self._rbudget = self._idle
        # Run fast path bookkeeping (``_catch_up``, ``_sync_run``): room left under
        # max_block_chars for the pieces before ``_mark``, and the room, total and held
        # length when the counters were last in step.
        self._room = self._room0 = self._total0 = self._held0 = self._mark = 0
        # A tag cut by a chunk boundary inside a block: what could complete it, and how much
        # more may be held before it is too long to be a tag.
        self._shell_probe: Callable[[str], Any] | None = None
        self._shell_room = 0
        self._early = opts.early_emit == "invoke"
        self._off = opts.mode == "off"
        self._limit = opts.max_block_chars
        self._schemas = opts.schemas
        self._id_factory = opts.id_factory
        self._blocks: list[Block] = []
        self._lessons = Lessons()
        self._saw_syntax = False
        self._record = False

    # ------------------------------------------------------------------ public API
    @property
    def state(self) -> SieveState:
        return self._state

    @property
    def saw_tool_call_syntax(self) -> bool:
        """A wrapper, or a repaired missing-wrapper block, was seen outside code."""
        return self._saw_syntax

    def parse_whole(self, text: str) -> tuple[list[Event], tuple[Block, ...]]:
        """For ``parse()`` (documented internal API): ``text`` as the one chunk, then
        ``close()``, with every block captured recorded — failed ones too, which a stream
        does not keep — and returned with the events."""
        self._record = True
        events = self.feed(text) + self.close()
        return events, tuple(self._blocks)

    def feed(self, chunk: str) -> list[Event]:
        """Take the next chunk; return the events it decides (possibly none)."""
        # The two hot paths, kept in a small function on purpose: in CPython a call to a
        # large function costs tens of nanoseconds more, a fifth of the prose path.
        if self._budget:
            # Prose: an ASCII chunk without the tag lead is text, whatever else it holds.
            # Backticks and tildes change the fence state, which matters only at the next
            # tag lead, so the chunk is logged and the fence tracker, the offsets and the
            # line-start tail read the log when it is folded (``_fold``), before anything
            # depends on them. The pop is the bound (``HOT_BUDGET`` chunks between folds),
            # the call the log's append: one attribute, two C calls.
            try:
                if chunk and chunk.isascii() and self._lead not in chunk:
                    self._budget.pop()(chunk)
                    return [Text(chunk)]
            except (AttributeError, TypeError):
                return self._feed_more(chunk)  # not a str: it raises the typed error
            return self._feed_lead(chunk)
        elif (self._rbudget and chunk.__class__ is str
              and (self._run_char not in chunk or not self._run_may_stop(chunk))):
            # Inside a streaming run (an argument body), nothing held and no stop in sight:
            # append, no parser step, nothing re-scanned, nothing counted. The room under
            # ``max_block_chars`` and the offsets catch up when ``_feed_more`` runs
            # (``_catch_up``: at most ``HOT_BUDGET`` chunks later), and a block past the
            # limit fails then, as it would have at once.
            self._rbudget.pop()(chunk)
            return []
        elif self._cand >= 0:
            return self._feed_cand(chunk)
        elif self._shell_probe is not None:
            return self._feed_shell(chunk)
        return self._feed_more(chunk)

    def _feed_lead(self, chunk: str) -> list[Event]:
        """PROSE, nothing held, the hot path's budget not spent, and a ``str`` chunk that is
        not ASCII or holds a tag lead: one search. A chunk whose every tag lead dies within
        it is text wherever the fence tracker stands, so it is logged like a hot chunk; a
        tag lead alive at its end is held once the fold has brought the fence tracker, the
        offsets and the tail up to date and the tracker stands in prose. Anything else (a
        backtick or tilde, an opener that may be complete, code): ``_feed_more``."""
        if chunk.__class__ is not str:  # (bytes get here: b"" is falsy)
            return self._feed_more(chunk)
        found = self._lead_search(chunk)
        hold = _ALL_PROSE if found is None else self._settles(chunk, found)
        if hold == _ALL_PROSE:
            if not chunk:
                return []
            self._budget.pop()(chunk)
            return [Text(chunk)]
        if hold >= 0:
            if self._log:
                self._fold()
            fences = self._fences
            if fences.state is _LIVE and not fences.run_len:
                # The held part is counted now; the text before it is logged (the fold
                # counts it and finds the tail, before anything reads them).
                self._total += len(chunk) - hold
                self._held = chunk[hold:]
                self._cand = self._settled_state
                self._cand_seen = False
                budget = self._budget
                self._budget = self._idle
                if not hold:
                    return []
                pre = chunk[:hold]
                budget.pop()(pre)
                return [Text(pre)]
        return self._feed_more(chunk)

    def _feed_cand(self, chunk: str) -> list[Event]:
        """A possible opener is held: its automaton reads the new text only. Still alive and
        not complete at the end: hold the chunk too. Dead without ever having been complete:
        the held text is prose, and so is the rest if every other lead in it dies too.
        Anything else (an opener that may be complete, another lead alive): the machine.
        (Its own small function: the locals it needs would make every ``feed`` dearer.)"""
        state = self._cand
        accepting = self._accepting
        if chunk.__class__ is str and not accepting[state]:
            onward = self._onward
            for ch in chunk:
                nxt = onward[state].get(ch)
                if nxt is None:  # not known to stay open: dead, complete, or not yet seen
                    nxt = self._trans[state].get(ch, UNKNOWN)
                    if nxt == UNKNOWN:
                        nxt = self._step(state, ch)
                    if nxt < 0 or accepting[nxt]:
                        state = nxt
                        break
                state = nxt
            else:
                self._total += len(chunk)
                self._held += chunk
                self._cand = state
                return []
            if state == DEAD and not self._cand_seen:
                held = self._held
                text = held + chunk
                found = self._lead_search(text, 1)
                hold = _ALL_PROSE if found is None else self._settles(text, found)
                if hold == _ALL_PROSE or hold > 0:
                    # Prose up to ``hold`` (or all of it), logged like the hot path's chunks:
                    # the fold counts it, so the held part, counted already, is taken off.
                    # (No backtick, tilde or other lead before ``hold``: the fence tracker
                    # stays in prose, where it was when the candidate was held.)
                    self._total -= len(held)
                    if not self._live and self._log:
                        self._fold()  # (the budget bounds the log: fold before topping up)
                    live = _topped(self._live, self._refill)
                    if hold == _ALL_PROSE:
                        self._held = ""
                        self._cand = _NO_CANDIDATE
                        self._budget = live  # (``_arm``)
                        live.pop()(text)
                        return [Text(text)]
                    # The lead at ``hold`` is alive at the end, all before it died: hold it,
                    # as ``_feed_lead`` would (this saves the machine reading the chunk again:
                    # 1 MB of "<": 1.0 -> 0.14 s in 7-character chunks, 1.05 -> 0.35 s in 4096).
                    self._total += len(text) - hold
                    self._held = text[hold:]
                    self._cand = self._settled_state
                    pre = text[:hold]
                    live.pop()(pre)
                    return [Text(pre)]
        return self._feed_more(chunk)

    def _feed_shell(self, chunk: str) -> list[Event]:
        """CAPTURE with a tag cut by a chunk boundary: unless this chunk holds a character
        that could complete it, keep it for one match later; if it does, ask the capture
        whether the tag is still cut, and if not, run the machine over the tag and the
        chunk. (Its own small function, like ``_feed_cand``.)"""
        probe = self._shell_probe
        n = len(chunk) if chunk.__class__ is str else -1
        if probe is not None and 0 < n <= self._shell_room:
            if probe(chunk) is None:
                self._total += n
                self._held += chunk
                self._shell_room -= n
                return []
            cap = self._cap
            assert cap is not None
            text = self._held + chunk
            if cap.cut_at(text, 0):
                self._total += n
                self._held = text
                self._shell_room -= n
                return []
            # (What ``_feed_more`` would do: no log, no run, not closed, mode "on".)
            self._total += n
            self._held = ""
            return self._process(text, self._total - len(text), False, len(text) - n)
        return self._feed_more(chunk)

    def _feed_more(self, chunk: str) -> list[Event]:
        """``feed`` past its hot paths: the run mode with something held, then the machine
        (a held candidate or a cut tag gets here only when ``_feed_cand`` or ``_feed_shell``
        leaves it to the machine)."""
        cap = self._run_cap
        if cap is not None and chunk.__class__ is str:
            # In a run, and the stop may be here, or begin at the end (a "]" before "]]>"),
            # or the previous chunk ended in what may begin it (or the run's budget is
            # spent): unless the stop is complete, the content goes on and the tail waits.
            # What is taken here is appended like the hot path's chunks (through the same
            # budget, so at most ``HOT_BUDGET`` pieces are ever uncounted), and counted with
            # them (``_catch_up``) when the budget is topped up or the run mode ends.
            live = self._rlive
            if not live:
                self._catch_up()
                live.extend(self._rrefill)
            held = self._held
            text = held + chunk if held else chunk
            run = cap.run
            assert run is not None
            stop, tail = run.find_stop(text, 0, False)
            if self._room >= stop and (stop == len(text) or tail or cap.cut_at(text, stop)):
                # The content goes on (and a tail that may begin the stop waits), or the
                # run ends at a tag cut by the chunk boundary: take the content, hold the
                # tag (what the machine would do, without it).
                if stop:
                    live.pop()(text[:stop])
                held = self._held = text[stop:]
                if stop == len(text) or tail:
                    # (``live`` may be empty now: then the next chunk comes here and the
                    # pieces are counted before the budget is topped up)
                    self._rbudget = self._idle if held else live
                else:
                    self._sync_run()
                    self._run_cap = None
                    self._rbudget = self._idle
                    self._arm_shell(cap, held)
                return []
        elif not self._live and self._budget is self._live and chunk.__class__ is str:
            # The prose hot path spent its budget: fold its log, top the budget up, and
            # take the chunk as ``feed`` would have.
            if self._log:
                self._fold()
            self._arm()
            return self.feed(chunk)
        if self._log:  # (only ever filled while the prose hot path is on)
            self._fold()
        if self._run_cap is not None:
            self._sync_run()
        if chunk.__class__ is not str:
            if not isinstance(chunk, str):
                raise InputTypeError(f"feed() takes str, not {type(chunk).__name__}",
                                     offset=self._total)
            chunk = str(chunk)
        if self._state is _CLOSED:
            raise SieveClosedError("feed() after close()", offset=self._total)
        if not chunk:
            return []
        if self._off:
            self._total += len(chunk)
            return [Text(chunk)]
        held = self._held
        base = self._total - len(held)
        self._total += len(chunk)
        self._held = ""
        return self._process(held + chunk if held else chunk, base, False, len(held))

    def _fold(self) -> None:
        """Bring the offsets, the fence tracker and the line-start tail up to the end of
        the prose the hot paths logged (no tag lead in it could start a tag)."""
        log = self._log
        text = log[0] if len(log) == 1 else "".join(log)
        log.clear()
        self._total += len(text)
        fences = self._fences
        # LIVE prose without a backtick or a tilde leaves the fence tracker as it is.
        if fences.state is not _LIVE or fences.run_len or "`" in text or "~" in text:
            fences.consume(text, self._tail)
        self._tail = text if text[-1] > " " else tail_after(self._tail, text, len(text))

    def _arm(self) -> None:
        """PROSE with nothing held: the hot path is on (its budget topped up if spent)."""
        self._budget = _topped(self._live, self._refill)

    def _arm_run(self, held: str) -> None:
        """In a run: its hot path is on while nothing is held (its budget topped up)."""
        self._rbudget = self._idle if held else _topped(self._rlive, self._rrefill)

    def _catch_up(self) -> None:
        """Count what the run hot path appended since ``_mark`` against ``_room``. A room
        below zero sends every later chunk to the machine, whose scan fails the block (its
        ``raw_len`` is past the limit once ``_sync_run`` adds this): the same answer as
        counting each chunk, at most ``HOT_BUDGET`` chunks later. The pieces are counted by
        joining them into one: a join costs less than a ``len`` call per piece, and the run
        then keeps, and at its end joins, one string per budget instead of one per chunk."""
        pieces = self._pieces
        k = self._mark
        if len(pieces) > k:
            if len(pieces) > k + 1:
                pieces[k:] = ["".join(pieces[k:])]
            self._room -= len(pieces[k])
            self._mark = k + 1

    def _sync_run(self) -> None:
        """Catch up the counters the run fast path leaves alone: what it took is what
        ``_room`` lost; what was fed is that plus what the held tail grew by."""
        cap = self._run_cap
        assert cap is not None
        self._catch_up()
        taken = self._room0 - self._room
        cap.took(taken)
        self._total = self._total0 + taken + len(self._held) - self._held0
        self._room0 = self._room
        self._total0 = self._total
        self._held0 = len(self._held)

    def _settles(self, text: str, found: Any) -> int:
        """Follow every lead character in ``text`` from ``found`` on. ``_ALL_PROSE``: each is
        a tag lead whose possible opener dies within ``text``. ``i >= 0``: the one at ``i`` is
        still alive at the end (its automaton state is left in ``_settled_state``), all
        before it died. ``_UNSETTLED``: a backtick or tilde, or an opener that may be
        complete — the full machine decides. The answer depends on ``text`` from the first
        lead on only, so for a short one it is remembered (the grammar's ``settlements``):
        the same few non-tag leads (``a<b``, ``<br>``, ``<-``) come back again and again."""
        i: int = found.start()
        if len(text) - i > _SETTLE_SPAN:
            return self._follow(text, found)
        key = text[i:] if i else text
        hit = self._settlements.get(key)
        if hit is None:
            at = self._follow(text, found)
            hit = (at - i if at >= 0 else at, self._settled_state)
            self._g.settle(key, hit)
            return at
        off, state = hit
        if off >= 0:
            self._settled_state = state
            return i + off
        return off

    def _follow(self, text: str, found: Any) -> int:
        """``_settles``, worked out: the automaton follows each lead in turn."""
        n = len(text)
        trans = self._trans
        accepting = self._accepting
        while found is not None:
            i = found.start()
            state = self._lead_state.get(text[i])
            if state is None:
                return _UNSETTLED
            # The automaton's walk, inlined for the short stretch a non-tag lead lives
            # (most die within a few characters); longer texts go on with ``_walk``.
            j = i + 1
            nxt = state
            for ch in text[j:j + _SHORT_WALK]:
                nxt = trans[state].get(ch, UNKNOWN)
                if nxt < 0:
                    break
                state = nxt
                j += 1
                if accepting[state]:
                    return _UNSETTLED  # an opener may be complete: the machine decides
            if nxt == DEAD:
                state = DEAD
            elif j < n:  # a transition not yet known, or a longer stretch: the walk
                state, j = self._walk(state, text, j, n)
            if state >= 0:
                if j < n or accepting[state]:
                    return _UNSETTLED
                self._settled_state = state
                return int(i)
            found = self._lead_search(text, i + 1)
        return _ALL_PROSE

    def close(self) -> list[Event]:
        """End of input: flush (loose-CDATA repair, unfinished block as text)."""
        if self._state is _CLOSED:
            raise SieveClosedError("close() called twice", offset=self._total)
        if self._log:
            self._fold()
        if self._off:  # no fast mode is ever on
            self._state = _CLOSED
            return []
        if self._run_cap is not None:
            self._sync_run()
        held = self._held
        self._held = ""
        events = self._process(held, self._total - len(held), True, len(held))  # all off
        self._state = _CLOSED
        return events

    # ------------------------------------------------------------------ the machine
    def _process(self, buf: str, base: int, final: bool, resume: int) -> list[Event]:
        """Scan ``buf`` (whose first ``resume`` characters were seen before: a held tail)."""
        events: list[Event] = []
        fences = self._fences
        pos = 0
        text_start = 0
        cand = self._cand
        self._cand = _NO_CANDIDATE
        while True:
            cap = self._cap
            if cap is not None:
                status, p = cap.scan(buf, pos, final, self._limit)
                if (self._early and status != COMPLETE and not cap.strict
                        and len(cap.calls) > cap.emitted):
                    self._emit_early(cap, events)
                if status == VIABLE:
                    self._held = buf[p:]
                    break
                if status == COMPLETE:
                    raw = self._complete(cap, events)
                    # So that ``_tail`` is again "what stands before buf[pos]".
                    self._tail = tail_after(self._tail, raw, len(raw))
                    if cap.leftover is not None:  # a repair read on from a copy of the block
                        buf, base, pos = cap.leftover, cap.start + cap.raw_len, 0
                    else:
                        pos = p
                    text_start = pos
                else:
                    # FAILED: release from the opener (or after the calls already emitted)
                    # and scan the rest again as prose.
                    buf, base, text_start, pos = self._fail(cap, buf, base, p)
                self._cap = None
                self._state = _PROSE
                continue
            if cand >= 0:  # resume the candidate held at buf[0]
                i, candidate = 0, True
                verdict, value = self._candidate(buf, 0, final, cand, resume, self._cand_seen)
                cand = _NO_CANDIDATE
            else:
                i = fences.advance(buf, pos, final, self._tail)
                candidate = i < len(buf)
                if candidate:
                    verdict, value = self._candidate(buf, i, final, 0, i, False)
            if candidate:
                if verdict is _TEXT:
                    pos = i + 1
                    continue
                if text_start < i:
                    events.append(Text(buf[text_start:i]))
                self._tail = tail_after(self._tail, buf, i)
                if verdict is _HOLD:
                    self._cand = value
                    self._held = buf[i:]
                    break
                m = value
                k = self._g.entry_index[_group_of(m)]
                entry = self._g.entries[k]
                lessons = self._lessons
                lessons.forget(base + i)
                cap = self._cap = Capture(self._g, entry, base + i, m.group(), self._schemas,
                                          self._pieces, lessons, self._g.entry_groups(m, k))
                self._state = _CAPTURE
                if entry.synthetic is None:
                    self._saw_syntax = True
                pos = text_start = m.end()
                if (final and (cap.strict or not self._early)
                        and lessons.no_end_after(self._g.block_enders, buf, base, base + i)):
                    # Nothing after it can end a block, and it would emit nothing before
                    # failing: it fails at once, without reading the rest of the input.
                    cap.fail("no tag that could close the block follows")
                    buf, base, text_start, pos = self._fail(cap, buf, base, pos)
                    self._cap = None
                    self._state = _PROSE
                continue
            if text_start < i:
                events.append(Text(buf[text_start:i]))
            self._tail = tail_after(self._tail, buf, i)
            break
        self._settle(final)
        return events

    def _settle(self, final: bool) -> None:
        """The one place that chooses the fast mode for the next chunk (see the class
        docstring); at most one is on."""
        cap = self._cap
        held = self._held
        if not final and cap is None and not held:
            self._arm()
        else:
            self._budget = self._idle
        self._run_cap = None
        self._rbudget = self._idle
        self._shell_probe = None
        if cap is None or final:
            return
        if held and cap.waiting:  # a tag cut by the chunk boundary
            self._arm_shell(cap, held)
            return
        # In a run (when something is held, it is the run's tail that may begin its stop).
        run = cap.run
        if run is not None and not (cap.strict and run.name == "STRAY_RUN"):
            self._run_cap = cap
            self._run_char = run.stop_char or ""
            self._run_may_stop = run.may_stop
            self._room = self._room0 = self._limit - cap.raw_len
            self._mark = len(self._pieces)
            self._total0 = self._total
            self._held0 = len(held)
            self._arm_run(held)

    def _arm_shell(self, cap: Capture, held: str) -> None:
        """CAPTURE with ``held`` a tag cut by the chunk boundary: a chunk without a character
        that could complete it (the one pending terminal's, else any of the state's) is
        only appended, up to the longest the tag may be."""
        one = cap.pending
        if one is not None and one.end_probe is not None:
            self._shell_probe = one.end_probe
            self._shell_room = one.width - len(held)
        else:
            self._shell_probe = cap.spec.shell_probe
            self._shell_room = cap.spec.shell_width - len(held)

    def _candidate(self, buf: str, i: int, final: bool, state: int, j: int,
                   seen: bool) -> tuple[Any, Any]:
        """Decide the possible opener at ``buf[i]``: (_OPEN, match), (_HOLD, automaton
        state) or (_TEXT, None). The automaton has already read ``buf[i:j]`` into ``state``;
        ``seen``: it passed an accepting state on the way (an entry may be complete)."""
        g = self._g
        auto = g.entry_automaton
        accepting = auto.accepting
        n = len(buf)
        while True:
            if accepting[state]:
                seen = True
                m = g.entry_exact.match(buf, i)
                if m is not None:
                    if final:
                        return _OPEN, m
                    # A higher-priority entry still possible at the end of the buffer must
                    # be given the chance to complete: the answer may not depend on chunking.
                    k = g.entry_index[_group_of(m)]
                    st, q = state, j
                    while q < n and st >= 0:
                        st, q = auto.walk(st, buf, q, n)
                    if st >= 0 and auto.rank[st] < k:
                        self._cand_seen = True
                        return _HOLD, st
                    return _OPEN, m
            if j >= n and not final:
                self._cand_seen = seen
                return _HOLD, state
            if j < n:
                state, j = auto.walk(state, buf, j, n)
            if state < 0 or j >= n and final:
                # No entry can grow any further: the best complete one, if any, wins.
                m = g.entry_exact.match(buf, i) if seen else None
                return (_TEXT, None) if m is None else (_OPEN, m)

    def _calls(self, cap: Capture, start: int, dialect: str) -> tuple[ToolCall, ...]:
        repairs = tuple(cap.repairs)
        return tuple(ToolCall(name, args, ident or make_call_id(self._id_factory), dialect,
                              repairs) for name, args, ident in cap.calls[start:])

    def _emit_early(self, cap: Capture, events: list[Event]) -> None:
        """``early_emit="invoke"``: each call goes out when its invoke closes. The event's
        block covers the input this event settles: from the previous event's end to the end
        of the last call (so Text and the events' ``block.raw``, in order, are the input),
        with the diagnostics that arose there (however far the scan has read since)."""
        k = cap.emitted
        prev_end = cap.call_ends[k - 1] if k else 0
        prev_piece = cap.call_pieces[k - 1] if k else 0
        prev_diag = cap.call_diags[k - 1] if k else 0
        end = cap.call_ends[-1]
        raw = "".join(cap.raw[prev_piece:cap.call_pieces[-1]])
        dialect = cap.dialect_now()
        block = Block((cap.start + prev_end, cap.start + end), dialect, "partial",
                      tuple(cap.repairs), tuple(cap.diagnostics[prev_diag:cap.call_diags[-1]]),
                      raw)
        events.append(ToolCalls(self._calls(cap, k, dialect), block))
        cap.emitted_all()

    def _complete(self, cap: Capture, events: list[Event]) -> str:
        dialect = cap.dialect_now()
        if cap.strict:
            dialect = self._g.dialect_of_close(cap.last_value, dialect)
            self._saw_syntax = True
        raw = cap.raw_text()
        block = Block((cap.start, cap.start + len(raw)), dialect, "complete",
                      tuple(cap.repairs), tuple(cap.diagnostics), raw)
        if self._record:
            self._blocks.append(block)
        calls = self._calls(cap, cap.emitted, dialect)
        if cap.emitted:  # early_emit="invoke": this event settles the rest of the block
            cut = cap.call_ends[cap.emitted - 1]
            block = Block((cap.start + cut, block.span[1]), dialect, "complete", block.repairs,
                          tuple(cap.diagnostics[cap.call_diags[cap.emitted - 1]:]), raw[cut:])
        events.append(ToolCalls(calls, block))
        return raw

    def _fail(self, cap: Capture, buf: str, base: int, p: int) -> tuple[str, int, int, int]:
        """Release a failed capture: ``(buf, base, release, resume)`` — text is released from
        ``buf[release]`` on and scanned again from ``buf[resume]``. A block that began in this
        buffer is scanned again in place; one begun in an earlier chunk is joined to the rest
        of the buffer once (its text was only ever in the capture)."""
        cap.learn()
        at = cap.start - base
        if at >= 0:
            raw_len = p - at
            raw = None
        else:
            raw = cap.raw_text()
            raw_len = len(raw)
            buf = raw + buf[p:]
            base = cap.start
            at = 0
        emitted = cap.emitted
        if emitted:
            cut = cap.call_ends[emitted - 1]
            if self._record:
                raw = buf[at:at + raw_len] if raw is None else raw
                self._blocks.append(Block((cap.start, cap.start + cut), cap.dialect_now(),
                                          "partial", tuple(cap.repairs),
                                          (*cap.diagnostics, cap.failure), raw[:cut]))
            self._tail = tail_after(self._tail, buf, at + cut)  # (buf[:at] stood before it)
            return buf, base, at + cut, at + cut
        if self._record and not cap.strict:  # a failed repair attempt was only ever text
            raw = buf[at:at + raw_len] if raw is None else raw
            self._blocks.append(Block((cap.start, cap.start + raw_len), cap.dialect_now(),
                                      "failed", tuple(cap.repairs),
                                      (*cap.diagnostics, cap.failure), raw))
        return buf, base, at, at + cap.opener_len

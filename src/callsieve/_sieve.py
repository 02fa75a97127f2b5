"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes. The
sieve is in one ``Mode`` at a time, and each mode has one reader: ``feed`` hands the chunk
to the current one (``_reader``, from ``_READERS``; the readers' names say their mode), and
``_enter`` is the one place the mode changes. The readers of the four fast modes take the
common chunk without the machine and hand anything else to ``_read_machine``, which runs
``_process``: the fence tracker walks the text and stops at each tag lead outside code;
``EntryFinder`` decides it (text, a held candidate, an opener); an opener starts a
``Capture``, which ends as calls or fails (``BlockLife``); a failed block is released from
its opener and the rest is scanned again as prose, so a mention followed by a real block
works. ``_settle`` then chooses the next mode from what the machine left.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking, every character is released as text or belongs to exactly one parsed block, and
no ``str`` input raises. ``parse()`` is this machine run over one chunk.
What it costs: in PROSE an ASCII chunk without the tag lead is two tests, a logged append
and one ``Text`` (the ``Cursor`` counts the log later, in one piece); in RUN a chunk
without the run's stop is a test and an append; a held candidate reads only the new text.
Everything else is linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable
from typing import Any

from ._automaton import DEAD, UNKNOWN
from ._blocks import BlockLife
from ._capture import COMPLETE, VIABLE, Capture
from ._cursor import Cursor
from ._entries import ALL_PROSE, HOLD, TEXT, EntryFinder
from ._errors import InputTypeError, SieveClosedError
from ._events import Block, Event, Text
from ._fences import FenceState, FenceTracker
from ._grammar import DEFAULT_DIALECTS, load_grammar
from ._options import (
    DEFAULT_MAX_BLOCK_CHARS,
    EARLY_EMIT,
    MODES,
    SieveOptions,
    new_call_id,
)

__all__ = ["EARLY_EMIT", "MODES", "Mode", "Sieve", "SieveState", "new_call_id"]

_NO_CANDIDATE = -2


class SieveState(enum.Enum):
    """What the public ``Sieve.state`` tells: between blocks, inside one, or closed."""

    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


class Mode(enum.Enum):
    """What the next chunk is read as (each mode's reader is ``Sieve._read_<mode>``)."""

    PROSE = "prose"  # between blocks, nothing held
    CANDIDATE = "candidate"  # between blocks, a possible opener held
    RUN = "run"  # inside a block, in a streaming run (an argument body)
    CUT_TAG = "cut tag"  # inside a block, a tag cut by the chunk boundary held
    MACHINE = "machine"  # anything else: the machine reads every chunk
    CLOSED = "closed"

    # Members are singletons: hash them by identity (``Enum.__hash__`` is a Python-level
    # call, on every change of mode, in ``_READERS[mode]``).
    __hash__ = object.__hash__


# The members as plain module globals (``Mode.RUN`` costs an enum descriptor call, about
# 90 ns in CPython 3.11, on paths that run once per chunk).
_PROSE, _CANDIDATE, _RUN, _CUT_TAG = Mode.PROSE, Mode.CANDIDATE, Mode.RUN, Mode.CUT_TAG
_MACHINE, _CLOSED = Mode.MACHINE, Mode.CLOSED
_LIVE = FenceState.LIVE
_Budget = list[Callable[[str], None]]


class Sieve:
    """Pulls tool calls out of a stream of model text.

    ``Sieve(tools=None, *, early_emit="block", mode="on", max_block_chars=8 MiB,
    dialects=DEFAULT_DIALECTS, grammar_dirs=(), id_factory=new_call_id)``

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

    __slots__ = (
        "_g", "_cur", "_grow", "_fences", "_finder", "_life", "_auto", "_lead", "_lead_search",
        "_mode", "_reader", "_prose_hot", "_run_hot", "_idle",
        "_cand", "_cand_seen", "_cap", "_run_char", "_run_may_stop", "_cut_probe",
        "_cut_room", "_early", "_off", "_limit",
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
        g = self._g = load_grammar(opts.dialects, opts.grammar_dirs)
        self._fences = FenceTracker(g.lead_chars)
        self._cur = Cursor(self._fences)
        self._grow = self._cur.grow
        self._lead_search = self._fences.live_lead.search
        self._finder = EntryFinder(g, self._lead_search)
        self._life = BlockLife(g, opts.schemas, opts.id_factory, self._cur.pieces)
        self._auto = g.entry_automaton
        self._lead = g.prose_lead
        self._cap: Capture | None = None
        self._cand = _NO_CANDIDATE  # CANDIDATE: the automaton state of the opener held
        self._cand_seen = False  # ... which has passed an accepting state
        # RUN: the stop's single first character ("" if it has none: "" is in every chunk,
        # so ``may_stop`` is asked) and whether a chunk may hold the stop.
        self._run_char = ""
        self._run_may_stop: Callable[[str], bool] = bool
        # CUT_TAG: what could complete the tag, and how much more may be held before it is
        # too long to be a tag.
        self._cut_probe: Callable[[str], Any] | None = None
        self._cut_room = 0
        self._early = opts.early_emit == "invoke"
        self._off = opts.mode == "off"
        self._limit = opts.max_block_chars
        self._idle: _Budget = []  # (never filled: a hot half that is off)
        self._prose_hot = self._run_hot = self._idle
        self._mode = _MACHINE
        self._reader: Callable[[Sieve, Any], list[Event]] = Sieve._read_machine
        self._enter(_MACHINE if self._off else _PROSE)

    # ------------------------------------------------------------------ public API
    @property
    def state(self) -> SieveState:
        if self._mode is _CLOSED:
            return SieveState.CLOSED
        return SieveState.PROSE if self._cap is None else SieveState.CAPTURE

    @property
    def saw_tool_call_syntax(self) -> bool:
        """A wrapper, or a repaired missing-wrapper block, was seen outside code."""
        return self._life.saw_syntax

    def parse_whole(self, text: str) -> tuple[list[Event], tuple[Block, ...]]:
        """For ``parse()`` (documented internal API): ``text`` as the one chunk, then
        ``close()``, with every block captured recorded — failed ones too, which a stream
        does not keep — and returned with the events."""
        self._life.record = True
        events = self.feed(text) + self.close()
        return events, tuple(self._life.blocks)

    def feed(self, chunk: str) -> list[Event]:
        """Take the next chunk; return the events it decides (possibly none)."""
        # The PROSE and RUN readers' common cases, inlined (a hot half is armed only in its
        # mode, by ``_enter``): one more call costs about 12 % on the prose path at 1-8-
        # character chunks (benchmarks/README.md, "The readers' hot halves").
        # PROSE: an ASCII chunk without the tag lead is text, whatever else it holds; it is
        # logged (a pop from the budget, then its bound append) and counted later.
        if self._prose_hot:
            try:
                if chunk and chunk.isascii() and self._lead not in chunk:
                    self._prose_hot.pop()(chunk)
                    return [Text(chunk)]
            except (AttributeError, TypeError):
                pass  # not a str: the reader raises the typed error
        # RUN, nothing held and no stop in sight: append; no parser step, nothing counted.
        elif (self._run_hot and chunk.__class__ is str
              and (self._run_char not in chunk or not self._run_may_stop(chunk))):
            self._run_hot.pop()(chunk)
            return []
        return self._reader(self, chunk)

    def close(self) -> list[Event]:
        """End of input: flush (loose-CDATA repair, unfinished block as text)."""
        cur = self._cur
        if self._mode is _CLOSED:
            raise SieveClosedError("close() called twice", offset=cur.total)
        cur.flush()
        events: list[Event] = []
        if not self._off:
            if self._mode is _RUN:
                self._run_synced()
            cand = self._cand if self._mode is _CANDIDATE else _NO_CANDIDATE
            events = self._process(*cur.take(""), True, cand)
        self._enter(_CLOSED)
        return events

    # ------------------------------------------------------------------ the modes
    def _enter(self, mode: Mode) -> None:
        """The one place the mode changes: its reader, and the hot halves ``feed`` inlines
        (PROSE's always, with its budget topped up; RUN's while nothing is held)."""
        self._mode = mode
        self._reader = _READERS[mode]
        cur = self._cur
        if mode is _PROSE:
            self._prose_hot = cur.prose_live or cur.prose_budget()
            self._run_hot = self._idle
        else:
            self._prose_hot = self._idle
            self._run_hot = (cur.run_live or cur.run_budget()
                             if mode is _RUN and not cur.held else self._idle)

    def _settle(self, final: bool) -> None:
        """After the machine: the mode its state calls for."""
        if final:
            return
        cap = self._cap
        held = self._cur.held
        if cap is None:
            self._enter(_CANDIDATE if held else _PROSE)
        elif held and cap.waiting:
            self._arm_cut_tag(cap)
        elif cap.run is not None and not (cap.strict and cap.run.name == "STRAY_RUN"):
            # (when something is held, it is the run's tail that may begin its stop)
            self._run_char = cap.run.stop_char or ""
            self._run_may_stop = cap.run.may_stop
            self._cur.begin_run(self._limit - cap.raw_len)
            self._enter(_RUN)
        else:
            self._enter(_MACHINE)

    def _arm_cut_tag(self, cap: Capture) -> None:
        """CUT_TAG: a chunk without a character that could complete the tag (the one pending
        terminal's, else any of the parser state's) is only held, up to the longest the tag
        may be."""
        held = len(self._cur.held)
        one = cap.pending
        if one is not None and one.end_probe is not None:
            self._cut_probe, self._cut_room = one.end_probe, one.width - held
        else:
            self._cut_probe, self._cut_room = cap.spec.shell_probe, cap.spec.shell_width - held
        self._enter(_CUT_TAG)

    def _run_synced(self) -> None:
        """Leaving RUN's counting: the capture takes what the run hot path appended."""
        cap = self._cap
        assert cap is not None
        cap.took(self._cur.sync_run())

    def _read_prose(self, chunk: Any) -> list[Event]:
        """PROSE, a chunk the hot half did not take: not ASCII, or with a tag lead, or the
        budget spent. One search: a chunk whose every tag lead dies within it is text
        wherever the fence tracker stands, so it is logged too; a tag lead alive at its end
        is held (CANDIDATE) once the log is folded and the tracker stands in prose.
        Anything else (a backtick or tilde, an opener that may be complete, code): the
        machine."""
        if chunk.__class__ is not str:
            return self._read_machine(chunk)
        if not self._prose_hot:  # the budget is spent: fold the log, top it up, go again
            self._enter(_PROSE)
            return self.feed(chunk)
        found = self._lead_search(chunk)
        hold = ALL_PROSE if found is None else self._finder.settles(chunk, found)
        if hold == ALL_PROSE:
            if not chunk:
                return []
            self._prose_hot.pop()(chunk)
            return [Text(chunk)]
        if hold >= 0:
            cur = self._cur
            if cur.log:
                cur.fold()
            if self._fences.state is _LIVE and not self._fences.run_len:
                self._cand = self._finder.state
                self._cand_seen = False
                self._enter(_CANDIDATE)
                pre = cur.prose_then_hold(chunk, hold, 0)
                return [Text(pre)] if pre else []
        return self._read_machine(chunk)

    def _read_candidate(self, chunk: Any) -> list[Event]:
        """CANDIDATE: the automaton reads the new text only. Still alive and not complete at
        the end: hold the chunk too. Dead without ever having been complete: the held text
        is prose, and so is the rest if every other lead in it dies too (PROSE), or up to a
        later lead alive at the end, which is held instead. Anything else: the machine."""
        state = self._cand
        auto = self._auto
        accepting = auto.accepting
        if chunk.__class__ is str and not accepting[state]:
            onward = auto.onward
            for ch in chunk:
                nxt = onward[state].get(ch)
                if nxt is None:  # not known to stay open: dead, complete, or not yet seen
                    nxt = auto.trans[state].get(ch, UNKNOWN)
                    if nxt == UNKNOWN:
                        nxt = auto.step(state, ch)
                    if nxt < 0 or accepting[nxt]:
                        state = nxt
                        break
                state = nxt
            else:
                self._grow(chunk)
                self._cand = state
                return []
            if state == DEAD and not self._cand_seen:
                cur = self._cur
                held = cur.held_now() if cur.grown else cur.held
                text = held + chunk
                found = self._lead_search(text, 1)
                hold = ALL_PROSE if found is None else self._finder.settles(text, found)
                # (No backtick, tilde or other lead before ``hold``: the fence tracker stays
                # in prose, where it was when the candidate was held.)
                if hold == ALL_PROSE:
                    self._enter(_PROSE)
                    return [Text(cur.prose_then_hold(text, len(text), len(held)))]
                if hold > 0:
                    # Holding the later lead here saves the machine reading the chunk
                    # again (1 MB of "<": 1.0 -> 0.14 s in 7-character chunks).
                    self._cand = self._finder.state
                    return [Text(cur.prose_then_hold(text, hold, len(held)))]
        return self._read_machine(chunk)

    def _read_run(self, chunk: Any) -> list[Event]:
        """RUN, a chunk the hot half did not take: the stop may be in it, or begin at its
        end (a "]" before "]]>"), or the held tail may begin it, or the budget is spent.
        Unless the stop is complete, the content goes on (appended through the same
        budget, so at most ``HOT_BUDGET`` pieces are ever uncounted) and a tail that may
        begin the stop is held; a stop where a tag begins that the chunk cuts holds that
        tag (CUT_TAG). Anything else: the machine."""
        if chunk.__class__ is str:
            cur = self._cur
            if not cur.run_live:
                cur.run_budget()  # (topped up, its pieces counted first: ``room``)
            held = cur.held
            text = held + chunk if held else chunk
            cap = self._cap
            assert cap is not None and cap.run is not None
            stop, tail = cap.run.find_stop(text, 0, False)
            if cur.room >= stop and (stop == len(text) or tail or cap.cut_at(text, stop)):
                cur.take_run(text, stop)
                if stop == len(text) or tail:
                    # Still RUN: its hot half is on again if nothing is held (``_enter``).
                    self._run_hot = self._idle if cur.held else cur.run_live
                else:
                    self._run_synced()
                    self._arm_cut_tag(cap)
                return []
        return self._read_machine(chunk)

    def _read_cut_tag(self, chunk: Any) -> list[Event]:
        """CUT_TAG: unless this chunk holds a character that could complete the tag, hold
        it for one match later; if it does, ask the capture whether the tag is still cut,
        and if not, the machine reads the tag and the chunk."""
        probe = self._cut_probe
        n = len(chunk) if chunk.__class__ is str else -1
        if probe is not None and 0 < n <= self._cut_room:
            cur = self._cur
            cap = self._cap
            assert cap is not None
            if probe(chunk) is None or cap.cut_at(
                    (cur.held_now() if cur.grown else cur.held) + chunk, 0):
                self._grow(chunk)
                self._cut_room -= n
                return []
            return self._process(*cur.take(chunk), False, _NO_CANDIDATE)
        return self._read_machine(chunk)

    def _read_machine(self, chunk: Any) -> list[Event]:
        """MACHINE, and what the other readers leave: the machine reads the held text and
        the chunk (``_process``)."""
        cur = self._cur
        if cur.log or cur.grown:
            cur.flush()
        if self._mode is _RUN:
            self._run_synced()
        if chunk.__class__ is not str:
            if not isinstance(chunk, str):
                raise InputTypeError(f"feed() takes str, not {type(chunk).__name__}",
                                     offset=cur.total)
            chunk = str(chunk)
        if not chunk:
            return []
        if self._off:
            cur.take(chunk)
            return [Text(chunk)]
        cand = self._cand if self._mode is _CANDIDATE else _NO_CANDIDATE
        return self._process(*cur.take(chunk), False, cand)

    def _read_closed(self, chunk: Any) -> list[Event]:
        if not isinstance(chunk, str):
            raise InputTypeError(f"feed() takes str, not {type(chunk).__name__}",
                                 offset=self._cur.total)
        raise SieveClosedError("feed() after close()", offset=self._cur.total)

    # ------------------------------------------------------------------ the machine
    def _process(self, buf: str, base: int, resume: int, final: bool,
                 cand: int) -> list[Event]:
        """Scan ``buf`` (at absolute offset ``base``; its first ``resume`` characters were
        seen before: a held tail, which is the candidate ``cand`` if that is >= 0)."""
        events: list[Event] = []
        fences = self._fences
        cur = self._cur
        life = self._life
        pos = 0
        text_start = 0
        while True:
            cap = self._cap
            if cap is not None:
                status, p = cap.scan(buf, pos, final, self._limit)
                if (self._early and status != COMPLETE and not cap.strict
                        and len(cap.calls) > cap.emitted):
                    events.append(life.early(cap))
                if status == VIABLE:
                    cur.hold(buf[p:])
                    break
                if status == COMPLETE:
                    event, raw = life.complete(cap)
                    events.append(event)
                    cur.passed(raw, len(raw))  # (so the tail again stands before buf[pos])
                    if cap.leftover is not None:  # a repair read on from a copy of the block
                        buf, base, pos = cap.leftover, cap.start + cap.raw_len, 0
                    else:
                        pos = p
                    text_start = pos
                else:
                    # FAILED: release from the opener (or after the calls already emitted)
                    # and scan the rest again as prose.
                    buf, base, text_start, pos = life.fail(cap, buf, base, p, cur)
                self._cap = None
                continue
            if cand >= 0:  # resume the candidate held at buf[0]
                i = 0
                verdict, value = self._finder.candidate(buf, 0, final, cand, resume,
                                                        self._cand_seen)
                cand = _NO_CANDIDATE
            else:
                i = fences.advance(buf, pos, final, cur.tail)
                if i >= len(buf):  # no tag lead outside code before the end
                    if text_start < i:
                        events.append(Text(buf[text_start:i]))
                    cur.passed(buf, i)
                    break
                verdict, value = self._finder.candidate(buf, i, final, 0, i, False)
            if verdict is TEXT:
                pos = i + 1
                continue
            if text_start < i:
                events.append(Text(buf[text_start:i]))
            cur.passed(buf, i)
            if verdict is HOLD:
                self._cand = value
                self._cand_seen = self._finder.seen
                cur.hold(buf[i:])
                break
            cap = self._cap = life.open(value, base + i)
            pos = text_start = value.end()
            if (final and (cap.strict or not self._early)
                    and life.lessons.no_end_after(self._g.block_enders, buf, base, base + i)):
                # Nothing after it can end a block, and it would emit nothing before
                # failing: it fails at once, without reading the rest of the input.
                cap.fail("no tag that could close the block follows")
                buf, base, text_start, pos = life.fail(cap, buf, base, pos, cur)
                self._cap = None
        self._settle(final)
        return events


#: Each mode's reader (``feed`` calls ``self._reader(self, chunk)``; ``_enter`` sets it).
_READERS: dict[Mode, Callable[[Sieve, Any], list[Event]]] = {
    _PROSE: Sieve._read_prose,
    _CANDIDATE: Sieve._read_candidate,
    _RUN: Sieve._read_run,
    _CUT_TAG: Sieve._read_cut_tag,
    _MACHINE: Sieve._read_machine,
    _CLOSED: Sieve._read_closed,
}

"""Strategy: one reader per ``Mode``, and the one place the mode changes (``_enter``).

What it does: ``ModeReaders`` is the half of ``Sieve`` that reads a chunk in the current
mode (h11's ``READERS[state]``: ``feed`` calls ``self._reader(self, chunk)``, where
``_reader`` is ``_READERS[mode]``). The fast modes' readers take the common chunk without
the machine — PROSE logs prose and holds a tag lead alive at the chunk's end (CANDIDATE);
CANDIDATE reads only the new text; RUN appends an argument body's text; CUT_TAG holds a
tag cut by the chunk boundary until a character that could complete it arrives — and hand
anything else to ``_read_machine``, which runs ``Sieve._process``. ``_enter`` is the only
writer of the mode, of the reader and of the hot halves ``feed`` inlines; after the machine
it chooses the mode the machine's state calls for.
What it guarantees: the same events as the machine reading every chunk (the readers only
ever take what the machine would release, hold or append, in the same order); the
position is changed only through the ``Cursor``.
What it costs: a reader is one attribute and one call; a fast mode's common chunk is
linear in the chunk and touches no parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._base.errors import InputTypeError, SieveClosedError
from .._base.events import Event, Reasoning, Text
from .._grammar.automaton import DEAD, UNKNOWN
from .._scan.fences import FenceState
from .entries import ALL_PROSE
from .modes import (
    ANSWER,
    BEFORE_TEXT,
    CANDIDATE,
    CLOSED,
    CUT_TAG,
    IN_REASONING,
    MACHINE,
    PREAMBLE,
    PROSE,
    REASONING,
    RUN,
    UNTIL_TEXT,
    Context,
    Mode,
)

if TYPE_CHECKING:
    from .._blocks.capture import Capture
    from .._grammar.automaton import EntryAutomaton
    from .._scan.cursor import Cursor
    from .._scan.fences import FenceTracker
    from .entries import EntryFinder

__all__ = ["NO_CANDIDATE", "Budget", "ModeReaders"]

NO_CANDIDATE = -2
_WHITE = re.compile(r"\s*")  # (white space as ``str.isspace`` has it: both are Unicode's)
_LIVE = FenceState.LIVE
Budget = list[Callable[[str], None]]


class ModeReaders:
    """The readers and the mode's one writer (a mixin of ``Sieve``, whose slots these
    attributes are)."""

    __slots__ = (
        "_cur",
        "_grow",
        "_grown",
        "_fences",
        "_finder",
        "_auto",
        "_accepting",
        "_onward",
        "_trans",
        "_lead_search",
        "_mode",
        "_reader",
        "_prose_hot",
        "_run_hot",
        "_arg_hot",
        "_arg_send",
        "_idle",
        "_cand",
        "_cand_seen",
        "_cap",
        "_run_char",
        "_run_may_stop",
        "_cut_probe",
        "_cut_room",
        "_off",
        "_limit",
        "_reason_hot",
        "_kind",
        "_home",
        "_context",
        "_finders",
        "_until_text",
    )

    _cur: Cursor
    _grow: Callable[[str], None]
    _grown: list[str]
    _fences: FenceTracker
    _finder: EntryFinder
    _auto: EntryAutomaton
    _accepting: list[bool]
    _onward: list[dict[str, int]]
    _trans: list[dict[str, int]]
    _lead_search: Any
    _mode: Mode
    _reader: Callable[[Any, Any], list[Event]]
    _prose_hot: Budget
    _run_hot: Budget
    _arg_hot: Budget
    _arg_send: Callable[[str], list[Event]]
    _idle: Budget
    _cand: int
    _cand_seen: bool
    _cap: Capture | None
    _run_char: str
    _run_may_stop: Callable[[str], bool]
    _cut_probe: Callable[[str], Any] | None
    _cut_room: int
    _off: bool
    _limit: int
    _reason_hot: Budget
    _kind: type[Text | Reasoning]
    _home: Mode
    _context: Context
    _finders: dict[Context, EntryFinder]
    _until_text: Context | None

    if TYPE_CHECKING:

        def feed(self, chunk: str) -> list[Event]: ...

        def _process(self, taken: tuple[str, int], final: bool, cand: int) -> list[Event]: ...

    # ------------------------------------------------------------------ transitions
    def _enter(self, mode: Mode | None = None) -> None:
        """The one place the mode changes: its reader, the hot halves ``feed`` inlines
        (PROSE's always, with its budget topped up; RUN's while nothing is held), and
        CUT_TAG's probe. With no mode (after the machine, ``_process``): the mode the
        machine's state calls for."""
        if mode is None:
            cap = self._cap
            if cap is None:  # (a candidate the machine holds is in ``Cursor.grown``)
                home = self._home  # (BEFORE_TEXT hands a held candidate to the machine)
                mode = CANDIDATE if self._grown and home is not BEFORE_TEXT else home
            elif cap.waiting and self._cur.held:  # a tag cut by the chunk boundary
                mode = CUT_TAG
            elif (run := cap.run) is not None and not (cap.strict and run.name == "STRAY_RUN"):
                # (when something is held, it is the run's tail that may begin its stop)
                self._run_char = run.stop_char or ""
                self._run_may_stop = run.may_stop
                self._cur.begin_run(self._limit - cap.raw_len)
                mode = RUN
            else:
                mode = MACHINE
        self._mode = mode
        self._reader = _READERS[mode]
        self._arg_hot = self._reason_hot = self._idle
        if mode is PROSE:
            self._prose_hot = self._cur.prose_live or self._cur.prose_budget()
            self._run_hot = self._idle
            return
        self._prose_hot = self._idle
        if mode is REASONING:  # (its hot half is PROSE's, released as ``Reasoning``)
            self._reason_hot = self._cur.prose_live or self._cur.prose_budget()
            self._run_hot = self._idle
            return
        if mode is RUN and not self._cur.held:
            self._run_hot = self._idle
            self._arm_run()
            return
        self._run_hot = self._idle
        if mode is CUT_TAG:
            # A chunk without a character that could complete the tag (the one pending
            # terminal's, else any of the parser state's) is only held, up to the longest
            # the tag may be.
            cap = self._cap
            assert cap is not None
            held = len(self._cur.held)
            one = cap.pending
            if one is not None and one.end_probe is not None:
                self._cut_probe, self._cut_room = one.end_probe, one.width - held
            else:
                self._cut_probe = cap.spec.shell_probe
                self._cut_room = cap.spec.shell_width - held

    def _set_context(self, context: Context) -> None:
        """Where the reply now stands (SPEC §15, ``Context``): the entries prose is searched
        for (and the fence tracker: reasoning's sees no code), what it is released as, and
        the mode it is read in with nothing held — before the answer (under "open", the
        reasoning), BEFORE_TEXT, whose reader hands the machine whatever could hold the
        first character that is not white space; inside reasoning, REASONING; else PROSE.
        The next ``_enter()`` arms it."""
        self._context = context
        finder = self._finder = self._finders[context]
        if finder.tracker is not self._fences:  # (reasoning's sees no code: SPEC §15)
            self._fences = self._cur.fences = finder.tracker
            self._lead_search = finder.lead_search
        auto = self._auto = finder.auto
        self._accepting, self._onward, self._trans = auto.accepting, auto.onward, auto.trans
        self._until_text = UNTIL_TEXT.get(context)
        self._kind = Text if context is ANSWER or context is PREAMBLE else Reasoning
        self._home = (
            BEFORE_TEXT
            if self._until_text is not None
            else REASONING
            if context is IN_REASONING
            else PROSE
        )

    # ------------------------------------------------------------------ the readers
    def _read_prose(self, chunk: Any) -> list[Event]:
        """PROSE and REASONING, a chunk the hot half did not take: not ASCII, or with a tag
        lead, or the budget spent (released as ``_kind``, ``Text`` or ``Reasoning``). One
        search: a chunk whose every tag lead dies within it is text
        wherever the fence tracker stands, so it is logged too; a tag lead alive at its end
        is held (CANDIDATE) once the log is folded and the tracker stands in prose.
        Anything else (a backtick or tilde, an opener that may be complete, code): the
        machine."""
        if chunk.__class__ is not str:
            return self._read_machine(chunk)
        if not self._cur.prose_live:  # the budget is spent: fold the log, top it up, again
            self._enter(self._mode)
            return self.feed(chunk)
        found = self._lead_search(chunk)
        hold = ALL_PROSE if found is None else self._finder.settles(chunk, found)
        if hold == ALL_PROSE:
            if not chunk:
                return []
            self._cur.prose_live.pop()(chunk)
            return [self._kind(chunk)]
        if hold >= 0:
            cur = self._cur
            if cur.log:
                cur.fold()
            if self._fences.state is _LIVE and not self._fences.run_len:
                self._cand = self._finder.state
                self._cand_seen = False
                self._enter(CANDIDATE)
                # Through the cursor's two logs, counted when folded: the candidate goes
                # to ``grown`` (a held candidate is all there), the prose before it to the
                # prose log (whose budget this chunk found not empty).
                if not hold:
                    self._grow(chunk)
                    return []
                self._grow(chunk[hold:])
                pre = chunk[:hold]
                cur.prose_live.pop()(pre)
                return [self._kind(pre)]
        return self._read_machine(chunk)

    def _read_candidate(self, chunk: Any) -> list[Event]:
        """CANDIDATE: the automaton reads the new text only. Still alive and not complete at
        the end: hold the chunk too. Dead without ever having been complete: the held text
        is prose, and so is the rest if every other lead in it dies too (PROSE), or up to a
        later lead alive at the end, which is held instead. Anything else: the machine."""
        state = self._cand
        accepting = self._accepting
        if chunk.__class__ is str and not accepting[state]:
            onward = self._onward
            for ch in chunk:
                nxt = onward[state].get(ch)
                if nxt is None:  # not known to stay open: dead, complete, or not yet seen
                    nxt = self._trans[state].get(ch, UNKNOWN)
                    if nxt == UNKNOWN:
                        nxt = self._auto.step(state, ch)
                    if nxt < 0 or accepting[nxt]:
                        state = nxt
                        break
                state = nxt
            else:
                self._grow(chunk)
                self._cand = state
                return []
            if state == DEAD and not self._cand_seen:
                grown = self._grown  # the candidate, uncounted (``Cursor.grown``)
                text = "".join(grown) + chunk
                found = self._lead_search(text, 1)
                hold = ALL_PROSE if found is None else self._finder.settles(text, found)
                # The text before ``hold`` goes to the prose log, uncounted as it was. (No
                # backtick, tilde or other lead before ``hold``: the fence tracker stays in
                # prose, where it was when the candidate was held.)
                if hold == ALL_PROSE:
                    grown.clear()
                    self._enter(self._home)
                    self._cur.prose_live.pop()(text)
                    return [self._kind(text)]
                if hold > 0:
                    # Holding the later lead here saves the machine reading the chunk
                    # again (1 MB of "<": 1.0 -> 0.14 s in 7-character chunks).
                    grown.clear()
                    grown.append(text[hold:])
                    self._cand = self._finder.state
                    pre = text[:hold]
                    cur = self._cur
                    (cur.prose_live or cur.prose_budget()).pop()(pre)
                    return [self._kind(pre)]
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
                stream = cap.args  # (argument streaming: the text may stream)
                if stream is not None:
                    stream.text(text[:stop])
                if stop == len(text) or tail:
                    # Still RUN: a hot half is on again if nothing is held (``_enter``).
                    self._run_hot = self._arg_hot = self._idle
                    if not cur.held:
                        self._arm_run()
                else:
                    cap.took(cur.sync_run())
                    self._enter(CUT_TAG)
                return stream.life.take_out() if stream is not None and stream.out else []
        return self._read_machine(chunk)

    def _arm_run(self) -> None:
        """RUN with nothing held: its hot half — the one that only appends, or, for a string
        streaming as arguments as it is (CDATA, or a ``string="true"`` body), the one that
        appends and sends it (``_arg_hot``); text that the stream must still decide on goes
        through ``_read_run``."""
        stream = self._cap.args if self._cap is not None else None
        if stream is None or not stream.wants_text():
            self._run_hot = self._cur.run_live or self._cur.run_budget()
        elif stream.streams_as_is():
            self._arg_hot = self._cur.run_live or self._cur.run_budget()
            self._arg_send = stream.hot

    def _read_cut_tag(self, chunk: Any) -> list[Event]:
        """CUT_TAG: unless this chunk holds a character that could complete the tag, hold
        it for one match later; if it does, ask the capture whether the tag is still cut,
        and if not, the machine reads the tag and the chunk."""
        probe = self._cut_probe
        if chunk.__class__ is str and probe is not None and 0 < (n := len(chunk)) <= self._cut_room:
            if probe(chunk) is None:  # (most chunks: the common case first)
                self._grow(chunk)
                self._cut_room -= n
                return []
            cur = self._cur
            cap = self._cap
            assert cap is not None
            text = (cur.held + "".join(cur.grown) if cur.grown else cur.held) + chunk
            if cap.cut_at(text, 0):
                self._grow(chunk)
                self._cut_room -= n
                return []
            return self._process(cur.take_joined(text, n), False, NO_CANDIDATE)
        return self._read_machine(chunk)

    def _read_before_text(self, chunk: Any) -> list[Event]:
        """BEFORE_TEXT: before the answer (or, under "open", the reasoning) has begun, only
        white space has been read, and a reasoning tag may still come. A chunk whose first
        character that is not white space is no tag lead (nor a backtick or tilde) begins the
        answer there, before any tag could: the context gives way and the chunk is read in
        the next (``Sieve.feed``: the prose hot half, for most replies). Anything else — a
        chunk of white space, or one whose text begins at a lead, or text held — the
        machine, which sees every character (``_process``)."""
        if chunk.__class__ is str and not self._grown and not self._cur.held:
            at = _WHITE.match(chunk).end()  # type: ignore[union-attr]  # (\s* always matches)
            if at < len(chunk) and chunk[at] not in self._fences.leads:
                assert self._until_text is not None
                self._set_context(self._until_text)
                self._enter()
                return self.feed(chunk)
        return self._read_machine(chunk)

    def _read_machine(self, chunk: Any) -> list[Event]:
        """MACHINE, and what the other readers leave: the machine reads the held text and
        the chunk (``_process``)."""
        cur = self._cur
        if cur.log:  # (the held text's growth ``take`` joins and counts itself)
            cur.fold()
        if self._mode is RUN:  # the capture takes what the run hot path appended
            assert self._cap is not None
            self._cap.took(cur.sync_run())
        if chunk.__class__ is not str:
            if not isinstance(chunk, str):
                # The offset is the end of the text fed; the held text's growth stays where
                # it is (``grown``: a held candidate lives there), so the sieve goes on as
                # if this call had not been made.
                raise InputTypeError(
                    f"feed() takes str, not {type(chunk).__name__}",
                    offset=cur.total + sum(map(len, cur.grown)),
                )
            chunk = str(chunk)
        if not chunk:
            return []
        if self._off:
            cur.take(chunk)
            return [Text(chunk)]
        cand = self._cand if self._mode is CANDIDATE else NO_CANDIDATE
        return self._process(cur.take(chunk), False, cand)

    def _read_closed(self, chunk: Any) -> list[Event]:
        if not isinstance(chunk, str):
            raise InputTypeError(
                f"feed() takes str, not {type(chunk).__name__}", offset=self._cur.total
            )
        raise SieveClosedError("feed() after close()", offset=self._cur.total)


#: Each mode's reader (``Sieve.feed`` calls ``self._reader(self, chunk)``; ``_enter`` sets it).
_READERS: dict[Mode, Callable[[Any, Any], list[Event]]] = {
    PROSE: ModeReaders._read_prose,
    REASONING: ModeReaders._read_prose,
    CANDIDATE: ModeReaders._read_candidate,
    RUN: ModeReaders._read_run,
    CUT_TAG: ModeReaders._read_cut_tag,
    BEFORE_TEXT: ModeReaders._read_before_text,
    MACHINE: ModeReaders._read_machine,
    CLOSED: ModeReaders._read_closed,
}

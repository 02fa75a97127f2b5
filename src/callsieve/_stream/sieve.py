"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out — in one
class: the public half (``feed``, ``close``, the properties), one reader per mode, the one
method that changes the mode (``_step``), and the machine (``_process``). The modes, the
contexts and every step between them are data in ``modes`` (``STEPS``, ``READERS``); where
the reply stands is ``context.Where``.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes. The
sieve is in one ``Mode`` at a time. ``feed`` runs the fast half its row names, if the mode
has one, else its reader (``READERS``); nothing calls ``feed`` from inside. A reader always
returns the chunk's events: after a step to its own mode (LOG_FULL) it reads on, and the
one that steps to another mode (BEFORE_TEXT's, on the first text) hands the chunk to the
new mode's reader. The fast modes
take the common chunk without the machine — PROSE (and REASONING) logs prose and holds a tag
lead alive at the chunk's end (CANDIDATE); CANDIDATE reads only the new text; RUN appends an
argument body's text; CUT_TAG holds a tag cut by the chunk boundary; BEFORE_TEXT lets a
reply's first text begin the answer — and hand anything else to ``_read_machine``, which runs
the machine, ``_process``: the fence tracker walks the text and stops at each tag lead
outside code; ``EntryFinder`` decides it (text, a held candidate, an opener, a reasoning
tag); an opener starts a ``Capture``, which ends as calls or fails (``BlockLife``); a failed
block is released from its opener and the rest is scanned again as prose.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking, every character is released as text or belongs to exactly one parsed block, and
no ``str`` input raises. ``parse()`` is this machine run over one chunk. Every change of
mode is a step of ``STEPS`` taken in ``_step``; every change of context one taken in
``Where.step``; a step not in the table raises ``IllegalStep`` (a bug, never the input's).
What it costs: in PROSE an ASCII chunk without the tag lead is two tests, a logged append
and one ``Text`` (the ``Cursor`` counts the log later, in one piece); in RUN a chunk
without the run's stop is a test and an append; a held candidate reads only the new text.
Everything else is linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .._base.errors import InputTypeError, SieveClosedError
from .._base.events import Block, Event, Reasoning, Text
from .._blocks.capture import COMPLETE, FAILED, VIABLE, Capture
from .._blocks.lifecycle import ENDS_THOUGHT, BlockLife, LifeView
from .._blocks.repair import scan_to_end
from .._config.metrics import Metrics, close_counts
from .._config.options import (
    DEFAULT_MAX_BLOCK_CHARS,
    EARLY_EMIT,
    MODES,
    SieveOptions,
    new_call_id,
)
from .._grammar.automaton import DEAD, UNKNOWN
from .._grammar.compiled import CompiledGrammar, load_grammar
from .._scan.balanced import JsonRun
from .._scan.cursor import Cursor
from .._scan.fences import FenceState, FenceTracker
from .context import Where
from .entries import ALL_PROSE, HOLD, HOLD_SEEN, OPEN, PROSE_LEAD, TEXT
from .modes import (
    ANSWER,
    BEGIN,
    BLOCK,
    BLOCK_MOVES,
    CANDIDATE,
    CLOSED,
    CUT_TAG,
    END,
    FIRST_TEXT,
    IN_REASONING,
    LEAD_ALIVE,
    LEAD_DIED,
    LOG_FULL,
    MACHINE,
    MACHINE_RAN,
    MODE_STEPS,
    NEW,
    OPENING,
    READERS,
    RUN,
    RUN_ON,
    STOP_CUT,
    THINK_TAG,
    THOUGHT_ENDS,
    Context,
    Fast,
    Found,
    IllegalStep,
    Mode,
    SieveState,
    next_mode,
)

__all__ = ["EARLY_EMIT", "MODES", "Mode", "SieveMachine", "SieveState", "new_call_id"]


NO_CANDIDATE = -2
_WHITE = re.compile(r"\s*")  # (white space as ``str.isspace`` has it: both are Unicode's)
_LIVE = FenceState.LIVE
Budget = list[Callable[[str], None]]
_IDLE: Budget = []  # no fast half armed (never filled)
#: What sends a chunk a fast half tried on to the reader: a chunk that is not a ``str`` (the
#: reader raises the typed error), or a spent budget (``IndexError`` at its pop).
_TO_READER = (AttributeError, TypeError, IndexError)
_FAST_PROSE, _FAST_REASONING, _FAST_RUN = Fast.PROSE, Fast.REASONING, Fast.RUN
_FAST_ARG, _FAST_NONE = Fast.ARG, Fast.NONE


def _no_stream(chunk: str) -> list[Event]:  # pragma: no cover - never called: no fast half
    return []


class ArgHot(NamedTuple):
    """The ARG fast half, for a run streaming as arguments as it is (``ArgStream.hot``):
    what it sends a chunk to, what a chunk it takes must not hold, and its budget."""

    send: Callable[[str], list[Event]]
    #: Where a closing tag may begin (``ArgStream.hot_leads``): a chunk with it goes to
    #: ``_read_run``, ...
    lead: str
    #: ... and so does a non-ASCII chunk this finds something in.
    others: Callable[[str], Any]
    #: The run's budget (``Capture.run_budget``).
    budget: Budget


_NO_ARGS = ArgHot(_no_stream, "\0", _no_stream, _IDLE)


class SieveMachine(LifeView):
    """The streaming machine of ``callsieve.Sieve`` (the facade's class, ``_facade.sieve``,
    which adds only the choice of a sanitizing sieve): see the module docstring.

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

    __slots__ = (
        # The parts: the position and buffers, the blocks' lifecycle and the block being
        # read, the options, where the reply stands.
        "_cur",
        "_life",
        "_cap",
        "_opts",
        "_where",
        # The mode, its reader and its row of ``STEPS`` (written in ``_step`` only).
        "_mode",
        "_reader",
        "_steps",
        # The fast half ``feed`` runs (armed in ``_step`` only): which one (``READERS``'
        # ``fast``, or ``Fast.ARG``, which ``_arm_run`` picks); PROSE's or RUN's budget
        # (else empty); what the halves test: the tag lead of prose, the run's stop, and
        # ARG's leads (with its budget).
        "_fast",
        "_hot",
        "_lead",
        "_run_char",
        "_run_may_stop",
        "_arg",
        # CANDIDATE's and CUT_TAG's state.
        "_cand",
        "_cand_seen",
        "_cut_probe",
        "_cut_room",
    )

    _cur: Cursor
    _life: BlockLife
    _cap: Capture | None
    _opts: SieveOptions
    _where: Where
    _mode: Mode
    _reader: Callable[[Any, Any], list[Event]]
    _steps: dict[Found, tuple[Mode | Context, ...]]
    _fast: Fast
    _hot: Budget
    _lead: str
    _run_char: str
    _run_may_stop: Callable[[str], bool]
    _arg: ArgHot
    _cand: int
    _cand_seen: bool
    _cut_probe: Callable[[str], Any] | None
    _cut_room: int

    def __init__(
        self,
        tools: Iterable[Any] | None = None,
        *,
        early_emit: str = "block",
        mode: str = "on",
        max_block_chars: int = DEFAULT_MAX_BLOCK_CHARS,
        dialects: Iterable[str] | str | None = None,
        grammar_dirs: Iterable[str | os.PathLike[str]] = (),
        id_factory: Callable[[], str] = new_call_id,
        reasoning: str = "tags",
        calls_in_reasoning: str = "text",
        policy: str | None = None,
        on_reject: str = "drop",
        sanitize: bool = False,
        metrics: bool | Metrics | None = None,
        **unknown: Any,
    ) -> None:
        opts = self._opts = SieveOptions(
            tools,
            early_emit=early_emit,
            mode=mode,
            max_block_chars=max_block_chars,
            dialects=dialects,
            grammar_dirs=grammar_dirs,
            id_factory=id_factory,
            reasoning=reasoning,
            calls_in_reasoning=calls_in_reasoning,
            policy=policy,
            on_reject=on_reject,
            sanitize=sanitize,
            metrics=metrics,
            **unknown,
        )
        g = load_grammar(opts.dialects, opts.grammar_dirs)
        self._cur = Cursor(FenceTracker(g.openers.lead_chars))
        # Metrics (``_config.metrics``): the sieve counts into its own, added at ``close()`` to the
        # ``metrics=`` object given (if one was) and to the process-wide aggregate.
        self._life = BlockLife(
            g,
            opts.schemas,
            opts.id_factory,
            opts.rules,
            None if opts.metrics is None else Metrics(),
            opts.early_emit == "arguments",
        )
        # SPEC §15: one entry finder per context of the reply (``context.finders``).
        self._where = Where(g, self._cur, opts.reasoning)
        self._lead = g.openers.prose_lead
        self._cap = None
        self._cand = NO_CANDIDATE  # CANDIDATE: the automaton state of the opener held
        self._cand_seen = False  # ... which has passed an accepting state
        # RUN: the stop's single first character ("" if it has none: "" is in every chunk,
        # so ``may_stop`` is asked) and whether a chunk may hold the stop.
        self._run_char = ""
        self._run_may_stop = bool
        # CUT_TAG: what could complete the tag, and how much more may be held before it is
        # too long to be a tag.
        self._cut_probe = None
        self._cut_room = 0
        # "arguments" emits each call as "invoke" does, its stream before it (``_blocks.argstream``).
        self._arg = _NO_ARGS
        self._mode = NEW
        self._steps = MODE_STEPS[NEW]
        self._step(BEGIN, MACHINE if opts.mode == "off" else self._where.home)

    # ------------------------------------------------------------------ public API
    @property
    def state(self) -> SieveState:
        if self._mode is CLOSED:
            return SieveState.CLOSED
        return SieveState.PROSE if self._cap is None else SieveState.CAPTURE

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The blocks this sieve captured that parsed (the latest ``KEPT_BLOCKS``, 64, in
        order; ``partial`` ones included) and any that failed because the input ended
        inside it (``close()`` released it as text), with status, repairs and diagnostics:
        what a server logs to tell a reply that ended inside a block from an ordinary one.
        Blocks released as text before the end (prose mentions, malformed blocks) are
        not kept: ``parse()`` lists those too."""
        return tuple(self._life.blocks)

    @property
    def in_reasoning(self) -> bool:
        """The reply stands inside reasoning (SPEC §15): what comes next is reasoning unless a
        ``</think>`` ends it (a block being read inside reasoning counts as inside)."""
        return self._where.context is IN_REASONING

    @property
    def _g(self) -> CompiledGrammar:
        """The sieve's grammar (for tests and tools: it is its ``BlockLife``'s)."""
        return self._life.g

    @property
    def saw_tool_call_syntax(self) -> bool:
        """A wrapper, or a repaired missing-wrapper block, was seen outside code."""
        return self._life.saw_syntax

    def parse_whole(self, text: str) -> tuple[list[Event], tuple[Block, ...]]:
        """For ``parse()`` (documented internal API): ``text`` as the one chunk, then
        ``close()``, with every block captured recorded — failed ones too, which a stream
        does not keep — and returned with the events."""
        self._life.record_all()
        events = self.feed(text) + self.close()
        return events, tuple(self._life.blocks)

    def feed(self, chunk: str) -> list[Event]:
        """Take the next chunk; return the events it decides (possibly none)."""
        # The fast half ``_step`` armed (``_fast``, from the mode's row of ``READERS``), else
        # the mode's reader. Each half is one branch here: no loop, no helper call, and no
        # local variable but ``self`` and ``chunk`` (each would cost every chunk more than
        # the half itself). The two commonest cost one truth test each (benchmarks/README.md,
        # "The fast halves").
        # PROSE (the one false member): an ASCII chunk without the tag lead is text,
        # whatever else it holds. It is logged (a pop from the budget, then its bound
        # append) and counted later. A spent budget raises ``IndexError`` at the pop.
        if not self._fast:
            try:
                if chunk and chunk.isascii() and self._lead not in chunk:
                    self._hot.pop()(chunk)
                    return [Text(chunk)]
            except _TO_READER:
                pass  # (not a str, or the budget spent: the reader)
        # RUN (the one other member armed with ``_hot``, while its budget lasts), nothing
        # held and no stop in sight: append; no parser step, nothing counted.
        elif (
            self._hot
            and chunk.__class__ is str
            and (self._run_char not in chunk or not self._run_may_stop(chunk))
        ):
            self._hot.pop()(chunk)
            return []
        elif self._fast is _FAST_NONE:
            pass  # (the reader reads every chunk)
        # ARG, a run streaming as arguments as it is (``ArgStream.streams_as_is``: CDATA,
        # a ``string="true"`` body, a JSON body's strings): append, and its delta (one
        # event per chunk, as ``Text`` in prose).
        elif self._fast is _FAST_ARG:
            if (
                chunk.__class__ is str
                and self._arg.budget
                and (self._run_char not in chunk or not self._run_may_stop(chunk))
                and self._arg.lead not in chunk  # (where a closing tag may begin: ``text``)
                and (chunk.isascii() or self._arg.others(chunk) is None)
            ):
                self._arg.budget.pop()(chunk)
                return self._arg.send(chunk)
        # REASONING (SPEC §15): PROSE's fast half through the prose budget itself, the
        # chunk released as reasoning.
        elif self._fast is _FAST_REASONING:
            try:
                if chunk and chunk.isascii() and self._lead not in chunk:
                    self._cur.prose_live.pop()(chunk)
                    return [Reasoning(chunk)]
            except _TO_READER:
                pass  # (not a str, or the budget spent: the reader)
        return self._reader(self, chunk)

    def close(self) -> list[Event]:
        """End of input: flush (loose-CDATA repair, unfinished block as text)."""
        cur = self._cur
        if self._mode is CLOSED:
            raise SieveClosedError("close() called twice", offset=cur.total)
        cur.flush()
        events: list[Event] = []
        if self._opts.mode != "off":
            if self._mode is RUN:  # the capture takes what the run hot path appended
                assert self._cap is not None
                cur.ran(self._cap.took())
            cand = self._cand if self._mode is CANDIDATE else NO_CANDIDATE
            events = self._process(cur.take(""), True, cand)
            # (under "open", a reply that never left the opening never closed the thought)
            self._life.ended_in_reasoning(self._where.context in (IN_REASONING, OPENING))
        self._step(END)
        metrics = self._life.metrics
        if metrics is not None:
            close_counts(metrics, self._opts.metrics, self._cur.total, self._life.consumed)
        return events

    # ------------------------------------------------------------------ transitions
    def _step(self, found: Found, to: Mode | None = None) -> None:
        """The one way the mode changes: the step from the mode on ``found`` (its row of
        ``STEPS``), to ``to`` (which must be one of its targets) or to its one target. A
        step that is not in the table raises ``IllegalStep``. Then the new mode is armed:
        its reader, its row, and its fast half (``READERS``' ``fast``: PROSE's with its
        budget topped up; RUN's while nothing is held), and CUT_TAG's probe."""
        try:
            targets = self._steps[found]
        except KeyError:
            raise IllegalStep(
                f"no step from {self._mode} on {found.name}: the machine is broken"
            ) from None
        if to is None:
            to = targets[0]  # type: ignore[assignment]
        elif to not in targets:
            raise IllegalStep(f"{found.name} from {self._mode} may not go to {to}")
        self._mode = to  # type: ignore[assignment]
        self._reader, self._steps, fast = _ROWS[to]  # type: ignore[index]
        self._fast = fast
        if fast is _FAST_PROSE:  # (its budget topped up)
            self._hot = self._cur.prose_live or self._cur.prose_budget()
        elif fast is _FAST_RUN:  # (while nothing is held: ``_arm_run``)
            cur = self._cur
            if found is MACHINE_RAN:  # a run the machine began or read on: its stop, its room
                # (when something is held, it is the run's tail that may begin its stop)
                cap = self._cap
                assert cap is not None and cap.run is not None
                if type(cap.run) is JsonRun:  # (a deep run's probe: its pieces, the room left)
                    pieces = cap.run_text.pieces if cap.args is None else None
                    end, room = cap.start + cap.raw_len, self._opts.max_block_chars - cap.raw_len
                    cap.run.arm(pieces, end, room)
                self._run_char = cap.run.stop_char or ""
                # (a stop of a few first characters: the fast half asks the class search
                # itself, in C — benchmarks/README.md, "Fast paths", "stop probe")
                self._run_may_stop = getattr(cap.run, "stop_probe", None) or cap.run.may_stop
                cur.begin_run(cap.raw_len)
            if cur.held:
                self._fast, self._hot = _FAST_NONE, _IDLE
            else:
                self._arm_run()
        else:
            self._hot = _IDLE
            if fast is _FAST_REASONING:  # (the budget it pops, ``Cursor.prose_live``, topped up)
                self._cur.prose_budget()
            elif to is CUT_TAG:
                # A chunk without a character that could complete the tag (the one pending
                # terminal's, else any of the parser state's) is only held, up to the longest
                # the tag may be.
                cap = self._cap
                assert cap is not None
                held = len(self._cur.held)
                one = cap.held.pending
                if one is not None and one.end_probe is not None:
                    self._cut_probe, self._cut_room = one.end_probe, one.width - held
                else:
                    self._cut_probe = cap.spec.shell_probe
                    self._cut_room = cap.spec.shell_width - held

    def _arm_run(self) -> None:
        """RUN with nothing held: its fast half — the one that only appends, or, for a run
        streaming as arguments as it is (CDATA, a ``string="true"`` body, a JSON body's
        strings), the one that appends and sends it (``Fast.ARG``, ``ArgStream.hot``); text
        that the stream must still decide on goes through ``_read_run``."""
        cap = self._cap
        assert cap is not None
        stream = cap.args
        if stream is None or not stream.wants_text():  # (``_fast`` is the row's: RUN)
            self._hot = cap.run_text.run_live or cap.run_budget()
            return
        self._hot = _IDLE
        if stream.streams_as_is():
            self._fast = _FAST_ARG
            budget = cap.run_text.run_live or cap.run_budget()
            self._arg = ArgHot(stream.hot, *stream.hot_leads(), budget)
        else:
            self._fast = _FAST_NONE

    # ------------------------------------------------------------------ the readers
    # Each returns the chunk's events (a step to another mode hands it to that mode's reader).
    def _read_prose(self, chunk: Any) -> list[Event]:
        """PROSE and REASONING, a chunk the fast half did not take: not ASCII, or with a tag
        lead, or the budget spent (the LOG_FULL step folds the log and tops it up). It is
        released as the context's ``kind``: ``Text`` or ``Reasoning``. One search: a chunk
        whose every tag lead dies within it is text wherever the fence tracker stands, so it
        is logged too; a tag lead alive at its end is held (CANDIDATE) once the log is
        folded and the tracker stands in prose. Anything else (a backtick or tilde, an
        opener that may be complete, code): the machine."""
        if chunk.__class__ is not str:
            return self._read_machine(chunk)
        cur = self._cur
        if not cur.prose_live:  # the budget is spent: fold the log, top it up, read on
            self._step(LOG_FULL)
        where = self._where
        found = where.lead_search(chunk)
        if found is None:
            if not chunk:
                return []
            cur.prose_live.pop()(chunk)
            return [where.kind(chunk)]
        lead = where.settles(chunk, found)
        at = lead.at
        if at == ALL_PROSE:
            cur.prose_live.pop()(chunk)
            return [where.kind(chunk)]
        if at >= 0:
            hold = found.start() + at
            if cur.log:
                cur.fold()
            fences = where.fences
            if fences.state is _LIVE and not fences.run_len:
                self._cand = lead.state
                self._cand_seen = False
                self._step(LEAD_ALIVE)
                # Through the cursor's two logs, counted when folded: the candidate goes
                # to ``grown`` (a held candidate is all there), the prose before it to the
                # prose log (whose budget this chunk found not empty).
                if not hold:
                    cur.grow(chunk)
                    return []
                cur.grow(chunk[hold:])
                pre = chunk[:hold]
                cur.prose_live.pop()(pre)
                return [where.kind(pre)]
        return self._read_machine(chunk)

    def _read_candidate(self, chunk: Any) -> list[Event]:
        """CANDIDATE: the automaton reads the new text only. Still alive and not complete at
        the end: hold the chunk too. Dead without ever having been complete: the held text
        is prose, and so is the rest if every other lead in it dies too (PROSE), or up to a
        later lead alive at the end, which is held instead. Anything else: the machine."""
        state = self._cand
        where = self._where
        accepting = where.accepting
        if chunk.__class__ is str and not accepting[state]:
            onward = where.onward
            for ch in chunk:
                nxt = onward[state].get(ch)
                if nxt is None:  # not known to stay open: dead, complete, or not yet seen
                    nxt = where.trans[state].get(ch, UNKNOWN)
                    if nxt == UNKNOWN:
                        nxt = where.auto.step(state, ch)
                    if nxt < 0 or accepting[nxt]:
                        state = nxt
                        break
                state = nxt
            else:
                self._cur.grow(chunk)
                self._cand = state
                return []
            if state == DEAD and not self._cand_seen:
                # Dead without ever having been complete: the text before a later lead
                # goes to the prose log, uncounted as it was. (No backtick, tilde or other
                # lead before it: the fence tracker stays in prose, where it was when the
                # candidate was held.)
                cur = self._cur
                text = "".join(cur.grown) + chunk  # (the candidate: ``Cursor.grown``)
                found = where.lead_search(text, 1)
                lead = PROSE_LEAD if found is None else where.settles(text, found)
                at = lead.at
                if at == ALL_PROSE:
                    cur.drop_grown()
                    self._step(LEAD_DIED, where.home)
                    cur.prose_live.pop()(text)
                    return [where.kind(text)]
                if at >= 0:
                    # Holding the later lead here saves the machine reading the chunk
                    # again (benchmarks/README.md, "Fast paths").
                    assert found is not None
                    at += found.start()
                    cur.regrow(text[at:])
                    self._cand = lead.state
                    pre = text[:at]
                    (cur.prose_live or cur.prose_budget()).pop()(pre)
                    return [where.kind(pre)]
        return self._read_machine(chunk)

    def _read_run(self, chunk: Any) -> list[Event]:
        """RUN, a chunk the fast half did not take: the stop may be in it, or begin at its
        end (a "]" before "]]>"), or the held tail may begin it, or the budget is spent.
        Unless the stop is complete, the content goes on (appended through the same
        budget, so at most ``HOT_BUDGET`` pieces are ever uncounted) and a tail that may
        begin the stop is held; a stop where a tag begins that the chunk cuts holds that
        tag (CUT_TAG). Anything else: the machine."""
        if chunk.__class__ is str:
            cur = self._cur
            cap = self._cap
            assert cap is not None and cap.run is not None
            budget = cap.run_text.run_live or cap.run_budget()  # (topped up: ``raw_len``)
            held = cur.held
            text = held + chunk if held else chunk
            stop, tail = cap.run.find_stop(text, 0, False)
            if stop < 0:  # (a deep run's probe: the machine reads it, a chunk of the budget)
                budget.pop()
            elif self._opts.max_block_chars - cap.raw_len >= stop and (
                stop == len(text) or tail or cap.cut_at(text, stop)
            ):
                if stop:
                    budget.pop()(text[:stop])
                cur.hold_run(text[stop:])
                stream = cap.args  # (argument streaming: the text may stream)
                if stream is not None:
                    stream.feed(text[:stop])
                if stop == len(text) or tail:
                    self._step(RUN_ON)  # (a fast half again if nothing is held)
                else:
                    cur.ran(cap.took())
                    self._step(STOP_CUT)
                return stream.take() if stream is not None and stream.out else []
        return self._read_machine(chunk)

    def _read_cut_tag(self, chunk: Any) -> list[Event]:
        """CUT_TAG: unless this chunk holds a character that could complete the tag, hold
        it for one match later; if it does, ask the capture whether the tag is still cut,
        and if not, the machine reads the tag and the chunk."""
        probe = self._cut_probe
        if chunk.__class__ is str and probe is not None and 0 < (n := len(chunk)) <= self._cut_room:
            cur = self._cur
            if probe(chunk) is None:  # (most chunks: the common case first)
                cur.grow(chunk)
                self._cut_room -= n
                return []
            cap = self._cap
            assert cap is not None
            text = (cur.held + "".join(cur.grown) if cur.grown else cur.held) + chunk
            if cap.cut_at(text, 0):
                cur.grow(chunk)
                self._cut_room -= n
                return []
            return self._process(cur.take_joined(text, n), False, NO_CANDIDATE)
        return self._read_machine(chunk)

    def _read_before_text(self, chunk: Any) -> list[Event]:
        """BEFORE_TEXT: before the answer (or, under "open", the reasoning) has begun, only
        white space has been read, and a reasoning tag may still come. A chunk whose first
        character that is not white space is no tag lead (nor a backtick or tilde) begins the
        answer there, before any tag could: the context gives way and the chunk is read in
        the next mode's reader (``_read_prose``). Anything else — a chunk of
        white space, or one whose text begins at a lead, or text held — the machine, which
        sees every character (``_process``)."""
        if chunk.__class__ is str and not self._cur.grown and not self._cur.held:
            at = _WHITE.match(chunk).end()  # type: ignore[union-attr]  # (\s* always matches)
            where = self._where
            if at < len(chunk) and chunk[at] not in where.fences.leads:
                where.step(FIRST_TEXT)
                self._step(FIRST_TEXT, where.home)
                return self._reader(self, chunk)  # (the new mode's: ``_read_prose``)
        return self._read_machine(chunk)

    def _read_machine(self, chunk: Any) -> list[Event]:
        """MACHINE, and what the other readers leave: the machine reads the held text and
        the chunk (``_process``)."""
        cur = self._cur
        if cur.log:  # (the held text's growth ``take`` joins and counts itself)
            cur.fold()
        if self._mode is RUN:  # the capture takes what the run fast half appended
            assert self._cap is not None
            cur.ran(self._cap.took())
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
        if self._opts.mode == "off":
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

    # ------------------------------------------------------------------ the machine
    def _process(self, taken: tuple[str, int], final: bool, cand: int) -> list[Event]:
        """Scan ``buf`` (``taken`` is ``Cursor.take``'s ``(buf, resume)``: its first
        ``resume`` characters were seen before: a held tail, which is the candidate ``cand``
        if that is >= 0; it ends at the cursor's ``total``). In prose, from lead to lead:
        text, a held candidate (``_hold``), a reasoning tag (``_reasoning_tag``) or an opener
        (``_open``); inside a block, the capture reads on (``_read_block``). ``buf``
        changes when a block read from a copy, or failed, hands the machine text to read
        again: ``base`` is its ``buf[0]``'s offset, ``text_start`` where unreleased text
        begins, ``pos`` where the scan goes on."""
        buf, resume = taken
        cur = self._cur
        if final:  # (the end of the input: nothing is read after it)
            self._life.input_ends()
        base = cur.total - len(buf)  # (the absolute offset of buf[0])
        events: list[Event] = []
        pos = text_start = 0
        where = self._where
        while True:
            if self._cap is not None:
                went_on = self._read_block(self._cap, buf, base, pos, final, events)
                if went_on is None:  # the block goes on past the buffer
                    break
                buf, base, text_start, pos = went_on
                continue
            if cand >= 0:  # resume the candidate held at buf[0]
                i = 0
                verdict, value = where.finder.candidate(
                    buf, 0, final, cand, resume, self._cand_seen
                )
                cand = NO_CANDIDATE
            else:
                i = where.fences.advance(buf, pos, final, cur.tail)
                if i >= len(buf):  # no tag lead outside code before the end
                    self._release(buf, text_start, i, events)
                    break
                verdict, value = where.finder.candidate(buf, i, final, 0, i, False)
            if verdict is TEXT and not where.until_text:
                pos = i + 1
                continue
            if where.until_text and (
                verdict is TEXT or text_start < i and not buf[text_start:i].isspace()
            ):
                # Text stands before this lead, or the lead is text: the answer (under
                # "open", the reasoning) has begun, and the lead is decided again with its
                # entries (a <think> there is text).
                where.step(FIRST_TEXT)
                pos = i
                continue
            kind = where.kind  # (a block's step keeps what text is released as)
            went = None
            if verdict is OPEN and value.lastgroup != where.finder.table.tag:
                went = self._open(value, buf, base, i, final)
                if went[0] is buf and went[2] == i and self._cap is None:
                    pos = went[3]  # (it failed at once: its text joins the text around it)
                    continue
            if text_start < i:
                events.append(kind(buf[text_start:i]))
            cur.passed(buf, i)
            if went is not None:
                buf, base, text_start, pos = went
                continue
            if verdict is HOLD or verdict is HOLD_SEEN:
                self._hold(buf, i, value, verdict is HOLD_SEEN)
                break
            pos = text_start = self._reasoning_tag(buf, base, value, events)
        if not final:  # the mode the machine's state calls for
            cur = self._cur  # (a candidate the machine holds is in ``Cursor.grown``)
            self._step(MACHINE_RAN, next_mode(self._cap, cur.held, bool(cur.grown), where.home))
        return events

    def _release(self, buf: str, text_start: int, i: int, events: list[Event]) -> None:
        """No tag lead outside code before ``i``, the buffer's end: release the text from
        ``text_start`` (the first text that is not white space ends a context that lasts
        until it, ``until_text``)."""
        if text_start < i:
            piece = buf[text_start:i]
            where = self._where
            events.append(where.kind(piece))
            if where.until_text and not piece.isspace():
                where.step(FIRST_TEXT)  # (the answer has begun)
        self._cur.passed(buf, i)

    def _hold(self, buf: str, i: int, state: int, seen: bool) -> None:
        """Hold the possible opener ``buf[i:]`` (the entry automaton in ``state``; ``seen``:
        it passed an accepting state)."""
        self._cand = state
        self._cand_seen = seen
        self._cur.hold_candidate(buf[i:])
        metrics = self._life.metrics
        if metrics is not None:
            metrics.held(len(buf) - i)

    def _reasoning_tag(self, buf: str, base: int, tag: Any, events: list[Event]) -> int:
        """A reasoning tag (SPEC §15, the match ``tag``; ``base``: the offset of ``buf[0]``):
        it goes nowhere but its event; after it the reply is in the context ``STEPS`` says.
        In the answer (``reasoning="tags"``: ``context.finders``) it is a ``</think>`` with no
        ``<think>`` open — text, noted where it stands (``BlockLife.stray_close``). Where the
        scan goes on."""
        where = self._where
        if where.context is ANSWER:
            events.append(Text(tag.group()))
            self._life.stray_close(base + tag.start())
        else:
            events.append(Reasoning("", tag.group()))
        where.step(THINK_TAG)
        end: int = tag.end()
        self._cur.passed(buf, end)
        return end

    def _open(
        self, opener: Any, buf: str, base: int, i: int, final: bool
    ) -> tuple[str, int, int, int]:
        """Open a capture at the entry match ``opener`` (at ``buf[i]``); ``(buf, base,
        text_start, pos)`` to go on with. One that would emit nothing before failing and
        fails at once is released with no capture read (``BlockLife.fail_at_once``)."""
        life = self._life
        opts = self._opts
        where = self._where
        reasoning = None
        if where.context is IN_REASONING:  # (SPEC §15: a draft, or a call ending it)
            ends = opener.lastgroup in life.g.openers.thought_enders
            reasoning = ENDS_THOUGHT if ends else opts.calls_in_reasoning
        if where.context in BLOCK_MOVES:
            where.step(BLOCK)  # (at the start: its anchored entries end)
        pos = opener.end()
        early = opts.early_emit != "block"
        limit = opts.max_block_chars
        went_on = life.fail_at_once(
            opener, base + i, reasoning, buf, base, pos, self._cur, early, limit, final, where
        )
        if went_on is not None:
            return went_on
        self._cap = life.open(opener, base + i, reasoning)
        return buf, base, pos, pos

    def _end_thought(self, life: BlockLife) -> None:
        """A block read in a thought still open, in a dialect whose calls end it
        (``ENDS_THOUGHT``), gave its first calls: the thought ends here (SPEC §15)."""
        if life.in_reasoning == ENDS_THOUGHT and self._where.context is IN_REASONING:
            life.thought_ended()
            self._where.step(THOUGHT_ENDS)

    def _read_block(
        self, cap: Capture, buf: str, base: int, pos: int, final: bool, events: list[Event]
    ) -> tuple[str, int, int, int] | None:
        """The capture reads ``buf`` from ``pos``: None while the block goes on past it (the
        rest held), else ``(buf, base, text_start, pos)`` to go on with in prose — after the
        block, or, for a failed one, from its opener (or after the calls already emitted)."""
        life = self._life
        limit = self._opts.max_block_chars
        status, p = scan_to_end(cap, buf, pos, limit) if final else cap.scan(buf, pos, False, limit)
        if cap.args is not None:  # argument streaming: its events come first
            events += life.streamed(cap, status == FAILED)
        if (
            status != COMPLETE
            and self._opts.early_emit != "block"
            and not cap.strict
            and len(cap.calls) > cap.emitted
            and life.in_reasoning != "text"
        ):
            events += life.early(cap)
            self._end_thought(life)
        if status == VIABLE:
            if p < len(buf):  # (``take`` left nothing held)
                self._cur.hold(buf[p:])
            if life.metrics is not None:
                life.metrics.held(cap.raw_len + len(buf) - p)
            return None
        self._cap = None
        if status == FAILED:  # release from the opener, and scan the rest again as prose
            return life.fail(cap, buf, base, p, self._cur)
        done, raw = life.complete(cap)
        if cap.args is not None or life.out:  # (argument streaming: calls finished as it ended)
            events += life.streamed(cap, False)
        # (a block inside reasoning, under calls_in_reasoning="text": reasoning)
        events += [Reasoning(raw)] if life.in_reasoning == "text" else done
        self._end_thought(life)
        self._cur.passed(raw, len(raw))  # (so the tail again stands before buf[pos])
        leftover = cap.repair.leftover
        if leftover is not None:  # a repair read on from a copy of the block
            return leftover, cap.start + cap.raw_len, 0, 0
        return buf, base, p, p


#: Each mode's row, from ``READERS`` and ``STEPS``: its reader (``feed`` calls
#: ``self._reader(self, chunk)``), its steps and its fast half (``_step`` takes all three).
_ROWS: dict[
    Mode,
    tuple[Callable[[Any, Any], list[Event]], dict[Found, tuple[Mode | Context, ...]], Fast],
] = {
    mode: (getattr(SieveMachine, spec.reader), MODE_STEPS[mode], spec.fast)
    for mode, spec in READERS.items()
}

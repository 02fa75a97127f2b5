"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out — in one
class: the public half (``feed``, ``close``, the properties), the one writer of the mode
(``_enter``), one reader per mode, and the machine (``_process``). What the modes and
contexts mean, and which mode the machine leaves the sieve in, is data in ``modes``.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes. The
sieve is in one ``Mode`` at a time, and each mode has one reader (h11's ``READERS[state]``:
``feed`` calls ``self._reader(self, chunk)``, where ``_reader`` is ``_READERS[mode]``). The
readers of the fast modes take the common chunk without the machine — PROSE (and REASONING)
logs prose and holds a tag lead alive at the chunk's end (CANDIDATE); CANDIDATE reads only
the new text; RUN appends an argument body's text; CUT_TAG holds a tag cut by the chunk
boundary until a character that could complete it arrives; BEFORE_TEXT lets a reply's
first text begin the answer — and hand anything else to ``_read_machine``, which runs the
machine, ``_process``: the fence tracker walks the text and stops at each tag lead outside
code; ``EntryFinder`` decides it (text, a held candidate, an opener, a reasoning tag); an
opener starts a ``Capture``, which ends as calls or fails (``BlockLife``); a failed block is
released from its opener and the rest is scanned again as prose, so a mention followed by a
real block works. ``_enter()`` then takes the mode ``next_mode`` chooses from what the
machine left, and arms its reader and hot half; ``_set_context`` moves the reply between
the ``CONTEXTS``.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking (the readers only ever take what the machine would release, hold or append, in
the same order), every character is released as text or belongs to exactly one parsed
block, and no ``str`` input raises. ``parse()`` is this machine run over one chunk. The
mode, its reader and the hot halves are written in ``_enter`` only; the position is
changed only through the ``Cursor``.
What it costs: in PROSE an ASCII chunk without the tag lead is two tests, a logged append
and one ``Text`` (the ``Cursor`` counts the log later, in one piece); in RUN a chunk
without the run's stop is a test and an append; a held candidate reads only the new text.
Everything else is linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from .._base.errors import ConfigurationError, InputTypeError, SieveClosedError
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
from .._grammar.automaton import DEAD, UNKNOWN, EntryAutomaton
from .._grammar.compiled import CompiledGrammar, load_grammar
from .._grammar.names import THINK_CLOSE
from .._scan.cursor import Cursor
from .._scan.fences import FenceState, FenceTracker, lead_search
from .entries import ALL_PROSE, HOLD, TEXT, EntryFinder
from .modes import (
    ANSWER,
    BEFORE_TEXT,
    CANDIDATE,
    CLOSED,
    CONTEXTS,
    CUT_TAG,
    FIRST_CONTEXT,
    IN_REASONING,
    MACHINE,
    OPENING,
    PROSE,
    REASONING,
    RUN,
    START,
    Context,
    Mode,
    SieveState,
    next_mode,
)

__all__ = ["EARLY_EMIT", "MODES", "Mode", "SieveMachine", "SieveState", "new_call_id"]


NO_CANDIDATE = -2
_WHITE = re.compile(r"\s*")  # (white space as ``str.isspace`` has it: both are Unicode's)
_LIVE = FenceState.LIVE
Budget = list[Callable[[str], None]]


def _no_stream(chunk: str) -> list[Event]:  # pragma: no cover - never called: no hot half
    return []


class SieveMachine(LifeView):
    """The streaming machine of ``callsieve.Sieve`` (the facade's class, ``_facade.sieve``,
    which adds only the choice of a sanitizing sieve): see the module docstring.

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

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
        "_arg_lead",
        "_arg_others",
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
        "_g",
        "_life",
        "_lead",
        "_early",
        "_reason_calls",
        "_into",
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
    _arg_lead: str
    _arg_others: Callable[[str], Any]
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
    _g: CompiledGrammar
    _life: BlockLife

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
        opts = SieveOptions(
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
        g = self._g = load_grammar(opts.dialects, opts.grammar_dirs)
        self._fences = FenceTracker(g.openers.lead_chars)
        self._cur = Cursor(self._fences)
        self._grow = self._cur.grow
        self._grown = self._cur.grown  # (a held candidate's text: see ``Cursor.grown``)
        self._lead_search = self._fences.live_lead.search
        # Metrics (``_config.metrics``): the sieve counts into its own, added at ``close()`` to the
        # ``metrics=`` object given (if one was) and to the process-wide aggregate.
        self._into = opts.metrics
        self._life = BlockLife(
            g,
            opts.schemas,
            opts.id_factory,
            opts.rules,
            None if opts.metrics is None else Metrics(),
            opts.early_emit == "arguments",
        )
        # SPEC §15: one entry finder per context of the reply (``_grammar.entry_tables``), each with
        # its fence tracker (reasoning is read without code: ``_set_context``); the context's
        # are ``_finder`` and ``_scan.fences``, its automaton's tables ``_auto`` ...
        self._finders = _finders(g, self._fences, opts.reasoning)
        self._reason_calls = opts.calls_in_reasoning  # a block inside reasoning: text or call
        self._set_context(_first_context(opts.reasoning, self._finders))
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
        self._early = opts.early_emit != "block"
        self._off = opts.mode == "off"
        self._limit = opts.max_block_chars
        self._idle = []  # (never filled: a hot half that is off)
        self._prose_hot = self._run_hot = self._arg_hot = self._reason_hot = self._idle
        self._arg_send = _no_stream  # (``_arg_hot``'s: ArgStream.hot)
        self._arg_lead, self._arg_others = "\0", _no_stream  # (... and what it hands over)
        self._mode = MACHINE
        self._reader = SieveMachine._read_machine
        self._enter(MACHINE if self._off else self._home)

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
        return self._context is IN_REASONING

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
        # The PROSE and RUN readers' common cases, inlined (a hot half is armed only in its
        # mode, by ``_enter``): benchmarks/README.md, "The readers' hot halves".
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
        elif (
            self._run_hot
            and chunk.__class__ is str
            and (self._run_char not in chunk or not self._run_may_stop(chunk))
        ):
            self._run_hot.pop()(chunk)
            return []
        # RUN, a run streaming as arguments as it is (``_blocks.argstream``,
        # ``ArgStream.streams_as_is``: CDATA, a ``string="true"`` body, a JSON body's strings),
        # the same chunk: append, and its delta (one event per chunk, as ``Text`` in prose;
        # the stream reads in full what does not go out as it is).
        elif (
            self._arg_hot
            and chunk.__class__ is str
            and (self._run_char not in chunk or not self._run_may_stop(chunk))
            and self._arg_lead not in chunk  # (where a closing tag may begin: ``text``)
            and (chunk.isascii() or self._arg_others(chunk) is None)
        ):
            self._arg_hot.pop()(chunk)
            return self._arg_send(chunk)
        # REASONING (SPEC §15): PROSE's hot half, the chunk released as reasoning.
        elif self._reason_hot:
            try:
                if chunk and chunk.isascii() and self._lead not in chunk:
                    self._reason_hot.pop()(chunk)
                    return [Reasoning(chunk)]
            except (AttributeError, TypeError):
                pass  # not a str: the reader raises the typed error
        return self._reader(self, chunk)

    def close(self) -> list[Event]:
        """End of input: flush (loose-CDATA repair, unfinished block as text)."""
        cur = self._cur
        if self._mode is CLOSED:
            raise SieveClosedError("close() called twice", offset=cur.total)
        cur.flush()
        events: list[Event] = []
        if not self._off:
            if self._mode is RUN:  # the capture takes what the run hot path appended
                assert self._cap is not None
                cur.ran(self._cap.took())
            cand = self._cand if self._mode is CANDIDATE else NO_CANDIDATE
            events = self._process(cur.take(""), True, cand)
            # (under "open", a reply that never left the opening never closed the thought)
            self._life.ended_in_reasoning(self._context in (IN_REASONING, OPENING))
        self._enter(CLOSED)
        metrics = self._life.metrics
        if metrics is not None:
            close_counts(metrics, self._into, self._cur.total, self._life.consumed)
        return events

    # ------------------------------------------------------------------ transitions
    def _enter(self, mode: Mode | None = None) -> None:
        """The one place the mode changes: its reader, the hot halves ``feed`` inlines
        (PROSE's always, with its budget topped up; RUN's while nothing is held), and
        CUT_TAG's probe. With no mode (after the machine, ``_process``): the mode the
        machine's state calls for."""
        if mode is None:
            # (a candidate the machine holds is in ``Cursor.grown``)
            mode = next_mode(self._cap, self._cur.held, bool(self._grown), self._home)
            if mode is RUN:
                # (when something is held, it is the run's tail that may begin its stop)
                cap = self._cap
                assert cap is not None and cap.run is not None
                self._run_char = cap.run.stop_char or ""
                # (a stop of a few first characters: the hot half asks the class search
                # itself, in C — a chunk holding one goes to the reader, which finds the stop
                # or its tail: benchmarks/README.md, "Fast paths", "stop probe")
                self._run_may_stop = getattr(cap.run, "stop_probe", None) or cap.run.may_stop
                self._cur.begin_run(cap.raw_len)
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
        """Where the reply now stands (SPEC §15): what ``CONTEXTS`` says of ``context`` —
        the entries prose is searched for (and the fence tracker: reasoning's sees no code),
        what it is released as, the context the first text gives way to, and the mode it is
        read in with nothing held (before the answer, or under "open" the reasoning,
        BEFORE_TEXT, whose reader hands the machine whatever could hold the first character
        that is not white space). The next ``_enter()`` arms it."""
        spec = CONTEXTS[context]
        self._context = context
        finder = self._finder = self._finders[context]
        if finder.tracker is not self._fences:  # (reasoning's sees no code: SPEC §15)
            self._fences = finder.tracker
            self._cur.use_fences(finder.tracker)
        self._fences.use_leads(finder.leads)  # (the start's anchored entries lead with more)
        self._lead_search = finder.lead_search
        auto = self._auto = finder.auto
        self._accepting, self._onward, self._trans = auto.accepting, auto.onward, auto.trans
        self._until_text = spec.until_text
        self._kind = spec.kind
        self._home = spec.home

    def _after_tag(self) -> Context:
        """The context after a reasoning tag in this one (``ContextSpec.after_tag``)."""
        return next(c for c in CONTEXTS[self._context].after_tag if c in self._finders)

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
                text = "".join(self._grown) + chunk  # (the candidate: ``Cursor.grown``)
                found = self._lead_search(text, 1)
                hold = ALL_PROSE if found is None else self._finder.settles(text, found)
                # The text before ``hold`` goes to the prose log, uncounted as it was. (No
                # backtick, tilde or other lead before ``hold``: the fence tracker stays in
                # prose, where it was when the candidate was held.)
                if hold == ALL_PROSE:
                    self._cur.drop_grown()
                    self._enter(self._home)
                    self._cur.prose_live.pop()(text)
                    return [self._kind(text)]
                if hold > 0:
                    # Holding the later lead here saves the machine reading the chunk
                    # again (1 MB of "<": 1.0 -> 0.14 s in 7-character chunks).
                    self._cur.regrow(text[hold:])
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
            cap = self._cap
            assert cap is not None and cap.run is not None
            budget = cap.run_text.run_live or cap.run_budget()  # (topped up: ``raw_len``)
            held = cur.held
            text = held + chunk if held else chunk
            stop, tail = cap.run.find_stop(text, 0, False)
            if self._limit - cap.raw_len >= stop and (
                stop == len(text) or tail or cap.cut_at(text, stop)
            ):
                if stop:
                    budget.pop()(text[:stop])
                cur.hold_run(text[stop:])
                stream = cap.args  # (argument streaming: the text may stream)
                if stream is not None:
                    stream.feed(text[:stop])
                if stop == len(text) or tail:
                    # Still RUN: a hot half is on again if nothing is held (``_enter``).
                    self._run_hot = self._arg_hot = self._idle
                    if not cur.held:
                        self._arm_run()
                else:
                    cur.ran(cap.took())
                    self._enter(CUT_TAG)
                return stream.take() if stream is not None and stream.out else []
        return self._read_machine(chunk)

    def _arm_run(self) -> None:
        """RUN with nothing held: its hot half — the one that only appends, or, for a run
        streaming as arguments as it is (CDATA, a ``string="true"`` body, a JSON body's
        strings), the one that appends and sends it (``_arg_hot``, ``ArgStream.hot``); text
        that the stream must still decide on goes through ``_read_run``."""
        cap = self._cap
        assert cap is not None
        stream = cap.args
        if stream is None or not stream.wants_text():
            self._run_hot = cap.run_text.run_live or cap.run_budget()
        elif stream.streams_as_is():
            self._arg_hot = cap.run_text.run_live or cap.run_budget()
            self._arg_send = stream.hot
            self._arg_lead, self._arg_others = stream.hot_leads()

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
        while True:
            if self._cap is not None:
                went_on = self._read_block(self._cap, buf, base, pos, final, events)
                if went_on is None:  # the block goes on past the buffer
                    break
                buf, base, text_start, pos = went_on
                continue
            if cand >= 0:  # resume the candidate held at buf[0]
                i = 0
                verdict, value = self._finder.candidate(
                    buf, 0, final, cand, resume, self._cand_seen
                )
                cand = NO_CANDIDATE
            else:
                i = self._fences.advance(buf, pos, final, cur.tail)
                if i >= len(buf):  # no tag lead outside code before the end
                    self._release(buf, text_start, i, events)
                    break
                verdict, value = self._finder.candidate(buf, i, final, 0, i, False)
            if verdict is TEXT and self._until_text is None:
                pos = i + 1
                continue
            if self._until_text is not None and (
                verdict is TEXT or text_start < i and not buf[text_start:i].isspace()
            ):
                # Text stands before this lead, or the lead is text: the answer (under
                # "open", the reasoning) has begun, and the lead is decided again with its
                # entries (a <think> there is text).
                self._set_context(self._until_text)
                pos = i
                continue
            if text_start < i:
                events.append(self._kind(buf[text_start:i]))
            cur.passed(buf, i)
            if verdict is HOLD:
                self._hold(buf, i, value)
                break
            if value.lastgroup == self._finder.table.tag:
                pos = text_start = self._reasoning_tag(buf, base, value, events)
                continue
            buf, base, text_start, pos = self._open(value, buf, base, i, final)
        if not final:
            self._enter()  # the mode the machine's state calls for
        return events

    def _release(self, buf: str, text_start: int, i: int, events: list[Event]) -> None:
        """No tag lead outside code before ``i``, the buffer's end: release the text from
        ``text_start`` (the first text that is not white space ends a context that lasts
        until it, ``until_text``)."""
        if text_start < i:
            piece = buf[text_start:i]
            events.append(self._kind(piece))
            if self._until_text is not None and not piece.isspace():
                self._set_context(self._until_text)  # (the answer has begun)
        self._cur.passed(buf, i)

    def _hold(self, buf: str, i: int, state: int) -> None:
        """Hold the possible opener ``buf[i:]`` (the entry automaton in ``state``)."""
        self._cand = state
        self._cand_seen = self._finder.seen
        self._cur.hold_candidate(buf[i:])
        metrics = self._life.metrics
        if metrics is not None:
            metrics.held(len(buf) - i)

    def _reasoning_tag(self, buf: str, base: int, tag: Any, events: list[Event]) -> int:
        """A reasoning tag (SPEC §15, the match ``tag``; ``base``: the offset of ``buf[0]``):
        it goes nowhere but its event; after it the reply is in the context ``CONTEXTS``
        says. In the answer (``reasoning="tags"``: ``_finders``) it is a ``</think>`` with no
        ``<think>`` open — text, noted where it stands (``BlockLife.stray_close``). Where the
        scan goes on."""
        if self._context is ANSWER:
            events.append(Text(tag.group()))
            self._life.stray_close(base + tag.start())
        else:
            events.append(Reasoning("", tag.group()))
            self._set_context(self._after_tag())
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
        reasoning = None
        if self._context is IN_REASONING:  # (SPEC §15: a draft, or a call ending the thought)
            ends = opener.lastgroup in self._g.openers.thought_enders
            reasoning = ENDS_THOUGHT if ends else self._reason_calls
        after = CONTEXTS[self._context].after_block
        if after:  # (the reply's start is over: its anchored entries with it)
            self._set_context(next(c for c in after if c in self._finders))
        pos = opener.end()
        went_on = life.fail_at_once(
            opener, base + i, reasoning, buf, base, pos, self._cur, self._early, self._limit, final
        )
        if went_on is not None:
            return went_on
        self._cap = life.open(opener, base + i, reasoning)
        return buf, base, pos, pos

    def _end_thought(self, life: BlockLife) -> None:
        """A block read in a thought still open, in a dialect whose calls end it
        (``ENDS_THOUGHT``), gave its first calls: the thought ends here (SPEC §15)."""
        if life.in_reasoning == ENDS_THOUGHT and self._context is IN_REASONING:
            life.thought_ended()
            self._set_context(self._after_tag())

    def _read_block(
        self, cap: Capture, buf: str, base: int, pos: int, final: bool, events: list[Event]
    ) -> tuple[str, int, int, int] | None:
        """The capture reads ``buf`` from ``pos``: None while the block goes on past it (the
        rest held), else ``(buf, base, text_start, pos)`` to go on with in prose — after the
        block, or, for a failed one, from its opener (or after the calls already emitted)."""
        life = self._life
        status, p = (
            scan_to_end(cap, buf, pos, self._limit)
            if final
            else cap.scan(buf, pos, False, self._limit)
        )
        if cap.args is not None:  # argument streaming: its events come first
            events += life.streamed(cap, status == FAILED)
        if (
            self._early
            and status != COMPLETE
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
        if cap.leftover is not None:  # a repair read on from a copy of the block
            return cap.leftover, cap.start + cap.raw_len, 0, 0
        return buf, base, p, p


def _finders(
    g: CompiledGrammar, fences: FenceTracker, reasoning: str
) -> dict[Context, EntryFinder]:
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
    finders: dict[Context, EntryFinder] = {}
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
            # with no search of its own (``_reasoning_tag``; docs/reasoning.md).
            table = tables["reasoning"]
        if context is START:
            # Anchored entries too, and a <think> where reasoning may open: their leads.
            if reasoning != "off" and "start_think" in tables:
                table = tables["start_think"]
            finders[context] = EntryFinder(
                g,
                table,
                lead_search(g.openers.start_lead_chars, True),
                tracker,
                g.openers.start_lead_chars,
            )
            continue
        finders[context] = EntryFinder(g, table, tracker.live_lead.search, tracker)
    return finders


def _first_context(reasoning: str, finders: dict[Context, EntryFinder]) -> Context:
    """Where the reply starts (``FIRST_CONTEXT``): the first of the option's the sieve has."""
    return next(c for c in FIRST_CONTEXT[reasoning] if c in finders)


#: Each mode's reader (``Sieve.feed`` calls ``self._reader(self, chunk)``; ``_enter`` sets it).
_READERS: dict[Mode, Callable[[Any, Any], list[Event]]] = {
    PROSE: SieveMachine._read_prose,
    REASONING: SieveMachine._read_prose,
    CANDIDATE: SieveMachine._read_candidate,
    RUN: SieveMachine._read_run,
    CUT_TAG: SieveMachine._read_cut_tag,
    BEFORE_TEXT: SieveMachine._read_before_text,
    MACHINE: SieveMachine._read_machine,
    CLOSED: SieveMachine._read_closed,
}

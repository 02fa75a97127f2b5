"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes. The
sieve is in one ``Mode`` at a time, and each mode has one reader (``_readers``): ``feed``
hands the chunk to the current one, and ``_enter`` is the one place the mode changes. The
readers of the four fast modes take the common chunk without the machine and hand anything
else to the machine, ``_process``: the fence tracker walks the text and stops at each tag
lead outside code; ``EntryFinder`` decides it (text, a held candidate, an opener); an
opener starts a ``Capture``, which ends as calls or fails (``BlockLife``); a failed block
is released from its opener and the rest is scanned again as prose, so a mention followed
by a real block works. ``_enter()`` then chooses the next mode from what the machine left.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking, every character is released as text or belongs to exactly one parsed block, and
no ``str`` input raises. ``parse()`` is this machine run over one chunk.
What it costs: in PROSE an ASCII chunk without the tag lead is two tests, a logged append
and one ``Text`` (the ``Cursor`` counts the log later, in one piece); in RUN a chunk
without the run's stop is a test and an append; a held candidate reads only the new text.
Everything else is linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from .._base.errors import ConfigurationError, SieveClosedError
from .._base.events import Block, Event, Reasoning, Text
from .._blocks.capture import COMPLETE, FAILED, VIABLE, Capture
from .._blocks.lifecycle import BlockLife, LifeView
from .._blocks.repair import scan_to_end
from .._config.metrics import Metrics, close_counts
from .._config.options import (
    DEFAULT_MAX_BLOCK_CHARS,
    EARLY_EMIT,
    MODES,
    SieveOptions,
    new_call_id,
)
from .._grammar.compiled import DEFAULT_DIALECTS, load_grammar
from .._scan.cursor import Cursor
from .._scan.fences import FenceTracker
from .entries import HOLD, TEXT, EntryFinder
from .modes import (
    ANSWER,
    CANDIDATE,
    CLOSED,
    IN_REASONING,
    MACHINE,
    OPENING,
    PREAMBLE,
    RUN,
    Mode,
    SieveState,
)
from .readers import NO_CANDIDATE, Budget, ModeReaders

__all__ = ["EARLY_EMIT", "MODES", "Mode", "SieveMachine", "SieveState", "new_call_id"]


def _no_stream(chunk: str) -> list[Event]:  # pragma: no cover - never called: no hot half
    return []


class SieveMachine(ModeReaders, LifeView):
    """The streaming machine of ``callsieve.Sieve`` (the facade's class, ``_facade.sieve``,
    which adds only the choice of a sanitizing sieve): see the module docstring.

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

    # (the readers' own: ``ModeReaders``)
    __slots__ = ("_g", "_life", "_lead", "_early", "_reason_calls", "_into")

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
        self._fences = FenceTracker(g.lead_chars)
        self._cur = Cursor(self._fences)
        self._grow = self._cur.grow
        self._grown = self._cur.grown  # (a held candidate's text: see ``Cursor.grown``)
        self._lead_search = self._fences.live_lead.search
        # Metrics (``_metrics``): the sieve counts into its own, added at ``close()`` to the
        # ``metrics=`` object given (if one was) and to the process-wide aggregate.
        self._into = opts.metrics
        self._life = BlockLife(
            g,
            opts.schemas,
            opts.id_factory,
            self._cur.pieces,
            opts.rules,
            None if opts.metrics is None else Metrics(),
        )
        # SPEC §15: one entry finder per context of the reply (``_entry_tables``), each with
        # its fence tracker (reasoning is read without code: ``_set_context``); the context's
        # are ``_finder`` and ``_fences``, its automaton's tables ``_auto`` ...
        self._finders = _finders(g, self._fences, opts.reasoning)
        self._reason_calls = opts.calls_in_reasoning  # a block inside reasoning: text or call
        self._set_context(_first_context(opts.reasoning, self._finders))
        self._lead = g.prose_lead
        self._cap: Capture | None = None
        self._cand = NO_CANDIDATE  # CANDIDATE: the automaton state of the opener held
        self._cand_seen = False  # ... which has passed an accepting state
        # RUN: the stop's single first character ("" if it has none: "" is in every chunk,
        # so ``may_stop`` is asked) and whether a chunk may hold the stop.
        self._run_char = ""
        self._run_may_stop: Callable[[str], bool] = bool
        # CUT_TAG: what could complete the tag, and how much more may be held before it is
        # too long to be a tag.
        self._cut_probe: Callable[[str], Any] | None = None
        self._cut_room = 0
        # "arguments" emits each call as "invoke" does, its stream before it (``_argstream``).
        self._early = opts.early_emit != "block"
        self._life.stream_args = opts.early_emit == "arguments"
        self._off = opts.mode == "off"
        self._limit = opts.max_block_chars
        self._idle: Budget = []  # (never filled: a hot half that is off)
        self._prose_hot = self._run_hot = self._arg_hot = self._reason_hot = self._idle
        self._arg_send: Callable[[str], list[Event]] = _no_stream  # (``_arg_hot``'s: ArgStream.hot)
        self._mode = MACHINE
        self._reader: Callable[[Any, Any], list[Event]] = ModeReaders._read_machine
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
        self._life.record = True
        self._life.blocks = []
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
        elif (
            self._run_hot
            and chunk.__class__ is str
            and (self._run_char not in chunk or not self._run_may_stop(chunk))
        ):
            self._run_hot.pop()(chunk)
            return []
        # RUN, a string streaming as arguments as it is (CDATA, or a ``string="true"`` body:
        # ``ArgStream.streams_as_is``), the same chunk: append, and its delta (one event per
        # chunk, as ``Text`` in prose).
        elif (
            self._arg_hot
            and chunk.__class__ is str
            and (self._run_char not in chunk or not self._run_may_stop(chunk))
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
                self._cap.took(cur.sync_run())
            cand = self._cand if self._mode is CANDIDATE else NO_CANDIDATE
            events = self._process(cur.take(""), True, cand)
        self._enter(CLOSED)
        metrics = self._life.metrics
        if metrics is not None:
            close_counts(metrics, self._into, self._cur.total, self._life.consumed)
        return events

    # ------------------------------------------------------------------ the machine
    def _process(self, taken: tuple[str, int], final: bool, cand: int) -> list[Event]:
        """Scan ``buf`` (``taken`` is ``Cursor.take``'s ``(buf, resume)``: its first
        ``resume`` characters were seen before: a held tail, which is the candidate ``cand``
        if that is >= 0; it ends at the cursor's ``total``)."""
        buf, resume = taken
        cur = self._cur
        self._life.closing = final
        base = cur.total - len(buf)  # (the absolute offset of buf[0])
        events: list[Event] = []
        fences = self._fences
        life = self._life
        pos = 0
        text_start = 0
        while True:
            cap = self._cap
            if cap is not None:
                status, p = (
                    scan_to_end(cap, buf, pos, self._limit)
                    if final
                    else cap.scan(buf, pos, False, self._limit)
                )
                if cap.args is not None:  # argument streaming: its events come first
                    if status == FAILED:
                        cap.args.abort()
                    events += life.take_out()
                if (
                    self._early
                    and status != COMPLETE
                    and not cap.strict
                    and len(cap.calls) > cap.emitted
                    and life.in_reasoning != "text"
                ):
                    events += life.early(cap)
                if status == VIABLE:
                    if p < len(buf):  # (``take`` left nothing held)
                        cur.hold(buf[p:])
                    if life.metrics is not None:
                        life.metrics.held(cap.raw_len + len(buf) - p)
                    break
                if status == COMPLETE:
                    done, raw = life.complete(cap)
                    if life.out:  # (argument streaming: calls finished as the block ended)
                        events += life.take_out()
                    # (a block inside reasoning, under calls_in_reasoning="text": reasoning)
                    events += [Reasoning(raw)] if life.in_reasoning == "text" else done
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
                verdict, value = self._finder.candidate(
                    buf, 0, final, cand, resume, self._cand_seen
                )
                cand = NO_CANDIDATE
            else:
                i = fences.advance(buf, pos, final, cur.tail)
                if i >= len(buf):  # no tag lead outside code before the end
                    if text_start < i:
                        piece = buf[text_start:i]
                        events.append(self._kind(piece))
                        if self._until_text is not None and not piece.isspace():
                            self._set_context(self._until_text)  # (the answer has begun)
                            fences = self._fences
                    cur.passed(buf, i)
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
                fences = self._fences
                pos = i
                continue
            if text_start < i:
                events.append(self._kind(buf[text_start:i]))
            cur.passed(buf, i)
            if verdict is HOLD:
                self._cand = value
                self._cand_seen = self._finder.seen
                cur.hold_candidate(buf[i:])
                if life.metrics is not None:
                    life.metrics.held(len(buf) - i)
                break
            if value.lastgroup == self._finder.table.tag:
                # A reasoning tag (SPEC §15): it goes nowhere but this event; after it the
                # reply is inside reasoning, or (after </think>) before the answer again.
                events.append(Reasoning("", value.group()))
                self._set_context(
                    IN_REASONING
                    if self._context is not IN_REASONING
                    else PREAMBLE
                    if PREAMBLE in self._finders
                    else ANSWER
                )
                fences = self._fences
                pos = text_start = value.end()
                cur.passed(buf, pos)
                continue
            reasoning = None if self._context is not IN_REASONING else self._reason_calls
            cap = self._cap = life.open(value, base + i, reasoning)
            pos = text_start = value.end()
            if (
                final
                and (cap.strict or not self._early)
                and life.lessons.no_end_after(self._g.block_enders, buf, base, base + i)
            ):
                # Nothing after it can end a block, and it would emit nothing before
                # failing: it fails at once, without reading the rest of the input.
                cap.fail("no tag that could close the block follows")
                buf, base, text_start, pos = life.fail(cap, buf, base, pos, cur)
                self._cap = None
        if not final:
            self._enter()  # the mode the machine's state calls for
        return events


def _finders(g: Any, fences: FenceTracker, reasoning: str) -> dict[Any, EntryFinder]:
    """An entry finder for each context the ``reasoning`` option can reach (SPEC §15):
    ``"off"``, the answer only; ``"tags"``, before the answer too and inside reasoning, if
    the grammar defines the tags (``_entry_tables``: a grammar without them has no
    reasoning, as if it were ``"off"``); ``"open"`` needs ``THINK_CLOSE`` at least. The
    finders outside reasoning share the sieve's fence tracker, ``fences``; reasoning's has
    one that sees no code (its ``lead_search`` is the tracker's: ``EntryFinder.tracker``)."""
    tables = g.entry_tables
    lead_search = fences.live_lead.search
    finders = {ANSWER: EntryFinder(g, tables["answer"], lead_search, fences)}
    if reasoning == "off":
        return finders
    if "reasoning" not in tables:
        if reasoning == "open":
            raise ConfigurationError(
                "reasoning='open' needs a THINK_CLOSE terminal in the grammar's common.lark",
                expected=("THINK_CLOSE",),
            )
        return finders
    plain = FenceTracker(g.lead_chars, code=False)
    finders[IN_REASONING] = EntryFinder(g, tables["reasoning"], plain.live_lead.search, plain)
    if "preamble" in tables:
        finders[PREAMBLE] = EntryFinder(g, tables["preamble"], lead_search, fences)
        # (before reasoning under "open": what is read there is reasoning, without code)
        finders[OPENING] = EntryFinder(g, tables["preamble"], plain.live_lead.search, plain)
    return finders


def _first_context(reasoning: str, finders: dict[Any, EntryFinder]) -> Any:
    """Where the reply starts: before the answer (``"tags"``), before any reasoning under
    ``"open"`` (white space, then a ``<think>`` the model wrote anyway, is a tag), or in the
    answer (``"off"``, or a grammar without the tags)."""
    if reasoning == "open":
        return OPENING if OPENING in finders else IN_REASONING
    return PREAMBLE if reasoning == "tags" and PREAMBLE in finders else ANSWER

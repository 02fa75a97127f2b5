"""Strategy: the block lifecycle — open a capture at an entry, end it as an event or as
released text — and the ``Block`` and ``ToolCalls`` values it makes.

What it does: ``BlockLife.open`` starts a ``Capture`` at an entry the prose scan matched;
``early`` hands out the calls a block has completed so far (``early_emit="invoke"``);
``complete`` builds the ``ToolCalls`` event of a block that closed; ``fail`` tells the sieve
where a failed block's text is released from and scanned again (SPEC §7). With ``record``
on (``parse()``), every block — failed ones too, which a stream does not keep — is kept in
``blocks``.
What it guarantees: the text released and the ``block.raw`` of the events, in order, are
the input: an event emitted early covers the input from the previous event's end to its
last call's, and the block's closing event the rest.
What it costs: a few tuples per event; the block's text is joined once, when it ends.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from .._base.events import (
    ArgumentsDelta,
    Block,
    CallFinished,
    CallStarted,
    Event,
    Text,
    ToolCall,
    ToolCalls,
)
from .._config.metrics import Metrics
from .._config.options import make_call_id
from .._config.policy import Policy, Rejection, reason_kind
from .._grammar.compiled import CompiledGrammar, EntrySpec
from .._scan.cursor import Cursor
from .argstream import ArgContext, ArgStream, Built, Failed
from .capture import Capture, CaptureContext
from .lessons import Lessons
from .opening import ALONG_AFTER, fails_along, fails_at_once

__all__ = ["ENDS_THOUGHT", "KEPT_BLOCKS", "BlockLife", "LifeView", "Resume"]

#: How many parsed blocks a ``Sieve`` keeps (``Sieve.blocks``): the latest.
KEPT_BLOCKS = 64

#: ``Block.reasoning`` of a block whose opener, inside a thought still open, ended it: its
#: dialect declares ``calls_end_thought`` (SPEC §15). Its calls are calls.
ENDS_THOUGHT = "ended"


class Resume(NamedTuple):
    """Where the sieve goes on after a block failed (``BlockLife.fail``): text is released
    from ``buf[release]`` on and scanned again from ``buf[resume]``; ``base`` is the
    offset of ``buf[0]``."""

    buf: str
    base: int
    release: int
    resume: int


class BlockLife:
    """One per sieve: what every block it opens shares."""

    __slots__ = (
        "g",
        "schemas",
        "id_factory",
        "lessons",
        "record",
        "blocks",
        "closing",
        "saw_syntax",
        "stream_args",
        "args_ctx",
        "out",
        "in_reasoning",
        "policy",
        "metrics",
        "rejections",
        "tail_text",
        "consumed",
        "stray_closes",
        "reasoning_unclosed",
        "ctx",
    )

    def __init__(
        self,
        g: CompiledGrammar,
        schemas: dict[str, dict[str, Any]],
        id_factory: Callable[[], str],
        policy: Policy | None = None,
        metrics: Metrics | None = None,
        stream_args: bool = False,
    ) -> None:
        self.g = g
        self.policy = policy  # (``_config.policy``: coercion, and the policy's verdicts)
        self.metrics = metrics  # (``_config.metrics``: None when not asked for)
        #: The calls the policy rejected, in order (``Sieve.rejections``).
        self.rejections: list[Rejection] = []
        #: The last call of the block being read was released as text (``on_reject="text"``):
        #: so is the block's tail.
        self.tail_text = False
        self.consumed = 0  # with metrics: the characters of the input calls took
        self.schemas = schemas
        self.id_factory = id_factory
        self.lessons = Lessons()
        self.record = False
        #: The blocks kept (``Sieve.blocks``): with ``record`` (``parse()``) every block
        #: captured, failed ones too; else the last ``KEPT_BLOCKS`` that parsed and those
        #: that failed because the input ended (``closing``) — a stream does not keep the
        #: prose mentions it released, which may be many.
        self.blocks: deque[Block] | list[Block] = deque(maxlen=KEPT_BLOCKS)
        self.closing = False
        self.saw_syntax = False  # a wrapper, or a repaired missing-wrapper block, outside code
        self.stream_args = stream_args  # early_emit="arguments": blocks get an ArgStream
        #: What every argument stream is given (its index counter counts the response's calls).
        self.args_ctx = ArgContext(g, schemas, policy, metrics, id_factory, itertools.count())
        #: The events of calls argument streaming sends whole (no stream read them), until
        #: the sieve takes them (``streamed``: after the stream's own).
        self.out: list[Event] = []
        #: The open capture stands inside reasoning (SPEC §15): the ``calls_in_reasoning``
        #: choice it is read under, ``"text"`` (it emits nothing: a block that closes is
        #: reasoning text) or ``"call"``, or ``ENDS_THOUGHT`` (its calls end the thought);
        #: None in the answer. Its blocks record it.
        self.in_reasoning: str | None = None
        #: SPEC §15: where a ``</think>`` stood with no ``<think>`` open (``reasoning="tags"``),
        #: the first ``KEPT_BLOCKS`` (``stray_close``); the input ended inside reasoning.
        self.stray_closes: list[int] = []
        self.reasoning_unclosed = False
        #: What its captures share (one, not one per capture; a block read as reasoning text
        #: has no policy: ``open``).
        self.ctx = CaptureContext(g, schemas, self.lessons, policy)

    def stray_close(self, offset: int) -> None:
        """A ``</think>`` at ``offset`` closed no reasoning (it is released as text): noted
        and counted (the sign of a chat template that wrote ``<think>`` itself)."""
        if len(self.stray_closes) < KEPT_BLOCKS:
            self.stray_closes.append(offset)
        if self.metrics is not None:
            self.metrics.count("stray_reasoning_closes")

    def thought_ended(self) -> None:
        """A block of calls ended the thought it was opened in (``ENDS_THOUGHT``): counted."""
        if self.metrics is not None:
            self.metrics.count("reasoning_ended_by_calls")

    def ended_in_reasoning(self, unclosed: bool) -> None:
        """At ``close()``: whether the input ended inside reasoning (counted if so)."""
        self.reasoning_unclosed = unclosed
        if unclosed and self.metrics is not None:
            self.metrics.count("reasoning_unclosed")

    def record_all(self) -> None:
        """Keep every block captured, failed ones too (``parse()``: ``blocks``)."""
        self.record = True
        self.blocks = []

    def input_ends(self) -> None:
        """The sieve scans the end of the input (``close()``): what is open there is cut off."""
        self.closing = True

    def streamed(self, cap: Capture, failed: bool) -> list[Event]:
        """Argument streaming's events so far, taken: ``cap``'s stream's (a started call
        aborted first if the block ``failed``), then the calls sent whole."""
        stream = cap.args
        events: list[Event] = []
        if stream is not None:
            if failed:
                stream.feed(Failed(self.closing))
            if stream.out:
                events = stream.take()
        if self.out:
            events += self.out
            self.out.clear()
        return events

    def open(self, m: Any, start: int, reasoning: str | None = None) -> Capture:
        """A capture for the entry match ``m`` at absolute offset ``start`` (``reasoning``:
        see ``in_reasoning``)."""
        g = self.g
        # Which entry terminal matched: the outermost named group of ``entry_exact``, the
        # last group to close (``lastgroup``), whatever groups the terminal has inside.
        k = g.openers.entry_index[m.lastgroup]
        entry = g.entries[k]
        self._begin(entry, start, reasoning)
        quiet = reasoning == "text"
        args = None
        if self.stream_args and entry.synthetic is None and not quiet:
            # (a block missing its opener emits nothing before its closing wrapper)
            args = ArgStream(self.args_ctx)
        ctx = self.ctx._replace(policy=None) if quiet else self.ctx
        cap = Capture(ctx, entry, start, m.group(), g.openers.entry_groups(m, k), args)
        if reasoning is not None:
            # No loose-CDATA repair inside reasoning: a CDATA a thought left open would be
            # closed wherever one can be, past the </think> and into the answer.
            cap.repair.forbid()
        return cap

    def _begin(self, entry: EntrySpec, start: int, reasoning: str | None) -> None:
        """A block begins at offset ``start``, at ``entry`` (``reasoning``: ``in_reasoning``)."""
        self.lessons.forget(start)
        self.tail_text = False
        self.in_reasoning = reasoning
        if entry.synthetic is None and reasoning != "text":
            self.saw_syntax = True

    def fail_at_once(
        self,
        m: Any,
        start: int,
        reasoning: str | None,
        buf: str,
        base: int,
        pos: int,
        cursor: Cursor,
        early: bool,
        limit: int,
        final: bool,
        where: Any = None,
    ) -> Resume | None:
        """A block opened at the entry match ``m`` (at offset ``start``, its opener ending at
        ``buf[pos]``) that could emit nothing before failing, and fails at once, is released
        as ``fail`` releases it: at the end of the input (``final``: ``buf`` runs to it),
        where nothing after it could end a block (``Lessons.no_end_after``); or in the run
        its opener leaves it (``_blocks.opening``, made without a capture). ``early``: calls
        may be emitted before the block ends; ``limit``: ``max_block_chars``. None: open it.
        ``where``: the sieve's ``Where``; its entry finder may pass over the blocks after
        this one that fail at once too (``_blocks.opening.fails_along``)."""
        g = self.g
        k = g.openers.entry_index[m.lastgroup]
        entry = g.entries[k]
        strict = entry.synthetic is not None
        if early and not strict:
            return None
        if (
            final
            and m.lastgroup not in g.ends.whole_openers  # (a frame ends where it stands)
            and self.lessons.no_end_after(g.ends.block_enders, buf, base, start)
        ):
            cap = self.open(m, start, reasoning)
            cap.fail("no tag that could close the block follows")
            return self.fail(cap, buf, base, pos, cursor)
        if self.stream_args and not strict and reasoning != "text":
            return None  # (an argument stream may start a call at the opener)
        at = start - base
        quiet = not (self.record or self.closing) and self.metrics is None
        opened = (at, pos, final)
        quick = fails_at_once(
            g, k, self.lessons, buf, base, opened, limit, quiet, reasoning is None
        )
        if quick is None:
            return None
        if (
            quick.failure in ALONG_AFTER
            and not final
            and where is not None
            and not where.until_text
        ):
            along = where.finder.pass_over  # (not where the first text moves the context)
            passed = fails_along(g, k, self.lessons.walks, buf, base, pos, along)
            pos = passed.stop
            if passed.last >= 0:  # (the blocks passed over began there, as this one does)
                start = base + passed.last
        self._begin(entry, start, reasoning)
        if not strict:
            if self.metrics is not None:
                self.metrics.block_failed(quick.failure, quick.dialect)
            if self.record or self.closing:
                raw = buf[at : quick.stop]
                self.blocks.append(self._failed(start, quick.dialect, (), (quick.failure,), raw))
        return Resume(buf, base, at, pos)

    def _failed(
        self,
        start: int,
        dialect: str,
        repairs: tuple[str, ...],
        diagnostics: tuple[str, ...],
        raw: str,
    ) -> Block:
        """The ``Block`` of a block that failed with no call emitted (its text released)."""
        return Block(
            (start, start + len(raw)),
            dialect,
            "failed",
            repairs,
            diagnostics,
            raw,
            # (one that would have ended the thought is reasoning text, SPEC §15)
            "text" if self.in_reasoning == ENDS_THOUGHT else self.in_reasoning,
        )

    def _calls(self, cap: Capture, start: int, dialect: str) -> list[tuple[ToolCall, str | None]]:
        """The block's calls from its ``start``-th on, each with the policy's reason to reject
        it (None: it goes out). Under argument streaming, those its stream finished are the
        ``ToolCall`` objects ``CallFinished`` gave; any other (a block missing its opener, or
        calls a repair read at the end of the input) is finished now — the one the stream
        had begun by the stream, the others whole. A rejected call streams nothing."""
        repairs = tuple(cap.record.repairs)
        stream = cap.args
        made = stream.made if stream is not None else []
        out: list[tuple[ToolCall, str | None]] = []
        for k in range(start, len(cap.record.calls)):
            settled = cap.record.calls[k]
            done = made[k] if k < len(made) else None
            if done is not None:
                out.append((done, None))
                continue
            if stream is not None and k >= len(made) and stream.started is not None:
                stream.feed(Built(settled, dialect, repairs, self.closing))
                finished = stream.made[-1]
                if finished is not None:
                    out.append((finished, None))
                    continue
            name, args, ident, coercions, reason = settled
            # The model's own id where it wrote one (a ``call_id`` node), else the factory's.
            call = ToolCall(
                name, args, ident or make_call_id(self.id_factory), dialect, repairs, coercions
            )
            if self.stream_args and reason is None and self.in_reasoning != "text":
                i = next(self.args_ctx.indexes)
                self.out += (
                    CallStarted(i, call.id, call.name),
                    ArgumentsDelta(i, call.arguments),
                    CallFinished(i, call),
                )
            out.append((call, reason))
        return out

    def _events(
        self,
        cap: Capture,
        first: int,
        settled: list[tuple[ToolCall, str | None]],
        block: Block,
        raw: str,
        final: bool,
    ) -> list[Event]:
        """The events of calls ``first``… of a block (``block`` covers their stretch, ``raw``
        is the block's text so far): one ``ToolCalls`` when the policy rejects none of them;
        else the rejections recorded, and per ``on_reject`` the rejected calls left out
        (``"drop"``) or their stretches released as text (``"text"``: each call's stretch runs
        from the previous call's end to its own; the block's tail goes with its last call)."""
        metrics = self.metrics
        accepted = tuple(c for c, reason in settled if reason is None)
        if metrics is not None:
            metrics.calls_out(block.dialect, len(accepted))
            coerced = sum(len(c.coercions) for c, _ in settled)
            if coerced:
                metrics.count("coercions", coerced)
        if len(accepted) == len(settled):
            if settled:
                self.tail_text = False
            elif final and self.tail_text:  # its last call went out as text
                return [Text(block.raw)]
            return [ToolCalls(accepted, block)]
        policy = cap.ctx.policy
        action = policy.on_reject if policy is not None else "drop"
        ends = cap.record.ends
        stretches: list[
            tuple[bool, int, int, tuple[ToolCall, ...]]
        ] = []  # (text?, from, to, calls)
        for j, (call, reason) in enumerate(settled, first):
            a = ends[j - 1] if j else 0
            b = ends[j]
            if reason is not None:
                self.rejections.append(
                    Rejection(
                        call.name, reason, (cap.start + a, cap.start + b), raw[a:b], action, call
                    )
                )
                if metrics is not None:
                    metrics.count_label("rejected", reason_kind(reason))
            as_text = reason is not None and action == "text"
            if stretches and stretches[-1][0] == as_text:
                t, a0, _, calls = stretches[-1]
                stretches[-1] = (t, a0, b, calls + ((call,) if reason is None else ()))
            else:
                stretches.append((as_text, a, b, (call,) if reason is None else ()))
        self.tail_text = stretches[-1][0]
        if action == "drop":
            return [ToolCalls(accepted, block)]
        t, a0, _, calls = stretches[-1]
        stretches[-1] = (t, a0, block.span[1] - cap.start, calls)  # (the tail: the rest)
        out: list[Event] = []
        for as_text, a, b, calls in stretches:
            if as_text:
                out.append(Text(raw[a:b]))
                if metrics is not None:  # (``complete`` or ``fail`` counts the block taken)
                    self.consumed -= b - a
            else:
                out.append(
                    ToolCalls(
                        calls,
                        Block(
                            (cap.start + a, cap.start + b),
                            block.dialect,
                            block.status,
                            block.repairs,
                            block.diagnostics,
                            raw[a:b],
                            block.reasoning,
                        ),
                    )
                )
        return out

    def early(self, cap: Capture) -> list[Event]:
        """``early_emit="invoke"``: the events of the calls completed since the last event.
        Its block covers the input this event settles, with the diagnostics that arose there
        (however far the scan has read since)."""
        k = cap.record.emitted
        prev_end = cap.record.ends[k - 1] if k else 0
        prev_piece = cap.record.pieces[k - 1] if k else 0
        prev_diag = cap.record.diags[k - 1] if k else 0
        end = cap.record.ends[-1]
        raw = "".join(cap.raw[prev_piece : cap.record.pieces[-1]])
        dialect = cap.dialect_now()
        block = Block(
            (cap.start + prev_end, cap.start + end),
            dialect,
            "partial",
            tuple(cap.record.repairs),
            tuple(cap.record.diagnostics[prev_diag : cap.record.diags[-1]]),
            raw,
            self.in_reasoning,
        )
        settled = self._calls(cap, k, dialect)
        cap.record.emitted_all()
        if cap.ctx.policy is None:
            return self._plain(settled, block)
        return self._events(cap, k, settled, block, cap.raw_text(), False)

    def _plain(self, settled: list[tuple[ToolCall, str | None]], block: Block) -> list[Event]:
        """The one ``ToolCalls`` of calls no policy looked at."""
        calls = tuple(c for c, _ in settled)
        if self.metrics is not None:
            self.metrics.calls_out(block.dialect, len(calls))
        return [ToolCalls(calls, block)]

    def complete(self, cap: Capture) -> tuple[list[Event], str]:
        """The events of a block that closed, and the block's text."""
        dialect = cap.dialect_now()
        if cap.strict:
            dialect = self.g.dialect_of_close(cap.last_value, dialect)
            self.saw_syntax = True
        raw = cap.raw_text()
        block = Block(
            (cap.start, cap.start + len(raw)),
            dialect,
            "complete" if cap.record.calls else "frame",  # (no call: the loader let only a frame)
            tuple(cap.record.repairs),
            tuple(cap.record.diagnostics),
            raw,
            self.in_reasoning,
        )
        self.blocks.append(block)
        if self.metrics is not None:
            self.metrics.block_parsed(dialect, block.repairs, 0)
            self.consumed += len(raw)
        if not cap.record.calls:  # framing the dialect drops: its record, no call (SPEC §12)
            return [ToolCalls((), block)], raw
        settled = self._calls(cap, cap.record.emitted, dialect)
        if cap.record.emitted:  # early_emit="invoke": this event settles the rest of the block
            cut = cap.record.ends[cap.record.emitted - 1]
            block = Block(
                (cap.start + cut, block.span[1]),
                dialect,
                "complete",
                block.repairs,
                tuple(cap.record.diagnostics[cap.record.diags[cap.record.emitted - 1] :]),
                raw[cut:],
                self.in_reasoning,
            )
        if cap.ctx.policy is None:
            return self._plain(settled, block), raw
        return self._events(cap, cap.record.emitted, settled, block, raw, True), raw

    def fail(self, cap: Capture, buf: str, base: int, p: int, cursor: Cursor) -> Resume:
        """Release a failed capture: where the sieve goes on (``Resume``). A block that began in this
        buffer is scanned again in place; one begun in an earlier chunk is joined to the rest
        of the buffer once (its text was only ever in the capture)."""
        cap.learn()
        if self.metrics is not None and (cap.record.emitted or not cap.strict):
            self.metrics.block_failed(cap.failure or "", cap.dialect_now())
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
        emitted = cap.record.emitted
        if emitted:
            cut = cap.record.ends[emitted - 1]
            if self.metrics is not None:
                self.consumed += cut
            if self.record or self.closing:
                raw = buf[at : at + raw_len] if raw is None else raw
                self.blocks.append(
                    Block(
                        (cap.start, cap.start + cut),
                        cap.dialect_now(),
                        "partial",
                        tuple(cap.record.repairs),
                        (*cap.record.diagnostics, cap.failure),
                        raw[:cut],
                        self.in_reasoning,
                    )
                )
            cursor.passed(buf, at + cut)  # (buf[:at] stood before it)
            return Resume(buf, base, at + cut, at + cut)
        if (self.record or self.closing) and not cap.strict:  # (a bare invoke: only text)
            raw = buf[at : at + raw_len] if raw is None else raw
            self.blocks.append(
                self._failed(
                    cap.start,
                    cap.dialect_now(),
                    tuple(cap.record.repairs),
                    (*cap.record.diagnostics, cap.failure),
                    raw,
                )
            )
        return Resume(buf, base, at, at + cap.opener_len)


class LifeView:
    """What a ``Sieve`` tells of its calls' policy and its counters (read from its
    ``BlockLife``): a mixin without state of its own."""

    __slots__ = ()
    _life: BlockLife

    @property
    def rejections(self) -> tuple[Rejection, ...]:
        """The calls the policy rejected so far (SPEC §9), each with its reason and span."""
        return tuple(self._life.rejections)

    @property
    def rejected_by_policy(self) -> bool:
        return bool(self._life.rejections)

    @property
    def rejected_tool_names(self) -> tuple[str, ...]:
        """The rejected calls' names, each once, in the order first rejected (SPEC §9)."""
        return tuple(dict.fromkeys(r.name for r in self._life.rejections))

    @property
    def metrics(self) -> Metrics | None:
        """This sieve's counters (``metrics=``; SPEC §14), or None."""
        return self._life.metrics

    @property
    def reasoning_unclosed(self) -> bool:
        """The input ended inside reasoning (SPEC §15): a ``<think>`` (or, under
        ``reasoning="open"``, the template's) never closed — the model was still thinking
        when the reply ended, and there is no answer. False until ``close()``."""
        return self._life.reasoning_unclosed

    @property
    def stray_reasoning_closes(self) -> tuple[int, ...]:
        """Where a ``</think>`` stood with no ``<think>`` open under ``reasoning="tags"``
        (released as text; the first 64 offsets): the sign of a chat template that wrote
        ``<think>`` into the prompt (SPEC §15, docs/reasoning.md)."""
        return tuple(self._life.stray_closes)

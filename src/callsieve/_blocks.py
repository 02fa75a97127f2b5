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

from collections import deque
from collections.abc import Callable
from typing import Any

from ._argstream import ArgStream
from ._capture import Capture
from ._cursor import Cursor
from ._events import ArgumentsDelta, Block, CallFinished, CallStarted, Event, ToolCall, ToolCalls
from ._grammar import CompiledGrammar
from ._lessons import Lessons
from ._options import make_call_id

__all__ = ["KEPT_BLOCKS", "BlockLife"]

#: How many parsed blocks a ``Sieve`` keeps (``Sieve.blocks``): the latest.
KEPT_BLOCKS = 64


class BlockLife:
    """One per sieve: what every block it opens shares."""

    __slots__ = ("g", "schemas", "id_factory", "lessons", "pieces", "record", "blocks", "closing",
                 "saw_syntax", "stream_args", "calls_started", "out", "in_reasoning")

    def __init__(self, g: CompiledGrammar, schemas: dict[str, dict[str, Any]],
                 id_factory: Callable[[], str], pieces: list[str]) -> None:
        self.g = g
        self.schemas = schemas
        self.id_factory = id_factory
        self.lessons = Lessons()
        self.pieces = pieces  # the cursor's run log: every capture's run text
        self.record = False
        #: The blocks kept (``Sieve.blocks``): with ``record`` (``parse()``) every block
        #: captured, failed ones too; else the last ``KEPT_BLOCKS`` that parsed and those
        #: that failed because the input ended (``closing``) — a stream does not keep the
        #: prose mentions it released, which may be many.
        self.blocks: deque[Block] | list[Block] = deque(maxlen=KEPT_BLOCKS)
        self.closing = False
        self.saw_syntax = False  # a wrapper, or a repaired missing-wrapper block, outside code
        self.stream_args = False  # early_emit="arguments": wrapped blocks get an ArgStream
        self.calls_started = 0  # argument streaming: the calls of the response so far
        #: Argument streaming's events, in order, until the sieve takes them (after each
        #: scan, before the ``ToolCalls`` of the calls they finish).
        self.out: list[Event] = []
        #: The open capture stands inside reasoning (SPEC §15): the ``calls_in_reasoning``
        #: choice it is read under, ``"text"`` (it emits nothing: a block that closes is
        #: reasoning text) or ``"call"``; None in the answer. Its blocks record it.
        self.in_reasoning: str | None = None

    def take_out(self) -> list[Event]:
        """Argument streaming's events so far, taken out of ``out``."""
        events = self.out[:]
        self.out.clear()
        return events

    def next_index(self) -> int:
        """The next call's ``index`` (argument streaming counts the response's calls)."""
        k = self.calls_started
        self.calls_started += 1
        return k

    def open(self, m: Any, start: int, reasoning: str | None = None) -> Capture:
        """A capture for the entry match ``m`` at absolute offset ``start`` (``reasoning``:
        see ``in_reasoning``)."""
        g = self.g
        # Which entry terminal matched: the outermost named group of ``entry_exact``, the
        # last group to close (``lastgroup``), whatever groups the terminal has inside.
        k = g.entry_index[m.lastgroup]
        entry = g.entries[k]
        self.lessons.forget(start)
        self.in_reasoning = reasoning
        quiet = reasoning == "text"
        if entry.synthetic is None and not quiet:
            self.saw_syntax = True
        args = None
        if self.stream_args and entry.synthetic is None and not quiet:
            # (a block missing its opener emits nothing before its closing wrapper)
            args = ArgStream(self)
        cap = Capture(g, entry, start, m.group(), self.schemas, self.pieces, self.lessons,
                      g.entry_groups(m, k), args)
        if reasoning is not None:
            # No loose-CDATA repair inside reasoning: a CDATA a thought left open would be
            # closed wherever one can be, past the </think> and into the answer.
            cap.may_repair = False
        return cap

    def _calls(self, cap: Capture, start: int, dialect: str) -> tuple[ToolCall, ...]:
        """The block's calls from its ``start``-th on. Under argument streaming, those its
        stream finished are the ``ToolCall`` objects ``CallFinished`` gave; any other (a
        block missing its opener, or calls a repair read at the end of the input) is
        finished now — the one the stream had begun by the stream, the others whole."""
        repairs = tuple(cap.repairs)
        stream = cap.args
        made = stream.made if stream is not None else []
        calls = made[start:]
        for name, args, ident in cap.calls[max(start, len(made)):]:
            if stream is not None and stream.index >= 0:
                calls.append(stream.call(name, args, ident, dialect, repairs))
                continue
            # The model's own id where it wrote one (a ``call_id`` node), else the factory's.
            call = ToolCall(name, args, ident or make_call_id(self.id_factory), dialect,
                            repairs)
            if self.stream_args and self.in_reasoning != "text":
                k = self.next_index()
                self.out += (CallStarted(k, call.id, call.name),
                             ArgumentsDelta(k, call.arguments), CallFinished(k, call))
            calls.append(call)
        return tuple(calls)

    def early(self, cap: Capture) -> ToolCalls:
        """``early_emit="invoke"``: the calls completed since the last event. Its block
        covers the input this event settles, with the diagnostics that arose there (however
        far the scan has read since)."""
        k = cap.emitted
        prev_end = cap.call_ends[k - 1] if k else 0
        prev_piece = cap.call_pieces[k - 1] if k else 0
        prev_diag = cap.call_diags[k - 1] if k else 0
        end = cap.call_ends[-1]
        raw = "".join(cap.raw[prev_piece:cap.call_pieces[-1]])
        dialect = cap.dialect_now()
        block = Block((cap.start + prev_end, cap.start + end), dialect, "partial",
                      tuple(cap.repairs), tuple(cap.diagnostics[prev_diag:cap.call_diags[-1]]),
                      raw, self.in_reasoning)
        event = ToolCalls(self._calls(cap, k, dialect), block)
        cap.emitted_all()
        return event

    def complete(self, cap: Capture) -> tuple[ToolCalls, str]:
        """The event of a block that closed, and the block's text."""
        dialect = cap.dialect_now()
        if cap.strict:
            dialect = self.g.dialect_of_close(cap.last_value, dialect)
            self.saw_syntax = True
        raw = cap.raw_text()
        block = Block((cap.start, cap.start + len(raw)), dialect, "complete",
                      tuple(cap.repairs), tuple(cap.diagnostics), raw, self.in_reasoning)
        self.blocks.append(block)
        calls = self._calls(cap, cap.emitted, dialect)
        if cap.emitted:  # early_emit="invoke": this event settles the rest of the block
            cut = cap.call_ends[cap.emitted - 1]
            block = Block((cap.start + cut, block.span[1]), dialect, "complete", block.repairs,
                          tuple(cap.diagnostics[cap.call_diags[cap.emitted - 1]:]), raw[cut:],
                          self.in_reasoning)
        return ToolCalls(calls, block), raw

    def fail(self, cap: Capture, buf: str, base: int, p: int,
             cursor: Cursor) -> tuple[str, int, int, int]:
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
            if self.record or self.closing:
                raw = buf[at:at + raw_len] if raw is None else raw
                self.blocks.append(Block((cap.start, cap.start + cut), cap.dialect_now(),
                                         "partial", tuple(cap.repairs),
                                         (*cap.diagnostics, cap.failure), raw[:cut],
                                         self.in_reasoning))
            cursor.passed(buf, at + cut)  # (buf[:at] stood before it)
            return buf, base, at + cut, at + cut
        if (self.record or self.closing) and not cap.strict:  # (a bare invoke: only text)
            raw = buf[at:at + raw_len] if raw is None else raw
            self.blocks.append(Block((cap.start, cap.start + raw_len), cap.dialect_now(),
                                     "failed", tuple(cap.repairs),
                                     (*cap.diagnostics, cap.failure), raw,
                                     self.in_reasoning))
        return buf, base, at, at + cap.opener_len

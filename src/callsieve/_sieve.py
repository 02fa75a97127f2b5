"""Strategy: the sans-IO streaming state machine (SPEC §7) — prose in, events out.

What it does: ``feed(chunk)`` returns the events the chunk decides; ``close()`` flushes.
Between blocks the sieve is in PROSE: the fence tracker walks the text and stops at each
possible tag lead outside code; the grammar's entry terminals are matched there with partial
matching, so a tail that may still become an opener is held back (bounded by the longest
opener) and everything else goes out at once. A complete entry starts a ``Capture`` (state
CAPTURE), which ends as calls or fails; a failed block is released from its opener and the
rest is scanned again as prose, so a mention followed by a real block works.
What it guarantees: SPEC §Invariants — the coalesced events are the same for every
chunking, every character is released as text or belongs to exactly one parsed block, and
no ``str`` input raises. ``parse()`` is this machine run over one chunk.
What it costs: a chunk of prose with no lead character is one regex search and one ``Text``;
a chunk inside a streaming argument is one search for the run's stop character and a list
append; everything else is linear in the new text plus a bounded held tail.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from ._assembler import schemas_from_tools
from ._capture import COMPLETE, VIABLE, Capture
from ._errors import ConfigurationError, InputTypeError, SieveClosedError
from ._events import Block, Event, Text, ToolCall, ToolCalls
from ._fences import FenceState, FenceTracker
from ._grammar import DEFAULT_DIALECTS, load_grammar

__all__ = ["EARLY_EMIT", "MODES", "Sieve", "SieveState", "new_call_id"]

EARLY_EMIT = ("block", "invoke")
MODES = ("on", "off")
DEFAULT_MAX_BLOCK_CHARS = 8 * 1024 * 1024


class SieveState(enum.Enum):
    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


def new_call_id() -> str:
    """An OpenAI-style call id: ``call_`` and 24 random hex digits."""
    return "call_" + secrets.token_hex(12)


class Sieve:
    """Pulls tool calls out of a stream of model text.

    ``Sieve(tools=None, *, early_emit="block", mode="on", max_block_chars=8 MiB,
    dialects=DEFAULT_DIALECTS, grammar_dirs=(), id_factory=new_call_id)``
    """

    __slots__ = (
        "_blocks",
        "_cap",
        "_early",
        "_fences",
        "_g",
        "_held",
        "_id_factory",
        "_lead",
        "_limit",
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
        grammar_dirs: Iterable[str] = (),
        id_factory: Callable[[], str] = new_call_id,
    ) -> None:
        if early_emit not in EARLY_EMIT:
            raise ConfigurationError(f"early_emit must be one of {EARLY_EMIT}, not {early_emit!r}",
                                     expected=EARLY_EMIT)
        if mode not in MODES:
            raise ConfigurationError(f"mode must be one of {MODES}, not {mode!r}", expected=MODES)
        if not isinstance(max_block_chars, int) or max_block_chars < 1:
            raise ConfigurationError("max_block_chars must be a positive int")
        self._g = load_grammar(tuple(dialects), tuple(str(d) for d in grammar_dirs))
        self._state = SieveState.PROSE
        self._cap: Capture | None = None
        self._held = ""
        self._total = 0
        self._fences = FenceTracker(self._g.lead_chars)
        self._lead = self._fences.live_lead
        self._early = early_emit == "invoke"
        self._off = mode == "off"
        self._limit = max_block_chars
        self._schemas = schemas_from_tools(tools)
        self._id_factory = id_factory
        self._blocks: list[Block] = []
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

    def feed(self, chunk: str) -> list[Event]:
        if type(chunk) is not str:
            if not isinstance(chunk, str):
                raise InputTypeError(f"feed() takes str, not {type(chunk).__name__}")
            chunk = str(chunk)
        if self._state is SieveState.CLOSED:
            raise SieveClosedError("feed() after close()", offset=self._total)
        if not chunk:
            return []
        if self._off:
            self._total += len(chunk)
            return [Text(chunk)]
        cap = self._cap
        if not self._held:
            if cap is None:
                if self._fences.state is FenceState.LIVE and self._lead.search(chunk) is None:
                    self._total += len(chunk)
                    self._fences.note(chunk)
                    return [Text(chunk)]
            else:
                run = cap.run
                if (run is not None and run.stop_first is not None
                        and run.stop_first.search(chunk) is None
                        and cap.raw_len + len(chunk) <= self._limit
                        and not (cap.strict and run.name == "STRAY_RUN" and chunk.strip())):
                    self._total += len(chunk)
                    cap.pieces.append(chunk)
                    cap.raw.append(chunk)
                    cap.raw_len += len(chunk)
                    return []
        base = self._total - len(self._held)
        self._total += len(chunk)
        buf = self._held + chunk if self._held else chunk
        self._held = ""
        return self._process(buf, base, False)

    def close(self) -> list[Event]:
        if self._state is SieveState.CLOSED:
            raise SieveClosedError("close() called twice", offset=self._total)
        if self._off:
            self._state = SieveState.CLOSED
            return []
        buf = self._held
        self._held = ""
        events = self._process(buf, self._total - len(buf), True)
        self._state = SieveState.CLOSED
        return events

    # ------------------------------------------------------------------ the machine
    def _process(self, buf: str, base: int, final: bool) -> list[Event]:
        events: list[Event] = []
        g = self._g
        fences = self._fences
        pos = 0
        text_start = 0
        while True:
            cap = self._cap
            if cap is not None:
                status, p = cap.scan(buf, pos, final, self._limit)
                if self._early and not cap.strict and len(cap.calls) > cap.emitted:
                    self._emit_early(cap, events)
                if status == VIABLE:
                    self._held = buf[p:]
                    return events
                if status == COMPLETE:
                    self._complete(cap, events)
                    fences.note(cap.raw_text()[-4:])
                    self._cap = None
                    self._state = SieveState.PROSE
                    pos = text_start = p
                    continue
                # FAILED: release from the opener (or after the calls already emitted) and
                # scan the rest again as prose.
                buf, base, pos = self._fail(cap, buf, p)
                text_start = 0
                self._cap = None
                self._state = SieveState.PROSE
                continue
            i, candidate = fences.advance(buf, pos, final)
            if candidate:
                m = g.entry_pattern.match(buf, i, partial=not final)
                if m is None:
                    pos = i + 1
                    continue
                if not m.partial:
                    if text_start < i:
                        events.append(Text(buf[text_start:i]))
                    fences.consumed(buf, i)
                    entry = next(e for e in g.entries if e.terminal == m.lastgroup)
                    self._cap = Capture(g, entry, base + i, m.group(), self._schemas)
                    self._state = SieveState.CAPTURE
                    if entry.synthetic is None:
                        self._saw_syntax = True
                    pos = m.end()
                    continue
            if text_start < i:
                events.append(Text(buf[text_start:i]))
            fences.consumed(buf, i)
            self._held = buf[i:]
            return events

    def _calls(self, cap: Capture, start: int, dialect: str) -> tuple[ToolCall, ...]:
        repairs = tuple(cap.repairs)
        return tuple(ToolCall(name, args, self._id_factory(), dialect, repairs)
                     for name, args in cap.calls[start:])

    def _emit_early(self, cap: Capture, events: list[Event]) -> None:
        """``early_emit="invoke"``: each call goes out when its invoke closes."""
        start = cap.emitted
        end = cap.call_ends[-1]
        block = Block((cap.start, cap.start + end), cap.dialect, "partial",
                      tuple(cap.repairs), tuple(cap.diagnostics), cap.raw_text()[:end])
        events.append(ToolCalls(self._calls(cap, start, cap.dialect), block))
        cap.emitted = len(cap.calls)

    def _complete(self, cap: Capture, events: list[Event]) -> None:
        dialect = cap.dialect
        if cap.strict:
            dialect = self._g.dialect_of_close(cap.last_value, dialect)
            self._saw_syntax = True
        raw = cap.raw_text()
        block = Block((cap.start, cap.start + len(raw)), dialect, "complete",
                      tuple(cap.repairs), tuple(cap.diagnostics), raw)
        calls = self._calls(cap, cap.emitted, dialect)
        if calls:
            events.append(ToolCalls(calls, block))
        if self._record:
            self._blocks.append(block)

    def _fail(self, cap: Capture, buf: str, p: int) -> tuple[str, int, int]:
        raw = cap.raw_text()
        rest = raw + buf[p:]
        emitted = cap.emitted
        if emitted:
            cut = cap.call_ends[emitted - 1]
            if self._record:
                self._blocks.append(Block((cap.start, cap.start + cut), cap.dialect, "partial",
                                          tuple(cap.repairs),
                                          (*cap.diagnostics, cap.failure), raw[:cut]))
            return rest[cut:], cap.start + cut, 0
        if self._record:
            self._blocks.append(Block((cap.start, cap.start + len(raw)), cap.dialect, "failed",
                                      tuple(cap.repairs), (*cap.diagnostics, cap.failure), raw))
        return rest, cap.start, cap.opener_len

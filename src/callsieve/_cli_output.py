"""Strategy: what the command line prints, kept apart from reading input and from argparse —
the JSON views of results and events, and the one path a stream's events take to the output.

What it does: ``result_json``, ``event_json``, ``call_json`` and ``block_json`` are the JSON
views of callsieve's own values (``parse`` prints ``result_json``). A stream's events go
through a ``StreamWriter``, in three stages: an optional ``TextMerger`` (adjacent ``Text``
events become one, and so do adjacent ``Reasoning`` events; the reasoning tags' own events,
with nothing to show, go), an ``Encoder`` (events to output records: ``EventRecords`` gives one
``event_json`` record per event; a ``render.<api>.StreamRenderer`` has the same shape, so a
wire format is one more encoder) and a ``Frame`` (a record as output text: ``json_line``, one
compact JSON object per line, or ``sse_frame``, ``data: <json>`` and a blank line, as Server-
Sent Events carry it, ``sse_event_frame`` with an ``event: <type>`` line first; a writer's
``end`` closes the output, ``SSE_DONE`` for OpenAI Chat). ``StreamWriter.pause()`` marks where the input paused: the merged text
held so far is printed and the output flushed, so a reader of a live pipe sees text as soon as
a read's worth of input has been fed; ``close(events)`` prints the last events, the held text
and what the encoder holds, and flushes.
What it guarantees: merging only joins ``Text`` (or ``Reasoning``) events that are adjacent
in the stream (an event of another kind, a pause and the end each end a run), so the text and
the reasoning printed, in order, are what the sieve released, and every other event keeps its
place between the runs. JSON is
compact for frames (one line each), with non-ASCII kept when the output stream can encode it
and escaped otherwise (``dumps``).
What it costs: O(1) per event besides the JSON itself; the merger holds the text released
since the last pause or non-text event (for a FILE, read whole, that is up to all its text
between two calls).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TextIO

from ._base.events import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
    ToolCall,
    ToolCalls,
)
from ._facade.results import ParseResult

__all__ = [
    "SSE_DONE",
    "Encoder",
    "EventRecords",
    "Frame",
    "Record",
    "StreamWriter",
    "TextMerger",
    "block_json",
    "call_json",
    "dumps",
    "event_json",
    "json_line",
    "result_json",
    "sse_event_frame",
    "sse_frame",
]

Record = dict[str, Any]


# ---------------------------------------------------------------------- JSON views
def call_json(call: ToolCall) -> Record:
    return {
        "id": call.id,
        "name": call.name,
        "input": call.input,
        "dialect": call.dialect,
        "repairs": list(call.repairs),
        "coercions": list(call.coercions),
    }


def block_json(block: Block) -> Record:
    return {
        "span": list(block.span),
        "dialect": block.dialect,
        "status": block.status,
        "repairs": list(block.repairs),
        "diagnostics": list(block.diagnostics),
    }


def result_json(result: ParseResult) -> Record:
    return {
        "reasoning": result.reasoning,
        "text": result.text,
        "calls": [call_json(c) for c in result.calls],
        "blocks": [block_json(b) for b in result.blocks],
        "saw_tool_call_syntax": result.saw_tool_call_syntax,
        "rejected_by_policy": result.rejected_by_policy,
        "rejected_tool_names": list(result.rejected_tool_names),
        "rejections": [
            {"name": r.name, "reason": r.reason, "span": list(r.span), "action": r.action}
            for r in result.rejections
        ],
    }


def event_json(event: Event) -> Record:
    if isinstance(event, Text):
        return {"event": "text", "text": event.text}
    if isinstance(event, Reasoning):  # (a tag's own event: its raw text, the text empty)
        return (
            {"event": "reasoning", "text": event.text}
            if event.raw is None
            else {"event": "reasoning", "text": event.text, "raw": event.raw}
        )
    if isinstance(event, ToolCalls):
        return {
            "event": "tool_calls",
            "calls": [call_json(c) for c in event.calls],
            "block": block_json(event.block),
        }
    if isinstance(event, CallStarted):
        return {"event": "call_started", "index": event.index, "id": event.id, "name": event.name}
    if isinstance(event, ArgumentsDelta):
        return {"event": "arguments_delta", "index": event.index, "delta": event.delta}
    if isinstance(event, CallFinished):
        return {"event": "call_finished", "index": event.index, "call": call_json(event.call)}
    if isinstance(event, CallAborted):
        return {"event": "call_aborted", "index": event.index, "reason": event.reason}
    raise TypeError(f"unknown event {event!r}")  # pragma: no cover - Event is a closed union


def dumps(obj: Any, out: TextIO, *, indent: int | None) -> str:
    """JSON text (compact without ``indent``); non-ASCII kept if ``out`` can encode it,
    escaped otherwise."""
    separators = None if indent is not None else (",", ":")
    text = json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators)
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(obj, ensure_ascii=True, indent=indent, separators=separators)
    return text


# ---------------------------------------------------------------------- frames
Frame = Callable[[Record, TextIO], str]
"""A record as the text printed for it (``out`` decides whether non-ASCII is escaped)."""


def json_line(record: Record, out: TextIO) -> str:
    return dumps(record, out, indent=None) + "\n"


def sse_frame(record: Record, out: TextIO) -> str:
    return f"data: {dumps(record, out, indent=None)}\n\n"


def sse_event_frame(record: Record, out: TextIO) -> str:
    """A Server-Sent Event named after the record's ``type`` (how the Anthropic Messages and
    OpenAI Responses streams name each event), then its data."""
    return f"event: {record['type']}\ndata: {dumps(record, out, indent=None)}\n\n"


#: What closes an OpenAI Chat Completions event stream (the SDKs stop reading at it).
SSE_DONE = "data: [DONE]\n\n"


# ---------------------------------------------------------------------- stages
class Encoder(Protocol):
    """Events in, output records out — the shape of ``render.<api>.StreamRenderer``, whose
    ``close`` also takes an optional ``finish_reason``."""

    def feed(self, events: list[Event]) -> list[Record]: ...

    def close(self) -> list[Record]: ...


class EventRecords:
    """callsieve's own event view: one ``event_json`` record per event, nothing held."""

    __slots__ = ()

    def feed(self, events: list[Event]) -> list[Record]:
        return [event_json(e) for e in events]

    def close(self) -> list[Record]:
        return []


class TextMerger:
    """Adjacent ``Text`` events as one (and adjacent ``Reasoning`` events as one), held until
    an event of another kind or ``flush()``; a reasoning tag's event (no text) goes."""

    __slots__ = ("_held", "_kind")

    def __init__(self) -> None:
        self._held: list[str] = []
        self._kind: type[Text | Reasoning] = Text  # what ``_held`` holds

    def feed(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, Text | Reasoning):
                if not event.text:
                    continue
                if type(event) is not self._kind:
                    out.extend(self.flush())
                    self._kind = type(event)
                self._held.append(event.text)
            else:
                out.extend(self.flush())
                out.append(event)
        return out

    def flush(self) -> list[Event]:
        if not self._held:
            return []
        text = "".join(self._held)
        self._held.clear()
        return [self._kind(text)]


class StreamWriter:
    """The one path from a stream's events to the output: merge, encode, frame, print."""

    __slots__ = ("_out", "_encoder", "_merger", "_frame", "_end")

    def __init__(
        self,
        out: TextIO,
        encoder: Encoder,
        *,
        merge_text: bool,
        frame: Frame = json_line,
        end: str = "",
    ) -> None:
        self._out = out
        self._encoder = encoder
        self._merger = TextMerger() if merge_text else None
        self._frame = frame
        self._end = end  # printed after the last record (``SSE_DONE``)

    def feed(self, events: list[Event]) -> None:
        """Events from ``Sieve.feed``."""
        if self._merger is not None:
            events = self._merger.feed(events)
        self._write(self._encoder.feed(events))

    def pause(self) -> None:
        """The input paused (a read's worth was fed): print the held text and flush."""
        self._release()
        self._out.flush()

    def close(self, events: list[Event]) -> None:
        """Events from ``Sieve.close``; then everything held, and a flush."""
        self.feed(events)
        self._release()
        self._write(self._encoder.close())
        self._out.write(self._end)
        self._out.flush()

    def _release(self) -> None:
        if self._merger is not None:
            self._write(self._encoder.feed(self._merger.flush()))

    def _write(self, records: list[Record]) -> None:
        self._out.writelines(self._frame(r, self._out) for r in records)

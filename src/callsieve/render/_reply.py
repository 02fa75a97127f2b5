"""Strategy: the one view of a reply every renderer draws from — text and calls in order,
whatever ``early_emit`` the sieve ran with, with the white space that only separates text
from a call taken out.

What it does: ``Reply.feed(events)`` turns a sieve's events into *reply events*: ``Text``,
``CallStarted``, ``ArgumentsDelta``, ``CallFinished`` and ``CallAborted`` only. A
``ToolCalls`` event (``early_emit="block"`` or ``"invoke"``) becomes, for each of its calls,
``CallStarted``, one ``ArgumentsDelta`` with the whole ``call.arguments`` and
``CallFinished``; under ``early_emit="arguments"`` the call events pass through and the
``ToolCalls`` that then settles the same calls is dropped (its calls were already finished).
Reply events number the calls 0, 1, 2, … in the order they start, aborted ones included
(a client has seen them begin). ``reply_events(result)`` is the same view of a
``ParseResult`` (from ``result.parts``), for the whole-response builders.
White space (the documented choice, docs/rendering.md): white space at the start and at the
end of the reply's text goes, and with ``trim_around_calls`` (every API whose content is a
list of parts) also white space where text meets a call, so a text part is trimmed on each
side that touches a call; a part that is only white space goes. ``trim_around_calls=False``
(OpenAI Chat, whose content is one string) keeps white space between text and a call when
text follows the call. Trailing white space is held until what follows decides it: the
same text comes out of any chunking.
Aborted calls: a call that started and then aborted has been seen on a wire that streams
calls (Anthropic's ``tool_use`` block), so by default it counts as a call there too. A
renderer that sends each call whole when it finishes (Gemini) never shows it:
``aborted_calls_seen=False`` gives back the white space held when it started, so the text
reads as if the call had never begun — the same text as ``parse()`` gives.
What it guarantees: the concatenated ``ArgumentsDelta`` of a call equal its
``CallFinished`` call's ``arguments``; nothing but the white space above is dropped.
What it costs: O(1) per event besides the text itself; holds at most a run of white space.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._events import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Text,
    ToolCall,
    ToolCalls,
)
from .._results import ParseResult

__all__ = ["Reply", "reply_events"]


class Reply:
    """Sieve events in, reply events out (see the module's docstring)."""

    __slots__ = ("_trim_calls", "_aborts_seen", "_edge", "_held", "_seen_text", "_index",
                 "_open", "_unsettled", "_before")

    def __init__(self, *, trim_around_calls: bool = True,
                 aborted_calls_seen: bool = True) -> None:
        self._trim_calls = trim_around_calls
        self._aborts_seen = aborted_calls_seen
        # (held white space, edge) when a streamed call started: given back if it aborts
        self._before: tuple[list[str], bool] | None = None
        self._edge = True  # leading white space is dropped here (reply start, after a call)
        # Trailing white space not yet decided, in pieces (joined once, when text follows: a
        # reply may hold much white space, in many chunks).
        self._held: list[str] = []
        self._seen_text = False
        self._index = 0  # the next call's number
        self._open: dict[int, int] = {}  # a streamed call's event index -> its number
        self._unsettled = 0  # calls finished by CallFinished whose ToolCalls has not come

    def feed(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if isinstance(e, Text):
                self._before = None
                text = e.text
                if self._edge or self._held or not text or text[-1].isspace():
                    self._text(text, out)
                else:  # the common case, which _text would pass through unchanged (no edge:
                    out.append(e)  # text went out before, so _seen_text is already set)
            elif isinstance(e, ToolCalls):
                skip = min(self._unsettled, len(e.calls))
                self._unsettled -= skip
                for call in e.calls[skip:]:
                    self._whole(call, out)
            elif isinstance(e, CallStarted):
                if not self._aborts_seen and not self._open:
                    self._before = (self._held[:], self._edge)
                self._open[e.index] = self._start(e.id, e.name, out)
            elif isinstance(e, ArgumentsDelta):
                if e.delta and e.index in self._open:
                    out.append(ArgumentsDelta(self._open[e.index], e.delta))
            elif isinstance(e, CallFinished):
                k = self._open.pop(e.index, -1)
                self._unsettled += 1
                if k < 0:  # (a call never started: all of it now)
                    self._whole(e.call, out)
                    continue
                out.append(CallFinished(k, e.call))
                self._before = None
                self._ended()
            elif isinstance(e, CallAborted):
                k = self._open.pop(e.index, -1)
                if k >= 0:
                    out.append(CallAborted(k))
                    self._aborted()
        return out

    def close(self) -> list[Event]:
        """End of the reply: trailing white space goes; a call still open is aborted."""
        out: list[Event] = [CallAborted(k) for k in self._open.values()]
        self._open.clear()
        self._held = []
        self._before = None
        return out

    def _text(self, text: str, out: list[Event]) -> None:
        if self._edge:
            text = text.lstrip()
            if not text:
                return
            self._edge = False
        body = text.rstrip()
        if not body:  # only white space: decided by what comes next
            self._held.append(text)
            return
        out.append(Text("".join(self._held) + body if self._held else body))
        self._held = [text[len(body):]] if len(body) < len(text) else []
        self._seen_text = True

    def _whole(self, call: ToolCall, out: list[Event]) -> None:
        """A call that was not streamed: started, its arguments in one delta, finished."""
        k = self._start(call.id, call.name, out)
        arguments = call.arguments  # (JSON encoded on each read: read once)
        if arguments:
            out.append(ArgumentsDelta(k, arguments))
        out.append(CallFinished(k, call))
        self._before = None
        self._ended()

    def _start(self, ident: str, name: str, out: list[Event]) -> int:
        if self._trim_calls:
            self._held = []
        k = self._index
        self._index += 1
        out.append(CallStarted(k, ident, name))
        return k

    def _aborted(self) -> None:
        if self._before is not None and not self._open:  # (aborted_calls_seen=False)
            self._held, self._edge = self._before
            self._before = None
        elif self._before is None:
            self._ended()

    def _ended(self) -> None:
        if self._trim_calls or not self._seen_text:
            self._held = []
            self._edge = True


def reply_events(result: ParseResult, *, trim_around_calls: bool = True) -> list[Event]:
    """The reply events of a whole ``ParseResult``, as ``Reply`` gives them for a stream."""
    reply = Reply(trim_around_calls=trim_around_calls)
    events: list[Event] = []
    for part in result.parts:
        if isinstance(part, ToolCall):
            events.append(CallFinished(-1, part))
        elif isinstance(part, str):
            events.append(Text(part))
    out = reply.feed(events)
    return out + reply.close()

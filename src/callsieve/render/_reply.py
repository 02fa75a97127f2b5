"""Strategy: the one view of a reply every renderer draws from — reasoning, text and calls in
order, whatever ``early_emit`` the sieve ran with, with the white space that only separates
text from a call (or from reasoning) taken out.

What it does: ``Reply.feed(events)`` turns a sieve's events into *reply events*:
``Reasoning`` (its ``text`` only, never a tag), ``Text``, ``CallStarted``,
``ArgumentsDelta``, ``CallFinished`` and ``CallAborted`` only. A
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
Reasoning (SPEC §15; the tag events, with empty ``text``, go nowhere): each *run* of
reasoning (what comes between two other reply events) is trimmed at both ends the same way,
its trailing white space held until more reasoning shows it is inside the run. With
``trim_around_calls`` a run that shows something is a part of its own, so the text before
and after it is trimmed where it meets it, as around a call; without it (one content string,
the reasoning in a field of its own) reasoning does not touch the text's white space at all.
A run of only white space shows nothing and is as if it were not there.
``include_reasoning=False`` drops reasoning altogether (a server that does not show it): the
reply is then what it would be without it.
Aborted calls (``CallAborted``, its ``reason`` kept; one still open at ``close()`` is cut
off): a call that started and then aborted has been seen on a wire that streams calls
(Anthropic's ``tool_use`` block), so by default it counts as a call there too. A renderer
that sends each call whole when it finishes (Gemini) never shows it:
``aborted_calls_seen=False`` gives back the white space held when it started, so the text
reads as if the call had never begun — the same text as ``parse()`` gives.
What it guarantees: the concatenated ``ArgumentsDelta`` of a call equal its
``CallFinished`` call's ``arguments``; nothing but the white space above is dropped.
What it costs: O(1) per event besides the text itself; holds at most a run of white space.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._base.events import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
    ToolCall,
    ToolCalls,
)
from .._facade.results import ParseResult

__all__ = ["ENDED", "Ended", "Reply", "reply_events"]


class Reply:
    """Sieve events in, reply events out (see the module's docstring)."""

    __slots__ = (
        "_trim_calls",
        "_aborts_seen",
        "_reasoning",
        "_edge",
        "_held",
        "_seen_text",
        "_index",
        "_open",
        "_unsettled",
        "_before",
        "_r_edge",
        "_r_held",
    )

    def __init__(
        self,
        *,
        trim_around_calls: bool = True,
        aborted_calls_seen: bool = True,
        include_reasoning: bool = True,
    ) -> None:
        self._trim_calls = trim_around_calls
        self._aborts_seen = aborted_calls_seen
        self._reasoning = include_reasoning
        # (held white space, edge, and reasoning's) when a streamed call started: given back
        # if it aborts
        self._before: tuple[list[str], bool, list[str], bool] | None = None
        self._edge = True  # leading white space is dropped here (reply start, after a call)
        # Trailing white space not yet decided, in pieces (joined once, when text follows: a
        # reply may hold much white space, in many chunks).
        self._held: list[str] = []
        self._seen_text = False
        self._index = 0  # the next call's number
        self._open: dict[int, int] = {}  # a streamed call's event index -> its number
        self._unsettled = 0  # calls finished by CallFinished whose ToolCalls has not come
        self._r_edge = True  # no run of reasoning is open: its leading white space goes
        self._r_held: list[str] = []  # the open run's trailing white space, undecided

    def feed(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if isinstance(e, Text):
                self._before = None
                text = e.text
                if self._edge or self._held or not text or text[-1].isspace() or not self._r_edge:
                    self._text(text, out)
                else:  # the common case, which _text would pass through unchanged (no edge:
                    out.append(e)  # text went out before, so _seen_text is already set)
            elif isinstance(e, Reasoning):
                self._before = None
                if e.text and self._reasoning:
                    self._think(e.text, out)
            elif isinstance(e, ToolCalls):
                self._calls(e, out)
            elif isinstance(e, CallStarted):
                if not self._aborts_seen and not self._open:
                    self._before = (self._held[:], self._edge, self._r_held[:], self._r_edge)
                self._open[e.index] = self._start(e.id, e.name, out)
            elif isinstance(e, ArgumentsDelta):
                if e.delta and e.index in self._open:
                    out.append(ArgumentsDelta(self._open[e.index], e.delta))
            elif isinstance(e, CallFinished):
                self._finished(e, out)
            elif isinstance(e, CallAborted):
                k = self._open.pop(e.index, -1)
                if k >= 0:
                    out.append(CallAborted(k, e.reason))
                    self._aborted()
        return out

    def _calls(self, e: ToolCalls, out: list[Event]) -> None:
        """A block's calls: those a ``CallFinished`` already gave are skipped."""
        skip = min(self._unsettled, len(e.calls))
        self._unsettled -= skip
        for call in e.calls[skip:]:
            self._whole(call, out)

    def _finished(self, e: CallFinished, out: list[Event]) -> None:
        k = self._open.pop(e.index, -1)
        self._unsettled += 1
        if k < 0:  # (a call never started: all of it now)
            self._whole(e.call, out)
            return
        out.append(CallFinished(k, e.call))
        self._before = None
        self._ended()

    def close(self) -> list[Event]:
        """End of the reply: trailing white space goes; a call still open is aborted, cut
        off (``reason="cut_off"``: the reply ended inside it)."""
        out: list[Event] = [CallAborted(k, "cut_off") for k in self._open.values()]
        self._open.clear()
        self._held = []
        self._r_held = []
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
        self._held = [text[len(body) :]] if len(body) < len(text) else []
        self._seen_text = True
        self._r_held = []  # (text ends a run of reasoning)
        self._r_edge = True

    def _think(self, text: str, out: list[Event]) -> None:
        """A piece of reasoning: trimmed at the ends of its run, as ``_text`` trims text."""
        if self._r_edge:
            text = text.lstrip()
            if not text:
                return
            self._r_edge = False
        body = text.rstrip()
        if not body:
            self._r_held.append(text)
            return
        if self._trim_calls:  # a part of its own: the text before it ends here
            self._held = []
            self._edge = True
        out.append(Reasoning("".join(self._r_held) + body if self._r_held else body))
        self._r_held = [text[len(body) :]] if len(body) < len(text) else []

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
        self._r_held = []  # (a call ends a run of reasoning)
        self._r_edge = True
        k = self._index
        self._index += 1
        out.append(CallStarted(k, ident, name))
        return k

    def _aborted(self) -> None:
        if self._before is not None and not self._open:  # (aborted_calls_seen=False)
            self._held, self._edge, self._r_held, self._r_edge = self._before
            self._before = None
        elif self._before is None:
            self._ended()

    def _ended(self) -> None:
        if self._trim_calls or not self._seen_text:
            self._held = []
            self._edge = True


class Ended(Reply):
    """The reply once an error ended it (a renderer's ``on_abort="error"`` swaps its ``Reply``
    for ``ENDED``): whatever the sieve still sends shows nothing — so a renderer's ``feed``
    needs no check of its own for it."""

    __slots__ = ()

    def feed(self, events: Iterable[Event]) -> list[Event]:
        return []

    def close(self) -> list[Event]:
        return []


ENDED = Ended()


def reply_events(
    result: ParseResult, *, trim_around_calls: bool = True, include_reasoning: bool = True
) -> list[Event]:
    """The reply events of a whole ``ParseResult``, as ``Reply`` gives them for a stream."""
    reply = Reply(trim_around_calls=trim_around_calls, include_reasoning=include_reasoning)
    events: list[Event] = []
    for part in result.parts:
        if isinstance(part, ToolCall):
            events.append(CallFinished(-1, part))
        elif isinstance(part, str):
            events.append(Text(part))
        else:
            events.append(part)
    out = reply.feed(events)
    return out + reply.close()

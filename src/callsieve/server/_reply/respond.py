"""Strategy: one reply, from a model source through a ``Sieve`` to a client API — streamed as
Server-Sent Events, or whole — with each decision about a reply made in one place.

What it does:
  - ``sieve_options(config, req, defaults)`` is *the* place a request's sieve options are
    decided: the app's defaults, the server's settings over them, the request's tools, the
    reasoning setting ``thinking.decide`` reads from the request and the model's entry
    (SPEC §17), and for a reply that is text only (no tools, or ``tool_choice="none"``)
    what suits one: no policy (there is nothing to judge by) and ``early_emit="block"``, so
    its reasoning is split off and a block in it is read whole (and dropped, below); a JSON
    reply is never sanitized (its text is data, even with ``[sieve] sanitize = true``).
    ``reply_events(config, req, defaults)`` builds the reply's ``ReplyEvents`` from them
    (a tool the sieve refuses is a 400 naming ``tools``).
  - ``ReplyEvents`` is *the* place a reply's events are decided before a renderer sees them:
    the sieve's events for the model's text; at the end, the sieve's last events and the
    upstream's own tool calls (``delta.tool_calls``, merged after what the sieve found, as
    one ``ToolCalls``); the request's call limit (``parallel_tool_calls=false``: the first
    call is kept, later ones are dropped whole — ``CallLimit``) and its named
    ``tool_choice`` (a call of another tool is dropped whole); in a text-only reply, no
    call of the sieve's (a block that parsed there is leaked markup: it is dropped whole, as
    SPEC §13's sanitizer drops a complete block; the rest is text as the model wrote it);
    a guessed thought held, and the reading of an upstream that separates reasoning itself
    (both below).
  - **A guessed thought** (``thinking.Reading.guess``: the request asked for thinking and
    no model entry says how the template starts a reply): reading the reply as starting
    inside a thought would take the whole answer of a model that does not think for one.
    So ``ReplyEvents`` holds the text of that thought, up to ``HOLD`` (64 Ki) characters,
    until it is settled, and then reads it again with the sieve that reads the rest: when
    ``</think>`` comes, as the thought it was (``"open"``); when the reply ends on its own
    still inside it (``stop``, ``tool_calls`` or no reason), as no thought at all
    (``"tags"``: its text and calls are the answer); when it ends for any other reason
    (``length``, ``content_filter``), as the thought it was; when the upstream sends
    reasoning of its own, as the answer (``"off"``, below); when the next piece would take
    it past ``HOLD``, as the thought it seems (it streams on from there). White space
    alone settles nothing. A thought an entry vouches for is never held: it streams as it
    comes.
  - **Drafts** (``thinking.Reading.unknown``: nothing says whether the template pre-writes
    ``<think>``): the events from the reply's first call on are held (``_Drafts``; past
    ``HOLD`` characters of text only the calls) until the reply shows which side of a
    ``</think>`` they stand on. A ``</think>`` with no opener: the calls of the blocks
    before it were drafted in a thought, and are dropped (counted as
    ``rejected{reason="draft"}``); a ``<think>`` the model writes, reasoning from the
    upstream, or the reply's end: they were calls, and go out.
  - **Reasoning the upstream sends itself** (``delta.reasoning_content``): such a server
    splits the reasoning off, so the content it sends is the answer only — read with
    ``reasoning="off"``, whatever the request asked (an ``"open"`` reading would take the
    whole answer for a thought). ``ReplyEvents.upstream_reasoning()`` decides it once, at
    the first piece that carries reasoning: if no content came before it (white space
    aside, which is held until the reading is known), or only a held guessed thought, that
    content and the rest are read with ``reasoning="off"``; if content came first that an
    entry's reading took for a thought, and the sieve still stands inside it with no call
    begun, what it read stays as it went out, and a sieve with ``reasoning="off"`` reads the
    rest; if the answer had begun, the sieve reads on. A model's entry that says
    ``upstream_reasoning`` reads the reply so from its first character, whatever order the
    upstream sends things in.
  - ``stream_reply(api, req, source, events, emit)`` is the body of a streamed response:
    each piece of the model's text goes through ``ReplyEvents`` and the API's
    ``StreamRenderer``, and the frames of one piece are handed to ``emit`` as one string; a
    piece's reasoning (an upstream's ``reasoning_content``) goes to the renderer first, as a
    ``Reasoning`` event. ``end_of_reply`` is *the* place the end is rendered: the last
    events, the renderer's ``close(finish_reason, usage, blocks)`` — the sieve's blocks, so
    a reply cut off inside a call says ``length`` in the API's words —, the API's end
    marker — unless a call that began to stream aborted, and the renderer ended the reply
    with the API's error signal (``on_abort="error"``, SPEC §17): then the stream stops
    there (no end marker; the upstream is closed) and its outcome is ``stream_aborted``.
  - ``whole_reply`` feeds the same ``ReplyEvents`` as the pieces arrive (never one parse of
    the whole text at the end, which would hold the event loop for as long as it takes) and
    renders ``render_response`` of what they collected (``Collected``, a ``ParseResult``
    whose long runs of text are written into the response only as it is sent).
A piece larger than ``SLICE`` characters is fed in slices, with a checkpoint between them,
so one huge upstream event does not hold the event loop either.
What it guarantees: a fault after the stream began (``ApiError`` from the source; an
unexpected exception, logged, as a 500) ends the stream with the API's error event, and the
outcome says which (``"ok"``, ``"stream_aborted"``, ``"server_error"``); what was sent before
stays valid (held text and an open block are not released: the reply is broken). The caller
closes the source, whatever ends the reply.
What it costs: the sieve and the renderer per piece; a whole reply holds its text once
(joined as it grows, never one object per upstream event); a guessed thought is read twice
(at most ``HOLD`` characters, held meanwhile; the second reading is at most one slice's).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol

import anyio
import anyio.lowlevel

from ... import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    ConfigurationError,
    Event,
    Metrics,
    ParseResult,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
    aggregate_metrics,
)
from .._config import ServerConfig
from .._errors import ApiError
from .._json import Deferred
from .._read.turns import ModelRequest
from .apis import Api
from .thinking import decide
from .upstream import Piece

__all__ = [
    "HOLD",
    "SLICE",
    "CallLimit",
    "Collected",
    "ReplyEvents",
    "Source",
    "end_of_reply",
    "make_sieve",
    "reply_events",
    "sieve_options",
    "stream_reply",
    "whole_reply",
]

log = logging.getLogger("callsieve.server")
#: Options that judge calls; a text-only reply has none (and has no tools to judge by).
_JUDGING = ("policy", "on_reject")
_FINISH = ("stop", "length", "content_filter", "tool_calls")
#: The most characters fed to the sieve at once (a checkpoint between slices).
SLICE = 1 << 16
#: The most characters of a guessed thought held until it is settled: read again in one piece,
#: so no more than one slice (the most the event loop waits for the sieve at once).
HOLD = SLICE
#: The upstream's reasons for a reply that ended on its own (not cut).
_NATURAL = (None, "stop", "tool_calls")
_UPSTREAM_BLOCK = Block((0, 0), "upstream", "complete")
#: The events of a call: a text-only reply has none of the sieve's.
_CALL_EVENTS = (CallStarted, ArgumentsDelta, CallFinished, CallAborted, ToolCalls)
#: The events of one call as it streams (each has the call's ``index``).
_STREAMED = (CallStarted, ArgumentsDelta, CallFinished, CallAborted)


class Source(Protocol):
    finish_reason: str | None
    usage: dict[str, int] | None

    def pieces(self) -> AsyncIterator[Piece]: ...

    def calls(self) -> list[ToolCall]: ...

    async def aclose(self) -> None: ...


def sieve_options(
    config: ServerConfig, req: ModelRequest, defaults: dict[str, Any] | None = None
) -> dict[str, Any]:
    options = {**(defaults or {}), **config.sieve}
    reasoning = decide(config, req).reasoning
    if reasoning is not None:
        options["reasoning"] = reasoning
    if not req.parses:  # text only: no call to judge or to stream, a block is a leak
        for name in _JUDGING:
            options.pop(name, None)
        options["early_emit"] = "block"
        if req.json_reply:
            options["sanitize"] = False
    options["tools"] = req.tools or None
    return options


def reply_events(
    config: ServerConfig, req: ModelRequest, defaults: dict[str, Any] | None = None
) -> ReplyEvents:
    """The reply's events: its sieve (``sieve_options``), and whether its thought is only
    guessed at (``thinking.Reading.guess``)."""
    options = sieve_options(config, req, defaults)
    reading = decide(config, req)
    return ReplyEvents(
        make_sieve(options),
        req.max_calls,
        only=named(req),
        options=options,
        calls=req.parses,
        guess=reading.guess,
        drafts=reading.unknown and req.parses and options.get("mode") != "off",
    )


def named(req: ModelRequest) -> str | None:
    """The tool a named ``tool_choice`` asks for (``None``: any tool)."""
    return None if req.tool_choice in ("auto", "none", "required") else req.tool_choice


def make_sieve(options: dict[str, Any]) -> Sieve:
    try:
        return Sieve(**options)
    except ConfigurationError as exc:
        raise ApiError(400, f"tools: {exc}", param="tools") from None


class CallLimit:
    """Sieve events in, the same events out with only the reply's first ``limit`` calls
    (``None``: no limit) of the tool ``only`` (``None``: of any tool; a named
    ``tool_choice``): another call is dropped whole (its start, arguments and end, and its
    place in the ``ToolCalls`` that settles it), so a renderer never sees it begin."""

    __slots__ = ("limit", "only", "_kept", "_open", "_settle")

    def __init__(self, limit: int | None, only: str | None = None) -> None:
        self.limit = limit
        self.only = only
        self._kept = 0  # calls kept, finished or open
        self._open: dict[int, bool] = {}  # a started call's index -> kept
        self._settle: deque[bool] = deque()  # per CallFinished not yet settled: kept

    def __call__(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if isinstance(e, CallStarted):
                keep = self._take(e.name)
                self._open[e.index] = keep
            elif isinstance(e, ArgumentsDelta):
                keep = self._open.get(e.index, False)
            elif isinstance(e, CallFinished):
                started = self._open.pop(e.index, None)
                keep = self._take(e.call.name) if started is None else started
                self._settle.append(keep)
            elif isinstance(e, CallAborted):
                keep = self._open.pop(e.index, False)
                self._kept -= keep
            elif isinstance(e, ToolCalls):
                k = min(len(self._settle), len(e.calls))
                calls = [c for c in e.calls[:k] if self._settle.popleft()]
                calls += [c for c in e.calls[k:] if self._take(c.name)]
                if len(calls) == len(e.calls):
                    out.append(e)
                elif calls:
                    out.append(ToolCalls(tuple(calls), e.block))
                continue
            else:
                keep = True
            if keep:
                out.append(e)
        return out

    def _take(self, name: str) -> bool:
        if self.only is not None and name != self.only:
            return False
        if self.limit is None or self._kept < self.limit:
            self._kept += 1
            return True
        return False


class ReplyEvents:
    """The events a reply's renderer gets (see the module's docstring). ``options``: the
    sieve's, to read the reply again another way (``None``: never); ``calls=False``: a
    text-only reply, whose sieve's calls are dropped; ``guess``: the reply is read as
    starting inside a thought only because the request asked for thinking (no model entry
    says how its template starts a reply), so that thought is held until it is settled."""

    __slots__ = (
        "sieve",
        "_limit",
        "_options",
        "_calls",
        "_lead",
        "_fed",
        "_begun",
        "_known",
        "_guess",
        "_drafts",
    )

    def __init__(
        self,
        sieve: Sieve,
        max_calls: int | None = None,
        *,
        only: str | None = None,
        options: dict[str, Any] | None = None,
        calls: bool = True,
        guess: bool = False,
        drafts: bool = False,
    ) -> None:
        self.sieve = sieve
        limited = max_calls is not None or only is not None
        self._limit = CallLimit(max_calls, only) if limited else None
        self._options = options
        self._calls = calls
        self._lead = ""  # white space at the reply's start, until the reading is known
        self._fed = False  # the sieve has read text that is not white space
        self._begun = False  # a call has begun (its events went out)
        #: Whether the upstream's reasoning can still change the reading.
        self._known = options is None or options.get("reasoning") == "off"
        #: The text of a guessed thought, held until it is settled (``None``: nothing held).
        self._guess = _Guess() if guess and options is not None else None
        #: The calls held until the reply shows which side of a ``</think>`` they stand on
        #: (``None``: none are held).
        self._drafts = _Drafts() if drafts else None

    @property
    def drafts(self) -> int:
        """The calls dropped as drafts: they stood before a ``</think>`` with no opener."""
        return self._drafts.dropped if self._drafts is not None else 0

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The sieve's blocks, for ``cut_off`` (none in a text-only reply: no call was
        cut)."""
        return self.sieve.blocks if self._calls else ()

    def feed(self, text: str) -> list[Event]:
        if not self._fed:
            if not self._known and not text.strip():
                self._lead += text
                return []
            self._fed = True
            text, self._lead = self._lead + text, ""
        return self._read(text)

    def upstream_reasoning(self) -> list[Event]:
        """The upstream sent reasoning of its own: from here on its content is the answer
        only (the module's docstring has the rule); the events that end the sieve read so
        far, if it is replaced."""
        held = self._settle_drafts()  # (the content is the answer: its calls are real)
        if self._known:
            return held
        self._known = True
        return held + self._read_as_answer()

    def _read_as_answer(self) -> list[Event]:
        if self._guess is not None:  # (the content held was the answer)
            return self._settle("off")
        if self._fed and not (self.sieve.in_reasoning and not self._begun):
            return []  # (the answer began: it reads on)
        last = self._pass(self.sieve.close()) if self._fed else []
        self.sieve = self._sieve("off")
        return last

    def close(self, upstream_calls: list[ToolCall], finish: str | None = None) -> list[Event]:
        """The reply's last events; ``finish``: the upstream's reason (a guessed thought
        that never closed was one only if the reply was cut)."""
        events = self._read(self._lead) if self._lead else []
        self._lead = ""
        if self._guess is not None:
            unclosed = self._guess.thought and self.sieve.in_reasoning
            events += self._settle("tags" if unclosed and finish in _NATURAL else "open")
        events += self._pass(self.sieve.close())
        events += self._settle_drafts()  # (no </think> came: they were calls)
        if upstream_calls:
            upstream = [ToolCalls(tuple(upstream_calls), _UPSTREAM_BLOCK)]
            events += self._limit(upstream) if self._limit is not None else upstream
        return events

    def _read(self, text: str) -> list[Event]:
        guess = self._guess
        if guess is not None and guess.size + len(text) > HOLD:
            # (too long to hold: taken for the thought it seems, and read on as it comes)
            return self._settle("open") + self._pass(self.sieve.feed(text))
        events = self.sieve.feed(text)
        if guess is None:
            return self._pass(events)
        guess.hold(text, events)
        if guess.thought and not self.sieve.in_reasoning:
            return self._settle("open")  # (it closed: it was a thought)
        return []

    def _settle(self, reasoning: str) -> list[Event]:
        """The held text read again, as a thought (``"open"``) or not, by the sieve that
        reads the rest of the reply."""
        assert self._guess is not None
        text, self._guess = self._guess.text(), None
        self.sieve = self._sieve(reasoning)
        return self._pass(self.sieve.feed(text)) if text else []

    def _sieve(self, reasoning: str) -> Sieve:
        assert self._options is not None
        return make_sieve({**self._options, "reasoning": reasoning})

    def _settle_drafts(self) -> list[Event]:
        drafts = self._drafts
        if drafts is None or drafts.done:
            return []
        released = drafts.release(None)
        if drafts.dropped and self._options and self._options.get("metrics"):
            _count_drafts(drafts.dropped)
        return self._out(released)

    def _pass(self, events: list[Event]) -> list[Event]:
        drafts = self._drafts
        if drafts is not None and not drafts.done and events:
            events = drafts.sift(events, self.sieve.stray_reasoning_closes)
            if drafts.done and drafts.dropped and self._options and self._options.get("metrics"):
                _count_drafts(drafts.dropped)
        return self._out(events)

    def _out(self, events: list[Event]) -> list[Event]:
        if not events:
            return events
        if not self._calls:
            return [e for e in events if not isinstance(e, _CALL_EVENTS)]
        if not self._begun:
            self._begun = any(isinstance(e, (CallStarted, ToolCalls)) for e in events)
        return self._limit(events) if self._limit is not None else events


class _Drafts:
    """A reply's events from its first call on, held while nobody knows whether the
    template pre-wrote ``<think>`` (past ``HOLD`` characters of text, the text goes out and
    only the calls stay held). Settled by the first ``</think>`` with no opener (the
    calls before it were drafts: dropped; the rest goes out), by a ``<think>`` the model
    writes (its template did not write one: all goes out), or by the reply's end."""

    __slots__ = ("held", "done", "dropped", "_size", "_over")

    def __init__(self) -> None:
        self.held: list[Event] = []
        self.done = False
        self.dropped = 0
        self._size = 0  # characters of text held
        self._over = False  # past ``HOLD``: text goes out, only calls are held

    def sift(self, events: list[Event], strays: tuple[int, ...]) -> list[Event]:
        out: list[Event] = []
        for i, e in enumerate(events):
            if isinstance(e, Reasoning) and e.raw is not None:  # (a <think> of the model's)
                return out + self.release(None) + events[i:]
            if isinstance(e, _CALL_EVENTS) or (self.held and not self._over):
                self.held.append(e)
                if isinstance(e, (Text, Reasoning)):
                    self._size += len(e.text)
                    if self._size > HOLD:  # (the text goes out; the calls stay held)
                        self._over = True
                        out += [x for x in self.held if not isinstance(x, _CALL_EVENTS)]
                        self.held = [x for x in self.held if isinstance(x, _CALL_EVENTS)]
            else:
                out.append(e)
        return out + self.release(strays[0]) if strays else out

    def release(self, stray: int | None) -> list[Event]:
        """The held events, less the calls of the blocks that began before ``stray`` and,
        when there is one, the calls that aborted while held (which side they stood on is
        not known: they never began for the client)."""
        if stray is None:
            held, self.held, self.done = self.held, [], True
            return held
        aborted = {e.index for e in self.held if isinstance(e, CallAborted)}
        kept: list[Event] = []
        block: list[Event] = []  # the events since the last block's end
        for e in self.held:
            if isinstance(e, _STREAMED) and e.index in aborted:
                continue
            block.append(e)
            if isinstance(e, ToolCalls):
                if e.block.span[0] < stray:  # (a draft: its calls go, its text stays)
                    self.dropped += len(e.calls)
                    block = [x for x in block if not isinstance(x, _CALL_EVENTS)]
                kept += block
                block = []
        self.held, self.done = [], True
        return kept + block


def _count_drafts(n: int) -> None:
    """``callsieve_rejected_total{reason="draft"}``: calls dropped as drafts."""
    counts = Metrics()
    counts.count_label("rejected", "draft", n)
    aggregate_metrics().merge(counts.snapshot())


class _Guess:
    """A guessed thought held: its text, and whether it has begun (reasoning that is not
    white space, or a reasoning tag)."""

    __slots__ = ("_run", "size", "thought")

    def __init__(self) -> None:
        self._run = _Run()
        self.size = 0
        self.thought = False

    def hold(self, text: str, events: list[Event]) -> None:
        self._run.add(text)
        self.size += len(text)
        if not self.thought:
            self.thought = any(
                isinstance(e, Reasoning) and (e.raw is not None or e.text.strip()) for e in events
            )

    def text(self) -> str:
        return self._run.joined()


def _finish(source: Source) -> str | None:
    return source.finish_reason if source.finish_reason in _FINISH else None


def _slices(text: str) -> list[str]:
    return (
        [text] if len(text) <= SLICE else [text[i : i + SLICE] for i in range(0, len(text), SLICE)]
    )


async def stream_reply(
    api: Api,
    req: ModelRequest,
    source: Source,
    events: ReplyEvents,
    emit: Callable[[str, int], Awaitable[None]],
    on_abort: str = "error",
) -> str:
    """Stream the reply through ``emit``; the outcome (``"ok"``, ``"stream_aborted"``,
    ``"server_error"``). ``on_abort``: the renderer's (``ServerConfig.on_abort``)."""
    frame = api.frame
    sent = 0
    try:
        renderer = api.stream_renderer(req, on_abort)
        async for piece in source.pieces():
            objs = (
                renderer.feed([*events.upstream_reasoning(), Reasoning(piece.reasoning)])
                if piece.reasoning
                else []
            )
            if piece.text:
                slices = _slices(piece.text)
                for i, part in enumerate(slices):
                    if i:  # (a huge piece: let the other replies run between slices)
                        await anyio.lowlevel.checkpoint()
                    objs += renderer.feed(events.feed(part))
                    if len(slices) > 1 and objs:
                        await emit("".join([frame(o) for o in objs]), len(objs))
                        sent += len(objs)
                        objs = []
            if objs:
                await emit("".join([frame(o) for o in objs]), len(objs))
                sent += len(objs)
            if _ended(renderer):  # a call aborted: its error event ended the reply
                return "stream_aborted"
        objs = end_of_reply(api, req, source, events, renderer)
        end = "" if _ended(renderer) else api.end
        await emit("".join([frame(o) for o in objs]) + end, len(objs))
        if end != api.end:
            return "stream_aborted"
    except ApiError as err:
        await emit(api.error_frame(err, sent), 1)
        return "stream_aborted"
    except Exception as exc:  # a bug, not the model's fault: logged, and the stream ends
        log.exception("unexpected error while streaming a reply")
        await emit(
            api.error_frame(
                ApiError(500, f"internal error ({type(exc).__name__})", code="internal_error"), sent
            ),
            1,
        )
        return "server_error"
    return "ok"


def _ended(renderer: Any) -> bool:
    """Whether the renderer ended the reply with its API's error (a call that began to
    stream aborted, ``callsieve.render``'s ``on_abort="error"``): nothing more goes out,
    and the upstream is closed."""
    return getattr(renderer, "aborted", None) is not None


def end_of_reply(
    api: Api, req: ModelRequest, source: Source, events: ReplyEvents, renderer: Any
) -> list[dict[str, Any]]:
    """The reply's last objects: what the sieve still held, the upstream's own calls, and
    the renderer's end (finish reason, usage; the sieve's blocks, so that a reply cut off
    inside a call says so)."""
    usage = (source.usage or {}) if api.wants_usage(req) else None
    objs: list[dict[str, Any]] = renderer.feed(events.close(source.calls(), _finish(source)))
    end: list[dict[str, Any]] = renderer.close(_finish(source), usage=usage, blocks=events.blocks)
    return objs + end


async def whole_reply(
    api: Api, req: ModelRequest, source: Source, events: ReplyEvents
) -> tuple[dict[str, Any], Deferred]:
    """The whole response, and the long text it stands for (``_http.send_json`` writes
    both)."""
    collected = Collected()
    async for piece in source.pieces():
        if piece.reasoning:
            collected.add(events.upstream_reasoning())
            collected.add([Reasoning(piece.reasoning)])
        if piece.text:
            for i, part in enumerate(_slices(piece.text)):
                if i:
                    await anyio.lowlevel.checkpoint()
                collected.add(events.feed(part))
    collected.add(events.close(source.calls(), _finish(source)))
    result = collected.result(events.sieve, events.blocks)
    response = api.whole(result, req, _finish(source), source.usage or {})
    return response, collected.deferred


class _Run:
    """Text that grows in many small pieces, kept as pieces of about ``SLICE`` characters
    (a list of a million 4-character strings costs twenty times the text; one string of
    the whole run costs a join that holds the event loop)."""

    __slots__ = ("_pieces", "_small", "_small_len")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._small: list[str] = []
        self._small_len = 0

    def add(self, text: str) -> None:
        if len(text) >= SLICE:
            self._flush()
            self._pieces.extend(_slices(text))
            return
        self._small.append(text)
        self._small_len += len(text)
        if self._small_len >= SLICE:
            self._flush()

    def _flush(self) -> None:
        if self._small:
            self._pieces.append("".join(self._small))
            self._small, self._small_len = [], 0

    def take(self, deferred: Deferred) -> str:
        self._flush()
        out, self._pieces = deferred.text(self._pieces), []
        return out

    def joined(self) -> str:
        self._flush()
        return "".join(self._pieces)

    def __bool__(self) -> bool:
        return bool(self._pieces or self._small)


class Collected:
    """A whole reply's events gathered into a ``ParseResult`` (the upstream's reasoning
    where it came, the sieve's text, reasoning and calls in order). A long run of text or
    reasoning stands in the result as its ends around a marker (``_json.Deferred``), put
    back as the response is sent: no string of the whole reply is ever made."""

    __slots__ = ("_calls", "_parts", "_run", "_in_text", "deferred")

    def __init__(self) -> None:
        self._calls: list[ToolCall] = []
        self._parts: list[str | Reasoning | ToolCall] = []
        self._run = _Run()  # text or reasoning since the last part of the other kind
        self._in_text = True
        #: The long runs, written into the response only as it is sent (``_json``).
        self.deferred = Deferred()

    def add(self, events: Iterable[Event]) -> None:
        for e in events:
            if isinstance(e, Text | Reasoning):
                if not e.text:
                    continue
                if isinstance(e, Text) != self._in_text:
                    self._end_run()
                    self._in_text = not self._in_text
                self._run.add(e.text)
            elif isinstance(e, ToolCalls) and e.calls:
                self._end_run()
                self._calls.extend(e.calls)
                self._parts.extend(e.calls)

    def _end_run(self) -> None:
        if self._run:
            joined = self._run.take(self.deferred)
            self._parts.append(joined if self._in_text else Reasoning(joined))

    def result(self, sieve: Sieve, blocks: tuple[Block, ...] | None = None) -> ParseResult:
        """The reply as a ``ParseResult``; ``blocks``: the sieve's unless given."""
        self._end_run()
        parts = tuple(self._parts)
        text = "".join([p for p in parts if isinstance(p, str)])
        thought = "".join([p.text for p in parts if isinstance(p, Reasoning)])
        return ParseResult(
            text,
            tuple(self._calls),
            sieve.blocks if blocks is None else blocks,
            sieve.saw_tool_call_syntax,
            sieve.rejected_by_policy,
            sieve.rejected_tool_names,
            parts=parts,
            reasoning=thought,
            rejections=sieve.rejections,
        )

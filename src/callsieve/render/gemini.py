"""Strategy: a reply as the Gemini API sends it — a ``GenerateContentResponse`` (REST JSON,
camelCase) for the whole reply, and a sequence of them for a streamed one — as plain dicts.

What it does: ``StreamRenderer`` reads a sieve's events through ``Reply`` (text and calls in
order, white space trimmed where text meets a call) and answers each ``feed`` with at most
one response chunk: ``candidates[0].content.parts`` holds the reasoning that arrived (a
``text`` part with ``thought: true`` per run, as Gemini sends its thoughts when asked to
include them; ``include_reasoning=False`` leaves them out), the text (one ``text`` part per
run) and a ``functionCall`` part (``name``, ``args``, ``id``) for each call
that finished — Gemini does not stream a call's arguments, so a call is sent whole, when it
finishes. ``close`` sends the last chunk: ``finishReason`` and ``usageMetadata``, with an
empty ``text`` part (as Gemini ends its streams), so that every chunk has content, which
google-genai's chat needs to keep the turn in its history. ``render_response`` builds the
whole response from ``reply_events(result)``; an empty reply has one empty ``text`` part.
Every chunk carries ``modelVersion`` and the same ``responseId``.
Aborts: calls are sent whole, so nothing of an aborted call was sent. One that is sent
again (``CallAborted.resent``) follows whole, and needs nothing said. One that did not come
through (its block failed, the reply was cut off inside it, the policy rejected it) ends the
reply, under ``on_abort="error"`` (the default), with an error chunk ``{"error": {"code":
500, "message": …, "status": "INTERNAL"}}`` — the API's own shape, on which google-genai's
stream reader (``BaseApiClient.request_streamed``) raises a ``ServerError`` — and ``feed()``
and ``close()`` send nothing more (``aborted`` is the abort), as the other APIs' renderers
do. Under ``on_abort="continue"`` the reply goes on: the white space held when the call
started is given back (``Reply(aborted_calls_seen=False)``), so its text reads as
``parse()`` gives it, and a cut-off reply ends ``MAX_TOKENS``.
What it guarantees: the parts of all chunks, joined (adjacent text merged, empty text
dropped), are the whole response's parts, unless an error ended the reply. Every object
validates against google-genai's types (the tests check it; this module does not import
the SDK).
What it costs: one dict per ``feed`` that has something to send, one per part.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import Any

from .._base.errors import ConfigurationError, SieveClosedError
from .._base.events import Block, CallAborted, CallFinished, CallStarted, Event, Reasoning, Text
from .._facade.results import ParseResult
from ._aborts import cut_off, ends_reply, finish_after_cut, why
from ._options import Usage, make_id, token_counts
from ._reply import ENDED, Reply, reply_events

__all__ = [
    "FINISH_REASONS",
    "StreamRenderer",
    "finish_reason_of",
    "new_function_call_id",
    "new_response_id",
    "render_response",
]

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

#: Gemini's own finish reasons that a caller may pass through as they are.
FINISH_REASONS = (
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
)
_MAPPED = {
    None: "STOP",
    "stop": "STOP",
    "tool_calls": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}  # (OpenAI's names)


def new_response_id() -> str:
    """A ``responseId`` shaped as the API's: 23 random URL-safe base-64 characters."""
    return secrets.token_urlsafe(17)


def new_function_call_id() -> str:
    """A ``functionCall.id`` shaped as Gemini 3's: 8 random lower-case letters and digits."""
    return "".join(secrets.choice(_BASE36) for _ in range(8))


def finish_reason_of(finish_reason: str | None) -> str:
    """The ``finishReason`` for the caller's ``finish_reason``: ``None``, ``"stop"`` and
    ``"tool_calls"`` give ``"STOP"`` (Gemini ends a turn with calls as any other);
    ``"length"`` (the model was cut off) ``"MAX_TOKENS"``; ``"content_filter"``
    ``"SAFETY"``; one of ``FINISH_REASONS`` itself. Anything else is a
    ``ConfigurationError``."""
    if finish_reason in _MAPPED:
        return _MAPPED[finish_reason]
    if finish_reason in FINISH_REASONS:
        return finish_reason
    allowed = tuple(k for k in _MAPPED if k is not None) + FINISH_REASONS
    raise ConfigurationError(
        f"finish_reason must be None or one of {allowed}, not {finish_reason!r}", expected=allowed
    )


class _Builder:
    """What both paths share: the response's envelope and its parts."""

    __slots__ = ("model", "response_id", "call_id", "usage")

    def __init__(
        self,
        model: str,
        response_id_factory: Callable[[], str],
        call_id_factory: Callable[[], str] | None,
        usage: Usage | None,
    ) -> None:
        self.usage = token_counts(usage)
        self.model = model
        self.response_id = make_id(response_id_factory, "response_id_factory")
        self.call_id = call_id_factory

    def parts(self, events: Iterable[Event], parts: list[dict[str, Any]]) -> None:
        """Append the parts of reply ``events`` (adjacent text, or reasoning, in one part)."""
        for e in events:
            if isinstance(e, Text | Reasoning):
                thought = isinstance(e, Reasoning)
                if parts and "text" in parts[-1] and ("thought" in parts[-1]) == thought:
                    parts[-1]["text"] += e.text
                else:
                    parts.append({"text": e.text, "thought": True} if thought else {"text": e.text})
            elif isinstance(e, CallFinished):
                call: dict[str, Any] = {"name": e.call.name, "args": e.call.input}
                if self.call_id is not None:
                    call["id"] = make_id(self.call_id, "call_id_factory")
                parts.append({"functionCall": call})

    def response(
        self, parts: list[dict[str, Any]], reason: str | None, usage: tuple[int, int] | None
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
        if reason is not None:
            candidate["finishReason"] = reason
        candidate["index"] = 0
        out: dict[str, Any] = {"candidates": [candidate]}
        if usage is not None:
            out["usageMetadata"] = {
                "promptTokenCount": usage[0],
                "candidatesTokenCount": usage[1],
                "totalTokenCount": usage[0] + usage[1],
            }
        out["modelVersion"] = self.model
        out["responseId"] = self.response_id
        return out


class StreamRenderer:
    """Sieve events in, Gemini response chunks out (see the module's docstring).

    ``StreamRenderer(*, model="callsieve", response_id_factory=new_response_id,
    call_id_factory=new_function_call_id, usage=None)``: ``model`` is sent as
    ``modelVersion``; ``call_id_factory=None`` sends calls without an ``id`` (as Gemini
    before version 3 did); ``usage`` is ``{"input_tokens": n, "output_tokens": m}`` (zeros by
    default), sent as ``usageMetadata`` on the last chunk (``close`` may give the final
    counts); ``include_reasoning=False`` sends no thought parts; ``on_abort`` (``"error"`` or
    ``"continue"``): see the module's docstring. ``feed`` after ``close`` raises
    ``SieveClosedError``.
    """

    __slots__ = ("_b", "_reply", "_closed", "_error", "_names", "_cut", "_aborted")

    def __init__(
        self,
        *,
        model: str = "callsieve",
        response_id_factory: Callable[[], str] = new_response_id,
        call_id_factory: Callable[[], str] | None = new_function_call_id,
        usage: Usage | None = None,
        include_reasoning: bool = True,
        on_abort: str = "error",
    ) -> None:
        self._error = ends_reply(on_abort)
        self._b = _Builder(model, response_id_factory, call_id_factory, usage)
        self._reply = Reply(
            trim_around_calls=True, aborted_calls_seen=False, include_reasoning=include_reasoning
        )
        self._closed = False
        self._names: dict[int, str] = {}  # a started call's number -> its name
        self._cut = False  # a call aborted because the reply was cut off inside it
        self._aborted: CallAborted | None = None  # the abort that ended the reply

    @property
    def aborted(self) -> CallAborted | None:
        """The abort that ended the reply with an error chunk (``on_abort="error"``; its
        ``index`` is the call's number in the reply), else None."""
        return self._aborted

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """One chunk with the parts ``events`` give, or none if they give nothing yet (and
        the error chunk, if a call that did not come through ends the reply)."""
        if self._closed:
            raise SieveClosedError("feed() called on a StreamRenderer that is already closed")
        return self._chunks(self._reply.feed(events), None, None)

    def _chunks(
        self, events: list[Event], reason: str | None, usage: tuple[int, int] | None
    ) -> list[dict[str, Any]]:
        """The chunk of reply ``events`` (the last one when ``reason`` is given), or the
        chunk of the events before an abort that ends the reply, then its error."""
        for k, e in enumerate(events):
            if isinstance(e, CallStarted):
                self._names[e.index] = e.name
            elif isinstance(e, CallFinished):
                self._names.pop(e.index, None)
            elif isinstance(e, CallAborted):
                self._cut = self._cut or e.reason == "cut_off"
                if self._error and not e.resent:
                    self._aborted = e
                    self._reply = ENDED  # (nothing more shows)
                    parts: list[dict[str, Any]] = []
                    self._b.parts(events[:k], parts)
                    error = {
                        "error": {
                            "code": 500,
                            "message": why(e, self._names.get(e.index, "")).message,
                            "status": "INTERNAL",
                        }
                    }
                    return [self._b.response(parts, None, None), error] if parts else [error]
        parts = []
        self._b.parts(events, parts)
        if reason is None:
            return [self._b.response(parts, None, None)] if parts else []
        return [self._b.response(parts or [{"text": ""}], reason, usage)]

    def close(
        self,
        finish_reason: str | None = None,
        *,
        usage: Usage | None = None,
        blocks: Iterable[Block] = (),
    ) -> list[dict[str, Any]]:
        """The last chunk: ``finishReason`` (``finish_reason_of(finish_reason)``) and
        ``usageMetadata`` (this call's ``usage``, else the constructor's). ``blocks`` (the
        sieve's, ``Sieve.blocks``): a reply that ended inside a call whose start was never
        seen (``early_emit="block"`` or ``"invoke"``) is cut off too: ``MAX_TOKENS``."""
        if self._closed:
            raise SieveClosedError("close() called on a StreamRenderer that is already closed")
        finish_reason_of(finish_reason)  # (checked before any change)
        counts = self._b.usage if usage is None else token_counts(usage)
        self._closed = True
        if self._aborted is not None:
            return []
        events = self._reply.close()
        cut = self._cut or cut_off(blocks) or any(isinstance(e, CallAborted) for e in events)
        return self._chunks(
            events,
            finish_reason_of(finish_after_cut(finish_reason) if cut else finish_reason),
            counts,
        )


def render_response(
    result: ParseResult,
    *,
    model: str = "callsieve",
    response_id_factory: Callable[[], str] = new_response_id,
    call_id_factory: Callable[[], str] | None = new_function_call_id,
    usage: Usage | None = None,
    finish_reason: str | None = None,
    include_reasoning: bool = True,
) -> dict[str, Any]:
    """The whole ``GenerateContentResponse`` for ``result``: its thought, text and
    ``functionCall`` parts in reply order (each call's ``args`` is the call's own dict, not a
    copy); one cut off inside a call (``_aborts.cut_off``) ends ``MAX_TOKENS`` for a natural
    reason."""
    reason = finish_reason_of(finish_reason)
    b = _Builder(model, response_id_factory, call_id_factory, usage)
    parts: list[dict[str, Any]] = []
    b.parts(
        reply_events(result, trim_around_calls=True, include_reasoning=include_reasoning), parts
    )
    if cut_off(result.blocks):
        reason = finish_reason_of(finish_after_cut(finish_reason))
    return b.response(parts or [{"text": ""}], reason, b.usage)

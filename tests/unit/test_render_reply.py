"""``callsieve.render._reply``: the reply view every renderer draws from. However the text
arrives (any split, white space anywhere), ``Reply`` gives the reply events
``reply_events`` gives for the whole result, and they follow the documented white-space rule:
with ``trim_around_calls`` each text part trimmed (a part of only white space dropped),
without it the reply's text trimmed at its two ends only. With reasoning (SPEC §15) in the
reply, each run of it is trimmed, the text meets it as a call where content is a list of
parts, and ``include_reasoning=False`` gives the reply without it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from render_cases import reasoning_of, reply_runs

from callsieve import (
    ArgumentsDelta,
    Block,
    CallFinished,
    CallStarted,
    ParseResult,
    Reasoning,
    Text,
    ToolCall,
    ToolCalls,
)
from callsieve.render import Reply, reply_events

PIECES = st.text(st.sampled_from(["a", "b", " ", "\n", "\t", "\u3000", "é"]), max_size=6)
CALLS = st.builds(
    lambda n, v: ToolCall(n, {"v": v}, id=f"call_{n}"),
    st.sampled_from(["f", "g"]),
    st.integers(0, 9),
)
# A reply: text parts (each a list of pieces, the way a stream splits it) and calls, in order.
REPLIES = st.lists(st.one_of(st.lists(PIECES, min_size=1, max_size=4), CALLS), max_size=6)
BLOCK = Block((0, 0), "xml", "complete")


def coalesce(events: list[Any]) -> list[Any]:
    out: list[Any] = []
    for e in events:
        if isinstance(e, Text | Reasoning) and out and type(out[-1]) is type(e):
            out[-1] = type(e)(out[-1].text + e.text)
        else:
            out.append(e)
    return out


def result_of(reply: list[Any]) -> ParseResult:
    parts: list[str | ToolCall] = []
    for part in reply:
        if isinstance(part, ToolCall):
            parts.append(part)
        elif parts and isinstance(parts[-1], str):
            parts[-1] += "".join(part)
        elif "".join(part):
            parts.append("".join(part))
    calls = tuple(p for p in parts if isinstance(p, ToolCall))
    text = "".join(p for p in parts if isinstance(p, str))
    return ParseResult(text, calls, (), False, parts=tuple(parts))


@settings(max_examples=300, deadline=None)
@given(reply=REPLIES, trim=st.booleans())
def test_any_split_gives_the_whole_results_reply(reply: list[Any], trim: bool) -> None:
    r = Reply(trim_around_calls=trim)
    streamed: list[Any] = []
    for part in reply:
        if isinstance(part, ToolCall):
            streamed += r.feed([ToolCalls((part,), BLOCK)])
        else:
            for piece in part:  # one feed per piece, as a sieve releases them
                streamed += r.feed([Text(piece)])
    streamed += r.close()
    result = result_of(reply)
    whole = reply_events(result, trim_around_calls=trim)
    assert coalesce(streamed) == coalesce(whole)
    texts = [e.text for e in coalesce(whole) if isinstance(e, Text)]
    if trim:
        assert texts == [p.strip() for p in result.parts if isinstance(p, str) and p.strip()]
    else:
        assert "".join(texts) == result.text.strip()
    assert all(t for t in texts)
    calls = [e for e in whole if not isinstance(e, Text)]
    assert calls == [
        ev
        for k, c in enumerate(result.calls)
        for ev in (CallStarted(k, c.id, c.name), ArgumentsDelta(k, c.arguments), CallFinished(k, c))
    ]


# A reply with reasoning: ("text" | "reasoning", pieces) and calls, in order.
KINDS = st.sampled_from(["text", "reasoning"])
REASONED = st.lists(
    st.one_of(st.tuples(KINDS, st.lists(PIECES, min_size=1, max_size=4)), CALLS), max_size=7
)


def reasoned_result(reply: list[Any], include: bool = True) -> ParseResult:
    """The ``ParseResult`` of ``reply`` (adjacent parts of one kind joined, as ``parse()``
    joins them); ``include=False``: as if the reasoning had not been there."""
    parts: list[str | Reasoning | ToolCall] = []
    for part in reply:
        if isinstance(part, ToolCall):
            parts.append(part)
            continue
        kind, text = part[0], "".join(part[1])
        if not text or (kind == "reasoning" and not include):
            continue
        last = parts[-1] if parts else None
        if kind == "text" and isinstance(last, str):
            parts[-1] = last + text
        elif kind == "reasoning" and isinstance(last, Reasoning):
            parts[-1] = Reasoning(last.text + text)
        else:
            parts.append(text if kind == "text" else Reasoning(text))
    calls = tuple(p for p in parts if isinstance(p, ToolCall))
    text = "".join(p for p in parts if isinstance(p, str))
    return ParseResult(text, calls, (), False, parts=tuple(parts))


@settings(max_examples=300, deadline=None)
@given(reply=REASONED, trim=st.booleans(), include=st.booleans())
def test_reasoning_any_split_gives_the_whole_results_reply(
    reply: list[Any], trim: bool, include: bool
) -> None:
    r = Reply(trim_around_calls=trim, include_reasoning=include)
    streamed: list[Any] = []
    for part in reply:
        if isinstance(part, ToolCall):
            streamed += r.feed([ToolCalls((part,), BLOCK)])
            continue
        kind, pieces = part
        if kind == "reasoning":  # (a tag's own event: nothing to show)
            streamed += r.feed([Reasoning("", "<think>")])
        for piece in pieces:
            streamed += r.feed([Text(piece) if kind == "text" else Reasoning(piece)])
    streamed += r.close()
    result = reasoned_result(reply)
    whole = coalesce(reply_events(result, trim_around_calls=trim, include_reasoning=include))
    assert coalesce(streamed) == whole
    if not include:
        assert whole == coalesce(
            reply_events(reasoned_result(reply, include=False), trim_around_calls=trim)
        )
    elif trim:
        runs = [
            ("text", e.text)
            if isinstance(e, Text)
            else ("reasoning", e.text)
            if isinstance(e, Reasoning)
            else e.call
            for e in whole
            if isinstance(e, Text | Reasoning | CallFinished)
        ]
        assert runs == reply_runs(result)
    else:
        assert "".join(e.text for e in whole if isinstance(e, Text)) == result.text.strip()
        assert ("".join(e.text for e in whole if isinstance(e, Reasoning)) or None) == reasoning_of(
            result
        )
    assert all(e.text for e in whole if isinstance(e, Text | Reasoning))

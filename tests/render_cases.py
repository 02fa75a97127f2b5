"""What the four renderers' tests share (``spec/test_s10_render_<api>.py``): the example
replies, the chunkings a reply is streamed at, and whether a stream aborts a call (a wire
cannot take one back, so the stream-versus-whole checks leave those out: ``without_aborted``
in ``helpers``). For reasoning (SPEC §15; ``spec/test_s15_render_reasoning.py``):
``REASONING`` (replies with the sieve options they are read under), ``every_size`` (a reply
cut in pieces of each size) and ``reply_runs`` (what ``Reply`` says the parts of a
``ParseResult`` are, by the documented white-space rule)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from helpers import random_chunkings

from callsieve import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    ParseResult,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
)


def call_block(*names: str) -> str:
    return "<tool_calls>" + "".join(
        f'<invoke name="{n}"><parameter name="q">{n} {i}</parameter></invoke>'
        for i, n in enumerate(names)) + "</tool_calls>"


EXAMPLES = [
    ("text and a call", "Let me look.\n" + call_block("read")),
    ("call then text", call_block("read") + "\n\nIt says hi."),
    ("text call text", "First:\n" + call_block("a", "b") + "\nthen:\n" + call_block("c") + " ok"),
    ("only a call", "  \n" + call_block("read") + "\n  "),
    ("only text", "Just words, <b>bold</b> and 1 < 2."),
    ("empty", ""),
    ("white space", " \n\t "),
    ("no arguments", '<tool_calls><invoke name="now"></invoke></tool_calls>'),
    ("unicode", "你好 💥\n" + '<tool_calls><invoke name="say"><parameter name="t">é"\\\n'
                "</parameter></invoke></tool_calls>"),
    ("failed block is text", "see <tool_calls><invoke name=\"f\">broken"),
    ("native", ("x <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"n\": [1, 2.5]}"
                "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
]


def chunkings(text: str) -> list[list[str]]:
    """Whole, per character, a few random cuts and two 1-8-character splits."""
    return [[text], list(text), *random_chunkings(text, seeds=(0, 2, 5))]


def stream_aborts(chunks: Iterable[str], **opts: Any) -> bool:
    """Whether a ``Sieve`` over ``chunks`` aborts a call."""
    sieve = Sieve(**opts)
    events: Sequence[Any] = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    return any(isinstance(e, CallAborted) for e in events)


#: (id, reply, sieve options): every way reasoning meets text and calls.
REASONING: list[tuple[str, str, dict[str, Any]]] = [
    ("reasoning then text", "<think>\nThe user greets me.\n</think>\n\nHello!", {}),
    ("reasoning then calls", "<think>I need the file.</think>\n" + call_block("read", "ls"), {}),
    ("reasoning text and a call", "<think>Plan: read.</think>\n\nLet me look.\n"
     + call_block("read"), {}),
    ("reasoning only (cut off)", "<think>Let me think about this step", {}),
    ("open reasoning", "The template opened it.</think>\nAnswer.", {"reasoning": "open"}),
    ("two reasoning runs", "<think>one</think>\n<think>two</think>\nAnswer", {}),
    ("reasoning after a call", call_block("read") + "<think>It says hi.</think>Done.", {}),
    ("white-space reasoning", "<think>\n \n</think>\nJust this.", {}),
    ("a call in reasoning is reasoning", "<think>maybe " + call_block("f") + " no</think>ok",
     {}),
    ("a call in reasoning is a call", "<think>try " + call_block("f") + " then</think>ok",
     {"calls_in_reasoning": "call"}),
    ("unicode reasoning", "<think>你好 💥 é</think> 答", {}),
]


def every_size(text: str) -> list[list[str]]:
    """``text`` cut in pieces of 1, 2, 3, … characters, up to the whole of it."""
    return [[text[i:i + n] for i in range(0, len(text), n)] for n in range(1, len(text) + 1)]


Run = tuple[str, str] | ToolCall


def reply_runs(result: ParseResult) -> list[Run]:
    """``result.parts`` as ``Reply`` shows them where content is a list of parts: a text or
    reasoning part of only white space is not there, so the parts on either side of it that
    are of one kind join; each run is then trimmed, and one left empty is gone. Runs are
    ``("text", t)``, ``("reasoning", t)`` or the ``ToolCall``."""
    runs: list[Run] = []
    for part in result.parts:
        if isinstance(part, ToolCall):
            runs.append(part)
            continue
        kind, text = ("text", part) if isinstance(part, str) else ("reasoning", part.text)
        if not text.strip():
            continue
        last = runs[-1] if runs else None
        if isinstance(last, tuple) and last[0] == kind:
            runs[-1] = (kind, last[1] + text)
        else:
            runs.append((kind, text))
    return [r if isinstance(r, ToolCall) else (r[0], r[1].strip()) for r in runs]


def reasoning_of(result: ParseResult) -> str | None:
    """What one-string APIs (OpenAI Chat) carry as the reasoning: the runs joined."""
    return "".join(r[1] for r in reply_runs(result)
                   if isinstance(r, tuple) and r[0] == "reasoning") or None


__all__ = ["EXAMPLES", "READ", "READ_BATCHES", "READ_BLOCK", "READ_DELTAS", "READ_RESULT",
           "REASONING", "Reasoning", "call_block", "chunkings", "every_size", "reasoning_of",
           "reply_runs", "stream_aborts"]

#: A hand-built argument stream, as the sieve's batches would carry it: text, one call whose
#: arguments come in four fragments, the block that settles it, text again; and the whole
#: result it stands for.
READ = ToolCall("read", {"path": "a.txt", "n": 2}, id="call_1")
READ_BLOCK = Block((8, 60), "xml", "complete")
READ_DELTAS = ['{"pa', 'th":"a', '.txt","n"', ":2}"]
READ_BATCHES: list[list[Event]] = [
    [Text("Reading ")], [CallStarted(0, READ.id, READ.name)],
    *[[ArgumentsDelta(0, d)] for d in READ_DELTAS],
    [CallFinished(0, READ)], [ToolCalls((READ,), READ_BLOCK)], [Text("\n")]]
READ_RESULT = ParseResult("Reading \n", (READ,), (READ_BLOCK,), True,
                          parts=("Reading ", READ, "\n"))

"""The renderers' test harness, once for the four APIs (``spec/test_s10_render_<api>.py``,
``spec/test_s15_render_reasoning.py``), and the cases they share.

The harness: ``counter`` (deterministic ids), ``sieve_run`` (a ``Sieve`` over chunks: the
events of each feed, then ``close()``'s, and the sieve's ``blocks``), ``render_batches``
(events through a ``StreamRenderer``), and, given an ``Api`` — one per API, defined in its
test module with its SDK: how the SDK reads a stream and a whole response — ``render_stream``
/ ``render_events`` (a reply's chunks, or hand-built events, rendered with the API's
deterministic options), ``check_stream`` and ``check_doc``. Those check what SPEC §10 and
§17 promise: a stream in which no call aborted, read by the SDK's own accumulator, is the
message ``render_response`` gives, which holds what ``parse()`` found; a stream in which one
did (``on_abort="error"``) ends with the API's error signal, and the SDK's own client
(``Api.client_raises``: the real client over an in-process HTTP transport) raises on it.
Under ``on_abort="continue"`` the wire keeps what it sent of an aborted call, so the check
compares the rest (``helpers.without_aborted``).

The cases: the example replies, the chunkings a reply is streamed at, replies with reasoning
(``REASONING``, ``every_size``, ``reply_runs``: what ``Reply`` says the parts of a
``ParseResult`` are, by the documented white-space rule), and a hand-built argument stream
(``READ_…``).
"""

from __future__ import annotations

import atexit
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from helpers import random_chunkings, without_aborted

import callsieve
from callsieve import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    ParseResult,
    Text,
    ToolCall,
    ToolCalls,
)
from callsieve.render import Reply

#: The options of ``check_doc`` and ``render_stream`` that are the sieve's (and ``parse()``'s);
#: the rest are the renderer's.
SIEVE_OPTIONS = frozenset(
    {"early_emit", "tools", "policy", "on_reject", "reasoning", "calls_in_reasoning", "dialects"}
)


# ---------------------------------------------------------------------------- the harness
def counter(prefix: str, width: int = 0) -> Callable[[], str]:
    """Ids ``prefix0``, ``prefix1``, … (``width`` digits, zero-padded)."""
    numbers = itertools.count()
    return lambda: f"{prefix}{next(numbers):0{width}d}"


def wire(obj: Any) -> Any:
    """What a client reads: the object through strict JSON (fails on anything not JSON)."""
    return json.loads(json.dumps(obj, ensure_ascii=False, allow_nan=False))


@dataclass
class SieveRun:
    """A sieve's run over a reply: each feed's events (``close()``'s last) and its blocks."""

    batches: list[list[Event]]
    blocks: tuple[Block, ...]


def sieve_run(chunks: Iterable[str], **sieve_opts: Any) -> SieveRun:
    """A ``Sieve`` over ``chunks`` (call ids ``call_0``, ``call_1``, …, as ``parsed`` gives)."""
    sieve = callsieve.Sieve(id_factory=counter("call_"), **sieve_opts)
    batches = [sieve.feed(c) for c in chunks]
    batches.append(sieve.close())
    return SieveRun(batches, sieve.blocks)


def parsed(doc: str, **sieve_opts: Any) -> ParseResult:
    """``parse(doc)`` with the call ids ``sieve_run`` gives."""
    return callsieve.parse(doc, id_factory=counter("call_"), **sieve_opts)


def split_options(opts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(sieve options, renderer options)``."""
    return (
        {k: v for k, v in opts.items() if k in SIEVE_OPTIONS},
        {k: v for k, v in opts.items() if k not in SIEVE_OPTIONS},
    )


def render_batches(
    renderer: Any,
    batches: Iterable[Sequence[Event]],
    finish_reason: str | None = None,
    *,
    usage: Any = None,
    blocks: Iterable[Block] = (),
) -> list[dict[str, Any]]:
    """Each batch through ``renderer.feed``, then ``renderer.close``."""
    out = [obj for batch in batches for obj in renderer.feed(batch)]
    return out + renderer.close(finish_reason, usage=usage, blocks=blocks)


class Api:
    """One API's side of the checks; each ``test_s10_render_<api>`` module defines its own,
    with its SDK. ``module`` is the ``callsieve.render`` module; the methods say how the SDK
    reads what it renders."""

    module: ModuleType

    def options(self, **extra: Any) -> dict[str, Any]:
        """The renderer's options with deterministic ids (fresh counters each call: a stream
        and a whole response built with them get the same ids)."""
        return extra

    def signals(self, abort: CallAborted) -> bool:
        """Whether the API's renderer ends the reply at ``abort`` (``on_abort="error"``)."""
        return True

    def check_wire(self, objs: list[dict[str, Any]], aborted: bool) -> None:
        """Every object valid by the SDK's types, and the stream's grammar (``aborted``: it
        ends with the error signal instead of the API's usual end)."""
        raise NotImplementedError

    def agrees(
        self,
        objs: list[dict[str, Any]],
        whole: dict[str, Any],
        result: ParseResult,
        **render_opts: Any,
    ) -> Any:
        """The SDK's accumulator over ``objs`` gives ``whole``, which holds ``result``'s text
        and calls; returns what the accumulator gave."""
        raise NotImplementedError

    def client_raises(self, objs: list[dict[str, Any]]) -> BaseException:
        """The stream, framed as the API sends it, read by the SDK's own client: what it
        raises (the test fails if it raises nothing)."""
        raise NotImplementedError


def render_events(
    api: Api,
    batches: Iterable[Sequence[Event]],
    finish_reason: str | None = None,
    **render_opts: Any,
) -> list[dict[str, Any]]:
    """Hand-built sieve events, one ``feed()`` per batch, through the API's renderer."""
    renderer = api.module.StreamRenderer(**api.options(**render_opts))
    return render_batches(renderer, batches, finish_reason)


def render_stream(
    api: Api, chunks: Iterable[str], finish_reason: str | None = None, **opts: Any
) -> list[dict[str, Any]]:
    """A reply's ``chunks`` through a ``Sieve`` (``opts``' sieve options) and the API's
    renderer (the rest); the sieve's blocks go to ``close``."""
    sieve_opts, render_opts = split_options(opts)
    run = sieve_run(chunks, **sieve_opts)
    renderer = api.module.StreamRenderer(**api.options(**render_opts))
    return render_batches(renderer, run.batches, finish_reason, blocks=run.blocks)


def render_whole(
    api: Api, doc: str, finish_reason: str | None = None, **opts: Any
) -> dict[str, Any]:
    """``render_response(parse(doc))`` with the API's deterministic options (``opts``: the
    sieve's and the renderer's)."""
    sieve_opts, render_opts = split_options(opts)
    return api.module.render_response(
        parsed(doc, **sieve_opts), finish_reason=finish_reason, **api.options(**render_opts)
    )


def signalled(api: Api, batches: Iterable[Sequence[Event]]) -> CallAborted | None:
    """The first abort of a started call that ``api``'s renderer ends the reply at, as a
    reply event (its ``index`` the call's number in the reply), or None."""
    reply = Reply()
    events = [e for batch in batches for e in reply.feed(batch)] + reply.close()
    return next((e for e in events if isinstance(e, CallAborted) and api.signals(e)), None)


def check_stream(
    api: Api,
    result: ParseResult,
    run: SieveRun,
    *,
    finish_reason: str | None = None,
    on_abort: str = "error",
    **render_opts: Any,
) -> Any:
    """The stream of ``run`` against ``render_response(result)`` (see the module's docstring):
    what the SDK accumulated (None when the reply ended in an error, which the SDK's client
    raised on)."""
    whole = api.module.render_response(
        result, finish_reason=finish_reason, **api.options(**render_opts)
    )
    batches = run.batches if on_abort == "error" else without_aborted(run.batches)
    renderer = api.module.StreamRenderer(on_abort=on_abort, **api.options(**render_opts))
    objs = render_batches(renderer, batches, finish_reason, blocks=run.blocks)
    abort = signalled(api, batches)
    assert renderer.aborted == abort
    api.check_wire(objs, abort is not None)
    if abort is not None:
        api.client_raises(objs)
        return None
    return api.agrees(objs, whole, result, **render_opts)


def check_doc(api: Api, doc: str, chunkings: Iterable[Sequence[str]], **opts: Any) -> None:
    """``check_stream`` for ``doc`` at each chunking (``opts``: the sieve's and the
    renderer's options, ``finish_reason`` and ``on_abort``)."""
    sieve_opts, render_opts = split_options(opts)
    result = parsed(doc, **sieve_opts)
    for chunks in chunkings:
        check_stream(api, result, sieve_run(chunks, **sieve_opts), **render_opts)


class Replay:
    """An HTTP transport (``httpx2``'s, which the SDKs are built on) that answers every
    request with the event stream last given to ``answer``: an SDK's own client built on
    ``client`` then reads it as it reads a server's. One per API, its client built once
    (google-genai's takes a tenth of a second to build); closed when the tests end."""

    def __init__(self) -> None:
        import httpx2

        self._httpx2 = httpx2
        self.body = b""
        self.client = httpx2.Client(transport=httpx2.MockTransport(self._answer))
        atexit.register(self.client.close)

    def _answer(self, request: Any) -> Any:
        return self._httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=self.body
        )

    def answer(self, body: bytes) -> None:
        self.body = body


def sse(objs: Iterable[dict[str, Any]], *, named: bool, done: bool = False) -> bytes:
    """Objects as server-sent events: ``event: <type>`` lines too when ``named`` (Responses,
    Anthropic), ``data: [DONE]`` last when ``done`` (OpenAI Chat)."""
    frames = [
        (f"event: {o['type']}\n" if named else "") + f"data: {json.dumps(o)}\n\n" for o in objs
    ]
    return "".join(frames + (["data: [DONE]\n\n"] if done else [])).encode()


def call_block(*names: str) -> str:
    return (
        "<tool_calls>"
        + "".join(
            f'<invoke name="{n}"><parameter name="q">{n} {i}</parameter></invoke>'
            for i, n in enumerate(names)
        )
        + "</tool_calls>"
    )


EXAMPLES = [
    ("text and a call", "Let me look.\n" + call_block("read")),
    ("call then text", call_block("read") + "\n\nIt says hi."),
    ("text call text", "First:\n" + call_block("a", "b") + "\nthen:\n" + call_block("c") + " ok"),
    ("only a call", "  \n" + call_block("read") + "\n  "),
    ("only text", "Just words, <b>bold</b> and 1 < 2."),
    ("empty", ""),
    ("white space", " \n\t "),
    ("no arguments", '<tool_calls><invoke name="now"></invoke></tool_calls>'),
    (
        "unicode",
        "你好 💥\n" + '<tool_calls><invoke name="say"><parameter name="t">é"\\\n'
        "</parameter></invoke></tool_calls>",
    ),
    ("failed block is text", 'see <tool_calls><invoke name="f">broken'),
    (
        "native",
        (
            'x <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"n": [1, 2.5]}'
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
    ),
]


def chunkings(text: str) -> list[list[str]]:
    """Whole, per character, a few random cuts and two 1-8-character splits."""
    return [[text], list(text), *random_chunkings(text, seeds=(0, 2, 5))]


#: (id, reply, sieve options): every way reasoning meets text and calls.
REASONING: list[tuple[str, str, dict[str, Any]]] = [
    ("reasoning then text", "<think>\nThe user greets me.\n</think>\n\nHello!", {}),
    ("reasoning then calls", "<think>I need the file.</think>\n" + call_block("read", "ls"), {}),
    (
        "reasoning text and a call",
        "<think>Plan: read.</think>\n\nLet me look.\n" + call_block("read"),
        {},
    ),
    ("reasoning only (cut off)", "<think>Let me think about this step", {}),
    ("open reasoning", "The template opened it.</think>\nAnswer.", {"reasoning": "open"}),
    ("two reasoning runs", "<think>one</think>\n<think>two</think>\nAnswer", {}),
    ("reasoning after a call", call_block("read") + "<think>It says hi.</think>Done.", {}),
    ("white-space reasoning", "<think>\n \n</think>\nJust this.", {}),
    ("a call in reasoning is reasoning", "<think>maybe " + call_block("f") + " no</think>ok", {}),
    (
        "a call in reasoning is a call",
        "<think>try " + call_block("f") + " then</think>ok",
        {"calls_in_reasoning": "call"},
    ),
    ("unicode reasoning", "<think>你好 💥 é</think> 答", {}),
]


def every_size(text: str) -> list[list[str]]:
    """``text`` cut in pieces of 1, 2, 3, … characters, up to the whole of it."""
    return [[text[i : i + n] for i in range(0, len(text), n)] for n in range(1, len(text) + 1)]


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
    return (
        "".join(r[1] for r in reply_runs(result) if isinstance(r, tuple) and r[0] == "reasoning")
        or None
    )


__all__ = [
    "EXAMPLES",
    "READ",
    "READ_BATCHES",
    "READ_BLOCK",
    "READ_DELTAS",
    "READ_RESULT",
    "REASONING",
    "SIEVE_OPTIONS",
    "Api",
    "Replay",
    "SieveRun",
    "call_block",
    "check_doc",
    "check_stream",
    "chunkings",
    "counter",
    "every_size",
    "parsed",
    "reasoning_of",
    "render_batches",
    "render_events",
    "render_stream",
    "render_whole",
    "reply_runs",
    "sieve_run",
    "signalled",
    "split_options",
    "sse",
    "wire",
]

#: A hand-built argument stream, as the sieve's batches would carry it: text, one call whose
#: arguments come in four fragments, the block that settles it, text again; and the whole
#: result it stands for.
READ = ToolCall("read", {"path": "a.txt", "n": 2}, id="call_1")
READ_BLOCK = Block((8, 60), "xml", "complete")
READ_DELTAS = ['{"pa', 'th":"a', '.txt","n"', ":2}"]
READ_BATCHES: list[list[Event]] = [
    [Text("Reading ")],
    [CallStarted(0, READ.id, READ.name)],
    *[[ArgumentsDelta(0, d)] for d in READ_DELTAS],
    [CallFinished(0, READ)],
    [ToolCalls((READ,), READ_BLOCK)],
    [Text("\n")],
]
READ_RESULT = ParseResult(
    "Reading \n", (READ,), (READ_BLOCK,), True, parts=("Reading ", READ, "\n")
)

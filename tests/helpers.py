"""Shared test helper: run one input every way the library can be driven, and demand that all
ways agree (SPEC §8: "``parse(text)`` and any chunking through ``Sieve`` give the same calls
and text"; §Invariants 1).

``run_all_ways(text, **opts)`` runs ``text``
  - whole, through ``parse()``;
  - through ``Sieve`` as one chunk, one character at a time, at several seeded random
    splits, one of them with empty chunks between the pieces (plus any ``extra_chunkings``);
asserts that every run yields the same ``(text, [(name, input)])`` and, for the default
``early_emit="block"``, that the events conserve the input (released text and the ``raw`` of
emitted blocks, in event order, rebuild it exactly, §Invariants 2 and 3); then returns the
``ParseResult`` of the whole run. Every run must also agree on the policy's rejections (SPEC
§9: name, reason, span, action) and ``rejected_tool_names``.

Calls are compared by ``(name, input)`` only (ids are random); inputs are compared through
``json.dumps`` so that ``1``, ``1.0`` and ``True`` do not pass for each other.

The SPEC tables (``tests/spec/``) share the rest: ``check`` (``run_all_ways`` against an
expected text and calls), ``table`` (parametrize over rows whose first element is the id),
block builders (``X``, ``INV``, ``P``, ``xml_call``), one sample block per default dialect
(``DSML``, ``DSML_V4``, ``DSML_V32``, ``DSML_V41``, ``XML``, ``NATIVE_V3``, ``NATIVE_V31``)
and, for streaming, ``fed``, ``text_of`` and ``calls_of``; for the renderers, ``as_argument_stream``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

import callsieve
from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Reasoning,
    Text,
    ToolCalls,
)

__all__ = [
    "CASES_PATH",
    "CONFORMANCE_REQUIRED",
    "DSML",
    "DSML_V4",
    "DSML_V32",
    "DSML_V41",
    "GRAMMARS",
    "INV",
    "NATIVE_V3",
    "NATIVE_V31",
    "READ",
    "ROOT",
    "XML",
    "Calls",
    "P",
    "X",
    "as_argument_stream",
    "assert_conserves",
    "calls_of",
    "canon_calls",
    "canon_value",
    "check",
    "check_argument_stream",
    "chunk_at",
    "conformance_cases",
    "conformance_collected",
    "drive",
    "expected_calls",
    "fed",
    "random_chunkings",
    "reasoning_of",
    "rejections_of",
    "run_all_ways",
    "stream",
    "stream_arguments",
    "stream_sieve",
    "table",
    "text_of",
    "xml_call",
]

#: The repository (or unpacked sdist) root, and the scratch grammar files of the tests.
ROOT = Path(__file__).resolve().parents[1]
GRAMMARS = ROOT / "tests" / "grammars"

RANDOM_SEEDS = (0, 1, 2, 3, 4, 5)
#: Above this many characters the per-character run is replaced by 2-character chunks.
PER_CHAR_LIMIT = 20_000


#: Expected calls: ``[(name, input)]``.
Calls = list[tuple[str, dict[str, Any]]]


def canon_value(value: Any) -> str:
    """A type-exact, order-independent spelling of a JSON value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def canon_calls(calls: Iterable[Any]) -> list[tuple[str, str]]:
    """``[(name, canonical input)]`` for ToolCall objects."""
    return [(c.name, canon_value(c.input)) for c in calls]


def expected_calls(calls: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The same spelling for ``[{"name", "input"}]`` expectations."""
    return [(c["name"], canon_value(c["input"])) for c in calls]


def char_chunks(text: str, k: int | None, seed: int = 7) -> list[str]:
    """``text`` in chunks of ``k`` characters, or of 1-8 at random (seeded) where ``k`` is
    None: what an engine's integration hands its parser."""
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        n = k if k is not None else rng.randint(1, 8)
        out.append(text[at : at + n])
        at += n
    return out


def chunk_at(text: str, cuts: Iterable[int]) -> list[str]:
    """Split ``text`` at the given offsets (out of range and repeated offsets are ignored)."""
    points = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def random_chunkings(text: str, seeds: Sequence[int] = RANDOM_SEEDS) -> list[list[str]]:
    """Seeded random splits: few cuts, many cuts, and LLM-token-sized chunks (1-8 chars)."""
    out: list[list[str]] = []
    n = len(text)
    for seed in seeds:
        rng = random.Random(seed * 7919 + n)
        if n < 2:
            out.append([text])
            continue
        if seed % 3 == 2:
            cuts, pos = [], 0
            while pos < n:
                pos += rng.randint(1, 8)
                cuts.append(pos)
        else:
            k = rng.randint(1, min(n - 1, 3 if seed % 3 == 0 else max(1, n // 2)))
            cuts = rng.sample(range(1, n), k)
        out.append(chunk_at(text, cuts))
    return out


def stream(chunks: Iterable[str], **opts: Any) -> list[Any]:
    """All events of one ``Sieve`` run over ``chunks``, then ``close()``."""
    return stream_sieve(chunks, **opts)[0]


def stream_sieve(chunks: Iterable[str], **opts: Any) -> tuple[list[Any], Any]:
    """``stream``'s events, and the closed ``Sieve`` (its blocks, rejections, metrics)."""
    sieve = callsieve.Sieve(**opts)
    events: list[Any] = []
    for chunk in chunks:
        events.extend(sieve.feed(chunk))
    events.extend(sieve.close())
    return events, sieve


def rejections_of(source: Any) -> list[tuple[str, str, tuple[int, int], str]]:
    """A result's or a sieve's policy rejections as comparable tuples."""
    return [(r.name, r.reason, r.span, r.action) for r in source.rejections]


def drive(events: Iterable[Any]) -> tuple[str, list[tuple[str, str]]]:
    """Coalesce events into ``(text, canonical calls)``."""
    text: list[str] = []
    calls: list[Any] = []
    for e in events:
        if isinstance(e, Text):
            text.append(e.text)
        elif isinstance(e, ToolCalls):
            calls.extend(e.calls)
    return "".join(text), canon_calls(calls)


def reasoning_of(events: Iterable[Any]) -> str:
    """The reasoning the events carry, joined (SPEC §15; the tags are not reasoning)."""
    return "".join(e.text for e in events if isinstance(e, Reasoning))


def assert_conserves(text: str, events: Sequence[Any], label: str = "") -> None:
    """§Invariants 2/3 for ``early_emit="block"``: text pieces, reasoning with its tags
    (``Reasoning.source``) and emitted blocks' raw, in event order, rebuild the input, and
    no Text or Reasoning event overlaps an emitted block's span."""
    pos = 0
    for e in events:
        if isinstance(e, Text | Reasoning):
            piece = e.text if isinstance(e, Text) else e.source
            assert text.startswith(piece, pos), (
                f"{label}: {type(e).__name__} {piece!r} is not the input at offset {pos}: "
                f"{text[pos : pos + len(piece) + 20]!r}"
            )
            pos += len(piece)
        elif isinstance(e, ToolCalls):
            start, end = e.block.span
            assert start == pos, (
                f"{label}: block span {e.block.span} does not start where released text "
                f"ends ({pos}); input={text!r}"
            )
            assert e.block.raw == text[start:end], (
                f"{label}: block.raw {e.block.raw!r} != input[{start}:{end}] {text[start:end]!r}"
            )
            pos = end
    assert pos == len(text), (
        f"{label}: events account for {pos} of {len(text)} characters; missing {text[pos:]!r}"
    )


def run_all_ways(
    text: str, *, extra_chunkings: Iterable[Sequence[str]] = (), conserve: bool = True, **opts: Any
) -> Any:
    """Run ``text`` through ``parse()`` and ``Sieve`` under many chunkings; assert they all
    agree on ``(text, [(name, input)])``; return the ``parse()`` result."""
    parse_opts = dict(opts)
    tools = parse_opts.pop("tools", None)
    result = callsieve.parse(text, tools=tools, **parse_opts)
    want = (result.text, canon_calls(result.calls))
    check_conservation = conserve and opts.get("early_emit", "block") == "block"
    # (A call the policy released as text, ``on_reject="text"``, is text inside a complete
    # block: the events' conservation below checks that case.)
    if (
        check_conservation
        and not any(r.action == "text" for r in result.rejections)
        and (
            not result.reasoning
            and all(b.reasoning is None for b in result.blocks)
            and not any(isinstance(e, Reasoning) for e in stream([text], **opts))
        )
    ):
        rebuilt = []
        pos = 0
        for b in result.blocks:
            if b.status in ("complete", "frame"):  # (a frame: framing dropped, SPEC §12)
                rebuilt.append(text[pos : b.span[0]])
                pos = b.span[1]
        rebuilt.append(text[pos:])
        assert "".join(rebuilt) == result.text, (
            f"parse().text is not the input minus its complete blocks and frames: {text!r}"
        )
    per_char = list(text) if len(text) <= PER_CHAR_LIMIT else chunk_at(text, range(2, len(text), 2))
    ways: list[tuple[str, Sequence[str]]] = [("one chunk", [text]), ("per char", per_char)]
    randoms = random_chunkings(text)
    ways += [(f"random split #{i}", c) for i, c in enumerate(randoms)]
    # empty chunks between the pieces change nothing
    ways.append(("random split with empty chunks", [p for c in randoms[-1] for p in ("", c, "")]))
    ways += [(f"extra chunking #{i}", list(c)) for i, c in enumerate(extra_chunkings)]
    for label, chunks in ways:
        assert "".join(chunks) == text, f"bad chunking {label}"
        events, sieve = stream_sieve(chunks, **opts)
        got = drive(events)
        assert got == want, (
            f"{label} disagrees with parse() on {text!r}\n"
            f"chunks={list(chunks)!r}\nparse: {want!r}\nsieve: {got!r}"
        )
        assert rejections_of(sieve) == rejections_of(result), (
            f"{label}: the policy's rejections differ from parse()'s on {text!r}"
        )
        assert sieve.rejected_tool_names == result.rejected_tool_names
        assert reasoning_of(events) == result.reasoning, (
            f"{label}: the reasoning disagrees with parse() on {text!r}\n"
            f"chunks={list(chunks)!r}\nparse: {result.reasoning!r}\n"
            f"sieve: {reasoning_of(events)!r}"
        )
        if check_conservation:
            assert_conserves(text, events, label)
    return result


def stream_arguments(chunks: Iterable[str], **opts: Any) -> list[Any]:
    """All events of one ``Sieve(early_emit="arguments")`` run over ``chunks``."""
    return stream(chunks, early_emit="arguments", **opts)


def check_argument_stream(doc: str, events: list[Any], **opts: Any) -> dict[str, Any]:
    """Every rule of argument streaming (SPEC §7) on one event list of ``doc``: indexes count
    the calls, a delta belongs to a started open call, each finished call's deltas spell its
    ``arguments``, every started call ends, ``CallFinished`` gives the very calls the
    ``ToolCalls`` events settle, and the calls and text are those of ``parse(doc)`` under
    ``early_emit="arguments"`` and ``"invoke"``. Returns what it found."""
    state: dict[int, str] = {}  # index -> "open" | "finished" | "aborted"
    deltas: dict[int, str] = {}
    finished: list[Any] = []
    aborted: list[int] = []
    for e in events:
        if isinstance(e, CallStarted):
            assert e.index == len(state), "indexes count the calls: 0, 1, 2, ..."
            assert e.name and e.id
            state[e.index] = "open"
        elif isinstance(e, ArgumentsDelta):
            assert state.get(e.index) == "open", "a delta belongs to a started, open call"
            assert e.delta
            deltas[e.index] = deltas.get(e.index, "") + e.delta
        elif isinstance(e, CallFinished):
            assert state.get(e.index) == "open"
            state[e.index] = "finished"
            assert deltas.get(e.index, "") == e.call.arguments
            finished.append(e.call)
        elif isinstance(e, CallAborted):
            assert state.get(e.index) == "open"
            state[e.index] = "aborted"
            aborted.append(e.index)
    assert "open" not in state.values(), "every started call ends"
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    assert len(finished) == len(calls) and all(a is b for a, b in zip(finished, calls)), (
        "CallFinished gives the very calls the ToolCalls events settle, in order"
    )
    # The calls and the text are those of the whole text, and of early_emit="invoke".
    text = "".join(e.text for e in events if isinstance(e, Text))
    for mode in ("arguments", "invoke"):
        whole = callsieve.parse(doc, early_emit=mode, **opts)
        assert text == whole.text
        assert [(c.name, c.input) for c in calls] == [(c.name, c.input) for c in whole.calls]
    return {"finished": finished, "aborted": aborted, "deltas": deltas}


# ---------------------------------------------------------------- the SPEC tables' helpers
def check(text: str, want_text: str, want_calls: Calls, **opts: Any) -> Any:
    """Run ``text`` every way and compare with the expected text and calls."""
    r = run_all_ways(text, **opts)
    assert r.text == want_text
    assert canon_calls(r.calls) == [(n, canon_value(i)) for n, i in want_calls]
    return r


def table(rows: list[tuple[Any, ...]]) -> Any:
    """``pytest.mark.parametrize`` over rows whose first element is the case id."""
    return pytest.mark.parametrize("row", [pytest.param(r[1:], id=r[0]) for r in rows])


def X(inner: str) -> str:
    """A canonical XML wrapper around ``inner``."""
    return f"<tool_calls>{inner}</tool_calls>"


def INV(name: str, params: str = "") -> str:
    return f'<invoke name="{name}">{params}</invoke>'


def P(name: str, body: str) -> str:
    return f'<parameter name="{name}">{body}</parameter>'


def xml_call(body: str, pname: str = "p", tool: str = "f") -> str:
    """One canonical block: tool ``tool`` with one parameter ``pname`` holding ``body``."""
    return X(INV(tool, P(pname, body)))


# One sample block per default dialect (SPEC §2's examples).
DSML = (
    '<|DSML|tool_calls>\n  <|DSML|invoke name="read_file">\n'
    '    <|DSML|parameter name="path"><![CDATA[README.MD]]></|DSML|parameter>\n'
    "  </|DSML|invoke>\n</|DSML|tool_calls>"
)
DSML_V4 = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)
DSML_V32 = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="zip" string="true">75001</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="days" string="false">2</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)
DSML_V41 = (
    '<｜DSML｜ calls>\n<｜DSML｜ invoke name="browser::search">\n'
    '<｜DSML｜ parameter name="query" string="true">Hangzhou weather</｜DSML｜ parameter>\n'
    '<｜DSML｜ parameter name="top_k" string="false">3</｜DSML｜ parameter>\n'
    "</｜DSML｜ invoke>\n</｜DSML｜ calls>"
)
XML = (
    '<tool_calls>\n  <invoke name="read_file">\n'
    '    <parameter name="path"><![CDATA[README.MD]]></parameter>\n'
    "  </invoke>\n</tool_calls>"
)
NATIVE_V3 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
    '```json\n{"location": "Tokyo"}\n```<｜tool▁call▁end｜>\n'
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n"
    "```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
)
NATIVE_V31 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>"
    '{"q": "lark", "n": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
READ = [("read_file", {"path": "README.MD"})]


def fed(chunks: list[str], **opts: Any) -> tuple[Any, list[list[Any]]]:
    """Feed chunks one by one; returns the sieve and the events of each feed."""
    sieve = callsieve.Sieve(**opts)
    return sieve, [sieve.feed(c) for c in chunks]


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


def calls_of(events: list[Any]) -> list[tuple[str, str]]:
    return canon_calls(c for e in events if isinstance(e, ToolCalls) for c in e.calls)


def as_argument_stream(batches: Iterable[Sequence[Any]], sizes: Iterable[int]) -> list[list[Any]]:
    """Per-feed event lists of a ``Sieve`` recast as argument streaming gives them: each call
    of a ``ToolCalls`` as ``CallStarted``, its arguments JSON in ``ArgumentsDelta`` fragments
    of the given sizes (cycled) and ``CallFinished``, then the ``ToolCalls`` itself."""
    cycle = itertools.cycle([max(1, n) for n in sizes] or [1])
    index = 0
    out: list[list[Any]] = []
    for batch in batches:
        events: list[Any] = []
        for e in batch:
            if isinstance(e, ToolCalls):
                for call in e.calls:
                    events.append(CallStarted(index, call.id, call.name))
                    args, pos = call.arguments, 0
                    while pos < len(args):
                        size = next(cycle)
                        events.append(ArgumentsDelta(index, args[pos : pos + size]))
                        pos += size
                    events.append(CallFinished(index, call))
                    index += 1
            events.append(e)
        out.append(events)
    return out


def without_aborted(batches: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Sieve event batches with every aborted call's events (its ``CallStarted``, deltas and
    ``CallAborted``) left out. A wire cannot take back a call it began to send (SPEC §10's
    stream-equals-whole holds for what it keeps; each renderer's abort is tested on its own),
    so the renderers' stream-versus-whole checks compare the rest: the calls and text."""
    from callsieve import ArgumentsDelta, CallAborted, CallStarted

    gone = {e.index for batch in batches for e in batch if isinstance(e, CallAborted)}
    if not gone:
        return [list(b) for b in batches]
    kinds = (CallStarted, ArgumentsDelta, CallAborted)
    return [[e for e in b if not (isinstance(e, kinds) and e.index in gone)] for b in batches]


#: The shared conformance cases (the external suite, docs/spec.md), beside the repository.
CASES_PATH = ROOT.parent / "shared" / "conformance" / "cases.jsonl"
#: CI (``CI`` set: ``.ci/run`` in a clone with the shared folder beside it) must run the
#: conformance tests: there a missing file fails them. Elsewhere, without the file, they are
#: not collected (``conftest.py``: the modules and functions named ``test_conformance*``).
CONFORMANCE_REQUIRED = bool(os.environ.get("CI"))


def conformance_collected() -> bool:
    """Whether the conformance tests are collected: the cases are there, or CI needs them."""
    return CONFORMANCE_REQUIRED or CASES_PATH.is_file()


def conformance_cases() -> list[dict[str, Any]]:
    """The cases in ``CASES_PATH`` (none when the shared folder is not there)."""
    if not CASES_PATH.is_file():
        return []
    lines = CASES_PATH.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]

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
``ParseResult`` of the whole run.

Calls are compared by ``(name, input)`` only (ids are random); inputs are compared through
``json.dumps`` so that ``1``, ``1.0`` and ``True`` do not pass for each other.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import callsieve
from callsieve import Text, ToolCalls

__all__ = [
    "GRAMMARS",
    "ROOT",
    "assert_conserves",
    "canon_calls",
    "canon_value",
    "chunk_at",
    "drive",
    "expected_calls",
    "random_chunkings",
    "run_all_ways",
    "stream",
]

#: The repository (or unpacked sdist) root, and the scratch grammar files of the tests.
ROOT = Path(__file__).resolve().parents[1]
GRAMMARS = ROOT / "tests" / "grammars"

RANDOM_SEEDS = (0, 1, 2, 3, 4, 5)
#: Above this many characters the per-character run is replaced by 2-character chunks.
PER_CHAR_LIMIT = 20_000


def canon_value(value: Any) -> str:
    """A type-exact, order-independent spelling of a JSON value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def canon_calls(calls: Iterable[Any]) -> list[tuple[str, str]]:
    """``[(name, canonical input)]`` for ToolCall objects."""
    return [(c.name, canon_value(c.input)) for c in calls]


def expected_calls(calls: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The same spelling for ``[{"name", "input"}]`` expectations."""
    return [(c["name"], canon_value(c["input"])) for c in calls]


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
    sieve = callsieve.Sieve(**opts)
    events: list[Any] = []
    for chunk in chunks:
        events.extend(sieve.feed(chunk))
    events.extend(sieve.close())
    return events


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


def assert_conserves(text: str, events: Sequence[Any], label: str = "") -> None:
    """§Invariants 2/3 for ``early_emit="block"``: text pieces and emitted blocks' raw, in
    event order, rebuild the input, and no Text event overlaps an emitted block's span."""
    pos = 0
    for e in events:
        if isinstance(e, Text):
            assert text.startswith(e.text, pos), (
                f"{label}: Text {e.text!r} is not the input at offset {pos}: "
                f"{text[pos:pos + len(e.text) + 20]!r}")
            pos += len(e.text)
        elif isinstance(e, ToolCalls):
            start, end = e.block.span
            assert start == pos, (
                f"{label}: block span {e.block.span} does not start where released text "
                f"ends ({pos}); input={text!r}")
            assert e.block.raw == text[start:end], (
                f"{label}: block.raw {e.block.raw!r} != input[{start}:{end}] "
                f"{text[start:end]!r}")
            pos = end
    assert pos == len(text), (
        f"{label}: events account for {pos} of {len(text)} characters; "
        f"missing {text[pos:]!r}")


def run_all_ways(text: str, *, extra_chunkings: Iterable[Sequence[str]] = (),
                 conserve: bool = True, **opts: Any) -> Any:
    """Run ``text`` through ``parse()`` and ``Sieve`` under many chunkings; assert they all
    agree on ``(text, [(name, input)])``; return the ``parse()`` result."""
    parse_opts = dict(opts)
    tools = parse_opts.pop("tools", None)
    result = callsieve.parse(text, tools=tools, **parse_opts)
    want = (result.text, canon_calls(result.calls))
    check_conservation = conserve and opts.get("early_emit", "block") == "block"
    if check_conservation:
        rebuilt = []
        pos = 0
        for b in result.blocks:
            if b.status == "complete":
                rebuilt.append(text[pos:b.span[0]])
                pos = b.span[1]
        rebuilt.append(text[pos:])
        assert "".join(rebuilt) == result.text, (
            f"parse().text is not the input minus its complete blocks: {text!r}")
    per_char = list(text) if len(text) <= PER_CHAR_LIMIT else chunk_at(
        text, range(2, len(text), 2))
    ways: list[tuple[str, Sequence[str]]] = [("one chunk", [text]), ("per char", per_char)]
    randoms = random_chunkings(text)
    ways += [(f"random split #{i}", c) for i, c in enumerate(randoms)]
    # empty chunks between the pieces change nothing
    ways.append(("random split with empty chunks", [p for c in randoms[-1] for p in ("", c, "")]))
    ways += [(f"extra chunking #{i}", list(c)) for i, c in enumerate(extra_chunkings)]
    for label, chunks in ways:
        assert "".join(chunks) == text, f"bad chunking {label}"
        events = stream(chunks, **opts)
        got = drive(events)
        assert got == want, (
            f"{label} disagrees with parse() on {text!r}\n"
            f"chunks={list(chunks)!r}\nparse: {want!r}\nsieve: {got!r}")
        if check_conservation:
            assert_conserves(text, events, label)
    return result

"""Strategy: measure what rendering costs on top of the sieve, for a tool-heavy chat.

What it measures. ``bench_stream``'s workload (c) — 1,000,000 characters of chat with 200
DSML blocks of one call each, prose between them — fed at random 1-8-character chunks and at
64-character chunks, through:
  - the sieve alone (``for c in chunks: sieve.feed(c)``, then ``close()``): the baseline;
  - the sieve and a bare renderer that only builds one Chat Completions chunk dict per
    ``Text`` event, inline (what any dict-per-event encoder pays);
  - the sieve and ``callsieve.render.Reply`` (the shared normaliser);
  - the sieve and ``openai_chat.StreamRenderer`` (the issue's figure: at most 1.3x);
  - the sieve and ``openai_responses.StreamRenderer``, ``anthropic``'s and ``gemini``'s.
Each row's figure is the best of N runs (9, or 3 with ``--quick``), the rows interleaved in
rounds so they see the same machine load, ``gc`` collected before and disabled during each
run (as ``bench_stream`` does, for the reason its docstring gives); construction is not
timed. The ratio is a row's seconds over the sieve's at the same chunking.

It is a report, not a test: it exits 0 whatever the figures say, and 1 only if a renderer's
output is wrong (the chunks' calls are not the workload's calls).

Usage: ``python benchmarks/bench_render.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _timing
import _workloads

import callsieve
from callsieve import Text
from callsieve.render import Reply, anthropic, gemini, openai_chat, openai_responses

TARGET_CHAT = 1.3


def sieve_only(chunks: Sequence[str]) -> None:
    sieve = callsieve.Sieve()
    for c in chunks:
        sieve.feed(c)
    sieve.close()


def bare_renderer(chunks: Sequence[str]) -> None:
    sieve = callsieve.Sieve()
    for c in chunks:
        out = []
        for e in sieve.feed(c):
            if type(e) is Text:
                out.append(
                    {
                        "id": "chatcmpl-x",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"content": e.text},
                                "logprobs": None,
                                "finish_reason": None,
                            }
                        ],
                    }
                )
    sieve.close()


def reply(chunks: Sequence[str]) -> None:
    sieve, r = callsieve.Sieve(), Reply(trim_around_calls=False)
    for c in chunks:
        r.feed(sieve.feed(c))
    r.feed(sieve.close())
    r.close()


def renderer(module: Any, **options: Any) -> Callable[[Sequence[str]], None]:
    def run(chunks: Sequence[str]) -> None:
        sieve, r = callsieve.Sieve(), module.StreamRenderer(**options)
        for c in chunks:
            r.feed(sieve.feed(c))
        r.feed(sieve.close())
        r.close()

    return run


ROWS: list[tuple[str, Callable[[Sequence[str]], None]]] = [
    ("sieve alone", sieve_only),
    ("+ bare renderer (a dict per Text)", bare_renderer),
    ("+ Reply", reply),
    ("+ openai_chat", renderer(openai_chat, created=0)),
    ("+ openai_responses", renderer(openai_responses, created=0)),
    ("+ anthropic", renderer(anthropic)),
    ("+ gemini", renderer(gemini)),
]


def check(chunks: Sequence[str], want: list[tuple[str, dict[str, str]]]) -> None:
    sieve, r = callsieve.Sieve(), openai_chat.StreamRenderer(created=0)
    out = [x for c in chunks for x in r.feed(sieve.feed(c))] + r.feed(sieve.close()) + r.close()
    calls: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for chunk in out:
        for tc in chunk["choices"][0]["delta"].get("tool_calls", ()) if chunk["choices"] else ():
            names.setdefault(tc["index"], tc["function"].get("name", ""))
            calls.setdefault(tc["index"], []).append(tc["function"]["arguments"])
    got = [(names[k], json.loads("".join(calls[k]))) for k in sorted(calls)]
    if got != want:
        raise SystemExit("bench_render: openai_chat's calls are not the workload's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="best of 3 instead of 9")
    reps = 3 if parser.parse_args().quick else 9
    doc, (_, want) = _workloads.chat(
        random.Random(_workloads.DOC_SEED), _workloads.SIZE, _workloads.N_CALLS
    )
    callsieve.parse("warm up the grammar")
    print("| rows | chunking | ms | x sieve |\n|---|---|---:|---:|")
    for label, chunking in (
        ("1–8 chars", _workloads.random_chunks),
        ("64 chars", lambda t: _workloads.fixed_chunks(t, 64)),
    ):
        chunks = chunking(doc)
        check(chunks, want)
        best = _timing.best_of_runs([run for _, run in ROWS], chunks, reps)
        for (name, _), seconds in zip(ROWS, best):
            ratio = seconds / best[0]
            mark = ""
            if name == "+ openai_chat":
                mark = " PASS" if ratio <= TARGET_CHAT else f" FAIL (target {TARGET_CHAT})"
            print(f"| {name} | {label} | {seconds * 1000:.1f} | {ratio:.2f}{mark} |")


def white_space_slope() -> float:
    """The slope of log(seconds) against log(chunks) for a reply whose text is followed by
    white space only, one space per chunk (held by ``Reply`` until what follows decides it:
    it was joined per chunk once, which is quadratic)."""
    points = []
    for n in (100_000, 300_000, 1_000_000):
        events = [[Text(" ")] for _ in range(n)]
        best = float("inf")
        for _ in range(3):
            r = openai_chat.StreamRenderer(created=0)
            gc.collect()
            start = time.perf_counter()
            r.feed([Text("a")])
            for batch in events:
                r.feed(batch)
            r.feed([Text("b")])
            r.close()
            best = min(best, time.perf_counter() - start)
        points.append((math.log(n), math.log(best)))
    mx = sum(x for x, _ in points) / 3
    my = sum(y for _, y in points) / 3
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


if __name__ == "__main__":
    main()
    slope = white_space_slope()
    print(
        f"\nwhite space held after text, 100k-1M one-space chunks: slope {slope:.3f} "
        f"{'PASS' if slope <= 1.1 else 'FAIL'} (linear: <= 1.1)"
    )

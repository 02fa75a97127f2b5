"""Strategy: measure what argument streaming (``early_emit="arguments"``) costs against block
mode, on ``bench_stream``'s workloads (c) and (d), at random 1-8-character chunks.

What it measures. (c): 1,000,000 characters of chat, 200 DSML blocks of one call each whose
CDATA arguments hold generated code, prose between them; (d): one DSML call whose one CDATA
argument is 10 kB, 100 kB and 1 MB long. Rows: the do-nothing floor (``bench_stream``'s: one
``Text`` per chunk), the sieve in block mode, the sieve streaming arguments. Each figure is
the best of N runs (9, or 3 with ``--quick``), rows interleaved in rounds, ``gc`` collected
before and disabled during each run, construction not timed (as ``bench_stream``). The
issue's targets: arguments at most 1.15x block mode on (c) and (d); (d) linear with deltas
on (the slope of log seconds against log size at most 1.1). The "bound" row is block mode
plus one ``[ArgumentsDelta]`` made per chunk and nothing else: what any design that sends a
delta per chunk pays at least (block mode pays nothing per chunk inside an argument). It is
exact for (d), whose chunks are all inside the argument; for (c) it makes one for every
chunk, prose too, so there it overstates.

Correctness is checked outside the timings: every call's deltas join to its arguments, and
the calls are the workload's. It is a report: it exits 0 whatever the figures say.

Usage: ``python benchmarks/bench_arguments.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import _timing
import _workloads

import callsieve
from callsieve import ArgumentsDelta, CallFinished

TARGET_RATIO = 1.15
TARGET_EXPONENT = 1.1


def run_sieve(mode: str) -> Callable[[Sequence[str]], None]:
    def run(chunks: Sequence[str]) -> None:
        sieve = callsieve.Sieve(early_emit=mode)
        feed = sieve.feed
        for c in chunks:
            feed(c)
        sieve.close()

    return run


def floor(chunks: Sequence[str]) -> None:
    f = _timing.FloorSieve()
    feed = f.feed
    for c in chunks:
        feed(c)
    f.close()


def block_plus_events(chunks: Sequence[str]) -> None:
    """Block mode plus one ``[ArgumentsDelta]`` made per chunk and nothing else: the least
    that any design sending one delta per chunk pays over block mode."""
    sieve = callsieve.Sieve()
    feed = sieve.feed
    for c in chunks:
        feed(c)
        [ArgumentsDelta(0, c)]
    sieve.close()


ROWS = [
    ("floor", floor),
    ("block", run_sieve("block")),
    ("bound", block_plus_events),
    ("arguments", run_sieve("arguments")),
]


def check(chunks: Sequence[str], want: list[tuple[str, dict[str, str]]]) -> int:
    sieve = callsieve.Sieve(early_emit="arguments")
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    joined: dict[int, str] = {}
    n = 0
    for e in events:
        if isinstance(e, ArgumentsDelta):
            joined[e.index] = joined.get(e.index, "") + e.delta
            n += 1
        elif isinstance(e, CallFinished) and joined.get(e.index) != e.call.arguments:
            raise SystemExit("bench_arguments: deltas do not join to the arguments")
    got = [(e.call.name, e.call.input) for e in events if isinstance(e, CallFinished)]
    if got != want:
        raise SystemExit("bench_arguments: the calls are not the workload's")
    return n


def timed(chunks: Sequence[str], reps: int) -> list[float]:
    return _timing.best_of_runs([run for _, run in ROWS], chunks, reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="best of 3 instead of 9")
    reps = 3 if parser.parse_args().quick else 9
    callsieve.parse("warm up the grammar")
    docs = [
        (
            "(c) chat 1 MB",
            _workloads.chat(
                random.Random(_workloads.DOC_SEED), _workloads.SIZE, _workloads.N_CALLS
            ),
        )
    ]
    docs += [
        (
            f"(d) {size // 1000} kB",
            _workloads.one_call(random.Random(_workloads.DOC_SEED), size),
        )
        for size in _workloads.D_SIZES
    ]
    print(
        "| workload | chunks | deltas | floor ms | block ms | block + an event per chunk ms "
        "| arguments ms | bound / block | arguments / block |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    d_points = []
    for label, (doc, (_, want)) in docs:
        chunks = _workloads.random_chunks(doc)
        deltas = check(chunks, want)
        f, b, lo, a = timed(chunks, reps)
        ratio = a / b
        mark = " PASS" if ratio <= TARGET_RATIO else f" FAIL (target {TARGET_RATIO})"
        print(
            f"| {label} | {len(chunks)} | {deltas} | {f * 1000:.1f} | {b * 1000:.1f} | "
            f"{lo * 1000:.1f} | {a * 1000:.1f} | {lo / b:.2f} | {ratio:.2f}{mark} |"
        )
        if label.startswith("(d)"):
            d_points.append((len(doc), a))
    xs = [math.log(n) for n, _ in d_points]
    ys = [math.log(t) for _, t in d_points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    mark = "PASS" if slope <= TARGET_EXPONENT else f"FAIL (target {TARGET_EXPONENT})"
    print(f"\n(d) with deltas on: slope of log(seconds) against log(size) = {slope:.3f} {mark}")


if __name__ == "__main__":
    main()

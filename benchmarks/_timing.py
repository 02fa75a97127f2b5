"""The benchmarks' timing: a do-nothing *floor* with the sieve's interface (``FloorSieve``),
and the loops that time a sieve and its floor on the same chunk lists, best of N, in rounds,
with the collector off — shared by ``bench_stream.py`` (whose docstring explains the method
and the choices) and the other scripts.

"Floor" means one thing in every benchmark here: what any streaming consumer pays for the
Python call and one event per chunk, with nothing decided (a row's ratio is floor seconds
over the row's seconds). A script that compares against some other reference calls it by
its own name (``bench_prompt``'s ``json.dumps`` reference, ``bench_render``'s bare
renderer); the targets the ratios must meet are *targets* (``TARGET_RATIO``, here).
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _workloads import MB

from callsieve import Event, Sieve, Text

MIN_TIMING = 0.02  # seconds; shorter cases are looped
WARMUP = 0.05  # seconds of untimed runs before a case is timed
MAX_LOOPS = 5_000
DISABLE_GC = True  # see bench_stream's docstring: chosen with --gc-study

#: The targets every change keeps: the least ratio to the floor at 1-8-character chunks
#: (re-based in the restructuring issue from 0.4 and 0.5 for (b) and (c) to what this
#: design gives).
TARGET_RATIO = {"a": 0.6, "b": 0.33, "c": 0.42}
TARGET_EXPONENT = 1.1
TARGET_D_SECONDS = 2.0
TARGET_RSS_MB = 64.0


class Streamer(Protocol):
    def feed(self, chunk: str) -> list[Event]: ...

    def close(self) -> list[Event]: ...


class FloorSieve:
    """The floor: the sieve interface doing nothing but wrapping each chunk in a ``Text``."""

    __slots__ = ()

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)]

    def close(self) -> list[Event]:
        return []


# ---------------------------------------------------------------------- timing
def time_streams(
    factory: Callable[[], Streamer],
    chunks: Sequence[str],
    loops: int,
    disable_gc: bool,
    arm: Callable[[bool], None] | None = None,
) -> float:
    """Seconds per stream: ``loops`` fresh streamers fed ``chunks``, timed together.
    ``arm`` (the --gc-study probe) is called with True just before the clock starts and with
    False just after it stops."""
    sieves = [factory() for _ in range(loops)]
    gc.collect()
    if disable_gc:
        gc.disable()
    if arm is not None:
        arm(True)
    try:
        t0 = time.perf_counter()
        for s in sieves:
            feed = s.feed
            for c in chunks:
                feed(c)
            s.close()
        elapsed = time.perf_counter() - t0
    finally:
        if arm is not None:
            arm(False)
        if disable_gc:
            gc.enable()
    return elapsed / loops


def calibrate(factory: Callable[[], Streamer], chunks: Sequence[str], disable_gc: bool) -> int:
    """Warm up for WARMUP seconds of wall time and pick the loop count for one timing
    (at least MIN_TIMING seconds per timing, like ``timeit``'s autorange)."""
    deadline = time.perf_counter() + WARMUP
    loops = 1
    while True:
        t = time_streams(factory, chunks, loops, disable_gc)
        if t * loops < MIN_TIMING and loops < MAX_LOOPS:
            loops = min(MAX_LOOPS, max(loops * 2, math.ceil(MIN_TIMING / max(t, 1e-9))))
        elif time.perf_counter() >= deadline:
            return loops


def best_in_rounds(
    runs: Sequence[tuple[Callable[[], Streamer], Sequence[str]]], reps: int
) -> list[float]:
    """Best seconds of each ``(factory, chunks)`` run, timed in rounds: each round times every
    run once, in order, so a run's repetitions are spread over the whole measurement instead
    of one stretch that a burst of the host's load can cover."""
    loops = [calibrate(factory, chunks, DISABLE_GC) for factory, chunks in runs]
    best = [math.inf] * len(runs)
    for _ in range(reps):
        for i, ((factory, chunks), n) in enumerate(zip(runs, loops)):
            best[i] = min(best[i], time_streams(factory, chunks, n, DISABLE_GC))
    return best


def best_of_runs(
    runs: Sequence[Callable[[Sequence[str]], None]], chunks: Sequence[str], reps: int
) -> list[float]:
    """Best seconds of each ``run(chunks)`` (a whole stream, built and fed inside it), in
    ``reps`` rounds of every run in order; ``gc`` collected before and disabled during each
    (for the scripts whose rows are not sieve factories: bench_arguments, bench_render)."""
    best = [math.inf] * len(runs)
    for _ in range(reps):
        for i, run in enumerate(runs):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            run(chunks)
            best[i] = min(best[i], time.perf_counter() - start)
            gc.enable()
    return best


def measure_rounds(cases: Sequence[Sequence[str]], reps: int) -> list[tuple[float, float]]:
    """Best seconds of the floor and of the sieve on each chunk list, in rounds (floor, then
    sieve, for each case in turn), so both see the same machine conditions."""
    best = best_in_rounds([(factory, c) for c in cases for factory in (FloorSieve, Sieve)], reps)
    return list(zip(best[0::2], best[1::2]))


def measure_pair(chunks: Sequence[str], reps: int) -> tuple[float, float]:
    """``measure_rounds`` for one chunk list."""
    return measure_rounds([chunks], reps)[0]


def measure_sieve_rounds(cases: Sequence[Sequence[str]], reps: int) -> list[float]:
    """Best seconds of the sieve alone on each chunk list, in rounds (the linearity guard:
    a size's repetitions are not one stretch)."""
    return best_in_rounds([(Sieve, c) for c in cases], reps)


def exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    xs = [math.log(n) for n in sizes]
    ys = [math.log(t) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def mbps(n: int, seconds: float) -> float:
    return n / MB / seconds


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**FAIL**"


def fmt_ratio(r: float) -> str:
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.2g}×"


def fmt_mbps(n: int, t: float) -> str:
    v = mbps(n, t)
    return f"{v:,.0f} MB/s" if v >= 100 else f"{v:.2f} MB/s"


def cell(n: int, t: float, floor: float) -> str:
    return f"{fmt_mbps(n, t)} ({fmt_ratio(floor / t)})"

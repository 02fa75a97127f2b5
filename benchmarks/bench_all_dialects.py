"""Strategy: what ``dialects="all"`` costs — every built-in family enabled at once, as a
gateway in front of an unknown model runs — against the default dialects, and how cheap
hostile text stays under it (issue 32, item 5).

What it measures. Two tables, each fed in random 1-8-character chunks (bench_stream's chunk
sizes, about one LLM token each):
  chat: bench_stream's (c) workload, W1-style chat (1,000,000 characters, 200 DSML calls with
        prose between them), through ``Sieve()`` and ``Sieve(dialects="all")``, best of
        ``--reps`` rounds (``_timing.best_in_rounds``), each run checked to give the same calls
        and text. The ratio is the default dialects' seconds over "all"'s; target >= 0.50.
  hostile: every opt-in family's hostile unit of ``bench_adversarial.py``
        (``_adversarial_inputs.FAMILY_UNITS``: each family's costliest entry, repeated) run
        under ``dialects="all"`` whatever family it was written for, at two sizes 8x apart;
        seconds per MB at the larger size, and the exponent of log(seconds) against log(size).
        Target: the costliest row at most 2 s/MB, every exponent at most 1.1. Prose is the
        reference row.
The script prints PASS/FAIL per target and exits 0 either way: it is a report.
Run: ``python benchmarks/bench_all_dialects.py [--quick] [--size BYTES] [--only NAME,…]``
(about 2-4 minutes; ``--quick``: 2 rounds, 256 kB hostile rows).
"""

from __future__ import annotations

import argparse
import fnmatch
import gc
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _adversarial_inputs as adv
import _timing as tm
import _workloads as wl

from callsieve import Sieve, Text, ToolCalls, dialects

TARGET_CHAT_RATIO = 0.50
TARGET_HOSTILE_S_PER_MB = 2.0
TARGET_EXPONENT = 1.1


def _read(chunks: Sequence[str], dialects: str | None) -> tuple[str, list[tuple[str, str]]]:
    """The text and the calls (name, arguments) a sieve gives on ``chunks``."""
    s = Sieve() if dialects is None else Sieve(dialects=dialects)
    text: list[str] = []
    calls: list[tuple[str, str]] = []
    for events in [s.feed(c) for c in chunks] + [s.close()]:
        for e in events:
            if isinstance(e, Text):
                text.append(e.text)
            elif isinstance(e, ToolCalls):
                calls += [(c.name, c.arguments) for c in e.calls]
    return "".join(text), calls


def chat_table(reps: int) -> bool:
    doc, _ = wl.chat(random.Random(wl.DOC_SEED + 2), wl.MB, 200)
    chunks = wl.random_chunks(doc)
    if _read(chunks, None) != _read(chunks, "all"):
        raise SystemExit("bench_all_dialects: 'all' reads the chat otherwise than the defaults")
    default, every = tm.best_in_rounds(
        [(Sieve, chunks), (lambda: Sieve(dialects="all"), chunks)], reps
    )
    ratio = default / every
    verdict = "PASS" if ratio >= TARGET_CHAT_RATIO else "FAIL"
    print("| W1-style chat, 1 MB, 1-8-char chunks | defaults | all | ratio | target |")
    print("|---|---:|---:|---:|---|")
    print(
        f"| {len(dialects())} dialects under 'all' "
        f"| {wl.MB / default / 1e6:.2f} MB/s | {wl.MB / every / 1e6:.2f} MB/s "
        f"| {ratio:.2f} | >= {TARGET_CHAT_RATIO:.2f} {verdict} |"
    )
    return ratio >= TARGET_CHAT_RATIO


def _seconds(doc: str) -> float:
    """One stream of ``doc`` under ``dialects="all"``, random 1-8-character chunks, gc off."""
    chunks = wl.random_chunks(doc)
    s = Sieve(dialects="all")
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for c in chunks:
            s.feed(c)
        s.close()
        return time.perf_counter() - start
    finally:
        gc.enable()


def _repeat(unit: str, end: str, size: int) -> str:
    return unit * max(1, size // len(unit)) + end


def hostile_table(size: int, only: Sequence[str]) -> bool:
    rows = [("prose", adv.prose_units(1), "")] + [
        (name, unit, end) for name, unit, end, _, _ in adv.FAMILY_UNITS
    ]
    rows = [r for r in rows if not only or any(fnmatch.fnmatch(r[0], p) for p in only)]
    print("\n| hostile unit under dialects='all' (1-8-char chunks) | s/MB | exponent | target |")
    print("|---|---:|---:|---|")
    worst = 0.0
    ok = True
    Sieve(dialects="all")  # (the grammar loaded before the clock runs)
    for name, unit, end in rows:
        small, large = _repeat(unit, end, size // 8), _repeat(unit, end, size)
        if name == "prose":
            small, large = unit[: size // 8], (unit * math.ceil(size / len(unit)))[:size]
        t_small, t_large = _seconds(small), _seconds(large)
        per_mb = t_large / (len(large) / adv.MB)
        exponent = math.log(t_large / t_small) / math.log(len(large) / len(small))
        good = per_mb <= TARGET_HOSTILE_S_PER_MB and exponent <= TARGET_EXPONENT
        ok = ok and good
        worst = max(worst, per_mb if name != "prose" else 0.0)
        print(
            f"| {name} | {per_mb:.2f} | {exponent:.2f} "
            f"| <= {TARGET_HOSTILE_S_PER_MB} s/MB, <= {TARGET_EXPONENT} {'PASS' if good else 'FAIL'} |"
        )
    print(f"\ncostliest hostile row: {worst:.2f} s/MB")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="2 rounds, 256 kB hostile rows")
    ap.add_argument("--reps", type=int, default=5, help="rounds of the chat table (default 5)")
    ap.add_argument("--size", type=int, default=adv.MB, help="hostile rows' larger size")
    ap.add_argument("--only", default="", help="hostile rows by name (comma-separated globs)")
    ap.add_argument("--no-chat", action="store_true", help="the hostile table alone")
    args = ap.parse_args(argv)
    reps, size = (2, 256_000) if args.quick else (args.reps, args.size)
    only = [p for p in args.only.split(",") if p]
    if not args.no_chat:
        chat_table(reps)
    hostile_table(size, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())

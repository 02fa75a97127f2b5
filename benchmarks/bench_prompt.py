"""Strategy: measure what writing past calls into a prompt costs (``callsieve.prompt``).

What it measures. A conversation's history of 100 calls of 4 arguments each (a short
string, an integer, a sentence, a nested object), written by ``format_calls`` in every
default dialect, in two variants: *ordinary* values, and *hostile* ones (every string holds
``]]>``, ``</parameter>`` and a DSML marker, so each body needs the parser's answer and
CDATA). Against a reference that does no escaping at all: ``json.dumps`` of every call's
arguments (what any writer pays to turn the values into text). Each figure is the best of
N runs (9, or 3 with ``--quick``), rows interleaved in rounds, ``gc`` collected before and
disabled during each run; the grammar and spellings are loaded before timing.

It is a report, not a test: it exits 0 whatever the figures say, and 1 only if a written
block does not parse back as its calls.

Usage: ``python benchmarks/bench_prompt.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import callsieve
from callsieve.prompt import format_calls

CALLS = 100


def history(hostile: bool) -> list[tuple[str, dict[str, Any]]]:
    bad = ' ]]> </parameter> <｜DSML｜invoke name="x"> ```' if hostile else ""
    return [
        (
            f"tool_{k % 7}",
            {
                "city": "Hangzhou" + bad,
                "days": k,
                "note": "a sentence of ordinary length for a note" + bad,
                "opts": {"units": "metric" + bad, "ids": [k, k + 1]},
            },
        )
        for k in range(CALLS)
    ]


def once(fn: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    finally:
        gc.enable()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    runs = 3 if ap.parse_args().quick else 9
    rows: dict[str, Callable[[], object]] = {}
    for hostile in (False, True):
        calls = history(hostile)
        kind = "hostile" if hostile else "ordinary"
        rows[f"reference: json.dumps ({kind})"] = lambda calls=calls: [
            json.dumps(a, ensure_ascii=False) for _, a in calls
        ]
        for d in callsieve.DEFAULT_DIALECTS:
            text = format_calls(calls, dialect=d)
            got = [(c.name, c.input) for c in callsieve.parse(text, dialects=(d,)).calls]
            if got != calls:
                print(f"{d} ({kind}): the block does not parse back as its calls")
                return 1
            rows[f"{d} ({kind})"] = lambda calls=calls, d=d: format_calls(calls, dialect=d)
    times = {name: float("inf") for name in rows}
    for _ in range(runs):
        for name, fn in rows.items():
            times[name] = min(times[name], once(fn))
    print(f"format_calls, {CALLS} calls of 4 arguments, best of {runs}")
    print(f"{'row':44} {'ms':>9} {'x ref':>8}")
    for name, t in times.items():
        reference = times[f"reference: json.dumps ({name.split('(')[-1]}"]
        print(f"{name:44} {t * 1000:9.2f} {t / reference:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

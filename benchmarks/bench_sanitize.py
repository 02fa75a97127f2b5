"""Strategy: show that the leaked-output sanitizer (SPEC §13) is linear on adversarial input —
time the whole-text ``sanitize_leaked_output`` and a ``LeakFilter`` fed 7-character chunks at
0.25, 0.5 and 1 MB (10^6 characters) of each hostile input, against a do-nothing floor, and
print the slope.

The inputs: 100k-style floods of unclosed ``<think>`` (nothing ever closes them: the dangling
think swallows the rest), ``[{"function":`` fragments (a JSON candidate that never ends),
half markers (``<｜end▁of``, ``<thi``, ``<tool_ca``, ``[{"``: tails that might still become a
leak), unclosed wrapper openers followed by tags, a leak-dense mix that does get removed, and
plain prose (the common case). The floor is the same loop with the filter replaced by a
function that returns its chunk (streamed) or one pass copying the text (whole), so the ratio
is the sanitizer's cost per character over the least a stream can cost.

Method: best of ``--reps`` (3) runs per cell, the collector off while timing; the slope is
``log(t_1MB / t_0.25MB) / log(4)`` (1.0 is linear; the target is <= 1.2; no verdict when the
1 MB run takes under 20 ms: timer and cache effects swamp it). It is a report, not a
test: it exits 0 whatever the figures, and 1 only if the streamed output differs from the
whole-text output (a figure for wrong output means nothing).
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from callsieve import LeakFilter, sanitize_leaked_output

SIZES = (250_000, 500_000, 1_000_000)
CHUNK = 7

UNITS: dict[str, str] = {
    "unclosed <think>": "<think>",
    '[{"function": fragments': '[{"function":',
    "half markers": '<｜end▁of <thi <tool_ca [{" ',
    "unclosed wrappers": "<tool_calls>\n<invoke ",
    "leak-dense mix": (
        "a<think>b</think><｜end▁of▁sentence｜>```json\n```"
        '[{"function":{"name":"f"},"id":"c","type":"function"}] '
    ),
    "plain prose": "The quick brown fox jumps over the lazy dog. ",
}


def doc(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def best(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        gc.enable()
    return min(times)


def streamed(text: str) -> str:
    f = LeakFilter()
    out = [f.feed(text[i : i + CHUNK]) for i in range(0, len(text), CHUNK)]
    out.append(f.close())
    return "".join(out)


def floor_whole(text: str) -> str:
    return "".join(text.splitlines(True))  # (one pass over the text, a copy out)


def floor_streamed(text: str) -> str:
    def same(chunk: str) -> str:
        return chunk

    return "".join([same(text[i : i + CHUNK]) for i in range(0, len(text), CHUNK)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print(
        f"| input | way | {' | '.join(f'{n / 1e6:g} MB' for n in SIZES)} | floor 1 MB "
        "| x floor | slope | verdict |"
    )
    print("|---|---|" + "---|" * len(SIZES) + "---|---|---|---|")
    bad = 0
    for name, unit in UNITS.items():
        docs = [doc(unit, n) for n in SIZES]
        if streamed(docs[0]) != sanitize_leaked_output(docs[0]):
            print(f"{name}: the streamed output differs from the whole-text output")
            bad = 1
        for way, fn, floor in (
            ("whole", sanitize_leaked_output, floor_whole),
            (f"{CHUNK}-char", streamed, floor_streamed),
        ):
            times = [best(functools.partial(fn, d), args.reps) for d in docs]
            base = best(functools.partial(floor, docs[-1]), args.reps)
            slope = math.log(times[-1] / times[0]) / math.log(SIZES[-1] / SIZES[0])
            cells = " | ".join(f"{t * 1e3:.1f} ms" for t in times)
            verdict = "n/a (< 20 ms)" if times[-1] < 0.02 else "PASS" if slope <= 1.2 else "FAIL"
            print(
                f"| {name} | {way} | {cells} | {base * 1e3:.2f} ms | "
                f"x{times[-1] / base:.0f} | {slope:.2f} | {verdict} |"
            )
    return bad


if __name__ == "__main__":
    sys.exit(main())

"""Strategy: count the instructions the sieve executes on the timing benchmark's 1-8-character
workloads, next to the floor's, under valgrind's cachegrind: a figure that other load on the
machine cannot move, for telling whether a change to the library made it cheaper.

What it measures. Workloads (a)-(c) of ``bench_stream.py`` (``_workloads``; (r): ``bench_reasoning.py``'s; same documents, same random 1-8-
character chunk lists). For the floor and for each source tree given (default: this
checkout's ``src/``), two runs under ``valgrind --tool=cachegrind --cache-sim=no`` with
``PYTHONHASHSEED=0``: one that builds the chunk list and a warmed-up sieve and stops, one
that also feeds every chunk and closes; the difference is the feeding loop's instruction
count. For one source tree it repeats exactly from run to run; an edit that leaves a path's
work alone can still move the count by a few tenths of a percent (the interpreter's caches
and memory layout), so read smaller differences as none. Two runs go at a time.

What it is not: the issue's figure. The targets are ratios of *time*, and instructions are
not time: the floor's loop is short and regular, while the sieve's many small paths
mispredict more branches and miss the instruction cache more often. On (c): instruction
ratio 0.62 against a time ratio of 0.42; with cachegrind's branch and cache simulation (run
once, by hand, on the same workload), the sieve's feeding loop had 17.5 M mispredicted
branches and 6.4 M first-level instruction-cache misses, the floor's 5.6 M and almost none. Use it to compare versions
(``--src`` another checkout's ``src``, e.g. from ``git worktree add``): a change that lowers
the count by a percent or more usually lowers the time too, a difference the timing
benchmark cannot resolve on a noisy machine (there, paired runs of the same two versions
moved by five percent either way). ``--exec FILE`` adds a what-if column: FILE runs in the
sieve's process once callsieve is imported (in the measuring and the building run alike), so
a change can be weighed before it is made (benchmarks/README.md tells what one weighed).

    python benchmarks/bench_instructions.py                  # this checkout, (a)-(c)
    python benchmarks/bench_instructions.py --cases b --src /tmp/old/src --src src
    python benchmarks/bench_instructions.py --cases c --exec /tmp/whatif.py
    python benchmarks/bench_instructions.py --cases "" --hostile gemma4-strings,pythonic-nested

``--hostile ROWS`` counts hostile rows of ``bench_all_dialects.py`` too, under
``dialects="all"``: 32 kB of the row's unit, the same chunking, instructions a byte. Their
target is seconds a MB; this count tells two trees apart on a noisy machine.

It needs ``valgrind`` on the PATH (it says so and exits 2 otherwise) and takes about a minute
per case and source tree on a 2-core machine. It is a report: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")
WARM_CHUNKS = 2000  # chunks fed to a throw-away sieve first (compiled patterns, caches)
HOSTILE = "hostile:"  # a case naming a hostile row (``--hostile``)
HOSTILE_SIZE = 32_768  # characters of a hostile row: its cost is linear, and cachegrind slow


def _child(case: str, who: str, measure: bool, src: str, patch: str) -> None:
    """Inside valgrind: build everything; feed the chunks only if ``measure``."""
    sys.path.insert(0, src)  # this tree's callsieve, before _workloads imports its own
    from callsieve import Sieve

    if patch:  # a what-if (--exec): run in both runs, so only its effect on the loop counts
        runpy.run_path(patch, run_name="__whatif__")

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _timing
    import _workloads

    options: dict[str, Any] = {}
    if case == "r":  # bench_reasoning's (r): 60 % reasoning, then chat
        import bench_reasoning

        text = bench_reasoning.thinking_reply(_workloads.SIZE)[0]
    elif case.startswith(HOSTILE):  # a hostile row of bench_all_dialects.py, under "all"
        import _adversarial_inputs

        name = case[len(HOSTILE) :]
        unit, end = next((u, e) for n, u, e, _, _ in _adversarial_inputs.FAMILY_UNITS if n == name)
        text, options = unit * (HOSTILE_SIZE // len(unit)) + end, {"dialects": "all"}
    else:
        text = _workloads.workload_text(case, _workloads.SIZE)
    chunks = _workloads.random_chunks(text)
    factory = _timing.FloorSieve if who == "floor" else functools.partial(Sieve, **options)
    warm = factory()
    for c in chunks[:WARM_CHUNKS]:
        warm.feed(c)
    sieve = factory()
    if measure:
        feed = sieve.feed
        for c in chunks:
            feed(c)
        sieve.close()


def _start(case: str, who: str, measure: bool, src: str, patch: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        case,
        who,
        "1" if measure else "0",
        src,
        patch,
    ]
    return subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def _irefs(proc: subprocess.Popen[str]) -> int:
    _, err = proc.communicate()
    m = _IREFS.search(err)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"valgrind run failed:\n{err[-2000:]}")
    return int(m.group(1).replace(",", ""))


def loop_instructions(case: str, who: str, src: str, patch: str = "") -> int:
    """Instructions of the feeding loop: a measuring run minus a building-only run. A
    plain building run goes first: it fills the grammar cache, whose first fill would
    count in one of the two."""
    cmd = [sys.executable, __file__, "--child", case, who, "0", src, patch]
    subprocess.run(cmd, env=dict(os.environ, PYTHONHASHSEED="0"), check=True)
    full, base = _start(case, who, True, src, patch), _start(case, who, False, src, patch)
    return _irefs(full) - _irefs(base)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--cases",
        default="abc",
        help="workloads among a, b, c and r (bench_reasoning's; default abc)",
    )
    ap.add_argument(
        "--src",
        action="append",
        default=[],
        help="a source tree holding the callsieve package (repeatable; default: "
        "this checkout's src)",
    )
    ap.add_argument(
        "--exec",
        dest="patch",
        metavar="FILE",
        default="",
        help="a what-if: Python run in the sieve's process after callsieve is "
        "imported (e.g. one that replaces a function); adds a column",
    )
    ap.add_argument(
        "--hostile",
        default="",
        metavar="ROWS",
        help="hostile rows of bench_all_dialects.py, comma-separated (e.g. gemma4-strings): "
        "instructions a byte under dialects='all', 32 kB",
    )
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        case, who, measure, src, patch = args.child
        _child(case, who, measure == "1", src, patch)
        return 0
    if shutil.which("valgrind") is None:
        print("bench_instructions: valgrind is not on the PATH", file=sys.stderr)
        return 2
    srcs = [str(Path(s).resolve()) for s in args.src] or [str(ROOT / "src")]
    patch = str(Path(args.patch).resolve()) if args.patch else ""
    cases = [c for c in args.cases if c in "abcr"]
    hostile = [r for r in args.hostile.split(",") if r]
    random.seed(0)
    runs = [(s, "") for s in srcs] + ([(srcs[0], patch)] if patch else [])
    head = (
        "| Case | floor | "
        + " | ".join(f"sieve `{s}`" + (f" with `{p}`" if p else "") for s, p in runs)
        + " |"
    )
    print("# callsieve instruction counts (cachegrind), random 1–8-character chunks\n")
    print(
        f"Python {sys.version.split()[0]}. Cells: instructions of the feeding loop, "
        "millions (floor / sieve in brackets; for a second tree or a what-if, also its "
        "count relative to the first).\n"
    )
    if cases:
        print(head)
        print("|---|---:|" + "---:|" * len(runs))
    for case in cases:
        floor = loop_instructions(case, "floor", srcs[0])
        counts = [loop_instructions(case, "sieve", s, p) for s, p in runs]
        cells = []
        for k, n in enumerate(counts):
            cell = f"{n / 1e6:,.1f} M ({floor / n:.3f})"
            if k:
                cell += f", ×{n / counts[0]:.3f}"
            cells.append(cell)
        print(f"| ({case}) | {floor / 1e6:,.1f} M | " + " | ".join(cells) + " |", flush=True)
    if hostile:
        _hostile_table(hostile, runs)
    return 0


def _hostile_table(rows: list[str], runs: list[tuple[str, str]]) -> None:
    """Instructions a byte of each hostile row, per source tree (no floor: the row's
    target is seconds a MB, ``bench_all_dialects.py``)."""
    print(
        f"\nHostile rows under dialects='all', {HOSTILE_SIZE:,} characters: instructions a byte.\n"
    )
    print("| hostile unit | " + " | ".join(f"`{s}`" for s, _ in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for row in rows:
        counts = [loop_instructions(HOSTILE + row, "sieve", s, p) for s, p in runs]
        cells = [
            f"{n / HOSTILE_SIZE:,.0f}" + (f", ×{n / counts[0]:.3f}" if k else "")
            for k, n in enumerate(counts)
        ]
        print(f"| {row} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())

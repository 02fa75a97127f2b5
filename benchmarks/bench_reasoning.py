"""Strategy: measure what splitting reasoning from the answer (SPEC §15) costs, against the
do-nothing floor, on a thinking model's reply.

What it measures. (r): 1,000,000 characters of which 60 % is one ``<think>…</think>`` section
of prose (``_workloads.prose``, the generator of workload (a) and of (c)'s prose) and the
rest tool-heavy chat in (c)'s style (``_workloads.chat``: DSML blocks whose CDATA arguments
hold generated code, prose between them, 80 calls), the reply a DeepSeek R1-style model
writes when it thinks first, then answers with calls. It is fed at random 1-8-character
chunks, 64-character chunks and whole, next to (c) itself in the same run. Then the linearity
of reasoning that never closes: ``<think>`` and 100 kB, 300 kB and 1 MB of prose, no
``</think>``, fed at 1-8-character chunks (the slope of log seconds against log size).

How: ``bench_stream``'s machinery — chunk lists built before timing, the floor (one ``Text``
per chunk) and the sieve timed in interleaved rounds, the best of N (9, or 3 with
``--quick``), ``gc`` disabled during each run, construction not timed.

Targets (the issue's): (r) at 1-8-character chunks at least the ratio (c) must keep, 0.42×
the floor; the unclosed run linear (slope <= 1.1). Correctness is checked outside the
timings for every case: the reasoning is the generated prose, the calls and the answer text
are the chat's. It is a report: it exits 0 whatever the figures say.

Usage: ``python benchmarks/bench_reasoning.py [--quick]``.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import _timing
import _workloads

import callsieve
from callsieve import Reasoning, Text, ToolCalls

REASONING_SHARE = 0.6
N_CALLS = 80
UNCLOSED_SIZES = (100_000, 300_000, 1_000_000)
TARGET_RATIO = _timing.TARGET_RATIO["c"]
TARGET_EXPONENT = _timing.TARGET_EXPONENT


def thinking_reply(size: int) -> tuple[str, str, str, list[tuple[str, dict[str, str]]]]:
    """(r): the document, its reasoning, its answer text and its calls."""
    rng = random.Random(_workloads.DOC_SEED + 7)
    head, tail = "<think>", "</think>\n\n"
    thought = _workloads.prose(rng, int(size * REASONING_SHARE) - len(head) - len(tail))
    chat, (answer, calls) = _workloads.chat(
        rng, size - len(head) - len(thought) - len(tail), N_CALLS
    )
    doc = head + thought + tail + chat
    assert len(doc) == size
    return doc, thought, "\n\n" + answer, calls


def check(
    label: str,
    chunks: Sequence[str],
    thought: str,
    answer: str,
    calls: list[tuple[str, dict[str, str]]],
) -> None:
    sieve = callsieve.Sieve()
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    got_thought = "".join(e.text for e in events if isinstance(e, Reasoning))
    got_text = "".join(e.text for e in events if isinstance(e, Text))
    got_calls = [(c.name, c.input) for e in events if isinstance(e, ToolCalls) for c in e.calls]
    if (got_thought, got_text, got_calls) != (thought, answer, calls):
        raise SystemExit(
            f"bench_reasoning: {label}: wrong output (reasoning "
            f"{got_thought == thought}, text {got_text == answer}, calls "
            f"{got_calls == calls}); aborting"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 repetitions instead of 9")
    reps = 3 if ap.parse_args().quick else 9
    callsieve.Sieve()  # compile the grammar before timing anything
    doc, thought, answer, calls = thinking_reply(_workloads.SIZE)
    text_c, (answer_c, calls_c) = _workloads.chat(
        random.Random(_workloads.DOC_SEED + 2), _workloads.SIZE, _workloads.N_CALLS
    )
    rows = {
        "(r) 60 % reasoning, then chat": (doc, thought, answer, calls),
        f"(c) chat, {_workloads.N_CALLS} DSML calls": (text_c, "", answer_c, calls_c),
    }
    lists = {
        title: {name: make(d[0]) for name, make in _workloads.CHUNKINGS.items()}
        for title, d in rows.items()
    }
    for title, chunkings in lists.items():
        for name, chunks in chunkings.items():
            check(f"{title} @ {name}", chunks, *rows[title][1:])
    print(
        f"# callsieve reasoning benchmark\n\nPython {sys.version.split()[0]}, best of {reps}."
        " Cells: MB/s (ratio to the floor row above it, same chunk list).\n"
    )
    print("| Row | 1–8 chars | 64 chars | one chunk | Target (1–8) | Result |")
    print("|---|---:|---:|---:|---|---|")
    bests = iter(_timing.measure_rounds([c for ch in lists.values() for c in ch.values()], reps))
    for title, chunkings in lists.items():
        n = len(rows[title][0])
        timed = {name: next(bests) for name in chunkings}
        floors = " | ".join(_timing.cell(n, f, f) for f, _ in timed.values())
        sieves = " | ".join(_timing.cell(n, s, f) for f, s in timed.values())
        f18, s18 = timed["1–8 chars"]
        print(f"| floor | {floors} | — | — |")
        print(
            f"| {title} | {sieves} | ≥ {TARGET_RATIO:.2f}× | "
            f"{_timing.verdict(f18 / s18 >= TARGET_RATIO)} |"
        )
    print(
        "\nReasoning that never closes: `<think>` and prose to the end, 1–8-character chunks."
        " Cells: seconds, MB/s.\n"
    )
    print("| Row | 100 kB | 300 kB | 1 MB | Exponent | Bound | Result |")
    print("|---|---:|---:|---:|---:|---|---|")
    docs = [
        "<think>" + _workloads.prose(random.Random(_workloads.DOC_SEED), n - 7)
        for n in UNCLOSED_SIZES
    ]
    chunked = [_workloads.random_chunks(d) for d in docs]
    for d, chunks in zip(docs, chunked):
        check(f"unclosed {len(d):,}", chunks, d[7:], "", [])
    times = _timing.measure_sieve_rounds(chunked, reps)
    cells = " | ".join(
        f"{t:.3f} s, {_timing.fmt_mbps(n, t)}" for n, t in zip(UNCLOSED_SIZES, times)
    )
    e = _timing.exponent(list(UNCLOSED_SIZES), times)
    print(
        f"| unclosed reasoning | {cells} | {e:.3f} | ≤ {TARGET_EXPONENT} | "
        f"{_timing.verdict(e <= TARGET_EXPONENT)} |"
    )


if __name__ == "__main__":
    main()

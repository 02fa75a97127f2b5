"""Strategy: count how often argument streaming starts a call and then aborts it, by cause,
on the conformance cases and the DeepSeek corpus — the figure issue 23 asks for before and
after the engine streams fewer calls it must take back.

What it measures. Every reply of each corpus — the public conformance cases
(``../shared/conformance/cases.jsonl``, each with its own ``tools``) and the DeepSeek corpus
(``tests/spec/test_s02_deepseek_corpus.py``'s ``CORPUS``: every generation's shapes, damaged
and cut-off ones included) — goes through ``Sieve(early_emit="arguments")`` at several
chunkings: whole, 64- and 16-character chunks, seeded random 1-8-character chunks (three
seeds: LLM-token-sized), and one character at a time. For each (reply, chunking) run it
counts the calls that started (``CallStarted``) and the ``CallAborted`` among them by
``reason`` (``callsieve._base.events.ABORT_REASONS``): the block failed, the reply was cut off
inside the call, the policy rejected it, and the cases that send a call again under the next
index — a parameter name that repeats, plain text before CDATA, a CDATA the loose-CDATA
repair closed, a key that repeats in a JSON body (and a name or id given late, or any other
difference). A table per corpus: one row per cause, one column per chunking, each cell the
number of aborted calls (and, on the row "replies", how many replies had one); then the
replies behind each nonzero cause, so a change can be checked case by case.

It is a report, not a test: it exits 0 whatever the counts are.

Usage: ``python benchmarks/abort_counts.py [--cases PATH] [--list]`` (``--list``: every
aborting reply by id, not only the first few per cause).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "spec"))

from callsieve import CallAborted, CallStarted, Sieve
from callsieve._base.events import ABORT_REASONS

CASES = ROOT.parent / "shared" / "conformance" / "cases.jsonl"
Reply = tuple[str, str, Any]  # (id, text, tools)


def chunkings(text: str) -> dict[str, list[str]]:
    """The chunkings each reply is streamed at, by name."""

    def sized(n: int) -> list[str]:
        return [text[i : i + n] for i in range(0, len(text), n)] or [text]

    out = {"whole": [text], "64": sized(64), "16": sized(16)}
    for seed in (0, 1, 2):
        rng, pieces, pos = random.Random(seed * 7919 + len(text)), [], 0
        while pos < len(text):
            step = rng.randint(1, 8)
            pieces.append(text[pos : pos + step])
            pos += step
        out[f"1-8 #{seed}"] = pieces or [text]
    out["1"] = list(text) or [text]
    return out


def conformance(path: Path) -> list[Reply]:
    if not path.is_file():
        return []
    cases = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [(c["id"], c["input"], c.get("tools")) for c in cases]


def deepseek() -> list[Reply]:
    import test_s02_deepseek_corpus as corpus

    return [(c.id, c.text, None) for c in corpus.CORPUS]


def run(text: str, chunks: Sequence[str], tools: Any) -> tuple[int, list[str]]:
    """The calls that started and the reasons of those that aborted."""
    sieve = Sieve(tools, early_emit="arguments")
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    started = sum(isinstance(e, CallStarted) for e in events)
    return started, [e.reason for e in events if isinstance(e, CallAborted)]


def table(name: str, replies: Iterable[Reply], show: int) -> None:
    replies = list(replies)
    columns = list(chunkings("x"))
    counts: dict[str, Counter[str]] = {c: Counter() for c in columns}
    started: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    who: dict[str, set[str]] = {}
    for ident, text, tools in replies:
        for column, chunks in chunkings(text).items():
            n, reasons = run(text, chunks, tools)
            started[column] += n
            counts[column].update(reasons)
            hit[column] += bool(reasons)
            for reason in reasons:
                who.setdefault(reason, set()).add(ident)
    print(
        f'\n{name}: {len(replies)} replies, early_emit="arguments"; each cell: calls '
        "aborted, by cause"
    )
    width = max(len(r) for r in (*ABORT_REASONS, "calls started", "replies with an abort"))
    print(f"| {'cause':<{width}} | " + " | ".join(f"{c:>7}" for c in columns) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * 9 for _ in columns) + "|")
    print(
        f"| {'calls started':<{width}} | " + " | ".join(f"{started[c]:>7}" for c in columns) + " |"
    )
    for reason in ABORT_REASONS:
        print(
            f"| {reason:<{width}} | "
            + " | ".join(f"{counts[c][reason]:>7}" for c in columns)
            + " |"
        )
    print(
        f"| {'replies with an abort':<{width}} | "
        + " | ".join(f"{hit[c]:>7}" for c in columns)
        + " |"
    )
    for reason in ABORT_REASONS:
        if reason in who:
            ids = sorted(who[reason])
            more = f" and {len(ids) - show} more" if len(ids) > show > 0 else ""
            print(f"  {reason}: {', '.join(ids[:show] if show > 0 else ids)}{more}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases",
        type=Path,
        default=CASES,
        help="the conformance cases (default: ../shared/conformance)",
    )
    parser.add_argument("--list", action="store_true", help="every aborting reply by id")
    args = parser.parse_args(argv)
    show = 0 if args.list else 6
    cases = conformance(args.cases)
    if cases:
        table(f"conformance ({args.cases.name})", cases, show)
    else:
        print(f"(no conformance cases at {args.cases})")
    table("DeepSeek corpus (tests/spec/test_s02_deepseek_corpus.py)", deepseek(), show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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

A fourth table runs one reply of each shape that used to make a call be sent again
(``shapes``), which the real corpora hold too seldom to show a change. A third corpus holds the peers' test inputs: the model replies vLLM's and SGLang's DeepSeek
tool-parser tests feed their parsers (``peer_replies.py``, each group with its source).
``--policy schema`` runs every reply that has tools under ``policy="schema"`` (the others
as before): the row "rejected" then counts the calls the schema refused after they began to
stream, and the row "chars sent before an abort" how much of the aborted calls' arguments
had gone out, which checking each typed value before it goes out (issue 23) lowers.

It is a report, not a test: it exits 0 whatever the counts are.

Usage: ``python benchmarks/abort_counts.py [--cases PATH] [--list] [--policy schema]``
(``--list``: every aborting reply by id, not only the first few per cause).
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from callsieve import ArgumentsDelta, CallAborted, CallStarted, Sieve
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


def peers() -> list[Reply]:
    import peer_replies

    return list(peer_replies.REPLIES)


_INVOKE = '<tool_calls><invoke name="f">'
_END = "</invoke></tool_calls>"
_F_DAYS = [{"name": "f", "parameters": {"properties": {"days": {"type": "integer"}}}}]
_F_LIST = [{"name": "f", "parameters": {"properties": {"p": {"type": "array"}}}}]


def shapes() -> list[Reply]:
    """One reply per shape that made argument streaming send a call again (docs/streaming.md,
    "When a call is sent again"), and one the schema refuses: the causes the real corpora
    hold too seldom to tell a change by."""
    cdata = '<parameter name="p"><![CDATA[{}]]></parameter>'
    return [
        ("repeated-name", _INVOKE + cdata.format("a") + cdata.format("b") + _END, None),
        (
            "repeated-name-array-schema",
            _INVOKE + cdata.format("a") + cdata.format("b") + _END,
            _F_LIST,
        ),
        (
            "text-before-cdata",
            _INVOKE + '<parameter name="p">see <![CDATA[x]]></parameter>' + _END,
            None,
        ),
        ("loose-cdata", _INVOKE + '<parameter name="p"><![CDATA[abc</parameter>' + _END, None),
        (
            "loose-cdata-dsml",
            (
                '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|parameter name="p">'
                "<![CDATA[x = 1\n</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
            ),
            None,
        ),
        ("repeated-key", _INVOKE + '{"a": 1, "b": 2, "a": 3}' + _END, None),
        ("coerced-json-value", _INVOKE + '{"city": "Paris", "days": "3"}' + _END, _F_DAYS),
        (
            "schema-refuses-a-value",
            _INVOKE
            + '<parameter name="days">three</parameter><parameter name="p">x</parameter>'
            + _END,
            _F_DAYS,
        ),
    ]


def run(
    text: str, chunks: Sequence[str], tools: Any, policy: str | None = None
) -> tuple[int, list[str], int]:
    """The calls that started, the reasons of those that aborted, and how many characters of
    the aborted calls' arguments went out before they did."""
    sieve = Sieve(tools, early_emit="arguments", policy=policy if tools else None)
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    started = sum(isinstance(e, CallStarted) for e in events)
    aborted = {e.index: e.reason for e in events if isinstance(e, CallAborted)}
    sent = sum(len(e.delta) for e in events if isinstance(e, ArgumentsDelta) and e.index in aborted)
    return started, list(aborted.values()), sent


def table(name: str, replies: Iterable[Reply], show: int, policy: str | None = None) -> None:
    replies = list(replies)
    columns = list(chunkings("x"))
    counts: dict[str, Counter[str]] = {c: Counter() for c in columns}
    started: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    who: dict[str, set[str]] = {}
    for ident, text, tools in replies:
        for column, chunks in chunkings(text).items():
            n, reasons, chars = run(text, chunks, tools, policy)
            started[column] += n
            counts[column].update(reasons)
            hit[column] += bool(reasons)
            sent[column] += chars
            for reason in reasons:
                who.setdefault(reason, set()).add(ident)
    under = f', policy="{policy}" where a reply has tools' if policy else ""
    print(
        f'\n{name}: {len(replies)} replies, early_emit="arguments"{under}; each cell: calls '
        "aborted, by cause"
    )
    sent_row = "chars sent before an abort"
    width = max(
        len(r) for r in (*ABORT_REASONS, "calls started", "replies with an abort", sent_row)
    )
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
    print(f"| {sent_row:<{width}} | " + " | ".join(f"{sent[c]:>7}" for c in columns) + " |")
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
    parser.add_argument(
        "--policy", choices=("schema",), help="replies that have tools run under this policy"
    )
    args = parser.parse_args(argv)
    show = 0 if args.list else 6
    cases = conformance(args.cases)
    if cases:
        table(f"conformance ({args.cases.name})", cases, show, args.policy)
    else:
        print(f"(no conformance cases at {args.cases})")
    table("DeepSeek corpus (tests/spec/test_s02_deepseek_corpus.py)", deepseek(), show, args.policy)
    table("peers' test inputs (benchmarks/peer_replies.py)", peers(), show, args.policy)
    table("the abort shapes (one reply each)", shapes(), show, args.policy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

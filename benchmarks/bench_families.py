"""Strategy: measure callsieve on two open-model families' formats (``hermes``: Qwen2.5/Qwen3's
``<tool_call>{json}</tool_call>``; ``qwen3_coder``: ``<tool_call><function=…><parameter=…>``)
against the streaming parsers SGLang and vLLM ship for the same formats, where installed.

What it measures (issue 25). Two workloads per format, each a fixed, seeded string:
  chat: 1,000,000 characters of W1-style chat — bench_stream's (c) (``_workloads``): 200 one-call blocks
        (``write_file``, ``edit_file``, ``run_command`` with generated code) with prose between
        them, each block written the way the family's chat template writes it;
  arg:  one call whose single argument is 100 kB, 300 kB and 1 MB of generated code.
Both are fed in random 1-8-character chunks (bench_stream's chunk sizes). callsieve runs as
``Sieve(dialects=(FORMAT,))`` twice — ``early_emit="block"`` (calls when the block closes)
and ``early_emit="arguments"`` (argument deltas as they arrive, which is what the peers'
streaming parsers do) — best of 3 runs each, checked to give exactly the generated calls and
text. The peers run in their own Python (``--sglang PYTHON``, ``--vllm PYTHON``; by default
/work/venvs/sglang and /work/venvs/vllm when there), through ``_peer_parsers.py``: SGLang's
``Qwen25Detector`` / ``Qwen3CoderDetector`` (``parse_streaming_increment``), vLLM's
``Hermes2ProToolParser`` / ``Qwen3EngineToolParser`` (``extract_tool_calls_streaming``, fed
``previous_text``, ``current_text`` and the delta as vLLM's server does). A peer's run stops
after ``--budget`` seconds (default 60): its MB/s is then over the part it read, which flatters
a parser that slows down as the text grows; the row says how much it read.
Targets (printed PASS/FAIL; the script exits 0 either way, it is a report): chat, callsieve
at least 3x the faster peer (MB/s, ``early_emit="arguments"`` against the peers' streaming);
arg, callsieve's least-squares slope of log(seconds) against log(size) <= 1.1 (linear).
Run: ``python benchmarks/bench_families.py [--quick] [--no-peers]`` (about 4 minutes with
both peers; ``--quick``: one run each, a 20 s budget).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _timing as tm
import _workloads as wl

from callsieve import Sieve, Text, ToolCalls

FORMATS = ("hermes", "qwen3_coder")
ARG_SIZES = (100_000, 300_000, 1_000_000)
TARGET_SPEEDUP = 3.0
TARGET_EXPONENT = 1.1
PEERS = {"sglang": "/work/venvs/sglang/bin/python", "vllm": "/work/venvs/vllm/bin/python"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "string"} for k in keys},
            },
        },
    }
    for name, keys in (
        ("write_file", ("path", "content")),
        ("edit_file", ("path", "old_string", "new_string")),
        ("run_command", ("command",)),
    )
]
Calls = list[tuple[str, dict[str, str]]]


def block(fmt: str, name: str, args: Sequence[tuple[str, str]]) -> str:
    """One call as the family's chat template writes it."""
    if fmt == "hermes":
        body = json.dumps({"name": name, "arguments": dict(args)}, ensure_ascii=False)
        return f"<tool_call>\n{body}\n</tool_call>"
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args)
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def chat(fmt: str, n: int = wl.MB, n_calls: int = wl.N_CALLS) -> tuple[str, str, Calls]:
    """``n`` characters: ``n_calls`` one-call blocks with prose between them (as (c))."""
    rng = random.Random(wl.DOC_SEED)
    blocks: list[str] = []
    calls: Calls = []
    for i in range(n_calls):
        path = f"src/pkg/module_{i:03d}.py"
        kind = rng.random()
        if kind < 0.6:
            name, args = "write_file", [("path", path), ("content", wl.code(rng, 3000))]
        elif kind < 0.85:
            old, new = wl.code(rng, 700), wl.code(rng, 1500)
            name, args = "edit_file", [("path", path), ("old_string", old), ("new_string", new)]
        else:
            name, args = "run_command", [("command", wl.shell(rng, rng.randint(5, 40)))]
        blocks.append(block(fmt, name, args))
        calls.append((name, dict(args)))
    budget = n - sum(len(b) for b in blocks)
    per = budget // (n_calls + 1)
    segments = [wl.prose(rng, per - 2) + "\n\n" for _ in range(n_calls)]
    segments.append(wl.prose(rng, budget - per * n_calls - 2) + "\n\n")
    parts = [segments[0]]
    for b, seg in zip(blocks, segments[1:]):
        parts += [b, seg]
    return "".join(parts), "".join(segments), calls


def one_argument(fmt: str, size: int) -> tuple[str, str, Calls]:
    value = wl.code(random.Random(wl.DOC_SEED + size), size)
    pre = "Here is the file you asked for.\n\n"
    return (
        pre + block(fmt, "write_file", [("content", value)]),
        pre,
        [("write_file", {"content": value})],
    )


def run_ours(fmt: str, early: str) -> Callable[[Sequence[str]], None]:
    def run(chunks: Sequence[str]) -> None:
        sieve = Sieve(dialects=(fmt,), early_emit=early)
        feed = sieve.feed
        for c in chunks:
            feed(c)
        sieve.close()

    return run


def verify(fmt: str, label: str, chunks: Sequence[str], text: str, calls: Calls) -> None:
    for early in ("block", "arguments"):
        sieve = Sieve(dialects=(fmt,), early_emit=early)
        events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
        got = [(c.name, c.input) for e in events if isinstance(e, ToolCalls) for c in e.calls]
        released = "".join(e.text for e in events if isinstance(e, Text))
        if got != calls or released != text:
            raise SystemExit(f"bench_families: {fmt} {label} ({early}): wrong calls or text")


def best(run: Callable[[Sequence[str]], None], chunks: Sequence[str], reps: int) -> float:
    out = []
    for _ in range(reps):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        run(chunks)
        out.append(time.perf_counter() - t0)
        gc.enable()
    return min(out)


def peer(python: str, name: str, fmt: str, chunks: Sequence[str], budget: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "chunks.json").write_text(json.dumps(list(chunks)), encoding="utf-8")
        (Path(tmp) / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
        script = Path(__file__).resolve().parent / "_peer_parsers.py"
        done = subprocess.run(
            [python, str(script), name, fmt, tmp, str(budget)],
            capture_output=True,
            text=True,
            timeout=budget * 3 + 300,
            check=False,
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:120]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def row(label: str, chars: int, total: int, seconds: float, note: str = "") -> str:
    read = "" if chars >= total else f" (read {100 * chars / total:.1f} % in the budget)"
    return f"  {label:<40} {tm.mbps(chars, seconds):9.3f} MB/s  {seconds:8.2f} s{read} {note}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated")
    for name, default in PEERS.items():
        parser.add_argument(f"--{name}", default=default, metavar="PYTHON")
    args = parser.parse_args()
    reps = 1 if args.quick else 3
    budget = 20.0 if args.quick else args.budget
    peers = (
        {}
        if args.no_peers
        else {n: getattr(args, n) for n in PEERS if Path(getattr(args, n)).exists()}
    )
    print("bench_families: 1-8-character chunks; MB/s = 10^6 characters per second")
    for fmt in args.formats.split(","):
        print(f"\n{fmt}: W1-style chat, 1 MB, 200 calls")
        doc, text, calls = chat(fmt)
        chunks = wl.random_chunks(doc)
        verify(fmt, "chat", chunks, text, calls)
        ours = {e: best(run_ours(fmt, e), chunks, reps) for e in ("block", "arguments")}
        for e, s in ours.items():
            print(row(f"callsieve early_emit={e}", len(doc), len(doc), s))
        fastest = 0.0
        for name, python in peers.items():
            r = peer(python, name, fmt, chunks, budget)
            if "error" in r:
                print(f"  {name:<40} not run: {r['error']}")
                continue
            rate = r["chars"] / r["seconds"]
            fastest = max(fastest, rate)
            print(row(name, r["chars"], len(doc), r["seconds"], f"{len(r['calls'])} calls seen"))
        if fastest:
            speedup = len(doc) / ours["arguments"] / fastest
            print(
                f"  callsieve (arguments) / fastest peer: {speedup:.1f}x  target >= "
                f"{TARGET_SPEEDUP:.0f}x  {tm.verdict(speedup >= TARGET_SPEEDUP)}"
            )
        print(f"\n{fmt}: one argument of {', '.join(f'{s // 1000} kB' for s in ARG_SIZES)}")
        seconds: dict[str, list[float]] = {"block": [], "arguments": []}
        for size in ARG_SIZES:
            doc, text, calls = one_argument(fmt, size)
            chunks = wl.random_chunks(doc)
            verify(fmt, f"arg {size}", chunks, text, calls)
            for e, times in seconds.items():
                s = best(run_ours(fmt, e), chunks, reps)
                times.append(s)
                print(row(f"callsieve {size // 1000} kB early_emit={e}", len(doc), len(doc), s))
            if size == ARG_SIZES[-1]:
                for name, python in peers.items():
                    r = peer(python, name, fmt, chunks, budget)
                    if "error" in r:
                        print(f"  {name:<40} not run: {r['error']}")
                        continue
                    print(row(f"{name} {size // 1000} kB", r["chars"], len(doc), r["seconds"]))
        for e, s in seconds.items():
            slope = tm.exponent(ARG_SIZES, s)
            print(
                f"  callsieve early_emit={e}: exponent {slope:.2f}  target <= "
                f"{TARGET_EXPONENT}  {tm.verdict(slope <= TARGET_EXPONENT)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

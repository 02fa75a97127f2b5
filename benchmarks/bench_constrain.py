"""Strategy: measure what exporting a constraint costs (``callsieve.constrain``, SPEC §18):
the figure issue 27 names is "milliseconds for 50 tools, cached per tool set".

What it measures. A tool set of 50 tools (3 to 6 parameters each: strings, enums, bounded
integers, numbers, booleans, an array of strings, a nested object), exported in every
default dialect and format (``lark``, ``gbnf``, ``structural-tag``):
  - *new tool set*: a set the cache has not seen (one schema bound differs each run: every
    run builds the grammar), with the dialects' grammars and spellings already loaded;
  - *cached*: the same set again (reading and checking the tools, then a cache hit);
and, against them in the same run, a reference — ``json.dumps`` of the 50 schemas (what any
exporter pays to read the set; not the benchmarks' *floor*, benchmarks/README.md) — and a
peer where it is installed: llguidance compiling the exported grammar (what the engine pays
for the grammar we hand it).
A last row times the first export in a fresh process (import, grammar load from the disk
cache, export). Each figure is the best of N runs (15, or 5 with ``--quick``) in CPU time
of this process (``time.process_time``: on a shared machine, wall time mostly measures the
neighbours), ``gc`` collected before and disabled during each run.

It is a report, not a test: it exits 0 whatever the figures say.

Usage: ``python benchmarks/bench_constrain.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import callsieve
from callsieve import constrain

TOOLS = 50
FORMATS = ("lark", "gbnf", "structural-tag")
#: What a server calls for each format (the CLI's ``export`` also pretty-prints JSON).
API = {
    "lark": constrain.lark_grammar,
    "gbnf": constrain.gbnf,
    "structural-tag": constrain.structural_tag,
}


def tool_set(variant: int) -> list[dict[str, Any]]:
    """50 tools; ``variant`` changes one bound, so each variant is a new tool set."""
    out = []
    for k in range(TOOLS):
        props: dict[str, Any] = {
            "query": {"type": "string", "maxLength": 200 + variant},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100 + k},
            "mode": {"type": "string", "enum": ["fast", "exact", f"mode_{k}"]},
        }
        if k % 2:
            props["tags"] = {"type": "array", "items": {"type": "string"}, "maxItems": 5}
        if k % 3:
            props["options"] = {
                "type": "object",
                "properties": {"strict": {"type": "boolean"}, "weight": {"type": "number"}},
                "required": ["strict"],
            }
        if k % 5 == 0:
            props["note"] = {"type": "string"}
        out.append(
            {
                "type": "function",
                "function": {
                    "name": f"tool_{k}",
                    "description": f"Tool number {k}.",
                    "parameters": {"type": "object", "properties": props, "required": ["query"]},
                },
            }
        )
    return out


def best(fn: Callable[[], object], runs: int) -> float:
    out = float("inf")
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            t = time.process_time()
            fn()
            out = min(out, time.process_time() - t)
        finally:
            gc.enable()
    return out


def cold(fmt: str, dialect: str) -> float:
    """The first export in a fresh process: import, grammars from the disk cache, export."""
    code = (
        "import json, sys, time; t = time.perf_counter(); "
        "sys.path.insert(0, sys.argv[1] + '/src'); sys.path.insert(0, sys.argv[1] + "
        "'/benchmarks'); from callsieve import constrain; from bench_constrain import "
        "tool_set; constrain.export(tool_set(0), sys.argv[2], sys.argv[3]); "
        "print(time.perf_counter() - t)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), fmt, dialect],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(proc.stdout.strip())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    runs = 5 if ap.parse_args().quick else 15
    base = tool_set(0)
    try:
        import llguidance  # the peer, where installed
    except ImportError:
        llguidance = None
    print(f"export of {TOOLS} tools (best of {runs}; milliseconds)")
    reference = best(lambda: [json.dumps(t) for t in base], runs)
    print(f"{'reference: json.dumps of the 50 schemas':48} {reference * 1e3:8.3f}")
    print(
        f"{'dialect':18} {'format':15} {'new tool set':>12} {'cached':>8} {'grammar':>9}"
        f" {'llguidance compile':>19}"
    )
    serial = 0
    for dialect in callsieve.DEFAULT_DIALECTS:
        for fmt in FORMATS:
            constrain.export(base, fmt, dialect)  # grammars and spellings loaded
            sets = iter([tool_set(serial := serial + 1) for _ in range(runs)])  # (untimed)
            api = API[fmt]
            new = best(lambda api=api, dialect=dialect, sets=sets: api(next(sets), dialect), runs)
            hit = best(lambda api=api, dialect=dialect: api(base, dialect), runs)
            text = constrain.export(base, fmt, dialect)
            peer = "-"
            if llguidance is not None and fmt != "structural-tag":
                kind = "lark" if fmt == "lark" else "gbnf"
                g = llguidance.grammar_from(kind, text)
                peer = f"{best(lambda g=g: llguidance.LLMatcher.validate_grammar(g), 3) * 1e3:.1f}"
            print(
                f"{dialect:18} {fmt:15} {new * 1e3:12.2f} {hit * 1e3:8.3f} "
                f"{len(text) // 1024:7d}kB {peer:>19}"
            )
    for fmt in FORMATS:
        print(f"{'first export, fresh process':28} {fmt:15} {cold(fmt, 'dsml') * 1e3:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

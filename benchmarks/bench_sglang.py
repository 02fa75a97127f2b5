"""Strategy: callsieve's SGLang detectors against SGLang's own DeepSeek detectors, both
driven through SGLang's ``FunctionCallParser`` as its chat serving drives it (issue 35).

What it measures. ``--corpus`` (the default): how many cases of the DeepSeek corpus
(tests/spec/test_s02_deepseek_corpus.py: V3, V3.1, V3.2, V4 and V4.1 output, clean and
damaged, and what must stay text) each tool parser gets right, streamed in random chunks of
1-8 atoms (a special token such as ``<｜DSML｜`` is one atom, never split, as a detokenizer
delivers it) and whole (``parse_non_stream``). "calls" counts the cases whose calls (names
and arguments) are the expected ones, "calls + text" those whose content is exact too (white
space at the ends aside). A parser that raises got the case wrong. ``--speed``: the chat
workload of ``bench_vllm`` (c), in DeepSeek V3.2's spelling, ``--size`` characters (200 kB by
default) fed in the same random 1-8-atom chunks through ``parse_stream_chunk``, best of 3, for
SGLang's ``deepseekv32`` and for ``callsieve``; the calls are checked outside the timing.

Usage: ``python benchmarks/bench_sglang.py [--corpus] [--speed [--size N]]`` in an
environment with ``pip install '.[sglang]'``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import random
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import _workloads

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

from callsieve import parse

PARSERS = ("deepseekv3", "deepseekv31", "deepseekv32", "deepseekv4", "deepseekv41", "callsieve")
ATOM = re.compile(r"<｜[^｜<>]{1,40}｜>|.", re.DOTALL)


def atoms_chunks(text: str, seed: int = 7) -> list[str]:
    atoms = ATOM.findall(text)
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(atoms):
        n = rng.randint(1, 8)
        out.append("".join(atoms[at : at + n]))
        at += n
    return out


def tools_for(names: Sequence[str]) -> list[Tool]:
    return [
        Tool(type="function", function={"name": n, "parameters": {"type": "object"}})
        for n in dict.fromkeys(list(names) or ["noop"])
    ]


def streamed(name: str, tools: list[Tool], chunks: Sequence[str]) -> tuple[str, list[Any]]:
    parser = FunctionCallParser(tools, name)
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    for at, chunk in enumerate(chunks):
        normal, items = parser.parse_stream_chunk(chunk)
        if at == len(chunks) - 1:
            end_text, end_items = parser.parse_stream_end()
            normal, items = (normal or "") + end_text, list(items) + end_items
        text.append(normal or "")
        for item in items:
            if item.name:
                calls[item.tool_index] = {"name": item.name, "arguments": ""}
            calls.setdefault(item.tool_index, {"name": "?", "arguments": ""})
            calls[item.tool_index]["arguments"] += item.parameters
    named = [(c["name"], json.loads(c["arguments"] or "{}")) for _, c in sorted(calls.items())]
    return "".join(text), named


def whole(name: str, tools: list[Tool], text: str) -> tuple[str, list[Any]]:
    parser = FunctionCallParser(tools, name)
    if not parser.has_tool_call(text):
        return text, []
    normal, items = parser.parse_non_stream(text)
    return normal, [(c.name, json.loads(c.parameters)) for c in items]


def load_corpus() -> Any:
    spec = importlib.util.spec_from_file_location(
        "deepseek_corpus", ROOT / "tests" / "spec" / "test_s02_deepseek_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CORPUS


def corpus_table() -> None:
    cases = load_corpus()
    n = len(cases)
    print(f"## The DeepSeek corpus: {n} cases, through SGLang's FunctionCallParser\n")
    print(
        "| tool parser | streamed: calls | streamed: calls + text | whole: calls | whole: calls + text |"
    )
    print("|---|---|---|---|---|")
    for name in PARSERS:
        counts = [0, 0, 0, 0]
        for case in cases:
            tools = tools_for([c for c, _ in case.calls])
            want = [(c, a) for c, a in case.calls]
            want_text = parse(case.text).text.strip()
            for way in (0, 1):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got_text, got = (
                            streamed(name, tools, atoms_chunks(case.text))
                            if way == 0
                            else whole(name, tools, case.text)
                        )
                    calls_ok = got == want
                    text_ok = calls_ok and got_text.strip() == want_text
                except Exception:  # noqa: BLE001  (a parser that raises got the case wrong)
                    calls_ok = text_ok = False
                counts[2 * way] += calls_ok
                counts[2 * way + 1] += text_ok
        print(f"| {name} | " + " | ".join(f"{c}/{n}" for c in counts) + " |")


def v32_block(name: str, args: Sequence[tuple[str, str]]) -> str:
    params = "".join(
        f'<｜DSML｜parameter name="{k}" string="true">{v}</｜DSML｜parameter>\n' for k, v in args
    )
    return (
        f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n{params}'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )


def speed_table(size: int) -> None:
    saved = _workloads.dsml_block
    _workloads.dsml_block = v32_block
    try:
        n_calls = max(1, _workloads.N_CALLS * size // _workloads.SIZE)
        text, (_, want) = _workloads.chat(random.Random(_workloads.DOC_SEED + 2), size, n_calls)
    finally:
        _workloads.dsml_block = saved
    chunks = atoms_chunks(text, seed=11)
    tools = tools_for([name for name, _ in want])
    print(f"## {len(text):,} characters, {len(want)} calls, {len(chunks):,} chunks\n")
    print("| tool parser | seconds (best of 3) | calls exact |")
    print("|---|---:|---|")
    for name in ("deepseekv32", "callsieve"):
        _, got = streamed(name, tools, chunks)
        ok = got == [(n, dict(a)) for n, a in want]
        best = float("inf")
        for _ in range(3):
            parser = FunctionCallParser(tools, name)
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            for chunk in chunks:
                parser.parse_stream_chunk(chunk)
            parser.parse_stream_end()
            best = min(best, time.perf_counter() - start)
            gc.enable()
        print(f"| {name} | {best:.3f} | {'yes' if ok else 'no'} |")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="store_true", help="count the DeepSeek corpus")
    ap.add_argument("--speed", action="store_true", help="time bench_vllm's (c) workload")
    ap.add_argument("--size", type=int, default=200_000, help="--speed's size in characters")
    args = ap.parse_args(argv)
    load_plugins()
    if args.corpus or not args.speed:
        corpus_table()
    if args.speed:
        print()
        speed_table(args.size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

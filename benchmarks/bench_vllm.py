"""Strategy: callsieve's vLLM plugin against vLLM's own parser for the same format, both
driven through vLLM's serving interface, chunk by chunk (issue 26).

What it measures. The workloads of ``bench_stream`` written in DeepSeek V3.2's format
(``<｜DSML｜function_calls>``, ``string="true"`` parameters holding the raw text, as the model
writes it and as vLLM's ``deepseek_v32`` parser reads it): (c) 1,000,000 characters of chat
with 200 one-call blocks whose arguments are generated code, prose between them; (d) one call
whose single argument is 10 kB ... 1 MB long. Each is fed in ``bench_stream``'s random
1-8-character chunks through ``Parser.parse_delta`` of the parser class vLLM's server composes
(``ParserManager.get_parser``), instantiated as the server does per request. Rows: vLLM's
``deepseek_v32``; callsieve's tool parser alone (``--tool-call-parser callsieve``); both
callsieve parsers (``--reasoning-parser callsieve`` too: reasoning and calls in one pass); and
the floor: vLLM's composed parser around a tool parser that returns each chunk as content and
does nothing else (what vLLM's ``parse_delta`` costs by itself). Each figure is the best of N
runs (3, or 1 with ``--quick``), rows in rounds, ``gc`` collected before and disabled during
each run (``_timing.best_of_runs``); building the request and the parser is not timed.

Correctness is checked on every row outside the timing: the calls (name and arguments, as a
client accumulates the deltas) must be the workload's; the content is reported as exact or
not (vLLM's ``deepseek_v32`` drops the text after a block by design). Targets (the issue's):
callsieve at least 3x faster than vLLM's parser on (c); linear on (d): the slope of log
seconds against log size at most 1.1 (vLLM's is fitted over the sizes it finishes in
``--vllm-limit`` seconds, 100 kB and below by default, as its time grows with the square).

``--corpus`` prints instead how many cases of the DeepSeek corpus
(tests/spec/test_s02_deepseek_corpus.py: V3, V3.1, V3.2, V4 and V4.1 output, clean and
damaged, and what must stay text) each of vLLM's DeepSeek tool parsers gets right against
callsieve's: streamed in random 1-8-token chunks (a special token is never split, as vLLM's
detokenizer delivers them) and whole; "calls" counts the cases whose calls (names and
arguments) are the expected ones, "calls + text" those whose content is exact too. A parser
that raises counts the case as wrong.

``--instructions`` counts instead, under valgrind's callgrind, the instructions of each row's
loop over (c)'s chunks (``--sizes``, 100 kB and 1 MB by default), which repeat where wall
times on a shared machine do not: the parser built and warmed up outside the count, each
row counted two ways — ``parse_delta`` alone, and ``server chunk``: what vLLM's streaming
chat does per chunk besides, ``ChatStreamProcessor.step`` and one serialized
``ChatCompletionStreamResponse`` per delta — and in two collector modes, ``gc`` off (the
timing's setting) and as ``vllm serve`` runs (collector on, start-up heap frozen, the
parser metrics registered). The floor row bounds what any parser can gain: vLLM's
deepseek_v32 count over the floor's.

Usage: ``python benchmarks/bench_vllm.py [--quick | --corpus | --instructions]`` in an
environment with vLLM and callsieve (docs/vllm.md). It is a report: it exits 1 only when
callsieve is wrong.
"""

from __future__ import annotations

import argparse
import gc
import json
import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "integrations"))

import _timing
import _workloads

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from vllm.entrypoints.generate.base.protocol import DeltaMessage
    from vllm.entrypoints.openai.chat_completion.protocol import (
        ChatCompletionResponseStreamChoice,
        ChatCompletionStreamResponse,
    )
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager
    from vllm.tool_parsers import ToolParser, ToolParserManager
    from vllm_harness import chunked, load_plugins, request, stream, tokenizer, whole

D_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
TARGET_SPEEDUP = 3.0
TARGET_EXPONENT = 1.1
Expected = tuple[str, list[tuple[str, dict[str, str]]]]


def v32_block(name: str, args: Sequence[tuple[str, str]]) -> str:
    params = "".join(
        f'<｜DSML｜parameter name="{k}" string="true">{v}</｜DSML｜parameter>\n' for k, v in args
    )
    return (
        f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n{params}'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )


def in_v32(make: Callable[..., tuple[str, Expected]], *args: Any) -> tuple[str, Expected]:
    """``bench_stream``'s generator with its blocks written in V3.2's spelling."""
    saved = _workloads.dsml_block
    _workloads.dsml_block = v32_block
    try:
        return make(*args)
    finally:
        _workloads.dsml_block = saved


def chat() -> tuple[str, Expected]:
    return in_v32(
        _workloads.chat,
        random.Random(_workloads.DOC_SEED + 2),
        _workloads.SIZE,
        _workloads.N_CALLS,
    )


def one_call(size: int) -> tuple[str, Expected]:
    return in_v32(_workloads.one_call, random.Random(_workloads.DOC_SEED + 3), size)


class EchoToolParser(ToolParser):  # type: ignore[misc]
    """The floor: every chunk is content; nothing is parsed."""

    engine_based_streaming = True

    def extract_tool_calls_streaming(self, *args: Any, **kwargs: Any) -> Any:
        return DeltaMessage(content=args[2]) if args[2] else None


ROWS = {
    "vLLM deepseek_v32": ("deepseek_v32", None),
    "floor (vLLM's parse_delta)": ("_echo", None),
    "callsieve (tool parser)": ("callsieve", None),
    "callsieve (tool + reasoning)": ("callsieve", "callsieve"),
}


def factory(tool: str, reasoning: str | None, names: Sequence[str]) -> Callable[[], Any]:
    tools = [{"type": "function", "function": {"name": n}} for n in dict.fromkeys(names)]
    req = request(tools)
    cls = ParserManager.get_parser(
        tool_parser_name=tool,
        reasoning_parser_name=reasoning,
        enable_auto_tools=True,
        tokenizer=tokenizer(),
    )
    return lambda: (cls(tokenizer(), req.tools, chat_template_kwargs={}, model_config=None), req)


def feed(make: Callable[[], Any], chunks: Sequence[str]) -> list[Any]:
    parser, req = make()
    return run_parse_delta(parser, req, chunks)


def run_parse_delta(parser: Any, req: Any, chunks: Sequence[str]) -> list[Any]:
    """``Parser.parse_delta`` per chunk, as ``ChatStreamProcessor.step`` calls it."""
    out = []
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        delta = parser.parse_delta(chunk, [0], req, prompt_token_ids=[], finished=i == last)
        if delta is not None:
            out.append(delta)
    return out


def run_server_chunks(parser: Any, req: Any, chunks: Sequence[str]) -> list[Any]:
    """What vLLM's streaming chat (``chat_completion_stream_generator``) does per chunk
    besides parsing: ``ChatStreamProcessor.step`` (``parse_delta`` and its tool-call
    filters), then, for a chunk whose delta is not ``None``, a
    ``ChatCompletionStreamResponse`` holding one choice, serialized to an SSE line. (Its
    logging, logprobs and usage branches are off by default and left out.)"""
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=type(parser))
    out = []
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        delta, finish = processor.step(chunk, [0], "stop" if i == last else None, [])
        if delta is None:
            if finish is None:
                continue
            delta = DeltaMessage()
        choice = ChatCompletionResponseStreamChoice(
            index=0, delta=delta, logprobs=None, finish_reason=finish, token_ids=None
        )
        response = ChatCompletionStreamResponse(
            id="chatcmpl-0",
            object="chat.completion.chunk",
            created=0,
            choices=[choice],
            model="m",
            kv_transfer_params=None,
        )
        data = response.model_dump_json(exclude_unset=True, exclude_none=not response.choices)
        out.append(f"data: {data}\n\n")
    return out


def collect(deltas: Sequence[Any]) -> tuple[str, list[tuple[str, Any]]]:
    content: list[str] = []
    calls: dict[int, list[str]] = {}
    for d in deltas:
        content.append(d.content or "")
        for tc in d.tool_calls or []:
            call = calls.setdefault(tc.index, ["", ""])
            if tc.function is not None:
                call[0] += tc.function.name or ""
                call[1] += tc.function.arguments or ""
    named = []
    for _, (name, args) in sorted(calls.items()):
        try:
            named.append((name, json.loads(args)))
        except ValueError:
            named.append((name, args))
    return "".join(content), named


def check(make: Callable[[], Any], chunks: Sequence[str], want: Expected) -> tuple[bool, bool]:
    text, calls = collect(feed(make, chunks))
    return calls == want[1], text == want[0]


def timed(makes: Sequence[Callable[[], Any]], chunks: Sequence[str], reps: int) -> list[float]:
    runs = [lambda c, m=m: feed(m, c) for m in makes]
    return _timing.best_of_runs(runs, chunks, reps)


# ---------------------------------------------------------------- instruction counts
#: How the collector runs: off (the timing's setting), or as vLLM's API server runs it —
#: enabled, with the start-up heap frozen (``freeze_gc_heap()``: ``gc.collect()`` and
#: ``gc.freeze()`` in the server's lifespan) and the parser-invocation counter registered
#: (``init_parser_metrics``, which ``vllm serve`` calls when a tool parser is named: one
#: Prometheus increment per chunk, in every row alike).
GC_MODES = ("off", "server")
WAYS = {"parse_delta": run_parse_delta, "server chunk": run_server_chunks}
WARM_CHUNKS = 2000
_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)


def chat_at(size: int) -> tuple[str, Expected]:
    """(c) at ``size`` characters, with ``N_CALLS`` calls per MB."""
    calls = max(1, _workloads.N_CALLS * size // _workloads.SIZE)
    return in_v32(_workloads.chat, random.Random(_workloads.DOC_SEED + 2), size, calls)


def server_conditions() -> None:
    """The collector and the metrics as in a running ``vllm serve`` (see ``GC_MODES``)."""
    from vllm.parser.metrics import init_parser_metrics

    init_parser_metrics(model_name="m")
    gc.enable()
    gc.collect()
    gc.freeze()


def instructions_child(size: int, ways: Sequence[str], modes: Sequence[str]) -> None:
    """Inside callgrind: every row's loop once per way and collector mode, each through
    ``operator.call`` (callgrind collects only inside it and dumps a profile as it
    leaves); the loops' labels go to stdout, one JSON line each, in the dumps' order."""
    load_plugins()
    ToolParserManager.register_module("_echo", module=EchoToolParser)
    doc, want = chat_at(size)
    chunks = _workloads.random_chunks(doc)
    names = [n for n, _ in want[1]]
    makes = {row: factory(tool, thought, names) for row, (tool, thought) in ROWS.items()}
    for make in makes.values():  # (compiled patterns, lazy imports: not the loop's cost)
        for way in ways:
            WAYS[way](*make(), chunks[:WARM_CHUNKS])
    for mode in modes:
        if mode == "server":
            server_conditions()
        else:
            gc.collect()
            gc.disable()
        for way in ways:
            for row, make in makes.items():
                parser, req = make()
                operator.call(WAYS[way], parser, req, chunks)
                print(json.dumps([row, way, mode]), flush=True)


def count_instructions(
    size: int, ways: Sequence[str], modes: Sequence[str], src: str
) -> dict[tuple[str, str, str], int]:
    """Instructions of each loop of ``instructions_child`` under callgrind, which counts
    only inside ``operator.call`` (``--toggle-collect``; nothing else here calls it, which
    the dump count checks)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        cmd = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no",
            "--toggle-collect=_operator_call", "--dump-after=_operator_call",
            f"--callgrind-out-file={out}", sys.executable, __file__,
            "--instructions-child", str(size), ",".join(ways), ",".join(modes),
        ]  # fmt: skip
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=src)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        labels = [tuple(json.loads(line)) for line in done.stdout.splitlines() if line[:1] == "["]
        dumps = sorted(Path(tmp).glob("cg.*"), key=lambda p: int(p.suffix[1:]))
        if done.returncode != 0 or len(dumps) != len(labels):
            raise SystemExit(
                f"bench_vllm: callgrind run failed ({len(dumps)} dumps, {len(labels)} loops):"
                f"\n{done.stderr[-3000:]}"
            )
        counts = {}
        for label, dump in zip(labels, dumps):
            found = _TOTALS.search(dump.read_text())
            counts[label] = int(found.group(1)) if found else 0
        return counts  # type: ignore[return-value]


def instructions_table(sizes: Sequence[int], ways: Sequence[str], src: str) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_vllm: --instructions needs valgrind on the PATH")
    print(f"## (c) instructions per row (callgrind), 1-8-character chunks, callsieve from {src}\n")
    print(
        "Millions of instructions of the loop over the chunks (parser built, warmed up on "
        f"{WARM_CHUNKS} chunks, outside it); in brackets, vLLM deepseek_v32's count over "
        "the row's, in the same way and collector mode.\n"
    )
    for size in sizes:
        doc, want = chat_at(size)
        counts = count_instructions(size, ways, GC_MODES, src)
        n = len(_workloads.random_chunks(doc))
        cols = [(w, m) for w in ways for m in GC_MODES]
        print(f"### {size:,} characters, {len(want[1])} calls, {n:,} chunks\n")
        print("| row | " + " | ".join(f"{w}, gc {m}" for w, m in cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for row in ROWS:
            cells = []
            for w, m in cols:
                ir, base = counts[(row, w, m)], counts[("vLLM deepseek_v32", w, m)]
                cells.append(f"{ir / 1e6:,.1f} M ({base / ir:.2f}x)")
            print(f"| {row} | " + " | ".join(cells) + " |")
        floor_key, ours_key = "floor (vLLM's parse_delta)", "callsieve (tool parser)"
        for w, m in cols:
            floor, ours, base = (
                counts[(r, w, m)] for r in (floor_key, ours_key, "vLLM deepseek_v32")
            )
            print(
                f"\n{w}, gc {m}: the floor caps any parser at {base / floor:.2f}x; callsieve's "
                f"own share per chunk is {(ours - floor) / n:.0f} instructions, the floor's "
                f"{floor / n:.0f}, deepseek_v32's {(base - floor) / n:.0f} over the floor."
            )
        print()


CORPUS_PARSERS = (
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32",
    "deepseek_v4",
    "deepseek_v41",
    "callsieve",
    "callsieve (early_emit=invoke)",
)


def load_corpus() -> Any:
    import importlib.util

    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(
        "deepseek_corpus", ROOT / "tests" / "spec" / "test_s02_deepseek_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CORPUS


def corpus_table() -> int:
    """How many corpus cases each DeepSeek tool parser gets right (see the docstring)."""
    load_plugins()
    cases = load_corpus()
    print(f"## The DeepSeek corpus: {len(cases)} cases, through vLLM's serving interface\n")
    print(
        "| tool parser | streamed: calls | streamed: calls + text | whole: calls "
        "| whole: calls + text |"
    )
    print("|---|---|---|---|---|")
    bad = 0
    for row in CORPUS_PARSERS:
        name = row.split()[0]
        if "invoke" in row:
            os.environ["CALLSIEVE_VLLM_OPTIONS"] = '{"early_emit": "invoke"}'
        counts = [0, 0, 0, 0]
        for case in cases:
            tools = [
                {"type": "function", "function": {"name": n}}
                for n in dict.fromkeys([c for c, _ in case.calls] or ["noop"])
            ]
            want = [(n, a) for n, a in case.calls]
            for way in (0, 1):
                try:
                    req = request(tools, stream=way == 0)
                    from vllm_harness import make_parser

                    parser = make_parser(name, None, req)
                    got = (
                        stream(parser, req, chunked(case.text, None))
                        if way == 0
                        else whole(parser, req, case.text)
                    )
                    calls_ok = got.named_calls() == want
                    text = case.want_text if way == 0 or case.want_text.strip() or not want else ""
                    text_ok = calls_ok and got.content == text
                except Exception:  # noqa: BLE001  (a parser that raises got the case wrong)
                    calls_ok = text_ok = False
                counts[2 * way] += calls_ok
                counts[2 * way + 1] += text_ok
        os.environ.pop("CALLSIEVE_VLLM_OPTIONS", None)
        if "invoke" in row and counts != [len(cases)] * 4:
            bad = 1
        n = len(cases)
        print(f"| {row} | {counts[0]}/{n} | {counts[1]}/{n} | {counts[2]}/{n} | {counts[3]}/{n} |")
    return bad


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="best of 1 instead of 3")
    ap.add_argument(
        "--vllm-limit",
        type=float,
        default=20.0,
        help="seconds after which vLLM's parser is not run on larger arguments",
    )
    ap.add_argument(
        "--corpus",
        action="store_true",
        help="count the DeepSeek corpus cases each DeepSeek parser gets right",
    )
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count each row's instructions on (c) under callgrind instead of timing",
    )
    ap.add_argument(
        "--sizes",
        default="100000,1000000",
        help="--instructions: the (c) document sizes, comma-separated",
    )
    ap.add_argument(
        "--ways",
        default="parse_delta,server chunk",
        help="--instructions: parse_delta, server chunk (both by default)",
    )
    ap.add_argument(
        "--src",
        default=str(ROOT / "src"),
        help="--instructions: the source tree whose callsieve is counted",
    )
    ap.add_argument("--instructions-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.instructions_child:
        size, ways, modes = args.instructions_child
        instructions_child(int(size), ways.split(","), modes.split(","))
        return 0
    if args.corpus:
        return corpus_table()
    if args.instructions:
        sizes = [int(x) for x in args.sizes.split(",")]
        instructions_table(sizes, args.ways.split(","), str(Path(args.src).resolve()))
        return 0
    reps = 1 if args.quick else 3
    load_plugins()
    ToolParserManager.register_module("_echo", module=EchoToolParser)
    doc, want = chat()
    chunks = _workloads.random_chunks(doc)
    names = [n for n, _ in want[1]]
    makes = {row: factory(tool, thought, names) for row, (tool, thought) in ROWS.items()}
    bad = 0
    print(
        f"## (c) 1 MB of chat, {len(want[1])} calls, 1-8-character chunks "
        f"({len(chunks):,} parse_delta calls), best of {reps}\n"
    )
    print("| row | seconds | MB/s | calls exact | text exact | vs vLLM |")
    print("|---|---|---|---|---|---|")
    seconds = timed(list(makes.values()), chunks, reps)
    base = seconds[0]
    for (row, make), t in zip(makes.items(), seconds):
        calls_ok, text_ok = (
            check(make, chunks, want) if row != "floor (vLLM's parse_delta)" else (False, True)
        )
        if row.startswith("callsieve") and not (calls_ok and text_ok):
            bad += 1
        speed = f"{base / t:.2f}x" if row != "vLLM deepseek_v32" else "1.00x"
        print(
            f"| {row} | {t:.3f} | {len(doc) / 1e6 / t:.2f} | "
            f"{'yes' if calls_ok else ('-' if 'floor' in row else '**no**')} | "
            f"{'yes' if text_ok else 'no'} | {speed} |"
        )
    ours = seconds[2]
    print(
        f"\ncallsieve (tool parser) is {base / ours:.2f}x vLLM's deepseek_v32 "
        f"(target >= {TARGET_SPEEDUP}x): {_timing.verdict(base / ours >= TARGET_SPEEDUP)}"
    )

    print(
        f"\n## (d) one call, one argument of 10 kB ... 1 MB, 1-8-character chunks, best of {reps}\n"
    )
    print("| size | vLLM deepseek_v32 s | callsieve s | callsieve calls exact |")
    print("|---|---|---|---|")
    vllm_s: list[float] = []
    ours_s: list[float] = []
    prev = D_SIZES[0]
    for size in D_SIZES:
        doc, want = one_call(size)
        chunks = _workloads.random_chunks(doc)
        make_v = factory("deepseek_v32", None, ["write_file"])
        make_c = factory("callsieve", None, ["write_file"])
        run_vllm = not vllm_s or vllm_s[-1] * (size / prev) ** 2 <= args.vllm_limit
        prev = size
        t_c = timed([make_c], chunks, reps)[0]
        ok = check(make_c, chunks, want)[0]
        bad += not ok
        ours_s.append(t_c)
        cell = "not run (too slow)"
        if run_vllm:
            t_v = timed([make_v], chunks, 1)[0]
            vllm_s.append(t_v)
            cell = f"{t_v:.3f}" + ("" if check(make_v, chunks, want)[0] else " (calls wrong)")
        print(f"| {size:,} | {cell} | {t_c:.3f} | {'yes' if ok else '**no**'} |")
    k_ours = _timing.exponent(D_SIZES, ours_s)
    k_vllm = _timing.exponent(D_SIZES[: len(vllm_s)], vllm_s) if len(vllm_s) > 1 else 0
    print(
        f"\nexponent k (seconds ~ size^k): callsieve {k_ours:.2f} "
        f"(target <= {TARGET_EXPONENT}: {_timing.verdict(k_ours <= TARGET_EXPONENT)}), "
        f"vLLM deepseek_v32 {k_vllm:.2f} over {len(vllm_s)} sizes"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(f"\n(ran in {time.perf_counter() - started:.0f} s)")
    sys.exit(status)

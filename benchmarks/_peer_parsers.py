"""Strategy: time a peer's streaming tool-call parser (SGLang's detectors, vLLM's tool
parsers) on the chunks ``bench_families.py`` wrote, in the peer's own Python environment.

Run by ``bench_families.py`` as ``PYTHON _peer_parsers.py PEER FORMAT WORKDIR BUDGET``:
``PEER`` is ``sglang`` or ``vllm``, ``FORMAT`` ``hermes`` or ``qwen3_coder``; ``WORKDIR``
holds ``chunks.json`` (the chunk list) and ``tools.json`` (OpenAI-style tools). It feeds
the chunks to a fresh parser as each peer's server does — SGLang's
``parse_streaming_increment(delta, tools)``, vLLM's ``extract_tool_calls_streaming(previous,
current, delta, …)`` — best of two runs, and prints one JSON line: the seconds, the
characters fed (a run stops after ``BUDGET`` seconds: a parser that re-reads the text it
has for every chunk would take hours on 1 MB), and the calls it reported (names, so the
script can check the peer read the workload). Nothing here is imported by callsieve.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Any


def sglang_parser(fmt: str, tools: list[dict[str, Any]]) -> Any:
    from sglang.srt.entrypoints.openai.protocol import Tool

    if fmt == "hermes":
        from sglang.srt.function_call.qwen25_detector import Qwen25Detector as Detector
    else:
        from sglang.srt.function_call.qwen3_coder_detector import Qwen3CoderDetector as Detector
    tool_objs = [Tool(**t) for t in tools]

    def make() -> Any:
        det = Detector()

        def feed(delta: str) -> list[str]:
            result = det.parse_streaming_increment(delta, tool_objs)
            return [c.name for c in result.calls if c.name]

        return feed

    return make


class _Tokenizer:
    """What vLLM's tool parsers read of a tokenizer here: a vocabulary (no special tokens:
    the text is fed as text)."""

    def get_vocab(self) -> dict[str, int]:
        return {}

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        return []


def vllm_parser(fmt: str, tools: list[dict[str, Any]]) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    if fmt == "hermes":
        from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser as Parser
    else:
        from vllm.tool_parsers.qwen3_engine_tool_parser import Qwen3EngineToolParser as Parser
    request = ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "x"}], tools=tools
    )

    def make() -> Any:
        parser = Parser(_Tokenizer(), request.tools)
        previous = [""]

        def feed(delta: str) -> list[str]:
            current = previous[0] + delta
            msg = parser.extract_tool_calls_streaming(
                previous[0], current, delta, [], [], [], request
            )
            previous[0] = current
            names: list[str] = []
            for tc in (msg.tool_calls if msg is not None else None) or []:
                fn = tc.function if not isinstance(tc.function, dict) else None
                name = fn.name if fn is not None else tc.function.get("name")
                if name:
                    names.append(name)
            return names

        return feed

    return make


def main() -> int:
    peer, fmt, workdir, budget = sys.argv[1], sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])
    chunks: list[str] = json.loads((workdir / "chunks.json").read_text(encoding="utf-8"))
    tools = json.loads((workdir / "tools.json").read_text(encoding="utf-8"))
    make = (sglang_parser if peer == "sglang" else vllm_parser)(fmt, tools)
    best: dict[str, Any] | None = None
    for _ in range(2):
        feed = make()
        names: list[str] = []
        fed = 0
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        stop = t0 + budget
        for i, chunk in enumerate(chunks):
            names += feed(chunk)
            fed += len(chunk)
            if i % 256 == 0 and time.perf_counter() > stop:
                break
        seconds = time.perf_counter() - t0
        gc.enable()
        run = {"seconds": seconds, "chars": fed, "calls": names}
        if best is None or run["chars"] / run["seconds"] > best["chars"] / best["seconds"]:
            best = run
        if fed < sum(len(c) for c in chunks):
            break  # (over budget: one run says enough)
    print(json.dumps(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())

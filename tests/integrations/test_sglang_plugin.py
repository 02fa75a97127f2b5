"""Issue 35: callsieve as SGLang's tool-call detector and reasoning detector, driven through
SGLang's own classes.

SGLang's plugin loading (``load_plugins()``, the ``sglang.srt.plugins`` entry point) adds
the names; SGLang's argument parsing (``prepare_server_args``) accepts them. Then each reply
goes through SGLang's ``ReasoningParser`` and ``FunctionCallParser`` as its chat serving
drives them (``_process_reasoning_stream`` and ``_process_tool_call_stream``: per chunk, the
reasoning parser first and the tool parser on the answer it leaves, both flushed at the last
chunk; ``_process_tool_calls`` for a whole reply): on every public conformance case and the
DeepSeek corpus, at 1, 5 and random chunk sizes, the content, reasoning and calls equal
``callsieve.parse()``. The serving class itself (``OpenAIServingChat``) needs a running
tokenizer manager and scheduler, which SGLang starts only with a GPU: that is where the test
stops. The module runs where SGLang is installed (``pip install '.[sglang]' pytest``).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "sglang",
    reason="SGLang is not installed here: pip install '.[sglang]' pytest (.ci/run does, in a "
    "second environment)",
)

from helpers import char_chunks as chunks
from helpers import conformance_cases
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

from callsieve import CallAborted, Reasoning, Sieve, Text, ToolCalls, parse
from callsieve.integrations.sglang._plugin import CallAbortedError, detector_classes
from callsieve.prompt import format_calls

if not any(ep.name == "callsieve" for ep in entry_points(group="sglang.srt.plugins")):
    pytest.skip(
        "callsieve is not installed (its entry point): pip install -e .", allow_module_level=True
    )
load_plugins()

CASES = conformance_cases()
_spec = importlib.util.spec_from_file_location(
    "deepseek_corpus", Path(__file__).resolve().parents[1] / "spec" / "test_s02_deepseek_corpus.py"
)
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


CHUNKINGS = {"1": 1, "5": 5, "random": None}


def tool_defs(names: list[str], schemas: list[dict[str, Any]] | None = None) -> list[Tool]:
    if schemas:
        return [
            Tool(
                type="function", function={"name": s["name"], "parameters": s.get("parameters", {})}
            )
            for s in schemas
        ]
    return [
        Tool(type="function", function={"name": n, "parameters": {"type": "object"}})
        for n in dict.fromkeys(names)
    ]


def _dicts(tools: list[Tool]) -> list[dict[str, Any]]:
    return [t.model_dump(exclude_none=True) for t in tools]


@dataclass
class Reply:
    content: str = ""
    reasoning: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)

    def named(self) -> list[tuple[str, Any]]:
        return [(c["name"], json.loads(c["arguments"])) for _, c in sorted(self.calls.items())]


def stream(name: str, tools: list[Tool], pieces: list[str], force: bool = False) -> Reply:
    """The reply as SGLang's streaming chat builds it from the two parsers."""
    thought = ReasoningParser(name, True, force)
    calls = FunctionCallParser(tools, name)
    out = Reply()
    for at, piece in enumerate(pieces):
        last = at == len(pieces) - 1
        reasoning, answer = thought.parse_stream_chunk(piece)
        if last:
            end_reasoning, end_answer = thought.parse_stream_end()
            reasoning, answer = (reasoning or "") + end_reasoning, (answer or "") + end_answer
        out.reasoning += reasoning or ""
        text, items = calls.parse_stream_chunk(answer or "")
        if last:
            end_text, end_items = calls.parse_stream_end()
            text, items = (text or "") + end_text, list(items) + end_items
        out.content += text or ""
        for item in items:
            if item.name:
                assert item.tool_index not in out.calls, "a call's name came twice"
                out.calls[item.tool_index] = {"name": item.name, "arguments": ""}
            out.calls[item.tool_index]["arguments"] += item.parameters
    return out


def whole(name: str, tools: list[Tool], text: str, force: bool = False) -> Reply:
    """The reply as SGLang's non-streaming chat builds it (reasoning first, then the tools)."""
    reasoning, answer = ReasoningParser(name, False, force).parse_non_stream(text)
    parser = FunctionCallParser(tools, name)
    out = Reply(reasoning=reasoning or "", content=answer or "")
    if parser.has_tool_call(answer or ""):
        out.content, items = parser.parse_non_stream(answer or "")
        out.calls = {i: {"name": c.name, "arguments": c.parameters} for i, c in enumerate(items)}
    return out


def expected(text: str, tools: list[Tool], reasoning: str = "tags") -> Reply:
    r = parse(text, tools=_dicts(tools), reasoning=reasoning)
    calls = {i: {"name": c.name, "arguments": c.arguments} for i, c in enumerate(r.calls)}
    return Reply(content=r.text, reasoning=r.reasoning, calls=calls)


def aborts(text: str, tools: list[Tool], pieces: list[str], reasoning: str) -> bool:
    sieve = Sieve(_dicts(tools), early_emit="arguments", reasoning=reasoning)
    events = [e for p in pieces for e in sieve.feed(p)] + sieve.close()
    return any(isinstance(e, CallAborted) for e in events)


def same(got: Reply, want: Reply) -> None:
    assert (got.content.strip(), got.reasoning) == (want.content.strip(), want.reasoning)
    assert got.named() == want.named()


def without_tools(text: str, reasoning: str) -> Reply:
    """A request without tools: SGLang asks no tool parser; the reasoning parser splits the
    thought and passes every block on as written."""
    sieve = Sieve(reasoning=reasoning)
    out = Reply()
    for e in sieve.feed(text) + sieve.close():
        if isinstance(e, Text):
            out.content += e.text
        elif isinstance(e, ToolCalls):
            out.content += e.block.raw
        elif isinstance(e, Reasoning):
            out.reasoning += e.text
    return out


def both_ways(text: str, tools: list[Tool], pieces: list[str], force: bool = False) -> None:
    reasoning = "open" if force else "tags"
    name = "callsieve_deepseek_r1" if force else "callsieve"
    if not tools:
        want = without_tools(text, reasoning)
        same(stream(name, tools, pieces, force), want)
        same(whole(name, tools, text, force), want)
        return
    if aborts(text, tools, pieces, reasoning):
        with pytest.raises(CallAbortedError, match="began streaming and was not made"):
            stream(name, tools, pieces, force)
    else:
        same(stream(name, tools, pieces, force), expected(text, tools, reasoning))
    same(whole(name, tools, text, force), expected(text, tools, reasoning))


# ----------------------------------------------------------------------- loading
def test_sglangs_plugin_loading_adds_every_variant() -> None:
    for name, (tool, thought) in detector_classes().items():
        assert FunctionCallParser.ToolCallParserEnum[name].variant == tool.variant
        assert ReasoningParser.DetectorMap[name].variant == thought.variant


def test_sglangs_server_arguments_accept_the_names() -> None:
    from sglang.srt.server_args import prepare_server_args

    args = prepare_server_args(
        [
            "--model-path",
            "unused",
            "--tool-call-parser",
            "callsieve_hermes",
            "--reasoning-parser",
            "callsieve_deepseek_r1",
        ]
    )
    assert (args.tool_call_parser, args.reasoning_parser) == (
        "callsieve_hermes",
        "callsieve_deepseek_r1",
    )


# ----------------------------------------------------------------------- conformance
@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_conformance_through_sglang(case: dict[str, Any], chunking: str) -> None:
    text = case["input"]
    calls = case["expect"]["calls"]
    tools = tool_defs(
        [c["name"] if isinstance(c, dict) else c[0] for c in calls], case.get("tools")
    )
    both_ways(text, tools, chunks(text, CHUNKINGS[chunking]))


# ----------------------------------------------------------------------- DeepSeek corpus
@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
@pytest.mark.parametrize("case", corpus.CORPUS, ids=corpus.ids)
def test_deepseek_corpus_through_sglang(case: Any, chunking: str) -> None:
    tools = tool_defs([n for n, _ in case.calls])
    both_ways(case.text, tools, chunks(case.text, CHUNKINGS[chunking]))
    assert expected(case.text, tools).named() == [(n, a) for n, a in case.calls]


@pytest.mark.parametrize(
    ("generation", "block"), corpus.THINKING, ids=[g for g, _ in corpus.THINKING]
)
@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_a_thought_then_the_block(generation: str, block: str, chunking: str) -> None:
    tools = tool_defs(["get_weather"])
    text = f"<think>{corpus.THOUGHT}</think>\n\n{block}"
    both_ways(text, tools, chunks(text, CHUNKINGS[chunking]))
    opened = text.removeprefix("<think>")  # R1's template wrote <think>: force_reasoning
    both_ways(opened, tools, chunks(opened, CHUNKINGS[chunking]), force=True)
    got = stream("callsieve_deepseek_r1", tools, chunks(opened, CHUNKINGS[chunking]), True)
    assert got.reasoning == corpus.THOUGHT and got.named() == [corpus.TOKYO]


# ----------------------------------------------------------------------- families
@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder", "glm45", "kimi_k2"])
def test_a_family_variant_reads_its_dialect(dialect: str) -> None:
    name = f"callsieve_{dialect}"
    if name not in FunctionCallParser.ToolCallParserEnum:
        pytest.skip(f"no {dialect} dialect in this callsieve")
    tools = tool_defs(["get_weather", "get_time"])
    calls = [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "CET"})]
    text = "Checking. " + format_calls(calls, dialect, tools=_dicts(tools)) + " Done."
    for k in (1, 5, None):
        got = stream(name, tools, chunks(text, k))
        assert got.named() == calls and "Done." in got.content and "Checking." in got.content
    assert whole(name, tools, text).named() == calls


def test_a_call_cut_off_mid_stream_raises_for_sglangs_error_event() -> None:
    tools = tool_defs(["get_weather"])
    text = "Sure. " + format_calls([("get_weather", {"city": "Paris"})], "hermes")
    cut = text[: text.index("Paris") + 2]
    with pytest.raises(ValueError, match="began streaming and was not made"):
        stream("callsieve_hermes", tools, chunks(cut, 3))

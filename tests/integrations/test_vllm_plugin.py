"""Issue 26: callsieve as vLLM's tool parser and reasoning parser, driven by vLLM itself.

vLLM's own plugin loading registers the parsers; ``ParserManager.get_parser`` composes them as
the server does; ``ChatStreamProcessor.step`` feeds them chunk by chunk as the streaming chat
path does, and ``Parser.parse`` reads a whole reply as the non-streaming path does. On every
public conformance case and the DeepSeek corpus, at 1, 5 and random chunk sizes, what the
response would hold (content, reasoning, calls) equals ``callsieve.parse()`` of the same text.
The module runs where vLLM is installed (``.ci/run`` makes a second environment for it).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "vllm",
    reason="vLLM is not installed here: .ci/run runs these tests in "
    "a second environment with pip install '.[vllm]'",
)

from helpers import char_chunks, conformance_cases
from vllm_harness import (
    Reply,
    chunked,
    load_plugins,
    make_parser,
    request,
    stream,
    tokenizer,
    tool_defs,
    whole,
)

from callsieve import CallAborted, Sieve, parse
from callsieve.integrations.vllm import ENV_OPTIONS, CallAbortedError, active_variants

CASES = conformance_cases()
_spec = importlib.util.spec_from_file_location(
    "deepseek_corpus", Path(__file__).resolve().parents[1] / "spec" / "test_s02_deepseek_corpus.py"
)
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
CHUNKINGS = {
    "1": lambda t: char_chunks(t, 1),
    "5": lambda t: char_chunks(t, 5),
    "random": lambda t: char_chunks(t, None),
    "tokens": lambda t: chunked(t, None),
}


def expected(
    text: str, tools: list[dict[str, Any]], *, whole_reply: bool = False, **options: Any
) -> Reply:
    """``parse()`` of the text, as the response would hold it. (A whole response's content
    that is only white space beside calls is ``None`` in vLLM: ``_extract_tool_calls``.)"""
    r = parse(text, tools=tools, **options)
    content = r.text
    if whole_reply and r.calls and not content.strip():
        content = ""
    reply = Reply(content=content, reasoning=r.reasoning)
    for i, call in enumerate(r.calls):
        reply.calls[i] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    return reply


def same(got: Reply, want: Reply) -> None:
    assert (got.content, got.reasoning) == (want.content, want.reasoning)
    assert got.named_calls() == want.named_calls()
    assert all(c["id"] and c["id"].startswith("chatcmpl-tool-") for c in got.calls.values())


def tools_for(
    calls: list[Any], schemas: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    if schemas:
        return [
            {
                "type": "function",
                "function": {"name": s["name"], "parameters": s.get("parameters", {})},
            }
            for s in schemas
        ]
    return tool_defs([c["name"] if isinstance(c, dict) else c[0] for c in calls])


def aborts(text: str, tools: list[dict[str, Any]], chunks: list[str], reasoning: str) -> bool:
    """Whether argument streaming begins a call here that is then not made (SPEC §7)."""
    sieve = Sieve(tools, early_emit="arguments", reasoning=reasoning)
    events = [e for chunk in chunks for e in sieve.feed(chunk)] + sieve.close()
    return any(isinstance(e, CallAborted) for e in events)


def run_both_ways(
    text: str,
    tools: list[dict[str, Any]],
    chunks: list[str],
    kwargs: dict[str, Any] | None = None,
    reasoning: str = "tags",
) -> None:
    """Streamed and whole through vLLM against ``parse()``. Under argument streaming (the
    default), a call that began and then was not made ends the stream with an error (SPEC
    §17: a client cannot be handed back a call it began to receive), exactly where the
    sieve itself aborts; the whole reply has no such case."""
    req = request(tools)
    parser = make_parser("callsieve", "callsieve", req, kwargs)
    if early_emit() == "arguments" and aborts(text, tools, chunks, reasoning):
        with pytest.raises(CallAbortedError, match="began streaming but was not made"):
            stream(parser, req, chunks)
    else:
        got = stream(parser, req, chunks)
        same(got, expected(text, tools, reasoning=reasoning))
        assert got.finish_reason == ("tool_calls" if got.calls else "stop")
    req = request(tools, stream=False)
    got = whole(make_parser("callsieve", "callsieve", req, kwargs), req, text)
    same(got, expected(text, tools, whole_reply=True, reasoning=reasoning))


def early_emit() -> str:
    import os

    return str(json.loads(os.environ.get(ENV_OPTIONS) or "{}").get("early_emit", "arguments"))


#: The plugin's default (argument streaming) at every chunking, and whole calls per invoke,
#: set as an operator does (``CALLSIEVE_VLLM_OPTIONS``), at random chunks (to keep CI short).
WAYS = [(c, "arguments") for c in CHUNKINGS] + [("random", "invoke")]


def set_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    if mode != "arguments":
        monkeypatch.setenv(ENV_OPTIONS, json.dumps({"early_emit": mode}))


# ----------------------------------------------------------------------- loading
def test_vllms_plugin_loading_finds_both_parsers() -> None:
    from vllm.parser import ParserManager
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    load_plugins()
    for variant in active_variants():
        tool = ToolParserManager.get_tool_parser(variant.name)
        thought = ReasoningParserManager.get_reasoning_parser(variant.name)
        assert (tool.variant, thought.variant) == (variant, variant)
    composed = ParserManager.get_parser(
        tool_parser_name="callsieve",
        reasoning_parser_name="callsieve",
        enable_auto_tools=True,
        tokenizer=tokenizer(),
    )
    assert composed is not None and composed.tool_parser_cls.__name__ == "CallsieveToolParser"


def test_both_parsers_share_one_sieve() -> None:
    req = request(tool_defs(["f"]))
    parser = make_parser("callsieve", "callsieve", req)
    assert parser.tool_parser._state is parser.reasoning_parser._state
    assert parser.tool_parser._state.paired
    other = make_parser("callsieve", "callsieve", req)
    assert other.tool_parser._state is not parser.tool_parser._state


# ----------------------------------------------------------------------- conformance
@pytest.mark.parametrize(("chunking", "mode"), WAYS)
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_conformance_through_vllm(
    case: dict[str, Any], chunking: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_mode(monkeypatch, mode)
    text = case["input"]
    tools = tools_for(case["expect"]["calls"], case.get("tools"))
    run_both_ways(text, tools, CHUNKINGS[chunking](text))


# ----------------------------------------------------------------------- DeepSeek corpus
@pytest.mark.parametrize(("chunking", "mode"), WAYS)
@pytest.mark.parametrize("case", corpus.CORPUS, ids=corpus.ids)
def test_deepseek_corpus_through_vllm(
    case: Any, chunking: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_mode(monkeypatch, mode)
    tools = tools_for(case.calls)
    run_both_ways(case.text, tools, CHUNKINGS[chunking](case.text))
    want = [(n, a) for n, a in case.calls]
    assert expected(case.text, tools).named_calls() == want


@pytest.mark.parametrize(
    ("generation", "block"), corpus.THINKING, ids=[g for g, _ in corpus.THINKING]
)
@pytest.mark.parametrize("chunking", ["1", "5", "random"])
def test_a_thought_then_the_block(generation: str, block: str, chunking: str) -> None:
    tools = tool_defs(["get_weather"])
    text = f"<think>{corpus.THOUGHT}</think>\n\n{block}"
    run_both_ways(text, tools, CHUNKINGS[chunking](text))
    # thinking mode: the template wrote <think>, the reply starts inside the thought
    opened = text.removeprefix("<think>")
    run_both_ways(opened, tools, CHUNKINGS[chunking](opened), {"thinking": True}, "open")
    got = stream(
        make_parser("callsieve", "callsieve", request(tools), {"thinking": True}),
        request(tools),
        CHUNKINGS[chunking](opened),
    )
    assert got.reasoning == corpus.THOUGHT and got.named_calls() == [corpus.TOKYO]

"""Issue 26: what the vLLM plugin does with a request's tools, tool_choice and thinking
settings, beside vLLM's own parsers, and on the token-id questions vLLM's engine asks —
driven by vLLM itself, as test_vllm_plugin.py is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "vllm",
    reason="vLLM is not installed here: .ci/run runs these tests in "
    "a second environment with pip install '.[vllm]'",
)

from helpers import char_chunks
from vllm_harness import (
    chunked,
    make_parser,
    request,
    stream,
    tokenizer,
    tool_defs,
    whole,
)

from callsieve.integrations.vllm import CallAbortedError

SRC = Path(__file__).resolve().parents[2] / "src"
WEATHER = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter '
    'name="location" string="true">Tokyo</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
    "</｜DSML｜function_calls>"
)
DRAFT = '<|DSML|tool_calls><|DSML|invoke name="rm"></|DSML|invoke></|DSML|tool_calls>'
THOUGHT = f"I could call {DRAFT} but I will not."
TOOLS = tool_defs(["get_weather", "rm"])


def prompt(text: str) -> list[int]:
    return list(tokenizer().encode(text, add_special_tokens=False))


# ----------------------------------------------------------------------- argument streaming
def test_argument_fragments_stream_with_index_id_and_name() -> None:
    long = "x" * 300
    text = (
        'Writing.<｜DSML｜function_calls><｜DSML｜invoke name="write">'
        f'<｜DSML｜parameter name="content" string="true">{long}</｜DSML｜parameter>'
        "</｜DSML｜invoke></｜DSML｜function_calls>"
    )
    req = request(tool_defs(["write"]))
    parser = make_parser("callsieve", "callsieve", req)
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=type(parser))
    pieces: list[dict[str, Any]] = []
    chunks = char_chunks(text, 7)
    for i, chunk in enumerate(chunks):
        step = processor.step(
            chunk,
            prompt(chunk),
            "stop" if i == len(chunks) - 1 else None,
            prompt("<｜Assistant｜>"),
        )
        if step.delta is not None:
            pieces += json.loads(step.delta.model_dump_json(exclude_unset=True)).get(
                "tool_calls", []
            )
    first, *rest = pieces
    assert first["id"].startswith("chatcmpl-tool-") and first["type"] == "function"
    assert first["index"] == 0 and first["function"]["name"] == "write"
    assert len(rest) > 10, "the argument streams while it arrives"
    assert all(
        set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in rest
    )
    args = "".join(p["function"].get("arguments", "") for p in pieces)
    assert json.loads(args) == {"content": long}


def test_a_call_cut_off_after_it_began_ends_the_stream_with_an_error() -> None:
    req = request(TOOLS)
    cut = WEATHER[:-40]
    with pytest.raises(CallAbortedError, match=r"tool call 0 \('get_weather'\)") as caught:
        stream(make_parser("callsieve", "callsieve", req), req, char_chunks(cut, 5))
    assert caught.value.reason == "cut_off" and "reason: cut_off" in str(caught.value)


# ----------------------------------------------------------------------- the request
def test_tool_choice_none_leaves_blocks_as_text() -> None:
    text = f"Sure. {WEATHER} Done."
    for k in (1, 5, None):
        req = request(TOOLS, tool_choice="none")
        got = stream(make_parser("callsieve", "callsieve", req), req, char_chunks(text, k))
        assert (got.content, got.calls) == (text, {})
    req = request(TOOLS, tool_choice="none", stream=False)
    got = whole(make_parser("callsieve", "callsieve", req), req, text)
    assert (got.content, got.calls) == (text, {})


def test_a_named_tool_choice_allows_only_that_tool() -> None:
    rm = WEATHER.replace("get_weather", "rm")
    text = f"{rm}{WEATHER}"
    choice = {"type": "function", "function": {"name": "get_weather"}}
    for k in (1, None):
        req = request(TOOLS, tool_choice=choice)
        got = stream(make_parser("callsieve", "callsieve", req), req, char_chunks(text, k))
        assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]
    req = request(TOOLS, tool_choice=choice, stream=False)
    got = whole(make_parser("callsieve", "callsieve", req), req, text)
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]


def test_the_tools_schemas_type_the_values() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
                },
            },
        }
    ]
    text = (
        '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|parameter name="n">10'
        '</|DSML|parameter><|DSML|parameter name="s">42</|DSML|parameter></|DSML|invoke>'
        "</|DSML|tool_calls>"
    )
    req = request(tools)
    got = stream(make_parser("callsieve", "callsieve", req), req, char_chunks(text, 3))
    assert got.named_calls() == [("f", {"n": 10, "s": "42"})]


# ----------------------------------------------------------------------- reasoning
@pytest.mark.parametrize(
    ("variant", "kwargs", "prompt_text"),
    [
        ("callsieve", {"thinking": True}, "<｜Assistant｜>"),
        ("callsieve", {"enable_thinking": True}, "<｜Assistant｜>"),
        ("callsieve", {}, "<｜Assistant｜><think>"),  # the prompt shows the template opened it
        ("callsieve_deepseek_r1", {}, "<｜Assistant｜>"),
        ("callsieve_deepseek_v4", {}, "<｜Assistant｜>"),
    ],
)
def test_a_reply_that_starts_inside_the_thought(
    variant: str, kwargs: dict[str, Any], prompt_text: str
) -> None:
    text = f"{THOUGHT}</think>\n\n{WEATHER}"
    req = request(TOOLS)
    got = stream(
        make_parser(variant, variant, req, kwargs), req, chunked(text, 3), prompt(prompt_text)
    )
    assert got.reasoning == THOUGHT and got.content == "\n\n"
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]


@pytest.mark.parametrize(
    ("kwargs", "prompt_text"),
    [
        ({"thinking": False}, "<｜Assistant｜>"),
        ({"thinking": True}, "<｜Assistant｜></think>"),
        ({"reasoning_effort": "none"}, "<｜Assistant｜>"),
    ],
)
def test_a_reply_that_does_not(kwargs: dict[str, Any], prompt_text: str) -> None:
    text = f"Plain answer. {WEATHER}"
    req = request(TOOLS)
    parser = make_parser("callsieve_deepseek_v4", "callsieve_deepseek_v4", req, kwargs)
    got = stream(parser, req, chunked(text, 4), prompt(prompt_text))
    assert (got.reasoning, got.content) == ("", "Plain answer. ")


def test_include_reasoning_false_drops_the_thought() -> None:
    text = f"<think>{THOUGHT}</think>Answer."
    req = request(TOOLS, include_reasoning=False)
    got = stream(make_parser("callsieve", "callsieve", req), req, char_chunks(text, 4))
    assert (got.reasoning, got.content) == ("", "Answer.")


def test_the_tool_parser_alone_keeps_the_thought_as_content_and_runs_no_draft() -> None:
    text = f"<think>{THOUGHT}</think>Calling. {WEATHER}"
    req = request(TOOLS)
    got = stream(make_parser("callsieve", None, req), req, char_chunks(text, 3))
    assert got.content == f"<think>{THOUGHT}</think>Calling. " and got.reasoning == ""
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]
    req = request(TOOLS, stream=False)
    got = whole(make_parser("callsieve", None, req), req, text)
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]


def test_the_reasoning_parser_beside_vllms_deepseek_v32_tool_parser() -> None:
    text = f"<think>{THOUGHT}</think>Calling.\n{WEATHER}"
    for k in (1, 3, None):
        req = request(TOOLS)
        got = stream(make_parser("deepseek_v32", "callsieve", req), req, chunked(text, k))
        assert got.reasoning == THOUGHT and got.content == "Calling.\n"
        assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]
    req = request(TOOLS, stream=False)
    got = whole(make_parser("deepseek_v32", "callsieve", req), req, text)
    assert got.reasoning == THOUGHT
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]


def test_the_tool_parser_behind_vllms_deepseek_r1_reasoning_parser() -> None:
    text = f"<think>{THOUGHT}</think>Calling. {WEATHER}"
    req = request(TOOLS)
    got = stream(make_parser("callsieve", "deepseek_r1", req), req, chunked(text, 1))
    assert got.content == "Calling. "
    assert got.named_calls() == [("get_weather", {"location": "Tokyo"})]


def test_the_engines_token_id_questions() -> None:
    tok = tokenizer()
    req = request(TOOLS)
    open_, close = tok.convert_tokens_to_ids(["<think>", "</think>"])
    thinking = make_parser("callsieve", "callsieve", req, {"thinking": True}).reasoning_parser
    plain = make_parser("callsieve", "callsieve", req).reasoning_parser
    assert (thinking.reasoning_start_str, thinking.reasoning_end_str) == ("<think>", "</think>")
    assert not thinking.is_reasoning_end(prompt("<｜Assistant｜><think>"))
    assert thinking.is_reasoning_end(prompt("<｜Assistant｜></think>"))
    assert thinking.is_reasoning_end_streaming([], [5, close])
    assert not thinking.is_reasoning_end_streaming([], [5, open_])
    assert thinking.extract_content_ids([5, close, 7, 8]) == [7, 8]
    ids = prompt("abc</think>de")
    assert thinking.count_reasoning_tokens(ids) == 3  # the template opened the thought
    assert plain.count_reasoning_tokens(prompt("<think>ab</think>cd")) == 2


# ----------------------------------------------------------------------- the version contract
def test_an_incompatible_vllm_fails_with_the_supported_range() -> None:
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from callsieve.integrations.vllm import _contract\n"
        "_contract.installed_vllm = lambda: '0.20.0'\n"
        "from vllm.plugins import load_general_plugins; load_general_plugins()\n"
        "from vllm.parser import ParserManager\n"
        "try:\n"
        "    ParserManager.get_parser(tool_parser_name='callsieve', enable_auto_tools=True)\n"
        "except TypeError as exc:\n"
        "    print('CAUSE:', exc.__cause__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    out = done.stdout + done.stderr
    assert "CAUSE: callsieve's vLLM plugin supports vllm>=0.33,<0.34, but vLLM 0.20.0" in out
    assert "pip install 'callsieve[vllm]'" in out


def test_the_trusted_constructors_build_what_pydantic_builds() -> None:
    from vllm.entrypoints.generate.base.protocol import DeltaMessage

    from callsieve.integrations.vllm._deltas import _tool_call, message

    built = [
        message("a", "r", [_tool_call(0, "call_1", "f", "{}")]),
        message("", "", [_tool_call(2, arguments='{"x"')]),
        message("", "r", []),
    ]
    pydantic = [
        DeltaMessage(
            content="a",
            reasoning="r",
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "index": 0,
                    "function": {"name": "f", "arguments": "{}"},
                }
            ],
        ),
        DeltaMessage(tool_calls=[{"index": 2, "function": {"arguments": '{"x"'}}]),
        DeltaMessage(reasoning="r", tool_calls=[]),
    ]
    for ours, theirs in zip(built, pydantic):
        assert ours == theirs
        assert ours.model_dump_json(exclude_unset=True) == theirs.model_dump_json(
            exclude_unset=True
        )
    assert message("", "", []) is None

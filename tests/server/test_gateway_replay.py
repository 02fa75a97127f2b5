"""Replay mode with the real clients: the ``openai`` client (chat completions and Responses,
streamed and not) and the ``anthropic`` client (``messages.stream`` and ``create``) against
``callsieve serve --transcript``; what each client accumulates equals what ``parse()`` and the
API's ``render_response`` give for the same reply (ids aside)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from helpers import ROOT
from loopback import openai_client, running

import callsieve
from callsieve.render import anthropic as render_anthropic
from callsieve.render import openai_chat, openai_responses
from callsieve.server import ServerConfig

TRANSCRIPT = ROOT / "examples" / "transcript.txt"
TEXT = TRANSCRIPT.read_text(encoding="utf-8")
TOOLS = json.loads((ROOT / "examples" / "tools.json").read_text(encoding="utf-8"))
ASK = [{"role": "user", "content": "Look at the project, and the weather in Tokyo."}]
RESULT = callsieve.parse(TEXT, tools=TOOLS)


def calls_of(result: callsieve.ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.input) for c in result.calls]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(ServerConfig.build(transcript=str(TRANSCRIPT), chunk_size=4)) as base:
        yield base


@pytest.fixture(scope="module")
def oai(url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        yield client


@pytest.fixture(scope="module")
def claude(url: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        yield client


def test_the_reply_has_calls_to_find() -> None:
    assert [name for name, _ in calls_of(RESULT)] == ["read_file", "get_weather"]


# ---------------------------------------------------------------------- chat completions
def chat_calls(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]


def test_chat_stream_accumulates_to_the_parsed_reply(oai: openai.OpenAI) -> None:
    expected = openai_chat.render_response(RESULT)["choices"][0]
    with oai.chat.completions.stream(model="m", messages=ASK, tools=TOOLS) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.message.content == expected["message"]["content"]
    assert chat_calls(choice.message) == calls_of(RESULT)
    assert choice.finish_reason == "tool_calls"
    assert final.model == "m"


def test_chat_create_is_the_parsed_reply(oai: openai.OpenAI) -> None:
    expected = openai_chat.render_response(RESULT)["choices"][0]
    reply = oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert reply.choices[0].message.content == expected["message"]["content"]
    assert chat_calls(reply.choices[0].message) == calls_of(RESULT)
    assert reply.choices[0].finish_reason == "tool_calls"


def test_chat_stream_with_usage_asked_ends_with_a_usage_chunk(oai: openai.OpenAI) -> None:
    chunks = list(
        oai.chat.completions.create(
            model="m",
            messages=ASK,
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert all(c.usage is None for c in chunks[:-1])


#: The transcript as a reply to a request without tools: its blocks are leaked markup,
#: dropped (the example in its code fence is text, and stays).
TEXT_ONLY = callsieve.parse(TEXT).text.strip()


def test_without_tools_the_reply_is_text_only(oai: openai.OpenAI) -> None:
    """No call, and no markup of one: a block that parses is dropped; the text around it
    is the reply's, as the model wrote it."""
    reply = oai.chat.completions.create(model="m", messages=ASK)
    content = reply.choices[0].message.content
    assert content == TEXT_ONLY and not reply.choices[0].message.tool_calls
    assert "README.md" not in content and "tool▁calls▁begin" not in content
    assert "docs/example.md" in content and "I will report back" in content
    none = oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice="none")
    assert none.choices[0].message.content == TEXT_ONLY


# ---------------------------------------------------------------------- responses
RESPONSE_TOOLS = [
    {
        "type": "function",
        "name": t["function"]["name"],
        "description": t["function"].get("description", ""),
        "parameters": t["function"]["parameters"],
        "strict": False,
    }
    for t in TOOLS
]


def items_of(output: list[Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for item in output:
        if item.type == "message":
            out.append(("text", "".join(part.text for part in item.content)))
        else:
            out.append((item.name, json.loads(item.arguments)))
    return out


def expected_items() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for item in openai_responses.render_response(RESULT)["output"]:
        if item["type"] == "message":
            out.append(("text", "".join(part["text"] for part in item["content"])))
        else:
            out.append((item["name"], json.loads(item["arguments"])))
    return out


def test_responses_stream_accumulates_to_the_parsed_reply(oai: openai.OpenAI) -> None:
    with oai.responses.stream(model="m", input="Look around.", tools=RESPONSE_TOOLS) as stream:
        final = stream.get_final_response()
    assert items_of(final.output) == expected_items()
    assert [n for n, _ in items_of(final.output) if n != "text"] == ["read_file", "get_weather"]
    assert final.status == "completed"


def test_responses_create_is_the_parsed_reply(oai: openai.OpenAI) -> None:
    reply = oai.responses.create(
        model="m", input=[{"role": "user", "content": "Look."}], tools=RESPONSE_TOOLS
    )
    assert items_of(reply.output) == expected_items()


# ---------------------------------------------------------------------- anthropic
CLAUDE_TOOLS = [
    {
        "name": t["function"]["name"],
        "description": t["function"].get("description", ""),
        "input_schema": t["function"]["parameters"],
    }
    for t in TOOLS
]


def blocks_of(content: list[Any]) -> list[tuple[str, Any]]:
    return [("text", b.text) if b.type == "text" else (b.name, b.input) for b in content]


def expected_blocks() -> list[tuple[str, Any]]:
    return [
        ("text", b["text"]) if b["type"] == "text" else (b["name"], b["input"])
        for b in render_anthropic.render_response(RESULT)["content"]
    ]


def test_anthropic_stream_accumulates_to_the_parsed_reply(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(
        model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS
    ) as stream:
        final = stream.get_final_message()
    assert blocks_of(final.content) == expected_blocks()
    assert final.stop_reason == "tool_use"


def test_anthropic_create_is_the_parsed_reply(claude: anthropic.Anthropic) -> None:
    reply = claude.messages.create(model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS)
    assert blocks_of(reply.content) == expected_blocks()
    assert [n for n, _ in blocks_of(reply.content) if n != "text"] == ["read_file", "get_weather"]


# ---------------------------------------------------------------------- the other routes
def test_models_and_health(oai: openai.OpenAI, url: str) -> None:
    assert [m.id for m in oai.models.list()] == ["callsieve"]
    health = httpx.get(f"{url}/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok", "mode": "replay"}


def test_sieve_options_come_from_the_settings() -> None:
    """The server's sieve options reach every request's sieve (here: one dialect only)."""
    config = ServerConfig.build(transcript=str(TRANSCRIPT), sieve={"dialects": ["deepseek_native"]})
    with running(config) as base:
        client = openai_client(base)
        reply = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    expected = callsieve.parse(TEXT, tools=TOOLS, dialects=["deepseek_native"])
    assert calls_of(expected) == [("get_weather", {"location": "Tokyo"})]
    assert chat_calls(reply.choices[0].message) == calls_of(expected)


def test_metrics_count_the_answers(url: str, oai: openai.OpenAI) -> None:
    """``GET /metrics`` exists when the Prometheus client is installed (the prometheus
    extra, in the test extra): each API's answers by status, and the library's counters
    (SPEC §14) of the sieves the gateway ran."""
    oai.chat.completions.create(model="m", messages=ASK)
    httpx.post(
        f"{url}/v1/messages", content=b"not json", headers={"Content-Type": "application/json"}
    )
    text = httpx.get(f"{url}/metrics").text
    assert 'callsieve_gateway_requests_total{api="chat",outcome="ok",status="200"}' in text
    assert (
        'callsieve_gateway_requests_total{api="messages",outcome="client_error",status="400"}'
    ) in text
    oai.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    calls = [
        line
        for line in httpx.get(f"{url}/metrics").text.splitlines()
        if line.startswith("callsieve_calls_total ")
    ]
    assert calls and float(calls[0].split()[1]) >= len(RESULT.calls)


def test_a_policy_set_in_the_settings_refuses_unlisted_tools() -> None:
    """Options the gateway knows nothing of (SPEC §9's policy) reach the sieve as they are."""
    weather = [t for t in TOOLS if t["function"]["name"] == "get_weather"]
    config = ServerConfig.build(transcript=str(TRANSCRIPT), sieve={"policy": "allowlist"})
    with running(config) as base:
        reply = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=weather)
        text_only = openai_client(base).chat.completions.create(model="m", messages=ASK)
    assert text_only.choices[0].message.content == TEXT_ONLY
    expected = callsieve.parse(TEXT, tools=weather, policy="allowlist")
    assert calls_of(expected) == [("get_weather", {"location": "Tokyo"})]
    assert chat_calls(reply.choices[0].message) == calls_of(expected)

"""Request fields (issue 24, item 9): every field of every API is forwarded, read or refused
with a 400 naming it — checked against what the fake upstream receives."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from gateway_probe_helpers import CALL, TOOLS, gateway
from loopback import Script, anthropic_client, openai_client, scripted

ASK = [{"role": "user", "content": "hi"}]


def post(base: str, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base}{path}", json=body, timeout=10)


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", {"model": "m", "messages": ASK, "audio": {"voice": "x"}}, "audio"),
        ("/v1/chat/completions", {"model": "m", "messages": ASK, "functions": []}, "functions"),
        (
            "/v1/chat/completions",
            {"model": "m", "messages": ASK, "top_logprobs": 3},
            "top_logprobs",
        ),
        (
            "/v1/responses",
            {"model": "m", "input": "x", "previous_response_id": "r"},
            "previous_response_id",
        ),
        ("/v1/responses", {"model": "m", "input": "x", "store": True}, "store"),
        ("/v1/responses", {"model": "m", "input": "x", "truncation": "auto"}, "truncation"),
        ("/v1/responses", {"model": "m", "input": "x", "made_up": 1}, "made_up"),
        (
            "/v1/messages",
            {"model": "m", "max_tokens": 5, "messages": ASK, "mcp_servers": []},
            "mcp_servers",
        ),
        ("/v1/messages", {"model": "m", "max_tokens": 5, "messages": ASK, "made_up": 1}, "made_up"),
    ],
)
def test_a_field_the_gateway_cannot_honour_is_a_400_naming_it(
    path: str, body: dict[str, Any], param: str
) -> None:
    with scripted(Script(text="x")) as model, gateway(model) as base:
        response = post(base, path, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error.get("param", param) == param and param in error["message"]
    assert not model.requests


def test_fields_are_forwarded_under_the_upstreams_names() -> None:
    with scripted(Script(text="x")) as model, gateway(model) as base:
        openai_client(base).chat.completions.create(
            model="m",
            messages=ASK,
            seed=3,
            stop=["END"],
            logit_bias={"1": 2},
            user="u",
            store=False,
            logprobs=False,
            n=1,
            extra_body={"chat_template_kwargs": {"thinking": True}, "min_p": 0.1},
        )
        openai_client(base).responses.create(
            model="m",
            input="x",
            max_output_tokens=9,
            reasoning={"effort": "low"},
            text={"verbosity": "low"},
            store=False,
            temperature=0.2,
        )
        anthropic_client(base).messages.create(
            model="m",
            max_tokens=5,
            messages=ASK,
            extra_body={"top_k": 4},
            stop_sequences=["Z"],
            metadata={"user_id": "who"},
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
    chat, responses, claude = model.requests
    assert {
        k: chat[k]
        for k in ("seed", "stop", "logit_bias", "user", "store", "min_p", "chat_template_kwargs")
    } == {
        "seed": 3,
        "stop": ["END"],
        "logit_bias": {"1": 2},
        "user": "u",
        "store": False,
        "min_p": 0.1,
        "chat_template_kwargs": {"thinking": True, "enable_thinking": True},
    }
    assert "logprobs" not in chat and "n" not in chat
    assert (
        responses["max_tokens"],
        responses["reasoning_effort"],
        responses["verbosity"],
        responses["temperature"],
    ) == (9, "low", "low", 0.2)
    assert responses["chat_template_kwargs"] == {"thinking": True, "enable_thinking": True}
    assert (claude["top_k"], claude["stop"], claude["user"], claude["max_tokens"]) == (
        4,
        ["Z"],
        "who",
        5,
    )
    assert claude["chat_template_kwargs"] == {"thinking": True, "enable_thinking": True}


def test_anthropic_disable_parallel_tool_use_keeps_one_call() -> None:
    two = f"{CALL}\n{CALL.replace('Paris', 'Rome')}"
    claude_tools = [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]
    with (
        scripted(Script(text=two)) as model,
        gateway(model, sieve={"early_emit": "arguments"}) as base,
        anthropic_client(base).messages.stream(
            model="m",
            max_tokens=50,
            messages=ASK,
            tools=claude_tools,
            tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        ) as stream,
    ):
        final = stream.get_final_message()
    assert [b.input for b in final.content if b.type == "tool_use"] == [{"city": "Paris"}]
    assert "at most one tool call" in model.requests[0]["messages"][0]["content"]


TWO_BLOCKS = f"First. {CALL} Then. " + CALL.replace("Paris", "Rome") + " Done."
ONE_BLOCK = (
    "Both. <|DSML|tool_calls>\n"
    + "".join(
        f'<|DSML|invoke name="get_weather">\n<|DSML|parameter name="city"><![CDATA[{city}]]>'
        "</|DSML|parameter>\n</|DSML|invoke>\n"
        for city in ("Paris", "Rome", "Oslo")
    )
    + "</|DSML|tool_calls> Done."
)


@pytest.mark.parametrize("early_emit", ["block", "invoke", "arguments"])
@pytest.mark.parametrize("size", [1, 10_000])
@pytest.mark.parametrize("text", [TWO_BLOCKS, ONE_BLOCK], ids=["two-blocks", "one-block"])
def test_the_call_limit_keeps_the_first_call_whole_under_every_chunking(
    early_emit: str, size: int, text: str
) -> None:
    """``CallLimit`` between the sieve and a renderer: the openai SDK's own accumulator,
    fed the stream, holds exactly the first call — never a fragment of a later one — and
    the text is what it would be without the limit."""
    from openai.lib.streaming.chat import ChatCompletionStreamState

    from callsieve import Sieve
    from callsieve.render import openai_chat
    from callsieve.server._reply.respond import ReplyEvents

    def run(limit: int | None) -> Any:
        events = ReplyEvents(Sieve(TOOLS, early_emit=early_emit), limit)
        renderer = openai_chat.StreamRenderer(model="m")
        state = ChatCompletionStreamState()
        chunks = []
        for i in range(0, len(text), size):
            chunks += renderer.feed(events.feed(text[i : i + size]))
        chunks += renderer.feed(events.close([])) + renderer.close()
        for chunk in chunks:
            state.handle_chunk(openai.types.chat.ChatCompletionChunk.model_validate(chunk))
        return state.get_final_completion().choices[0]

    limited, free = run(1), run(None)
    assert [json.loads(c.function.arguments) for c in limited.message.tool_calls or []] == [
        {"city": "Paris"}
    ]
    assert len(free.message.tool_calls or []) > 1
    assert limited.message.content == free.message.content
    assert limited.finish_reason == "tool_calls"

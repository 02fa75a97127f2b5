"""Upstream mode with the real clients: the gateway in front of a scripted model server on
127.0.0.1 (``loopback.ScriptedModel``) that streams OpenAI SSE and records what it was sent.
What the upstream receives (no ``tools``, the model name, the sampling settings, the history
written in the dialect's formats) and what the client accumulates (``parse()`` of the reply)."""

from __future__ import annotations

import json

import openai
import pytest
from gateway_probe_helpers import gateway
from loopback import Script, anthropic_client, openai_client, scripted

import callsieve
from callsieve.prompt import format_calls, format_results, tool_instructions
from callsieve.server import ServerConfig

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = (
    'Let me check.\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
    '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n'
    "</|DSML|invoke>\n</|DSML|tool_calls>"
)


def test_a_request_without_tools_passes_through_as_text() -> None:
    reply = "Plain words, and a <tool_calls> mention that stays text."
    with (
        scripted(Script(text=reply)) as model,
        gateway(model, upstream_model="served-model") as base,
    ):
        client = openai_client(base)
        out = client.chat.completions.create(
            model="client-model",
            temperature=0.25,
            max_completion_tokens=50,
            messages=[
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": "Hello"},
            ],
        )
    assert out.choices[0].message.content == reply and not out.choices[0].message.tool_calls
    assert out.model == "client-model"
    sent = model.requests[0]
    assert sent["model"] == "served-model" and "stream" not in sent  # (a whole reply)
    assert "tools" not in sent and "tool_choice" not in sent
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
    ]
    assert sent["temperature"] == 0.25 and sent["max_tokens"] == 50


def test_a_chat_stream_carries_usage_only_when_asked() -> None:
    """The upstream always reports usage; a Chat stream sends it only with include_usage."""
    ask = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with scripted(Script(text="Hi there.")) as model, gateway(model) as base:
        client = openai_client(base)
        plain = list(client.chat.completions.create(**ask))
        asked = list(client.chat.completions.create(**ask, stream_options={"include_usage": True}))
    assert all(c.usage is None for c in plain) and plain[-1].choices
    assert asked[-1].usage is not None and asked[-1].usage.total_tokens == 18


def test_usage_and_finish_reason_come_from_the_upstream() -> None:
    with (
        scripted(Script(text="Cut off", finish="length", usage=(21, 3))) as model,
        gateway(model) as base,
    ):
        claude = anthropic_client(base)
        with claude.messages.stream(
            model="m", max_tokens=3, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "max_tokens"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (21, 3)
    assert model.requests[0]["max_tokens"] == 3


def test_the_streamed_reply_through_the_gateway_is_what_parse_gives() -> None:
    """The sieve runs on the upstream's text, cut in the upstream's own pieces."""
    with scripted(Script(text=CALL, chunk=3)) as model, gateway(model) as base:
        client = openai_client(base)
        with client.chat.completions.stream(
            model="m", tools=TOOLS, messages=[{"role": "user", "content": "Weather in Paris?"}]
        ) as stream:
            final = stream.get_final_completion()
    expected = callsieve.parse(CALL, tools=TOOLS)
    message = final.choices[0].message
    assert message.content == expected.text.strip()
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        (c.name, c.input) for c in expected.calls
    ]
    assert "tools" not in model.requests[0]


def test_two_turns_openai_the_history_goes_upstream_in_the_dialects_formats() -> None:
    """The client sends tools and gets a call; it sends the tool's result and gets the answer.
    The upstream saw the tools taught in its system prompt, never ``tools``, and on the second
    turn the call in the dialect's call format and the result in its result format."""
    ask = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    with (
        scripted(Script(text=CALL, chunk=5), Script(text="It is 22°C in Paris.")) as model,
        gateway(model) as base,
    ):
        client = openai_client(base)
        with client.chat.completions.stream(model="m", tools=TOOLS, messages=ask) as stream:
            first = stream.get_final_completion().choices[0]
        assert first.finish_reason == "tool_calls"
        [call] = first.message.tool_calls or []
        assert (call.function.name, json.loads(call.function.arguments)) == (
            "get_weather",
            {"city": "Paris"},
        )
        history = [
            *ask,
            first.message.model_dump(exclude_none=True, include={"role", "content", "tool_calls"}),
            {"role": "tool", "tool_call_id": call.id, "content": "22°C, sunny"},
        ]
        second = client.chat.completions.create(model="m", tools=TOOLS, messages=history)
    assert second.choices[0].message.content == "It is 22°C in Paris."
    assert first.finish_reason == "tool_calls" and second.usage is not None
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (11, 7)
    instructions = tool_instructions(TOOLS, dialect="dsml")
    turn1, turn2 = model.requests
    assert "tools" not in turn1 and "tools" not in turn2
    assert turn1["messages"] == [
        {"role": "system", "content": f"{instructions}\n\nYou are terse."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    written = format_calls([("get_weather", {"city": "Paris"})], dialect="dsml")
    assert turn2["messages"] == [
        *turn1["messages"],
        {"role": "assistant", "content": f"{first.message.content}\n\n{written}"},
        {"role": "user", "content": format_results(["22°C, sunny"], dialect="dsml")},
    ]
    assert callsieve.parse(turn2["messages"][2]["content"]).calls[0].input == {"city": "Paris"}


NATIVE_CALL = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
    '```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)


def test_two_turns_anthropic_in_the_deepseek_native_dialect() -> None:
    claude_tools = [
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]
    ask = [{"role": "user", "content": "Weather in Oslo?"}]
    with (
        scripted(Script(text=NATIVE_CALL, chunk=2), Script(text="Snow in Oslo.")) as model,
        gateway(model, dialect="deepseek_native") as base,
    ):
        claude = anthropic_client(base)
        with claude.messages.stream(
            model="m", max_tokens=200, system="Be exact.", tools=claude_tools, messages=ask
        ) as stream:
            first = stream.get_final_message()
        assert first.stop_reason == "tool_use"
        [use] = [b for b in first.content if b.type == "tool_use"]
        assert (use.name, use.input) == ("get_weather", {"city": "Oslo"})
        second = claude.messages.create(
            model="m",
            max_tokens=200,
            system="Be exact.",
            tools=claude_tools,
            messages=[
                *ask,
                {"role": "assistant", "content": [b.model_dump() for b in first.content]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": use.id, "content": "-3°C, snow"}
                    ],
                },
            ],
        )
    assert [b.text for b in second.content if b.type == "text"] == ["Snow in Oslo."]
    turn1, turn2 = model.requests
    assert turn1["messages"][0] == {
        "role": "system",
        "content": f"{tool_instructions(claude_tools, dialect='deepseek_native')}\n\nBe exact.",
    }
    assert turn2["messages"][2:] == [
        {
            "role": "assistant",
            "content": format_calls([("get_weather", {"city": "Oslo"})], dialect="deepseek_native"),
        },
        {"role": "user", "content": format_results(["-3°C, snow"], dialect="deepseek_native")},
    ]


def _assistant_call(ident: str, city: str) -> dict[str, object]:
    arguments = json.dumps({"city": city})
    call = {
        "id": ident,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def test_the_history_is_written_under_the_requests_tools() -> None:
    """A raw-text family writes a past call's string-typed argument as it is (``42``, as the
    template does, which the reply's parser reads back as the string under the same tools).
    A call the family cannot write at all (a string holding its closing tag: qwen3_coder
    reads a raw value as its text, so neither form carries it) is a 400 in the API's shape,
    naming the call, never a 500 or a history the model would misread."""
    history = [
        {"role": "user", "content": "Weather in 42?"},
        _assistant_call("c1", "42"),
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    with scripted(Script(text="Done.")) as model, gateway(model, dialect="qwen3_coder") as base:
        openai_client(base).chat.completions.create(model="m", tools=TOOLS, messages=history)
        tagged = [
            *history,
            _assistant_call("c2", "a</parameter>b"),
            {"role": "tool", "tool_call_id": "c2", "content": "rain"},
        ]
        with pytest.raises(openai.BadRequestError) as info:
            openai_client(base).chat.completions.create(model="m", tools=TOOLS, messages=tagged)
    assert "get_weather" in str(info.value) and len(model.requests) == 1
    sent = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "assistant"]
    typed = format_calls([("get_weather", {"city": "42"})], dialect="qwen3_coder", tools=TOOLS)
    assert sent == [typed]
    assert "\n42\n" in typed
    assert callsieve.parse(typed, dialects=("qwen3_coder",), tools=TOOLS).calls[0].input == {
        "city": "42"
    }


def test_a_named_tool_choice_teaches_that_tool_and_asks_for_it() -> None:
    two = [*TOOLS, {"type": "function", "function": {"name": "other", "parameters": {}}}]
    with scripted(Script(text=CALL)) as model, gateway(model) as base:
        client = openai_client(base)
        client.chat.completions.create(
            model="m",
            tools=two,
            messages=[{"role": "user", "content": "x"}],
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
        )
    system = model.requests[0]["messages"][0]["content"]
    assert system.startswith(tool_instructions(TOOLS, dialect="dsml"))
    assert system.endswith("get_weather.") and '"other"' not in system


def test_tool_choice_none_sends_no_instructions_and_calls_nothing() -> None:
    """The model was not taught the tools: a block it writes anyway is leaked markup,
    dropped from the text (docs/gateway.md, "Requests without tools"), never a call."""
    with scripted(Script(text=CALL)) as model, gateway(model) as base:
        client = openai_client(base)
        out = client.chat.completions.create(
            model="m", tools=TOOLS, tool_choice="none", messages=[{"role": "user", "content": "x"}]
        )
    assert model.requests[0]["messages"] == [{"role": "user", "content": "x"}]
    assert out.choices[0].message.content == "Let me check."
    assert not out.choices[0].message.tool_calls


def test_an_unwritable_dialect_is_refused_at_start() -> None:
    with pytest.raises(callsieve.ConfigurationError, match="dialect"):
        ServerConfig.build(upstream="http://127.0.0.1:1/v1", dialect="klingon")


def test_the_upstreams_reasoning_content_reaches_the_client_as_its_api_carries_it() -> None:
    """``delta.reasoning_content`` goes to the renderer as reasoning: Chat's
    ``reasoning_content``, an Anthropic ``thinking`` block."""
    script = Script(reasoning="Paris is in France; look it up.", text=CALL, chunk=6)
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    with scripted(script) as model, gateway(model) as base:
        client = openai_client(base)
        with client.chat.completions.stream(model="m", tools=TOOLS, messages=ask) as stream:
            message = stream.get_final_completion().choices[0].message
        claude = anthropic_client(base)
        with claude.messages.stream(
            model="m",
            max_tokens=100,
            messages=ask,
            tools=[{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}],
        ) as claude_stream:
            final = claude_stream.get_final_message()
    assert getattr(message, "reasoning_content", None) == script.reasoning
    assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[0].thinking == script.reasoning  # type: ignore[union-attr]


def test_the_upstreams_reasoning_content_reaches_a_whole_reply_too() -> None:
    """Not streamed to the client, the reply carries the upstream's reasoning first, as the
    streamed one does: Chat's ``message.reasoning_content``, an Anthropic ``thinking``
    block."""
    script = Script(reasoning="Paris is in France; look it up.", text=CALL, chunk=6)
    ask = [{"role": "user", "content": "Weather in Paris?"}]
    with scripted(script) as model, gateway(model) as base:
        message = (
            openai_client(base)
            .chat.completions.create(model="m", tools=TOOLS, messages=ask)
            .choices[0]
            .message
        )
        final = anthropic_client(base).messages.create(
            model="m",
            max_tokens=100,
            messages=ask,
            tools=[{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}],
        )
    assert getattr(message, "reasoning_content", None) == script.reasoning
    assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[0].thinking == script.reasoning  # type: ignore[union-attr]

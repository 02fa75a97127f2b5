"""Upstream mode with the real clients: the gateway in front of a scripted model server on
127.0.0.1 (``loopback.ScriptedModel``) that streams OpenAI SSE and records what it was sent.
What the upstream receives (no ``tools``, the model name, the sampling settings, the history
written in the dialect's formats) and what the client accumulates (``parse()`` of the reply)."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import anthropic
import openai
import pytest
from loopback import Script, ScriptedModel, running, scripted

import callsieve
from callsieve.server import ServerConfig

HAS_PROMPT = importlib.util.find_spec("callsieve.prompt") is not None
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
CALL = ('Let me check.\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
        '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n'
        '</|DSML|invoke>\n</|DSML|tool_calls>')


def gateway(model: ScriptedModel, **settings: Any) -> Any:
    return running(ServerConfig.build(upstream=model.url, **settings))


def test_a_request_without_tools_passes_through_as_text() -> None:
    reply = "Plain words, and a <tool_calls> mention that stays text."
    with scripted(Script(text=reply)) as model, \
            gateway(model, upstream_model="served-model") as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        out = client.chat.completions.create(
            model="client-model", temperature=0.25, max_completion_tokens=50,
            messages=[{"role": "developer", "content": "Be brief."},
                      {"role": "user", "content": "Hello"}])
    assert out.choices[0].message.content == reply and not out.choices[0].message.tool_calls
    assert out.model == "client-model"
    sent = model.requests[0]
    assert sent["model"] == "served-model" and sent["stream"] is True
    assert "tools" not in sent and "tool_choice" not in sent
    assert sent["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Hello"}]
    assert sent["temperature"] == 0.25 and sent["max_tokens"] == 50


def test_usage_and_finish_reason_come_from_the_upstream() -> None:
    with scripted(Script(text="Cut off", finish="length", usage=(21, 3))) as model, \
            gateway(model) as base:
        claude = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)
        with claude.messages.stream(model="m", max_tokens=3,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "max_tokens"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (21, 3)
    assert model.requests[0]["max_tokens"] == 3


def test_the_streamed_reply_through_the_gateway_is_what_parse_gives() -> None:
    """The sieve runs on the upstream's text, cut in the upstream's own pieces."""
    if not HAS_PROMPT:
        pytest.skip("needs callsieve.prompt (SPEC §16) to write the tool instructions")
    with scripted(Script(text=CALL, chunk=3)) as model, gateway(model) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        with client.chat.completions.stream(model="m", tools=TOOLS, messages=[
                {"role": "user", "content": "Weather in Paris?"}]) as stream:
            final = stream.get_final_completion()
    expected = callsieve.parse(CALL, tools=TOOLS)
    message = final.choices[0].message
    assert message.content == expected.text.strip()
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] \
        == [(c.name, c.input) for c in expected.calls]
    assert "tools" not in model.requests[0]


@pytest.mark.skipif(HAS_PROMPT, reason="callsieve.prompt is installed: tools are served")
def test_without_the_prompt_writers_a_request_with_tools_is_501() -> None:
    """UNFINISHED until callsieve.prompt lands: upstream mode cannot teach tools without it,
    and says so instead of sending a prompt it made up."""
    with scripted(Script(text=CALL)) as model, gateway(model) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="m", tools=TOOLS,
                                           messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == 501 and not model.requests

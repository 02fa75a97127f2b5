"""Bad input and faults get the API's own error shape and status, never a traceback (issue 16,
item 2): each fault has its test, over real HTTP, and where a client would see it, through
the real client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from helpers import ROOT
from loopback import Script, anthropic_client, closed_port, openai_client, running, scripted

from callsieve.server import ServerConfig

TRANSCRIPT = str(ROOT / "examples" / "transcript.txt")
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
LIMIT = 2000


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(ServerConfig.build(transcript=TRANSCRIPT, max_body_bytes=LIMIT)) as base:
        yield base


def post(url: str, path: str, body: Any, **kw: Any) -> httpx.Response:
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return httpx.post(
        f"{url}{path}",
        content=content,
        headers={"Content-Type": "application/json"},
        timeout=10,
        **kw,
    )


def openai_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert "Traceback" not in response.text
    return dict(body["error"])


def anthropic_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    return dict(body["error"])


# ---------------------------------------------------------------------- bad requests: 400
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_invalid_json_is_400_in_openai_shape(url: str, path: str) -> None:
    error = openai_error(post(url, path, b'{"model": "m",'), 400)
    assert error["type"] == "invalid_request_error" and error["code"] == "invalid_json"


def test_invalid_json_is_400_in_anthropic_shape(url: str) -> None:
    error = anthropic_error(post(url, "/v1/messages", b"[1, 2"), 400)
    assert error["type"] == "invalid_request_error" and "JSON" in error["message"]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", {"model": "m"}, "messages"),
        ("/v1/chat/completions", {"messages": CHAT["messages"]}, "model"),
        ("/v1/chat/completions", {**CHAT, "messages": [{"content": "x"}]}, "messages[0].role"),
        (
            "/v1/chat/completions",
            {
                **CHAT,
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "f", "arguments": "{"}}],
                    }
                ],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            "/v1/chat/completions",
            {**CHAT, "tools": [{"type": "function", "function": {}}]},
            "tools",
        ),
        ("/v1/chat/completions", {**CHAT, "stream": "yes"}, "stream"),
        ("/v1/responses", {"model": "m"}, "input"),
        ("/v1/responses", {"model": "m", "input": [{"type": "nope"}]}, "input[0].type"),
    ],
)
def test_a_missing_or_malformed_field_is_400_naming_it(
    url: str, path: str, body: Any, param: str
) -> None:
    error = openai_error(post(url, path, body), 400)
    assert error["param"] == param, error


@pytest.mark.parametrize(
    ("body", "word"),
    [
        ({"model": "m", "messages": MESSAGES["messages"]}, "max_tokens"),
        ({**MESSAGES, "messages": [{"role": "system", "content": "x"}]}, "role"),
        ({**MESSAGES, "tools": [{"name": "f"}]}, "input_schema"),
    ],
)
def test_anthropic_missing_fields_are_400(url: str, body: Any, word: str) -> None:
    assert word in anthropic_error(post(url, "/v1/messages", body), 400)["message"]


def test_the_openai_client_sees_a_bad_request(url: str) -> None:
    client = openai_client(url)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": ""}}],
        )
    assert info.value.status_code == 400 and info.value.param == "tools"


# ---------------------------------------------------------------------- routing and size
def test_unknown_path_and_method(url: str) -> None:
    assert openai_error(httpx.get(f"{url}/v1/nothing"), 404)["type"] == "invalid_request_error"
    openai_error(httpx.get(f"{url}/v1/chat/completions"), 405)
    assert anthropic_error(httpx.get(f"{url}/v1/messages"), 405)["type"]


def test_a_body_over_the_limit_is_413(url: str) -> None:
    big = {**CHAT, "messages": [{"role": "user", "content": "x" * LIMIT}]}
    assert openai_error(post(url, "/v1/chat/completions", big), 413)["code"] == "body_too_large"
    error = anthropic_error(post(url, "/v1/messages", {**MESSAGES, **big}), 413)
    assert error["type"] == "request_too_large"


def test_a_chunked_body_over_the_limit_is_413(url: str) -> None:
    """No Content-Length: the limit is kept while the body is read."""

    def pieces() -> Iterator[bytes]:
        yield b'{"model": "m", "messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"y" * 500
        yield b'"}]}'

    response = httpx.post(
        f"{url}/v1/chat/completions",
        content=pieces(),
        timeout=10,
        headers={"Content-Type": "application/json"},
    )
    openai_error(response, 413)


# ---------------------------------------------------------------------- the upstream's faults
def upstream_gateway(model_url: str, **settings: Any) -> Any:
    return running(ServerConfig.build(upstream=model_url, **settings))


def test_an_unreachable_upstream_is_502() -> None:
    with upstream_gateway(f"http://127.0.0.1:{closed_port()}/v1") as base:
        error = openai_error(post(base, "/v1/chat/completions", CHAT), 502)
        assert error["code"] == "upstream_unreachable"
        assert anthropic_error(post(base, "/v1/messages", MESSAGES), 502)["type"] == "api_error"


def test_an_upstream_that_does_not_answer_in_time_is_504() -> None:
    """A stream by its first-byte deadline; a whole request by its total deadline (a whole
    reply's headers come when the model is done)."""
    with (
        scripted(Script(hang=5)) as model,
        upstream_gateway(model.url, first_byte_timeout=0.3, total_timeout=0.6) as base,
    ):
        streamed = openai_error(post(base, "/v1/chat/completions", {**CHAT, "stream": True}), 504)
        assert streamed["code"] == "upstream_timeout" and "0.3 s" in streamed["message"]
        whole = openai_error(post(base, "/v1/chat/completions", CHAT), 504)
        assert whole["code"] == "upstream_timeout" and "0.6 s" in whole["message"]
        error = anthropic_error(post(base, "/v1/messages", MESSAGES), 504)
        assert error["type"] == "timeout_error"


def test_an_upstream_error_status_is_mapped_in_the_clients_shape() -> None:
    """The status class and a message of ours; the upstream's own message stays out."""
    limited = Script(
        status=429,
        error={"error": {"message": "slow down", "type": "rate", "code": "rate_limited"}},
    )
    with scripted(limited) as model, upstream_gateway(model.url) as base:
        client = openai_client(base)
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(**CHAT)
        assert "rate-limited" in info.value.message and "slow down" not in info.value.message
        claude = anthropic_client(base)
        with pytest.raises(anthropic.RateLimitError) as claude_info:
            claude.messages.create(**MESSAGES)
        assert "slow down" not in str(claude_info.value)


def test_an_upstream_that_dies_mid_stream_ends_the_stream_with_an_error() -> None:
    """The text already sent stays; the stream's last event is the API's error."""
    with (
        scripted(Script(text="Hello there, all good so far.", die_after=4)) as model,
        upstream_gateway(model.url) as base,
    ):
        client = openai_client(base)
        got: list[str] = []
        with pytest.raises(openai.APIError) as info:
            for chunk in client.chat.completions.create(**CHAT, stream=True):
                got += [c.delta.content or "" for c in chunk.choices]
        assert "".join(got) == "Hello there,"[: len("".join(got))] and "".join(got)
        assert "upstream" in info.value.message
        claude = anthropic_client(base)
        text: list[str] = []
        with pytest.raises(anthropic.APIStatusError), claude.messages.stream(**MESSAGES) as stream:
            for piece in stream.text_stream:
                text.append(piece)  # noqa: PERF402 (kept piece by piece: the stream raises)
        assert "".join(text) and "Hello there,".startswith("".join(text))
        responses = post(base, "/v1/responses", {"model": "m", "input": "hi", "stream": True})
        events = [
            json.loads(line[5:]) for line in responses.text.splitlines() if line.startswith("data:")
        ]
        assert events[-1]["type"] == "error"
        assert events[-1]["sequence_number"] == events[-2]["sequence_number"] + 1
        whole = post(base, "/v1/chat/completions", CHAT)
        assert openai_error(whole, 502)["code"] == "upstream_disconnected"


def test_a_client_that_disconnects_cancels_the_upstream_request() -> None:
    with scripted(Script(endless=True)) as model, upstream_gateway(model.url) as base:
        with httpx.stream(
            "POST", f"{base}/v1/chat/completions", timeout=10, json={**CHAT, "stream": True}
        ) as response:
            lines = response.iter_lines()
            assert next(line for line in lines if "la" in line)
        # the client has closed its connection: the gateway closes the upstream's
        assert model.disconnected.wait(10), "the upstream never saw its request cancelled"


def test_an_upstream_tool_call_whose_arguments_are_not_an_object_fails_the_reply() -> None:
    bad = Script(
        text="Checking.",
        tool_calls=[
            [
                {
                    "index": 0,
                    "id": "c1",
                    "function": {"name": "get_weather", "arguments": '{"city": '},
                }
            ]
        ],
        finish="tool_calls",
    )
    with scripted(bad) as model, upstream_gateway(model.url) as base:
        streamed = post(base, "/v1/chat/completions", {**CHAT, "stream": True})
        events = [
            json.loads(line[5:])
            for line in streamed.text.splitlines()
            if line.startswith("data:") and "[DONE]" not in line
        ]
        assert events[-1]["error"]["code"] == "upstream_bad_call"
        assert (
            openai_error(post(base, "/v1/chat/completions", CHAT), 502)["code"]
            == "upstream_bad_call"
        )


CUT = (
    'Sure.\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
    '<|DSML|parameter name="city"><![CDATA[Par'
)
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def test_a_call_that_aborts_ends_the_stream_with_the_error_and_closes_the_upstream() -> None:
    """A call that began to stream and then aborts (the renderers' ``on_abort="error"``):
    the stream ends with the API's error, no ``[DONE]`` after it, and the gateway stops
    reading the upstream, which goes on writing (SPEC §17)."""
    broken = CUT + "]]></|DSML|parameter>\n</|DSML|tool_calls>"  # (the invoke never closed)
    # (``reasoning`` said: otherwise the call is held until the endless reply ends, issue 33)
    streaming = {"early_emit": "arguments", "reasoning": "tags"}
    with (
        scripted(Script(text=broken, chunk=3, endless=True)) as model,
        upstream_gateway(model.url, sieve=streaming) as base,
    ):
        body = {**CHAT, "stream": True, "tools": WEATHER}
        text = post(base, "/v1/chat/completions", body).text
        assert model.disconnected.wait(3), "the upstream was not closed"
        metrics = httpx.get(f"{base}/metrics").text
    events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    assert events[-1]["error"]["code"].startswith("tool_call_")
    assert "[DONE]" not in text
    assert 'outcome="stream_aborted"' in metrics


def test_a_reply_cut_inside_a_streamed_call_raises_in_the_client() -> None:
    with (
        scripted(Script(text=CUT, chunk=4)) as model,
        upstream_gateway(model.url, sieve={"early_emit": "arguments"}) as base,
    ):
        client = openai_client(base)
        with pytest.raises(openai.APIError) as info:
            for _ in client.chat.completions.create(**CHAT, stream=True, tools=WEATHER):
                pass
    assert "tool_call_cut_off" in str(info.value.body) or "cut off" in info.value.message

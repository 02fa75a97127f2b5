"""A whole (non-streamed) client request asks the upstream for a whole reply (issue 33, the
latency figure): no ``stream``, one JSON body, read in one piece and run through the same
sieve. Against the scripted upstream, with the real clients: the answer is the one the
streamed upstream path gives for the same text (a differential test across tool_choice,
policy, reasoning, drafts and the four APIs); the body's limit, deadlines and faults are
the documented errors."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import openai
import pytest
from gateway_probe_helpers import gateway
from loopback import Script, anthropic_client, openai_client, scripted
from test_gateway_thinking import (
    ANSWER,
    ANSWER_CALLS,
    ASK,
    CALLS,
    CLAUDE_TOOLS,
    DRAFT,
    PLAIN_REPLY,
    THINK,
    THINKING_REPLY,
    THOUGHT,
    TOOLS,
    chat_calls,
)
from test_gateway_whole import without_ids

CHAT_PATH = "/v1/chat/completions"
NATIVE = [
    [
        {
            "index": 0,
            "id": "call_up",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        }
    ]
]
NAMED = {"type": "function", "function": {"name": "read_file"}}
LONG = "word " * 40_000  # (a whole body over 64 KiB: parsed a slice at a time in a thread)


def sse(s: Script) -> list[bytes]:
    """The script as the upstream streams it (what ``ScriptedModel`` sends to a streamed
    request), for a whole request: the gateway reads an upstream that streams anyway."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": s.reasoning[i : i + 4]} for i in range(0, len(s.reasoning), 4)]
    deltas += [{"content": s.text[i : i + 7]} for i in range(0, len(s.text), 7)]
    deltas += [{"tool_calls": calls} for calls in s.tool_calls or []]
    events = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": s.finish}]})
    events.append({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7}})
    return [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]


def body(api: str, extra: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    question = ASK[0]["content"]
    if api == "chat":
        return CHAT_PATH, {"model": "m", "messages": ASK, "tools": TOOLS, **extra}
    if api == "messages":
        return "/v1/messages", {
            "model": "m",
            "max_tokens": 2000,
            "messages": ASK,
            "tools": CLAUDE_TOOLS,
        }
    if api == "responses":
        tools = [{"type": "function", **t["function"]} for t in TOOLS]
        return "/v1/responses", {"model": "m", "input": question, "tools": tools}
    declarations = [dict(t["function"]) for t in TOOLS]
    return "/v1beta/models/m:generateContent", {
        "contents": [{"role": "user", "parts": [{"text": question}]}],
        "tools": [{"functionDeclarations": declarations}],
    }


ALL_APIS = ("chat", "messages", "responses", "gemini")
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]]] = {
    # name: (script, request extras (Chat), gateway settings, APIs)
    "auto": ({"text": PLAIN_REPLY}, {}, {}, ALL_APIS),
    "named": ({"text": ANSWER + CALLS}, {"tool_choice": NAMED}, {}, ("chat",)),
    "required": ({"text": ANSWER + CALLS}, {"tool_choice": "required"}, {}, ("chat",)),
    "none": ({"text": PLAIN_REPLY}, {"tool_choice": "none"}, {}, ("chat",)),
    "one call only": ({"text": ANSWER + CALLS}, {"parallel_tool_calls": False}, {}, ("chat",)),
    "drafts": ({"text": THINKING_REPLY}, {}, {}, ALL_APIS),
    "guessed thought": ({"text": THINKING_REPLY}, THINK, {}, ("chat",)),
    "upstream reasoning": ({"reasoning": THOUGHT, "text": ANSWER + CALLS}, {}, {}, ALL_APIS),
    "policy rejects": ({"text": ANSWER + DRAFT.replace("delete", "format")}, {}, {}, ("chat",)),
    "schema policy": (
        {"text": ANSWER + CALLS},
        {},
        {"sieve": {"policy": "schema"}},
        ("chat", "messages"),
    ),
    "native calls": (
        {"text": "Checking.", "tool_calls": NATIVE, "finish": "tool_calls"},
        {},
        {},
        ALL_APIS,
    ),
    "cut off": ({"text": PLAIN_REPLY[:-30], "finish": "length"}, {}, {}, ("chat", "messages")),
    "long": ({"text": LONG + PLAIN_REPLY + LONG}, {}, {}, ("chat", "gemini")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_whole_reply_is_the_answer_the_streamed_upstream_gives(case: str) -> None:
    script, extra, settings, apis = CASES[case]
    whole, streamed = Script(**script), Script(**script)
    raw = Script(raw=sse(streamed))
    with (
        scripted(*[s for _ in apis for s in (whole, raw)]) as model,
        gateway(model, **settings) as base,
    ):
        for n, api in enumerate(apis):
            path, ask = body(api, extra)
            one = httpx.post(base + path, json=ask, timeout=30)
            two = httpx.post(base + path, json=ask, timeout=30)
            assert one.status_code == two.status_code == 200, (api, one.text)
            assert without_ids(one.json()) == without_ids(two.json()), api
            asked = model.requests[2 * n]
            assert "stream" not in asked and "stream_options" not in asked
            assert model.headers[2 * n]["accept"] == "application/json"


def test_the_real_clients_get_the_whole_reply() -> None:
    """The openai and anthropic SDKs, a whole reply with a drafted call and a real one."""
    with scripted(Script(text=THINKING_REPLY)) as model, gateway(model) as base:
        chat = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
        assert chat_calls(chat.choices[0].message) == ANSWER_CALLS
        assert chat.choices[0].finish_reason == "tool_calls"
        assert chat.usage is not None and chat.usage.completion_tokens == 7
        claude = anthropic_client(base).messages.create(
            model="m", max_tokens=2000, messages=ASK, tools=CLAUDE_TOOLS
        )
        assert [(b.name, b.input) for b in claude.content if b.type == "tool_use"] == ANSWER_CALLS
        assert any(b.type == "text" and ANSWER in b.text for b in claude.content)
        assert all("stream" not in r for r in model.requests)


def test_a_streamed_request_still_streams_from_the_upstream() -> None:
    with scripted(Script(text=PLAIN_REPLY)) as model, gateway(model) as base:
        chunks = list(
            openai_client(base).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS, stream=True
            )
        )
        assert chunks
        assert model.requests[0]["stream"] is True
        assert model.headers[0]["accept"] == "text/event-stream"


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "no-length"])
def test_a_whole_body_over_the_limit_is_a_502_and_is_not_read_on(declared: bool) -> None:
    limit = 1 << 20
    script = Script(text="x" * (2 * limit)) if declared else Script(huge_line=64 * limit)
    with scripted(script) as model, gateway(model, max_reply_bytes=limit) as base:
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as info:
            openai_client(base).chat.completions.create(model="m", messages=ASK)
        assert info.value.status_code == 502
        assert info.value.body["code"] == "upstream_reply_too_large"  # type: ignore[index]
        assert time.monotonic() - started < 10
        if not declared:  # (the gateway closed the connection at the limit)
            assert model.disconnected.wait(10)


@pytest.mark.parametrize(
    ("status", "code", "answered"),
    [
        (400, "upstream_refused", 400),
        (401, "upstream_auth_failed", 502),
        (429, "upstream_rate_limited", 429),
        (500, "upstream_error", 502),
        (503, "upstream_unavailable", 503),
    ],
)
def test_an_upstream_error_status_to_a_whole_request(status: int, code: str, answered: int) -> None:
    secret = {"error": {"message": "the key sk-secret is wrong"}}
    with scripted(Script(status=status, error=secret)) as model, gateway(model) as base:
        response = httpx.post(base + CHAT_PATH, json={"model": "m", "messages": ASK}, timeout=10)
        assert response.status_code == answered
        assert response.json()["error"]["code"] == code
        assert "sk-secret" not in response.text


@pytest.mark.parametrize(
    ("raw", "kind", "code"),
    [
        (b'{"error": {"message": "boom"}}', "application/json", "upstream_error"),
        (b"<html>not json</html>", "application/json", "upstream_bad_reply"),
        (b'{"object": "chat.completion", "choices": []}', "application/json", "upstream_bad_reply"),
        (
            b'{"choices": [{"message": {"content": "\\ud800"}}]}',
            "application/json",
            "upstream_bad_text",
        ),
        (
            (
                b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "f", '
                b'"arguments": "[1]"}}]}}]}'
            ),
            "application/json",
            "upstream_bad_call",
        ),
        (b"<html>hello</html>", "text/html", "upstream_bad_reply"),
    ],
    ids=["error body", "not json", "no choices", "lone surrogate", "bad call", "html"],
)
def test_a_whole_body_that_is_not_a_chat_completion_is_a_502(
    raw: bytes, kind: str, code: str
) -> None:
    with scripted(Script(raw=[raw], content_type=kind)) as model, gateway(model) as base:
        response = httpx.post(base + CHAT_PATH, json={"model": "m", "messages": ASK}, timeout=10)
        assert response.status_code == 502, response.text
        assert response.json()["error"]["code"] == code


def test_a_whole_reply_waits_past_first_byte_timeout_until_total_timeout() -> None:
    """A whole reply's headers come when the model is done: the first-byte deadline is a
    stream's; the total deadline holds."""
    with (
        scripted(Script(text="Late but whole.", hang=1.0)) as model,
        gateway(model, first_byte_timeout=0.3) as base,
    ):
        out = openai_client(base).chat.completions.create(model="m", messages=ASK)
        assert out.choices[0].message.content == "Late but whole."
    with scripted(Script(hang=30)) as model, gateway(model, total_timeout=0.5) as base:
        started = time.monotonic()
        response = httpx.post(base + CHAT_PATH, json={"model": "m", "messages": ASK}, timeout=10)
        assert response.status_code == 504
        assert response.json()["error"]["code"] == "upstream_timeout"
        assert time.monotonic() - started < 3
        assert model.disconnected.wait(5)


def test_a_whole_body_that_stalls_is_a_504_at_the_idle_deadline() -> None:
    with (
        scripted(Script(text="Half of this comes.", stall=True)) as model,
        gateway(model, idle_timeout=0.5) as base,
    ):
        started = time.monotonic()
        response = httpx.post(base + CHAT_PATH, json={"model": "m", "messages": ASK}, timeout=10)
        assert response.status_code == 504
        assert "sent nothing within 0.5 s" in response.json()["error"]["message"]
        assert time.monotonic() - started < 3
        assert model.disconnected.wait(5)


def test_a_client_that_goes_away_cancels_the_whole_upstream_request() -> None:
    with scripted(Script(hang=30)) as model, gateway(model) as base:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(base + CHAT_PATH, json={"model": "m", "messages": ASK}, timeout=0.5)
        assert model.disconnected.wait(10), "the upstream never saw its request cancelled"

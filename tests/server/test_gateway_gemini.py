"""Gemini clients (issue 24, item 10): the real ``google-genai`` client pointed at the
gateway over loopback, through ``:generateContent`` and ``:streamGenerateContent?alt=sse``,
in replay mode (what it accumulates equals ``parse()``) and in upstream mode (tool results
go back to the model in the dialect's format; faults reach the client as its errors)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from gateway_probe_helpers import CALL
from gateway_probe_helpers import TOOLS as PROBE_TOOLS
from google.genai import errors, types
from helpers import ROOT
from loopback import Script, genai_client, running, scripted

import callsieve
from callsieve.prompt import format_results
from callsieve.render import gemini
from callsieve.server import ServerConfig

TRANSCRIPT = ROOT / "examples" / "transcript.txt"
TEXT = TRANSCRIPT.read_text(encoding="utf-8")
TOOLS = json.loads((ROOT / "examples" / "tools.json").read_text(encoding="utf-8"))
RESULT = callsieve.parse(TEXT, tools=TOOLS)
#: The text Gemini's parts carry (trimmed where text meets a call, docs/rendering.md).
PARTS_TEXT = "".join(
    p.get("text", "") for p in gemini.render_response(RESULT)["candidates"][0]["content"]["parts"]
)
ASK = "Look at the project, and the weather in Tokyo."


def declarations() -> list[types.Tool]:
    """The example tools as Gemini declares them: one with Gemini's own schema (upper-case
    types), the others with a JSON Schema."""
    decls = []
    for tool in TOOLS:
        fn = tool["function"]
        if fn["name"] == "read_file":
            decls.append(
                types.FunctionDeclaration(
                    name="read_file",
                    description=fn["description"],
                    parameters=types.Schema(
                        type=types.Type.OBJECT,
                        required=["path"],
                        properties={"path": types.Schema(type=types.Type.STRING)},
                    ),
                )
            )
        else:
            decls.append(
                types.FunctionDeclaration(
                    name=fn["name"],
                    description=fn["description"],
                    parameters_json_schema=fn["parameters"],
                )
            )
    return [types.Tool(function_declarations=decls)]


CONFIG = types.GenerateContentConfig(
    tools=declarations(),  # type: ignore[arg-type]
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def parts_of(responses: list[Any]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    text, calls = [], []
    for response in responses:
        for part in response.candidates[0].content.parts or []:
            if part.function_call is not None:
                calls.append((part.function_call.name, dict(part.function_call.args or {})))
            elif part.text and not part.thought:
                text.append(part.text)
    return "".join(text), calls


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running(ServerConfig.build(transcript=str(TRANSCRIPT))) as base:
        yield base


def test_generate_content_gives_the_calls_and_the_text(url: str) -> None:
    client = genai_client(url)
    reply = client.models.generate_content(model="gemini-test", contents=ASK, config=CONFIG)
    text, calls = parts_of([reply])
    assert calls == [(c.name, c.input) for c in RESULT.calls]
    assert text == PARTS_TEXT
    assert reply.candidates[0].finish_reason == types.FinishReason.STOP
    assert reply.model_version == "gemini-test"


def test_stream_generate_content_gives_the_same(url: str) -> None:
    client = genai_client(url)
    chunks = list(
        client.models.generate_content_stream(model="gemini-test", contents=ASK, config=CONFIG)
    )
    text, calls = parts_of(chunks)
    assert calls == [(c.name, c.input) for c in RESULT.calls]
    assert text == PARTS_TEXT
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_without_tools_the_reply_is_text(url: str) -> None:
    """Its blocks are leaked markup, dropped (docs/gateway.md, "Requests without tools")."""
    reply = genai_client(url).models.generate_content(model="g", contents=ASK)
    assert parts_of([reply]) == (callsieve.parse(TEXT).text.strip(), [])


def test_streaming_needs_alt_sse(url: str) -> None:
    response = httpx.post(
        f"{url}/v1beta/models/g:streamGenerateContent",
        json={"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
    )
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


TOOL = PROBE_TOOLS


def test_two_turns_upstream_mode_with_a_function_response() -> None:
    decl = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="get_weather", parameters_json_schema=TOOL[0]["function"]["parameters"]
            )
        ]
    )
    config = types.GenerateContentConfig(
        tools=[decl],
        system_instruction="Be brief.",
        temperature=0.5,
        top_k=7,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    with (
        scripted(Script(text=CALL), Script(text="Sunny in Paris.")) as model,
        running(ServerConfig.build(upstream=model.url)) as base,
    ):
        client = genai_client(base)
        first = client.models.generate_content(model="g", contents="Weather?", config=config)
        [call] = first.function_calls or []
        assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
        history = [
            types.Content(role="user", parts=[types.Part(text="Weather?")]),
            first.candidates[0].content,
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name="get_weather", response={"sky": "clear"}
                        )
                    )
                ],
            ),
        ]
        second = list(
            client.models.generate_content_stream(model="g", contents=history, config=config)
        )
    assert parts_of(second) == ("Sunny in Paris.", [])
    turn1, turn2 = model.requests
    assert turn1["temperature"] == 0.5 and turn1["top_k"] == 7
    assert turn1["messages"][0]["content"].endswith("Be brief.")
    assert turn2["messages"][-1] == {
        "role": "user",
        "content": format_results([json.dumps({"sky": "clear"})], dialect="dsml"),
    }


def test_faults_reach_the_gemini_client_as_its_errors() -> None:
    with (
        scripted(Script(text="Hello there", die_after=3)) as model,
        running(ServerConfig.build(upstream=model.url, api_keys=["gk"])) as base,
    ):
        with pytest.raises(errors.ClientError) as info:
            genai_client(base, key="wrong").models.generate_content(model="g", contents="x")
        assert info.value.code == 401
        client = genai_client(base, key="gk")
        with pytest.raises(errors.ServerError):
            list(client.models.generate_content_stream(model="g", contents="x"))
        with pytest.raises(errors.ClientError) as bad:
            client.models.generate_content(
                model="g", contents="x", config=types.GenerateContentConfig(candidate_count=2)
            )
        assert "candidateCount" in str(bad.value)

"""What the gateway answers is what was asked (issue 33, item 5): a malformed ``tool_choice``
is a 400 in every API's shape; Gemini is served under ``/v1/`` as under ``/v1beta/``;
``--dialect X`` makes the sieve read X in every mode (a grammar folder's too; an unknown one
is refused at start); a named ``tool_choice`` is honoured in replay and upstream modes.
Real clients over 127.0.0.1; the upstream is the scripted model (``loopback``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google.genai import types
from helpers import ROOT
from loopback import Script, anthropic_client, openai_client, running, scripted

from callsieve.prompt import format_calls
from callsieve.server import ServerConfig

ASK = [{"role": "user", "content": "go"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {k: {"type": "string"} for k in keys}},
        },
    }
    for name, keys in (("get_weather", ("location",)), ("write_file", ("path", "content")))
]
CLAUDE_TOOLS = [
    {"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS
]
WEATHER = ("get_weather", {"location": "Tokyo"})
WRITE = ("write_file", {"path": "a.txt", "content": "hi"})
#: A reply with a call of each tool, the one not asked for first.
BOTH = "Two calls.\n" + format_calls([WEATHER, WRITE])


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("correct") / "reply.txt"
    path.write_text(BOTH, encoding="utf-8")
    with running(ServerConfig.build(transcript=str(path))) as base:
        yield base


def chat_calls(message: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


# --------------------------------------------------------- a malformed tool_choice: a 400
@pytest.mark.parametrize(
    "choice",
    [
        {"type": []},
        {"type": {}},
        [],
        "sometimes",
        {"type": "function", "function": {"name": 3}},
        {"type": "function", "function": {"name": "not_a_tool"}},
    ],
)
def test_a_malformed_chat_tool_choice_is_a_400(url: str, choice: Any) -> None:
    client = openai_client(url)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice=choice)
    assert caught.value.body["param"] == "tool_choice"  # type: ignore[index]
    assert client.chat.completions.create(model="m", messages=ASK, tools=TOOLS).choices


@pytest.mark.parametrize(
    "choice", [{"type": []}, {"type": {}}, {"type": "function", "name": ["x"]}, 7]
)
def test_a_malformed_responses_tool_choice_is_a_400(url: str, choice: Any) -> None:
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client(url).responses.create(model="m", input="go", tools=tools, tool_choice=choice)
    assert caught.value.body["param"] == "tool_choice"  # type: ignore[index]


@pytest.mark.parametrize(
    "choice",
    [
        {"type": []},
        {"type": {}},
        {"type": ["auto"]},
        {"type": "tool", "name": {}},
        {"type": "tool", "name": "not_a_tool"},
        "auto",
    ],
)
def test_a_malformed_messages_tool_choice_is_a_400_and_the_connection_lives_on(
    url: str, choice: Any
) -> None:
    """``{"type": []}`` was a 500 (``TypeError``), and the next request on that keep-alive
    connection once failed."""
    client = anthropic_client(url)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="m", max_tokens=9, messages=ASK, tools=CLAUDE_TOOLS, tool_choice=choice
        )
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    after = client.messages.create(model="m", max_tokens=9, messages=ASK, tools=CLAUDE_TOOLS)
    assert [b.name for b in after.content if b.type == "tool_use"] == ["get_weather", "write_file"]


@pytest.mark.parametrize(
    "calling",
    [
        {"mode": 3},
        {"mode": "SOMETIMES"},
        {"allowedFunctionNames": [{}]},
        {"allowedFunctionNames": "x"},
    ],
)
@pytest.mark.parametrize("version", ["v1beta", "v1"])
def test_a_malformed_gemini_tool_config_is_a_400(url: str, calling: Any, version: str) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
        "toolConfig": {"functionCallingConfig": calling},
    }
    answer = httpx.post(f"{url}/{version}/models/m:generateContent", json=body, timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


# ------------------------------------------------------------------ Gemini under /v1/ too
def test_the_genai_client_with_its_default_version_is_served(url: str) -> None:
    from google import genai

    client = genai.Client(
        api_key="unused",
        http_options=types.HttpOptions(
            base_url=url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    try:
        decls = [
            types.FunctionDeclaration(
                name=t["function"]["name"], parameters_json_schema=t["function"]["parameters"]
            )
            for t in TOOLS
        ]
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=decls)],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        whole = client.models.generate_content(model="g", contents="go", config=config)
        streamed = list(
            client.models.generate_content_stream(model="g", contents="go", config=config)
        )
    finally:
        client.close()
    for reply in (whole, *streamed[-1:]):
        assert reply.candidates and reply.candidates[0].content
    names = [
        p.function_call.name
        for r in streamed
        for p in (r.candidates[0].content.parts or [])  # type: ignore[index,union-attr]
        if p.function_call is not None
    ]
    assert names == ["get_weather", "write_file"]
    assert whole.function_calls and [c.name for c in whole.function_calls] == names


def test_v1_errors_are_in_geminis_shape(url: str) -> None:
    answer = httpx.post(
        f"{url}/v1/models/m:generateContent",
        content=b"{",
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 400 and answer.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_serve_help_lists_the_gemini_endpoints() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "callsieve", "serve", "--help"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "generateContent" in help_text and "streamGenerateContent" in help_text
    assert "/v1beta/" in help_text and "/v1/" in help_text


# ------------------------------------------------------- --dialect X: the sieve reads X
QWEN = "Calling.\n" + format_calls([WEATHER], dialect="qwen3_coder")


def test_dialect_makes_the_sieve_read_it_in_replay_mode(tmp_path: Path) -> None:
    path = tmp_path / "reply.txt"
    path.write_text(QWEN, encoding="utf-8")
    plain = ServerConfig.build(transcript=str(path))
    with running(plain) as base:  # (without it, the qwen3_coder call is text)
        reply = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(reply.choices[0].message) == []
    with running(ServerConfig.build(transcript=str(path), dialect="qwen3_coder")) as base:
        reply = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(reply.choices[0].message) == [WEATHER]


def test_dialect_makes_the_sieve_read_it_in_upstream_mode() -> None:
    with scripted(Script(text=QWEN, chunk=7)) as model:
        config = ServerConfig.build(upstream=model.url, dialect="qwen3_coder")
        with running(config) as base:
            reply = openai_client(base).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS
            )
            stream = openai_client(base).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS, stream=True
            )
            names = [
                c.function.name
                for chunk in stream
                for c in (chunk.choices[0].delta.tool_calls or [] if chunk.choices else [])
                if c.function and c.function.name
            ]
        system = model.requests[0]["messages"][0]["content"]
    assert chat_calls(reply.choices[0].message) == [WEATHER]
    assert names == ["get_weather"]
    assert "<function=" in system  # (what the model was taught is what is read)


def test_dialect_may_come_from_a_grammar_folder(tmp_path: Path) -> None:
    """``acme``: Hermes's grammar under another name, with its spelling file."""
    grammar = ROOT / "grammar"
    source = (grammar / "hermes.lark").read_text(encoding="utf-8")
    renamed = source.replace("hermes", "acme").replace("HERMES_", "ACME_")
    (tmp_path / "acme.lark").write_text(renamed, encoding="utf-8")
    (tmp_path / "spelling").mkdir()
    shutil.copy(grammar / "spelling" / "hermes.lark", tmp_path / "spelling" / "acme.lark")
    reply = tmp_path / "reply.txt"
    reply.write_text(
        "Calling.\n" + format_calls([WEATHER], dialect="acme", grammar_dirs=[str(tmp_path)]),
        encoding="utf-8",
    )
    config = ServerConfig.build(
        transcript=str(reply), dialect="acme", sieve={"grammar_dirs": [str(tmp_path)]}
    )
    with running(config) as base:
        answer = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(answer.choices[0].message) == [WEATHER]


@pytest.mark.parametrize("dialect", ["nope", "../dsml", "acme"])
def test_an_unknown_dialect_is_refused_at_start(dialect: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "callsieve",
            "serve",
            "--transcript",
            str(ROOT / "examples" / "transcript.txt"),
            "--dialect",
            dialect,
            "--port",
            "1",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "dialect" in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------- a named tool_choice is honoured
NAMED = {"type": "function", "function": {"name": "write_file"}}


def test_a_named_tool_choice_is_honoured_in_replay_mode(url: str) -> None:
    """Replay returned a ``get_weather`` call under a named ``write_file``."""
    client = openai_client(url)
    whole = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, tool_choice=NAMED)
    assert chat_calls(whole.choices[0].message) == [WRITE]
    stream = client.chat.completions.create(
        model="m", messages=ASK, tools=TOOLS, tool_choice=NAMED, stream=True
    )
    names = [
        c.function.name
        for chunk in stream
        for c in (chunk.choices[0].delta.tool_calls or [] if chunk.choices else [])
        if c.function and c.function.name
    ]
    assert names == ["write_file"]
    claude = anthropic_client(url).messages.create(
        model="m",
        max_tokens=9,
        messages=ASK,
        tools=CLAUDE_TOOLS,
        tool_choice={"type": "tool", "name": "write_file"},
    )
    assert [(b.name, b.input) for b in claude.content if b.type == "tool_use"] == [WRITE]
    auto = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(auto.choices[0].message) == [WEATHER, WRITE]


def test_a_named_tool_choice_is_honoured_in_upstream_mode() -> None:
    """Also for a call the upstream sends as its own ``tool_calls``."""
    own = [{"index": 0, "id": "c9", "type": "function"}]
    own[0]["function"] = {"name": "get_weather", "arguments": '{"location": "Oslo"}'}
    with scripted(Script(text=BOTH, chunk=9, tool_calls=[own])) as model:
        with running(ServerConfig.build(upstream=model.url)) as base:
            reply = openai_client(base).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS, tool_choice=NAMED
            )
        system = model.requests[0]["messages"][0]["content"]
    assert chat_calls(reply.choices[0].message) == [WRITE]
    assert "write_file" in system and "get_weather" not in system

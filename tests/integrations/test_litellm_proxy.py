"""Issue 35: callsieve as a LiteLLM proxy callback, tested end to end.

The real LiteLLM proxy runs on 127.0.0.1 as its own process, with ``callbacks:
callsieve.integrations.litellm.hook`` in its ``config.yaml``, in front of a scripted
OpenAI-compatible model (``loopback.ScriptedModel``) that writes calls as text: DeepSeek's
DSML, Hermes and Qwen3-Coder, written by ``prompt.format_calls``. The real ``openai`` client
asks, whole and streamed. The calls arrive as ``tool_calls``, no tag reaches ``content``, a
thought becomes ``reasoning_content``, and a call cut off mid-stream ends the stream with the
proxy's error event, which the client raises (SPEC §17). Each model's dialects come from its
``model_info`` in the config. The module runs where ``litellm[proxy]`` is installed
(``pip install '.[litellm,test]'``); elsewhere it is skipped.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from packaging.requirements import Requirement


def _proxy_installed() -> bool:
    """LiteLLM and every requirement of its ``proxy`` extra are installed (the test extra
    brings LiteLLM without it)."""
    try:
        requires = metadata.requires("litellm") or []
    except metadata.PackageNotFoundError:
        return False
    for line in requires:
        req = Requirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": "proxy"}):
            continue
        try:
            metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return False
    return True


if not _proxy_installed():
    pytest.skip(
        "litellm[proxy] is not installed here: pip install '.[litellm,test]'",
        allow_module_level=True,
    )

from loopback import Script, ScriptedModel

import callsieve
from callsieve import parse
from callsieve.prompt import format_calls

KEY = "sk-" + secrets.token_hex(24)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
        },
    },
]
CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"zone": "CET"})]
#: model name in the proxy -> the dialect its upstream writes
MODELS = {"deepseek": "dsml_v4", "hermes": "hermes", "qwen-coder": "qwen3_coder"}
CONFIG = """
model_list:
  - model_name: deepseek
    litellm_params: {{model: openai/deepseek, api_base: "{url}", api_key: up}}
  - model_name: hermes
    litellm_params: {{model: openai/hermes, api_base: "{url}", api_key: up}}
    model_info: {{callsieve: {{dialects: [hermes]}}}}
  - model_name: qwen-coder
    litellm_params: {{model: openai/qwen, api_base: "{url}", api_key: up}}
    model_info: {{callsieve: {{dialects: [qwen3_coder]}}}}
  - model_name: plain
    litellm_params: {{model: openai/plain, api_base: "{url}", api_key: up}}
    model_info: {{callsieve: false}}
general_settings:
  master_key: {key}
litellm_settings:
  callbacks: callsieve.integrations.litellm.hook
"""
TAG_PIECES = ("<", "｜DSML｜", "tool_call", "function=", "parameter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _written(dialect: str, calls: list[tuple[str, dict[str, Any]]] = CALLS) -> str:
    return format_calls(calls, dialect, tools=TOOLS)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ScriptedModel]]:
    """The LiteLLM proxy on 127.0.0.1 in front of a scripted model (its base URL, the model)."""
    folder = tmp_path_factory.mktemp("litellm")
    upstream = ScriptedModel(Script(text="hello"))
    upstream.start()
    (folder / "config.yaml").write_text(CONFIG.format(url=upstream.url, key=KEY))
    port = _free_port()
    src = str(Path(callsieve.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # (no fetch of the price list)
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "CALLSIEVE_LITELLM_OPTIONS": "",
    }
    log = (folder / "proxy.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "litellm.proxy.proxy_cli",
            "--config",
            "config.yaml",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            if proc.poll() is not None:
                pytest.fail("the proxy stopped:\n" + (folder / "proxy.log").read_text()[-4000:])
            try:
                if httpx.get(base + "/health/liveliness", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the proxy did not start in 240 s"
            time.sleep(0.25)
        yield base + "/v1", upstream
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        upstream.close()


def _client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key=KEY, max_retries=0, timeout=60)


def _ask(
    proxy: tuple[str, ScriptedModel], model: str, script: Script, **extra: Any
) -> tuple[openai.OpenAI, dict[str, Any]]:
    base, upstream = proxy
    upstream.scripts = [script]
    request = {
        "model": model,
        "messages": [{"role": "user", "content": "weather?"}],
        "tools": TOOLS,
        **extra,
    }
    return _client(base), request


def _whole(proxy: tuple[str, ScriptedModel], model: str, script: Script, **extra: Any) -> Any:
    client, request = _ask(proxy, model, script, **extra)
    with client:
        return client.chat.completions.create(**request).choices[0]


class Streamed:
    """A stream's pieces: content deltas, reasoning, calls joined by index, finish reason."""

    def __init__(self) -> None:
        self.contents: list[str] = []
        self.reasoning = ""
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None

    @property
    def content(self) -> str:
        return "".join(self.contents)


def _streamed(
    proxy: tuple[str, ScriptedModel], model: str, script: Script, **extra: Any
) -> Streamed:
    client, request = _ask(proxy, model, script, **extra)
    out = Streamed()
    with client, client.chat.completions.create(stream=True, **request) as stream:
        for chunk in stream:
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    out.contents.append(delta.content)
                out.reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
                for call in delta.tool_calls or []:
                    got = out.calls.setdefault(call.index, {"id": None, "name": None, "args": ""})
                    if call.id:
                        assert got["id"] is None, "a call's id came twice"
                        got["id"], got["name"] = call.id, call.function.name
                    got["args"] += call.function.arguments or ""
                out.finish = choice.finish_reason or out.finish
    return out


def _no_tag(text: str | None) -> None:
    for piece in TAG_PIECES:
        assert piece not in (text or ""), f"{piece!r} reached the content: {text!r}"


# ---------------------------------------------------------------- whole replies
@pytest.mark.parametrize("model", sorted(MODELS))
def test_whole_reply_calls_become_tool_calls(proxy: Any, model: str) -> None:
    text = "Let me check both.\n\n" + _written(MODELS[model])
    choice = _whole(proxy, model, Script(text=text))
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check both."
    calls = choice.message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == CALLS
    assert len({c.id for c in calls}) == 2


def test_whole_reply_keeps_text_after_the_calls_and_splits_the_thought(proxy: Any) -> None:
    text = "<think>The user wants weather.</think>Sure. " + _written("hermes") + " Done."
    choice = _whole(proxy, "hermes", Script(text=text))
    assert choice.message.model_extra["reasoning_content"] == "The user wants weather."
    assert choice.message.content == parse(text, tools=TOOLS, dialects=["hermes"]).text.strip()
    assert len(choice.message.tool_calls) == 2


def test_whole_reply_cut_off_inside_a_call_makes_no_call_and_says_length(proxy: Any) -> None:
    """As ``parse()`` reads it (SPEC §4): the unfinished block is text, not a call."""
    written = _written("hermes", CALLS[:1])
    text = "Sure. " + written[: len(written) // 2]
    choice = _whole(proxy, "hermes", Script(text=text))
    assert not choice.message.tool_calls
    assert choice.finish_reason == "length"
    assert choice.message.content == parse(text, tools=TOOLS, dialects=["hermes"]).text.strip()


# ---------------------------------------------------------------- streams
@pytest.mark.parametrize("chunk", [1, 7])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_streamed_calls_arrive_as_tool_call_deltas(proxy: Any, model: str, chunk: int) -> None:
    text = "Let me check both.\n\n" + _written(MODELS[model]) + "\nOne moment."
    out = _streamed(proxy, model, Script(text=text, chunk=chunk))
    for piece in out.contents:
        _no_tag(piece)
    expected = parse(text, tools=TOOLS, dialects=[MODELS[model]]).text
    assert out.content.strip() == expected.strip()
    assert "One moment." in out.content
    assert [(c["name"], json.loads(c["args"])) for c in out.calls.values()] == CALLS
    assert sorted(out.calls) == [0, 1]
    assert out.finish == "tool_calls"


def test_streamed_thought_is_reasoning_content(proxy: Any) -> None:
    text = "<think>Paris, then the time.</think>Sure. " + _written("qwen3_coder")
    out = _streamed(proxy, "qwen-coder", Script(text=text, chunk=3))
    assert out.reasoning == "Paris, then the time."
    assert out.content.strip() == "Sure."
    assert len(out.calls) == 2


def test_streamed_call_cut_off_ends_in_the_error_event(proxy: Any) -> None:
    written = _written("hermes", CALLS[:1])
    cut = written[: written.index("Paris") + 2]  # inside the arguments, which began to stream
    with pytest.raises(openai.APIError, match="tool_call|cut"):
        _streamed(proxy, "hermes", Script(text="Sure. " + cut, chunk=4))


def test_upstream_reasoning_content_passes_and_content_is_the_answer(proxy: Any) -> None:
    text = "Sure. " + _written("hermes", CALLS[:1])
    out = _streamed(proxy, "hermes", Script(text=text, reasoning="planned it", chunk=5))
    assert out.reasoning == "planned it"
    assert [c["name"] for c in out.calls.values()] == ["get_weather"]


# ---------------------------------------------------------------- what is left alone
def test_request_without_tools_passes_untouched(proxy: Any) -> None:
    text = "Sure. " + _written("hermes", CALLS[:1])
    choice = _whole(proxy, "hermes", Script(text=text), tools=None)
    assert choice.message.content == text
    assert not choice.message.tool_calls


def test_tool_choice_none_passes_untouched(proxy: Any) -> None:
    text = "Sure. " + _written("hermes", CALLS[:1])
    out = _streamed(proxy, "hermes", Script(text=text, chunk=6), tool_choice="none")
    assert out.content == text and not out.calls


def test_a_model_set_to_false_is_left_alone(proxy: Any) -> None:
    text = "Sure. " + _written("hermes", CALLS[:1])
    choice = _whole(proxy, "plain", Script(text=text))
    assert choice.message.content == text


def test_a_model_reads_only_its_dialects(proxy: Any) -> None:
    """The hermes model is configured for Hermes only: DSML stays text there."""
    text = "Sure. " + _written("dsml_v4", CALLS[:1])
    choice = _whole(proxy, "hermes", Script(text=text))
    assert choice.message.content == text
    assert not choice.message.tool_calls


def test_a_named_tool_choice_drops_calls_of_other_tools(proxy: Any) -> None:
    choice = _whole(
        proxy,
        "hermes",
        Script(text=_written("hermes")),
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    assert [c.function.name for c in choice.message.tool_calls] == ["get_time"]

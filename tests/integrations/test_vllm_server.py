"""Issue 26, end to end: vLLM's own OpenAI-compatible server, on 127.0.0.1, loads callsieve
through its plugin entry point and answers with its parsers.

``vllm serve`` cannot run on this kind of machine: with no GPU, vLLM's platform detection
fails ("Failed to infer device type"); with ``VLLM_TARGET_DEVICE=cpu`` the engine's CPU
worker needs vLLM's CPU kernels (``torch.ops._C.init_cpu_memory_env``), which the PyPI wheel
(a CUDA build) does not ship. vLLM's GPU-less server, ``vllm launch render``, runs the same
chat front end without an engine: ``/v1/chat/completions/render`` turns a request into the
prompt's token ids through the model's chat template, and ``/v1/chat/completions/derender``
turns the engine's output token ids into the Chat Completions response, whole or one chunk
per call, through the server's parsers. The model is a folder made here: the test tokenizer
(vllm_harness) and a tiny config, no weights, no download. The responses are checked with the
OpenAI SDK's own types.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "vllm",
    reason="vLLM is not installed here: .ci/run runs these tests in "
    "a second environment with pip install '.[vllm]'",
)

import httpx
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from vllm_harness import chunked, save_model_dir, tokenizer

START_TIMEOUT = 300.0
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]
THOUGHT = "The user wants Tokyo's weather."
REPLY = (
    f"{THOUGHT}</think>Checking.\n<｜DSML｜function_calls>\n<｜DSML｜invoke "
    'name="get_weather">\n<｜DSML｜parameter name="location" string="true">Tokyo'
    "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    model = str(save_model_dir(tmp_path_factory.mktemp("model")))
    port = _free_port()
    env = {
        **os.environ,
        "VLLM_TARGET_DEVICE": "cpu",
        "VLLM_HOST_IP": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    log = tmp_path_factory.mktemp("log") / "render.log"
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.cli.main",
        "launch",
        "render",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "callsieve",
        "--reasoning-parser",
        "callsieve",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vllm launch render exited: {log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vllm launch render did not start: {log.read_text()[-3000:]}")
            time.sleep(1)
        yield base, model
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert "callsieve" in Path(log).read_text(encoding="utf-8", errors="replace")


def render(base: str, model: str) -> dict[str, Any]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Weather in Tokyo?"}],
        "tools": TOOLS,
        "chat_template_kwargs": {"thinking": True},
    }
    got = httpx.post(f"{base}/v1/chat/completions/render", json=body, timeout=60)
    assert got.status_code == 200, got.text
    rendered: dict[str, Any] = got.json()
    return rendered


def test_the_render_server_reads_a_whole_reply_with_callsieve(server: tuple[str, str]) -> None:
    base, model = server
    rendered = render(base, model)
    prompt_ids = rendered["token_ids"]
    assert tokenizer().decode(prompt_ids[-2:]) == "<｜Assistant｜><think>"
    assert rendered["reasoning_ended"] is False  # is_reasoning_end(prompt): inside the thought
    body = {
        "model": model,
        "prompt_token_ids": prompt_ids,
        "chat_request": {
            "model": model,
            "messages": [{"role": "user", "content": "x"}],
            "tools": TOOLS,
            "chat_template_kwargs": {"thinking": True},
        },
        "generate_response": {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "token_ids": tokenizer().encode(REPLY, add_special_tokens=False),
                }
            ]
        },
    }
    got = httpx.post(f"{base}/v1/chat/completions/derender", json=body, timeout=60)
    assert got.status_code == 200, got.text
    completion = ChatCompletion.model_validate(got.json())
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.content == "Checking.\n"
    assert got.json()["choices"][0]["message"]["reasoning"] == THOUGHT
    (call,) = message.tool_calls or []
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"location": "Tokyo"}  # type: ignore[union-attr]


def test_the_render_server_streams_a_reply_with_callsieve(server: tuple[str, str]) -> None:
    base, model = server
    prompt_ids = render(base, model)["token_ids"]
    chat_request = {
        "model": model,
        "messages": [{"role": "user", "content": "x"}],
        "tools": TOOLS,
        "stream": True,
        "chat_template_kwargs": {"thinking": True},
    }
    state: Any = None
    reasoning, content, arguments, names, finish = "", "", "", [], None
    chunks = chunked(REPLY, 4)
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        body = {
            "stream": True,
            "model": model,
            "prompt_token_ids": prompt_ids,
            "stream_state": state,
            "chat_request": chat_request,
            "generate_chunk": {
                "choices": [
                    {
                        "index": 0,
                        "token_ids": tokenizer().encode(chunk, add_special_tokens=False),
                        "finish_reason": "stop" if last else None,
                    }
                ]
            },
        }
        got = httpx.post(f"{base}/v1/chat/completions/derender", json=body, timeout=60)
        assert got.status_code == 200, got.text
        state = got.json()["stream_state"]
        raw = got.json()["chunk"]
        parsed = ChatCompletionChunk.model_validate(raw)
        for choice, raw_choice in zip(parsed.choices, raw["choices"]):
            reasoning += raw_choice["delta"].get("reasoning") or ""
            content += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                if tc.function and tc.function.name:
                    names.append(tc.function.name)
                arguments += (tc.function.arguments or "") if tc.function else ""
            finish = choice.finish_reason or finish
    assert (reasoning, content, names) == (THOUGHT, "Checking.\n", ["get_weather"])
    assert json.loads(arguments) == {"location": "Tokyo"} and finish == "tool_calls"


def test_the_render_server_hands_the_engine_the_constraint_for_a_forced_choice(
    server: tuple[str, str],
) -> None:
    """Issue 35: ``tool_choice="required"`` goes to the engine as callsieve's structural
    tag, in the dialect the prompt shows (here V3.2's DSML); ``"auto"`` goes free."""
    from engines import xgrammar_accepts

    from callsieve import DEFAULT_DIALECTS
    from callsieve.constrain import structural_tag

    base, model = server
    shown = "Call tools as <｜DSML｜function_calls>… Weather in Tokyo?"
    sent: dict[str, Any] = {}
    for choice in ("required", "auto"):
        body = {
            "model": model,
            "messages": [{"role": "user", "content": shown}],
            "tools": TOOLS,
            "tool_choice": choice,
            "chat_template_kwargs": {"thinking": True},
        }
        got = httpx.post(f"{base}/v1/chat/completions/render", json=body, timeout=60)
        assert got.status_code == 200, got.text
        sent[choice] = got.json()["sampling_params"].get("structured_outputs")
    assert sent["auto"] is None
    tag = json.loads(sent["required"]["structural_tag"])
    assert tag == structural_tag(TOOLS, "dsml_v32", "required", parse_dialects=DEFAULT_DIALECTS)
    answer = REPLY.split("</think>", 1)[1].removesuffix("<｜end▁of▁sentence｜>")
    assert xgrammar_accepts(tag, [answer, "Checking.\n"]) == [True, False]

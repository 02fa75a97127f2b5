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
  - model_name: qwen-think
    litellm_params: {{model: openai/qwen-think, api_base: "{url}", api_key: up}}
    model_info: {{callsieve: {{dialects: [qwen3_coder], reasoning: open}}}}
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


def _streamed_choices(
    proxy: tuple[str, ScriptedModel], model: str, script: Script, **extra: Any
) -> dict[int, Streamed]:
    """Each choice's pieces of a stream, by the choice's index."""
    client, request = _ask(proxy, model, script, **extra)
    choices: dict[int, Streamed] = {}
    with client, client.chat.completions.create(stream=True, **request) as stream:
        for chunk in stream:
            for choice in chunk.choices:
                out = choices.setdefault(choice.index, Streamed())
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
    return choices


def _streamed(
    proxy: tuple[str, ScriptedModel], model: str, script: Script, **extra: Any
) -> Streamed:
    choices = _streamed_choices(proxy, model, script, **extra)
    assert set(choices) <= {0}, "a choice other than 0 came"
    return choices.get(0) or Streamed()


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


# ---------------------------------------------------------------- read as the gateway reads
def _as_streamed(choice: Any) -> Streamed:
    """A whole choice in a stream's shape (its calls by their place in the list)."""
    out = Streamed()
    message = choice.message
    out.contents = [message.content or ""]
    out.reasoning = (message.model_extra or {}).get("reasoning_content") or ""
    for i, call in enumerate(message.tool_calls or []):
        out.calls[i] = {"id": call.id, "name": call.function.name, "args": call.function.arguments}
    out.finish = choice.finish_reason
    return out


def _reply(
    proxy: tuple[str, ScriptedModel], model: str, script: Script, stream: bool, **extra: Any
) -> Streamed:
    if stream:
        return _streamed(proxy, model, script, **extra)
    return _as_streamed(_whole(proxy, model, script, **extra))


def _calls(out: Streamed) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], json.loads(c["args"])) for _, c in sorted(out.calls.items())]


BOTH = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
THOUGHT = "Paris first, then the time."


def _switch(how: str, on: bool) -> dict[str, Any]:
    """The request's thinking switch, in each spelling a client sends through the proxy
    (Anthropic's ``thinking`` needs LiteLLM's ``allowed_openai_params`` for an OpenAI model)."""
    if how == "chat_template_kwargs":
        return {"extra_body": {"chat_template_kwargs": {"enable_thinking": on}}}
    if how == "reasoning_effort":
        return {"reasoning_effort": "medium" if on else "none"}
    kind = {"type": "enabled", "budget_tokens": 1024} if on else {"type": "disabled"}
    return {"extra_body": {"thinking": kind, "allowed_openai_params": ["thinking"]}}


SWITCHES = ["chat_template_kwargs", "reasoning_effort", "thinking"]


@BOTH
@pytest.mark.parametrize("how", SWITCHES)
def test_thinking_on_reads_a_reply_that_the_template_opened_as_a_thought(
    proxy: Any, how: str, stream: bool
) -> None:
    """The template pre-wrote ``<think>``: the reply holds only its ``</think>``."""
    text = THOUGHT + "</think>Sure. " + _written("hermes")
    out = _reply(proxy, "hermes", Script(text=text, chunk=3), stream, **_switch(how, True))
    assert out.reasoning == THOUGHT
    assert out.content.strip() == "Sure."
    assert _calls(out) == CALLS
    assert out.finish == "tool_calls"


@BOTH
def test_without_the_switch_the_same_reply_is_a_draft_in_the_text(proxy: Any, stream: bool) -> None:
    """The contrast: read with the model's ``"tags"``, the thought is not split off."""
    text = THOUGHT + "</think>Sure. " + _written("hermes")
    out = _reply(proxy, "hermes", Script(text=text, chunk=3), stream)
    assert out.reasoning == ""
    assert THOUGHT in out.content


@BOTH
def test_a_guessed_thought_that_never_closes_is_the_answer(proxy: Any, stream: bool) -> None:
    """Thinking was asked for, but the model did not think: the reply ended on its own
    inside the guessed thought, so it was the answer (the gateway's rule)."""
    text = "Sure. " + _written("hermes")
    extra = _switch("chat_template_kwargs", True)
    out = _reply(proxy, "hermes", Script(text=text, chunk=5), stream, **extra)
    assert out.reasoning == ""
    assert out.content.strip() == "Sure."
    assert _calls(out) == CALLS


@BOTH
def test_a_guessed_thought_cut_by_the_token_limit_stays_a_thought(proxy: Any, stream: bool) -> None:
    extra = _switch("reasoning_effort", True)
    script = Script(text=THOUGHT, finish="length", chunk=4)
    out = _reply(proxy, "hermes", script, stream, **extra)
    assert out.reasoning == THOUGHT
    assert out.content == "" and not out.calls
    assert out.finish == "length"


@BOTH
@pytest.mark.parametrize("model", ["hermes", "qwen-think"])
def test_with_the_upstreams_own_reasoning_the_content_is_the_answer(
    proxy: Any, model: str, stream: bool
) -> None:
    """The upstream split the thought itself (``reasoning_content``), so the content is
    the answer: a thought the request asked for (``hermes``, a guess) or the model's entry
    vouches for (``qwen-think``) is not read into it (the gateway's rule)."""
    text = "Sure. " + _written(MODELS.get(model, "qwen3_coder"))
    script = Script(text=text, reasoning=THOUGHT, chunk=5)
    extra = _switch("chat_template_kwargs", True) if model == "hermes" else {}
    out = _reply(proxy, model, script, stream, **extra)
    assert out.reasoning == THOUGHT
    assert out.content.strip() == "Sure."
    assert _calls(out) == CALLS


@BOTH
@pytest.mark.parametrize("how", SWITCHES)
def test_thinking_off_reads_the_reply_as_the_answer(proxy: Any, how: str, stream: bool) -> None:
    """``qwen-think``'s entry says its template opens a thought (``reasoning: open``);
    the request turns thinking off, so the reply is the answer and its calls are calls."""
    text = "Sure. " + _written("qwen3_coder")
    out = _reply(proxy, "qwen-think", Script(text=text, chunk=4), stream, **_switch(how, False))
    assert out.reasoning == ""
    assert out.content.strip() == "Sure."
    assert _calls(out) == CALLS


@BOTH
def test_the_models_own_reading_stands_when_the_request_says_nothing(
    proxy: Any, stream: bool
) -> None:
    text = THOUGHT + "</think>Sure. " + _written("qwen3_coder")
    out = _reply(proxy, "qwen-think", Script(text=text, chunk=4), stream)
    assert out.reasoning == THOUGHT
    assert _calls(out) == CALLS
    # The entry vouches for the thought, so it is not a guess: a reply that never closes
    # it is still a thought (a guessed one would have been the answer).
    unclosed = _reply(proxy, "qwen-think", Script(text=THOUGHT), stream)
    assert unclosed.reasoning == THOUGHT and unclosed.content == ""


# ---------------------------------------------------------------- choices other than 0
UP = {"id": "chatcmpl-up", "created": 1, "model": "m"}
TWO = [
    "Let me check both.\n\n" + _written("hermes"),
    "Only the time." + _written("hermes", CALLS[1:]) + "\nThen done.",
]


def _event(obj: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


def _sse_choices(texts: list[str], chunk: int = 5) -> Script:
    """An upstream streaming one reply per text as choices 0, 1, …, their pieces
    interleaved, each choice's finish at the end."""

    def event(i: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": i, "delta": delta, "finish_reason": finish}
        return _event({**UP, "object": "chat.completion.chunk", "choices": [choice]})

    events = [event(i, {"role": "assistant", "content": ""}) for i in range(len(texts))]
    pieces = [[t[k : k + chunk] for k in range(0, len(t), chunk)] for t in texts]
    for k in range(max(len(p) for p in pieces)):
        events += [event(i, {"content": p[k]}) for i, p in enumerate(pieces) if k < len(p)]
    events += [event(i, {}, "stop") for i in range(len(texts))]
    return Script(raw=[*events, b"data: [DONE]\n\n"])


def _whole_choices(texts: list[str]) -> Script:
    """An upstream answering one whole completion with one choice per text."""
    choices = [
        {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
        for i, t in enumerate(texts)
    ]
    usage = {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}
    body = {**UP, "object": "chat.completion", "choices": choices, "usage": usage}
    return Script(raw=[json.dumps(body).encode()], content_type="application/json")


def _check_two(outs: dict[int, Streamed]) -> None:
    assert sorted(outs) == [0, 1]
    for i, text in enumerate(TWO):
        out = outs[i]
        for piece in out.contents:
            _no_tag(piece)
        assert out.content.strip() == parse(text, tools=TOOLS, dialects=["hermes"]).text.strip()
        assert _calls(out) == [CALLS, CALLS[1:]][i]
        assert sorted(out.calls) == list(range(len(out.calls)))
        assert out.finish == "tool_calls"
    ids = [c["id"] for out in outs.values() for c in out.calls.values()]
    assert len(set(ids)) == len(ids) == 3


def test_each_whole_choice_is_read_on_its_own(proxy: Any) -> None:
    client, request = _ask(proxy, "hermes", _whole_choices(TWO), n=2)
    with client:
        choices = client.chat.completions.create(**request).choices
    _check_two({c.index: _as_streamed(c) for c in choices})


@pytest.mark.parametrize("chunk", [1, 6])
def test_each_streamed_choice_has_its_own_sieve(proxy: Any, chunk: int) -> None:
    """The choices' pieces come interleaved; each choice's text, calls (numbered from 0)
    and finish are its own."""
    _check_two(_streamed_choices(proxy, "hermes", _sse_choices(TWO, chunk), n=2))


def test_a_call_cut_off_in_one_streamed_choice_ends_the_stream(proxy: Any) -> None:
    written = _written("hermes", CALLS[:1])
    cut = "Sure. " + written[: written.index("Paris") + 2]
    with pytest.raises(openai.APIError, match="tool_call|cut"):
        _streamed_choices(proxy, "hermes", _sse_choices([TWO[1], cut], 4), n=2)


# ---------------------------------------------------------------- the upstream's own calls
NATIVE = {
    "index": 0,
    "id": "call_upstream0",
    "type": "function",
    "function": {"name": "get_time", "arguments": '{"zone": "UTC"}'},
}


@BOTH
def test_the_upstreams_calls_are_numbered_after_the_texts(proxy: Any, stream: bool) -> None:
    """As the gateway merges them: the calls read from the text first, then the
    upstream's own, one list with indexes 0, 1, 2 and ids unique."""
    text = "Let me check.\n\n" + _written("hermes")
    script = Script(text=text, tool_calls=[[NATIVE]], finish="tool_calls", chunk=6)
    out = _reply(proxy, "hermes", script, stream)
    assert _calls(out) == [*CALLS, ("get_time", {"zone": "UTC"})]
    assert sorted(out.calls) == [0, 1, 2]
    ids = [c["id"] for _, c in sorted(out.calls.items())]
    assert len(set(ids)) == 3 and ids[2] == "call_upstream0"
    assert out.content.strip() == "Let me check."
    assert out.finish == "tool_calls"


def test_an_upstream_call_that_comes_first_is_still_numbered_after(proxy: Any) -> None:
    """The upstream's call streams before the text: it goes out at the end, so the index 0
    the upstream gave it never meets the text's first call."""
    deltas = [{"tool_calls": [NATIVE]}, {"content": "Sure. "}, {"content": _written("hermes")}]
    out = _streamed(proxy, "hermes", Script(deltas=deltas, finish="tool_calls"))
    assert _calls(out) == [*CALLS, ("get_time", {"zone": "UTC"})]
    assert sorted(out.calls) == [0, 1, 2]


def test_an_upstream_call_whose_arguments_are_not_json_is_an_error(proxy: Any) -> None:
    bad = {**NATIVE, "function": {"name": "get_time", "arguments": "{zone: UTC"}}
    script = Script(text="Sure.", tool_calls=[[bad]], finish="tool_calls")
    with pytest.raises(openai.APIError, match="not a JSON object"):
        _streamed(proxy, "hermes", script)


# ---------------------------------------------------------------- tool_choice
@BOTH
def test_required_with_a_reply_without_a_call_is_answered_as_the_gateway_answers(
    proxy: Any, stream: bool
) -> None:
    """The gateway asks for a call but does not refuse a reply without one: its text is
    the answer and it finishes ``stop`` (no error: no call began)."""
    text = "I cannot look that up."
    out = _reply(proxy, "hermes", Script(text=text), stream, tool_choice="required")
    assert out.content == text and not out.calls
    assert out.finish == "stop"
    made = _reply(proxy, "hermes", Script(text=_written("hermes")), stream, tool_choice="required")
    assert _calls(made) == CALLS and made.finish == "tool_calls"


NAMED = {"type": "function", "function": {"name": "get_time"}}


@BOTH
def test_a_named_tool_drops_other_calls_whole(proxy: Any, stream: bool) -> None:
    text = "Sure. " + _written("hermes")
    out = _reply(proxy, "hermes", Script(text=text, chunk=3), stream, tool_choice=NAMED)
    assert _calls(out) == CALLS[1:]
    assert sorted(out.calls) == [0]
    _no_tag(out.content)
    only_other = _written("hermes", CALLS[:1])
    none = _reply(proxy, "hermes", Script(text="Sure. " + only_other), stream, tool_choice=NAMED)
    assert none.content.strip() == "Sure." and not none.calls
    assert none.finish == "stop"


@BOTH
def test_parallel_tool_calls_false_keeps_the_first_call(proxy: Any, stream: bool) -> None:
    text = "Sure. " + _written("hermes")
    out = _reply(proxy, "hermes", Script(text=text), stream, parallel_tool_calls=False)
    assert _calls(out) == CALLS[:1]
    _no_tag(out.content)

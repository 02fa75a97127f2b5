"""No client is left holding a call that did not parse or pass the policy (SPEC §17, issue
23): with the real ``openai`` and ``anthropic`` clients, a reply cut off inside a streamed
call, and one whose call fails its schema under ``policy="schema"`` with ``--early-emit
arguments``, end with the API's error (the SDK raises) or never start the call; a whole reply
has no such call and says why. A reply cut off inside a block says so in its finish reason,
streamed as whole (the renderer's ``close`` gets the sieve's blocks). ``on_abort =
"continue"`` keeps the stream going, as before issue 23."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from gateway_probe_helpers import gateway
from loopback import Script, anthropic_client, openai_client, running, scripted, serving

from callsieve import ConfigurationError
from callsieve.server import ServerConfig

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
CLAUDE_TOOLS = [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]
ASK = [{"role": "user", "content": "The weather in Paris?"}]
OPEN = 'Checking.\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
CITY = '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n'
#: Cut off by the token limit inside the call's first value.
CUT = f'{OPEN}<|DSML|parameter name="city"><![CDATA[Par'
#: A call whose ``days`` is no integer.
BAD = f'{OPEN}{CITY}<|DSML|parameter name="days">three</|DSML|parameter>\n</|DSML|invoke>\n'
BAD += "</|DSML|tool_calls>"
ARGUMENTS = {"early_emit": "arguments"}


def chat_stream(base: str, **ask: Any) -> Any:
    """The streamed Chat reply's choice as the SDK accumulates it (its ``stream`` helper
    raises for a ``length`` finish: the completion is on the error)."""
    with openai_client(base).chat.completions.stream(
        model="m", messages=ASK, **{"tools": TOOLS, **ask}
    ) as stream:
        try:
            return stream.get_final_completion().choices[0]
        except openai.LengthFinishReasonError as exc:
            return exc.completion.choices[0]


def claude_stream(base: str) -> Any:
    with anthropic_client(base).messages.stream(
        model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS
    ) as stream:
        return stream.get_final_message()


def no_usable_call(get: Callable[[], Any], error: type[Exception]) -> Exception | Any:
    """What the client ends with: the SDK's error, or a message without a weather call."""
    try:
        final = get()
    except error as exc:
        return exc
    message = getattr(final, "message", final)
    calls = getattr(message, "tool_calls", None) or [
        b for b in getattr(message, "content", []) if getattr(b, "type", "") == "tool_use"
    ]
    assert not calls, calls
    return final


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("aborts")
    (folder / "cut.txt").write_text(CUT, encoding="utf-8")
    (folder / "bad.txt").write_text(BAD, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def cut(files: Path) -> Iterator[str]:
    config = ServerConfig.build(transcript=str(files / "cut.txt"), sieve=ARGUMENTS)
    with running(config) as base:
        yield base


# ---------------------------------------------------------------------- cut off inside a call
def test_a_reply_cut_inside_a_streamed_call_raises_in_both_clients(cut: str) -> None:
    with pytest.raises(openai.APIError) as chat:
        chat_stream(cut)
    assert "tool_call_cut_off" in str(chat.value.body)
    with pytest.raises(anthropic.APIStatusError) as claude:
        claude_stream(cut)
    assert "cut off" in str(claude.value)


def test_a_whole_reply_cut_inside_a_call_has_no_call_and_says_length(cut: str) -> None:
    chat = openai_client(cut).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert not chat.choices[0].message.tool_calls and chat.choices[0].finish_reason == "length"
    claude = anthropic_client(cut).messages.create(
        model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS
    )
    assert [b.type for b in claude.content] == ["text"] and claude.stop_reason == "max_tokens"


def test_an_upstream_cut_off_by_max_tokens_inside_a_call_raises_in_both_clients() -> None:
    with (
        scripted(Script(text=CUT, chunk=3, finish="length")) as model,
        gateway(model, sieve=ARGUMENTS) as base,
    ):
        with pytest.raises(openai.APIError):
            chat_stream(base)
        with pytest.raises(anthropic.APIStatusError):
            claude_stream(base)


def test_callsieve_serve_with_early_emit_arguments_as_a_process(files: Path) -> None:
    with serving("--transcript", str(files / "cut.txt"), "--early-emit", "arguments") as served:
        with pytest.raises(openai.APIError):
            chat_stream(served.url)
        with pytest.raises(anthropic.APIStatusError):
            claude_stream(served.url)


# ---------------------------------------------------------------------- a call failing its schema
def test_a_call_failing_its_schema_is_no_usable_call_for_either_client(files: Path) -> None:
    config = ServerConfig.build(
        transcript=str(files / "bad.txt"), sieve={**ARGUMENTS, "policy": "schema"}
    )
    with running(config) as base:
        no_usable_call(lambda: chat_stream(base), openai.APIError)
        no_usable_call(lambda: claude_stream(base), anthropic.APIStatusError)
        whole = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
        claude = anthropic_client(base).messages.create(
            model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS
        )
    assert not whole.choices[0].message.tool_calls
    assert [b.type for b in claude.content] == ["text"]


def test_the_same_schema_failure_through_an_upstream() -> None:
    with (
        scripted(Script(text=BAD, chunk=4)) as model,
        gateway(model, sieve={**ARGUMENTS, "policy": "schema"}) as base,
    ):
        no_usable_call(lambda: chat_stream(base), openai.APIError)
        no_usable_call(lambda: claude_stream(base), anthropic.APIStatusError)


def test_a_schema_failure_under_callsieve_serve_as_a_process(files: Path) -> None:
    """``callsieve serve --transcript --early-emit arguments --sieve-option
    policy="schema"``: neither client ends with the call as a usable one, streamed or
    whole."""
    args = ("--early-emit", "arguments", "--sieve-option", 'policy="schema"')
    with serving("--transcript", str(files / "bad.txt"), *args) as served:
        no_usable_call(lambda: chat_stream(served.url), openai.APIError)
        no_usable_call(lambda: claude_stream(served.url), anthropic.APIStatusError)
        whole = openai_client(served.url).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS
        )
    assert not whole.choices[0].message.tool_calls


# ---------------------------------------------------------------------- the finish reason
def test_a_stream_cut_inside_a_block_says_length_as_the_whole_reply_does(files: Path) -> None:
    """Under ``early_emit="block"`` no call began, so nothing aborts: the block was left
    open by the end of the input, and the renderer, given the sieve's blocks, says the
    reply was cut (item 4)."""
    with running(ServerConfig.build(transcript=str(files / "cut.txt"))) as base:
        streamed = chat_stream(base)
        whole = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
        claude = claude_stream(base)
    assert streamed.finish_reason == whole.choices[0].finish_reason == "length"
    assert not streamed.message.tool_calls
    assert claude.stop_reason == "max_tokens"


def test_a_text_only_reply_that_ends_inside_markup_is_not_cut_off(files: Path) -> None:
    """Without tools there is no call to cut: the upstream's own reason stands."""
    with running(ServerConfig.build(transcript=str(files / "cut.txt"))) as base:
        choice = chat_stream(base, tools=openai.omit)
    assert choice.finish_reason == "stop" and not choice.message.tool_calls


# ---------------------------------------------------------------------- on_abort
def test_on_abort_continue_keeps_todays_stream(files: Path) -> None:
    """The switch back: the stream ends normally, the aborted call is left where it stood
    (the SDK holds what was sent of it) and the finish reason says the reply was cut."""
    config = ServerConfig.build(
        transcript=str(files / "cut.txt"), sieve=ARGUMENTS, on_abort="continue"
    )
    with running(config) as base:
        choice = chat_stream(base)
        final = claude_stream(base)
    assert choice.finish_reason == "length" and final.stop_reason == "max_tokens"
    assert [c.function.arguments for c in choice.message.tool_calls] == ['{"city":"Par']


def test_on_abort_is_checked_at_start_up(files: Path) -> None:
    with pytest.raises(ConfigurationError, match="on_abort must be one of error, continue"):
        ServerConfig.build(transcript=str(files / "cut.txt"), on_abort="ignore")

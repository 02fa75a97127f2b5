"""Reasoning decided per request (SPEC §17, issue 23), with the real ``openai`` and
``anthropic`` clients over 127.0.0.1: against ``callsieve serve --transcript`` (replay mode,
in a thread and as a process) and against a scripted upstream. A thinking template's reply
(no ``<think>``: the template wrote it; a block drafted in the thought, then ``</think>``)
asked for with the template's switch or Anthropic's ``thinking`` gives the thought as
reasoning and only the answer's calls; a plain reply asked for without thinking gives the
answer and its call; a request without tools has its reasoning split and no tag or markup
in its content; an upstream that sends ``reasoning_content`` has its content read as the
answer, in either order of the deltas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from gateway_probe_helpers import gateway
from loopback import (
    Script,
    anthropic_client,
    genai_client,
    openai_client,
    running,
    scripted,
    serving,
)

import callsieve
from callsieve.render import openai_chat
from callsieve.server import ServerConfig

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties},
        },
    }
    for name, properties in (
        ("get_weather", {"city": {"type": "string"}}),
        ("read_file", {"path": {"type": "string"}}),
        ("delete_everything", {}),
    )
]
CLAUDE_TOOLS = [
    {"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS
]
ASK = [{"role": "user", "content": "The weather in Paris, and what the README says."}]
DRAFT = (
    '<|DSML|tool_calls>\n<|DSML|invoke name="delete_everything">\n'
    "</|DSML|invoke>\n</|DSML|tool_calls>"
)
THOUGHT = f"The user wants Paris. I could clean up first:\n{DRAFT}\nNo: that was not asked."
ANSWER = "Checking the weather and the README."
CALLS = (
    '\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
    '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n</|DSML|invoke>\n'
    '<|DSML|invoke name="read_file">\n'
    '<|DSML|parameter name="path"><![CDATA[README.md]]></|DSML|parameter>\n</|DSML|invoke>\n'
    "</|DSML|tool_calls>"
)
#: What DeepSeek R1 (and V3.1+ thinking) writes: the template wrote ``<think>``.
THINKING_REPLY = f"{THOUGHT}</think>{ANSWER}{CALLS}"
ANSWER_CALLS = [("get_weather", {"city": "Paris"}), ("read_file", {"path": "README.md"})]
PLAIN = "Checking the weather."
PLAIN_REPLY = (
    f'{PLAIN}\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n'
    '<|DSML|parameter name="city"><![CDATA[Paris]]></|DSML|parameter>\n</|DSML|invoke>\n'
    "</|DSML|tool_calls>"
)
THINK = {"chat_template_kwargs": {"thinking": True}}
CLAUDE_THINK: Any = {"type": "enabled", "budget_tokens": 1024}


def chat_calls(message: Any) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


def reasoning_of(message: Any) -> Any:
    return getattr(message, "reasoning_content", None)


def claude_blocks(content: list[Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for b in content:
        if b.type == "thinking":
            out.append(("thinking", b.thinking))
        elif b.type == "text":
            out.append(("text", b.text))
        else:
            out.append((b.name, b.input))
    return out


def thinking_answers(base: str) -> list[Any]:
    """The reply to a request asking for thinking, as the Chat stream, Chat whole and an
    Anthropic stream accumulate it."""
    client = openai_client(base)
    with client.chat.completions.stream(
        model="m", messages=ASK, tools=TOOLS, extra_body=THINK
    ) as stream:
        streamed = stream.get_final_completion().choices[0].message
    whole = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, extra_body=THINK)
    with anthropic_client(base).messages.stream(
        model="m", max_tokens=2000, messages=ASK, tools=CLAUDE_TOOLS, thinking=CLAUDE_THINK
    ) as stream:
        claude = stream.get_final_message()
    return [streamed, whole.choices[0].message, claude]


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("transcripts")
    (folder / "thinking.txt").write_text(THINKING_REPLY, encoding="utf-8")
    (folder / "plain.txt").write_text(PLAIN_REPLY, encoding="utf-8")
    (folder / "tagged.txt").write_text(f"<think>{THOUGHT}</think>{ANSWER}{CALLS}", "utf-8")
    return folder


@pytest.fixture(scope="module")
def thinking(transcripts: Path) -> Iterator[str]:
    """The gateway replaying a thinking template's reply."""
    with running(ServerConfig.build(transcript=str(transcripts / "thinking.txt"))) as base:
        yield base


@pytest.fixture(scope="module")
def plain(transcripts: Path) -> Iterator[str]:
    """The same gateway replaying a plain reply."""
    with running(ServerConfig.build(transcript=str(transcripts / "plain.txt"))) as base:
        yield base


# ---------------------------------------------------------------------- thinking requested
def test_the_thinking_reply_parses_as_the_issue_says() -> None:
    """Read as a reply that starts inside the thought, only the answer's calls are calls;
    read as one that does not, the drafted call runs (issue 23, problem 1)."""
    opened = callsieve.parse(THINKING_REPLY, tools=TOOLS, reasoning="open")
    assert [(c.name, c.input) for c in opened.calls] == ANSWER_CALLS
    assert [c.name for c in callsieve.parse(THINKING_REPLY, tools=TOOLS).calls] == [
        "delete_everything",
        "get_weather",
        "read_file",
    ]


@pytest.mark.parametrize(
    "switch",
    [
        {"chat_template_kwargs": {"thinking": True}},
        {"chat_template_kwargs": {"enable_thinking": True}},
        {"reasoning_effort": "high"},
    ],
    ids=["thinking", "enable_thinking", "reasoning_effort"],
)
def test_chat_asking_for_thinking_gets_the_thought_as_reasoning(
    thinking: str, switch: dict[str, Any]
) -> None:
    client = openai_client(thinking)
    expected = openai_chat.render_response(
        callsieve.parse(THINKING_REPLY, tools=TOOLS, reasoning="open")
    )["choices"][0]["message"]
    with client.chat.completions.stream(
        model="m", messages=ASK, tools=TOOLS, extra_body=switch
    ) as stream:
        streamed = stream.get_final_completion().choices[0]
    whole = client.chat.completions.create(model="m", messages=ASK, tools=TOOLS, extra_body=switch)
    for choice in (streamed, whole.choices[0]):
        message = choice.message
        assert chat_calls(message) == ANSWER_CALLS
        assert reasoning_of(message) == THOUGHT == expected["reasoning_content"]
        assert message.content == expected["content"] and message.content.strip() == ANSWER
        assert choice.finish_reason == "tool_calls"


def test_responses_asking_for_reasoning_gets_the_thought_as_a_reasoning_item(thinking: str) -> None:
    tools: Any = [
        {
            "type": "function",
            "name": t["function"]["name"],
            "parameters": t["function"]["parameters"],
        }
        for t in TOOLS
    ]
    client = openai_client(thinking)
    with client.responses.stream(
        model="m", input="Look.", tools=tools, reasoning={"effort": "medium"}
    ) as stream:
        final = stream.get_final_response()
    kinds = [item.type for item in final.output]
    assert kinds == ["reasoning", "message", "function_call", "function_call"]
    assert final.output[0].summary[0].text == THOUGHT  # type: ignore[union-attr]
    calls = [(i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"]
    assert calls == ANSWER_CALLS


def test_anthropic_asking_for_thinking_gets_a_thinking_block(thinking: str) -> None:
    claude = anthropic_client(thinking)
    ask: Any = {
        "model": "m",
        "max_tokens": 2000,
        "messages": ASK,
        "tools": CLAUDE_TOOLS,
        "thinking": CLAUDE_THINK,
    }
    with claude.messages.stream(**ask) as stream:
        streamed = stream.get_final_message()
    whole = claude.messages.create(**ask)
    for message in (streamed, whole):
        assert claude_blocks(message.content) == [("thinking", THOUGHT), ("text", ANSWER)] + [
            *ANSWER_CALLS
        ]
        assert message.stop_reason == "tool_use"


def test_a_model_entry_reads_every_reply_of_a_template_that_always_thinks(
    transcripts: Path, tmp_path: Path
) -> None:
    """``callsieve serve --transcript --config`` as a process, its ``[models]`` table saying
    the model always thinks and its template writes ``<think>`` (DeepSeek R1): a request that
    says nothing about thinking — or turns it off — is read right."""
    config = tmp_path / "gateway.toml"
    config.write_text('[models."deepseek-r1*"]\nthinking = "always"\n', encoding="utf-8")
    with serving(
        "--transcript", str(transcripts / "thinking.txt"), "--config", str(config)
    ) as served:
        client = openai_client(served.url)
        for extra in ({}, {"chat_template_kwargs": {"thinking": False}}):
            reply = client.chat.completions.create(
                model="DeepSeek-R1-0528", messages=ASK, tools=TOOLS, extra_body=extra
            )
            assert chat_calls(reply.choices[0].message) == ANSWER_CALLS
            assert reasoning_of(reply.choices[0].message) == THOUGHT
        other = client.chat.completions.create(model="another", messages=ASK, tools=TOOLS)
    # (no entry, nothing said: the call drafted before the unopened ``</think>`` is dropped,
    # where it used to go out as a call, issue 33)
    assert chat_calls(other.choices[0].message) == ANSWER_CALLS


def test_thinking_asked_of_a_model_that_does_not_think_keeps_the_answer(plain: str) -> None:
    """Thinking asked for, no entry for the model, and a reply with no thought at all (the
    model ignores the switch): the reply was read as starting inside a thought only as a
    guess, held until it was settled; it ended on its own without ``</think>``, so it is read
    again as an answer: its text and its call reach both clients, streamed and whole."""
    streamed, whole, claude = thinking_answers(plain)
    for message in (streamed, whole):
        assert chat_calls(message) == [("get_weather", {"city": "Paris"})]
        assert message.content.strip() == PLAIN and not reasoning_of(message)
    assert claude_blocks(claude.content) == [("text", PLAIN), ("get_weather", {"city": "Paris"})]


def test_a_guessed_thought_cut_off_by_the_token_limit_stays_a_thought() -> None:
    """Cut off (``length``) before ``</think>``: the model was thinking when it stopped."""
    with (
        scripted(Script(text=THOUGHT, chunk=9, finish="length")) as model,
        gateway(model) as base,
    ):
        choice = openai_client(base).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS, extra_body=THINK
        )
    message = choice.choices[0].message
    assert reasoning_of(message) == THOUGHT and not message.content and not message.tool_calls
    assert choice.choices[0].finish_reason == "length"


def test_a_guessed_thought_longer_than_the_hold_goes_out_as_reasoning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past ``HOLD`` characters a guessed thought is taken for the thought it seems, and
    streams on (nothing more is held)."""
    from callsieve.server._reply import respond

    monkeypatch.setattr(respond, "HOLD", 64)
    long = "a long thought, " * 20
    with scripted(Script(text=long, chunk=8)) as model, gateway(model) as base:
        message = openai_client(base).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS, extra_body=THINK
        )
    assert reasoning_of(message.choices[0].message) == long.strip()
    assert not message.choices[0].message.content


def test_callsieve_serve_as_a_process_reads_each_request_as_it_asks(transcripts: Path) -> None:
    """Issue 23's "Done when", against ``callsieve serve --transcript`` as a process (no
    config, no ``[models]`` entry): the thinking template's reply asked for with
    ``chat_template_kwargs={"thinking": true}`` or Anthropic's ``thinking`` gives the
    thought as reasoning and only the answer's calls, streamed; the same reply to a
    request without tools has its reasoning split and no tag in its content."""
    with serving("--transcript", str(transcripts / "thinking.txt")) as served:
        client = openai_client(served.url)
        with client.chat.completions.stream(
            model="m", messages=ASK, tools=TOOLS, extra_body=THINK
        ) as stream:
            chat = stream.get_final_completion().choices[0]
        with anthropic_client(served.url).messages.stream(
            model="m", max_tokens=2000, messages=ASK, tools=CLAUDE_TOOLS, thinking=CLAUDE_THINK
        ) as stream:
            claude = stream.get_final_message()
        with client.chat.completions.stream(model="m", messages=ASK, extra_body=THINK) as stream:
            text_only = stream.get_final_completion().choices[0].message
        with anthropic_client(served.url).messages.stream(
            model="m", max_tokens=2000, messages=ASK, thinking=CLAUDE_THINK
        ) as stream:
            claude_text = stream.get_final_message()
    assert chat_calls(chat.message) == ANSWER_CALLS and chat.finish_reason == "tool_calls"
    assert reasoning_of(chat.message) == THOUGHT and chat.message.content.strip() == ANSWER
    assert claude_blocks(claude.content) == [("thinking", THOUGHT), ("text", ANSWER), *ANSWER_CALLS]
    assert reasoning_of(text_only) == THOUGHT and text_only.content == ANSWER
    assert not text_only.tool_calls
    _no_tags(text_only.content)
    assert claude_blocks(claude_text.content) == [("thinking", THOUGHT), ("text", ANSWER)]


def test_callsieve_serve_as_a_process_without_thinking_gives_the_answer_and_its_call(
    transcripts: Path,
) -> None:
    with serving("--transcript", str(transcripts / "plain.txt")) as served:
        with openai_client(served.url).chat.completions.stream(
            model="m", messages=ASK, tools=TOOLS
        ) as stream:
            message = stream.get_final_completion().choices[0].message
        with anthropic_client(served.url).messages.stream(
            model="m", max_tokens=100, messages=ASK, tools=CLAUDE_TOOLS
        ) as stream:
            claude = stream.get_final_message()
    assert chat_calls(message) == [("get_weather", {"city": "Paris"})]
    assert message.content.strip() == PLAIN and not reasoning_of(message)
    assert claude_blocks(claude.content) == [("text", PLAIN), ("get_weather", {"city": "Paris"})]


def test_a_guessed_thought_is_never_held_past_the_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The piece that would take the held thought past ``HOLD`` settles it first: no more
    than ``HOLD`` characters are held, nor read again at once, and from there the thought
    streams as it comes."""
    from callsieve.server._reply import respond

    fed: list[int] = []

    class Counted(callsieve.Sieve):
        def feed(self, text: str) -> list[callsieve.Event]:
            fed.append(len(text))
            return super().feed(text)

    monkeypatch.setattr(respond, "HOLD", 64)
    monkeypatch.setattr(respond, "Sieve", Counted)
    options = {"tools": TOOLS, "reasoning": "open"}
    events = respond.ReplyEvents(respond.make_sieve(options), options=options, guess=True)
    out = [events.feed(piece) for piece in ["thinking " * 6, "thinking " * 2, "thinking "]]
    assert out[0] == [] and max(fed) <= 64  # (54 held; 72 would pass the hold)
    assert all(isinstance(e, callsieve.Reasoning) for piece in out for e in piece)
    assert ["".join(e.text for e in piece) for piece in out] == [
        "",
        "thinking " * 8,
        "thinking ",
    ]


# ---------------------------------------------------------------------- thinking not requested
def test_without_thinking_a_plain_reply_gives_the_answer_and_its_call(plain: str) -> None:
    client = openai_client(plain)
    for extra in ({}, {"chat_template_kwargs": {"thinking": False}}, {"reasoning_effort": "none"}):
        with client.chat.completions.stream(
            model="m", messages=ASK, tools=TOOLS, extra_body=extra
        ) as stream:
            message = stream.get_final_completion().choices[0].message
        assert chat_calls(message) == [("get_weather", {"city": "Paris"})]
        assert message.content.strip() == PLAIN and not reasoning_of(message)
    claude = anthropic_client(plain)
    for thought in (None, {"type": "disabled"}):
        ask: Any = {"model": "m", "max_tokens": 100, "messages": ASK, "tools": CLAUDE_TOOLS}
        with claude.messages.stream(**ask, **({"thinking": thought} if thought else {})) as s:
            final = s.get_final_message()
        assert claude_blocks(final.content) == [("text", PLAIN), ("get_weather", {"city": "Paris"})]


def test_one_gateway_reads_each_request_as_it_asks() -> None:
    """In front of one upstream: the first request asks for thinking and gets a thinking
    template's reply, the second does not and gets a plain one. Each is read as it asked,
    and the upstream got the template's switch only when it was asked for."""
    with (
        scripted(Script(text=THINKING_REPLY, chunk=5), Script(text=PLAIN_REPLY, chunk=5)) as model,
        gateway(model) as base,
    ):
        client = openai_client(base)
        with client.chat.completions.stream(
            model="m", messages=ASK, tools=TOOLS, extra_body=THINK
        ) as stream:
            first = stream.get_final_completion().choices[0].message
        with client.chat.completions.stream(model="m", messages=ASK, tools=TOOLS) as stream:
            second = stream.get_final_completion().choices[0].message
    assert chat_calls(first) == ANSWER_CALLS and reasoning_of(first) == THOUGHT
    assert chat_calls(second) == [("get_weather", {"city": "Paris"})]
    assert second.content.strip() == PLAIN and not reasoning_of(second)
    asked, silent = model.requests
    assert asked["chat_template_kwargs"] == {"thinking": True, "enable_thinking": True}
    assert "chat_template_kwargs" not in silent


def test_anthropic_thinking_reaches_the_upstream_as_the_templates_switch() -> None:
    with scripted(Script(text=THINKING_REPLY, chunk=7)) as model, gateway(model) as base:
        claude = anthropic_client(base)
        with claude.messages.stream(
            model="m", max_tokens=2000, messages=ASK, tools=CLAUDE_TOOLS, thinking=CLAUDE_THINK
        ) as stream:
            final = stream.get_final_message()
    assert claude_blocks(final.content)[0] == ("thinking", THOUGHT)
    assert [b.name for b in final.content if b.type == "tool_use"] == ["get_weather", "read_file"]
    assert model.requests[0]["chat_template_kwargs"] == {"thinking": True, "enable_thinking": True}


# ---------------------------------------------------------------------- requests without tools
def _no_tags(text: str) -> None:
    for mark in ("<think>", "</think>", "<|DSML|", "tool_calls", "delete_everything"):
        assert mark not in text, mark


def test_a_request_without_tools_has_its_reasoning_split(thinking: str, transcripts: Path) -> None:
    """A thinking template's reply to a request without tools: the thought is reasoning, the
    answer is text with no tag and no markup (the answer's block is leaked markup: the
    model was taught no tools), and no call."""
    client = openai_client(thinking)
    with client.chat.completions.stream(model="m", messages=ASK, extra_body=THINK) as stream:
        streamed = stream.get_final_completion().choices[0].message
    whole = client.chat.completions.create(model="m", messages=ASK, extra_body=THINK)
    for message in (streamed, whole.choices[0].message):
        assert reasoning_of(message) == THOUGHT
        assert message.content == ANSWER and not message.tool_calls
        _no_tags(message.content)
    claude = anthropic_client(thinking)
    with claude.messages.stream(
        model="m", max_tokens=2000, messages=ASK, thinking=CLAUDE_THINK
    ) as stream:
        final = stream.get_final_message()
    assert claude_blocks(final.content) == [("thinking", THOUGHT), ("text", ANSWER)]
    assert final.stop_reason == "end_turn"


def test_a_request_without_tools_splits_a_thought_in_tags(transcripts: Path) -> None:
    """Thinking not asked for: a ``<think>…</think>`` the model wrote is still reasoning."""
    with running(ServerConfig.build(transcript=str(transcripts / "tagged.txt"))) as base:
        message = openai_client(base).chat.completions.create(model="m", messages=ASK)
        claude = anthropic_client(base).messages.create(model="m", max_tokens=99, messages=ASK)
    assert reasoning_of(message.choices[0].message) == THOUGHT
    assert message.choices[0].message.content == ANSWER
    _no_tags(message.choices[0].message.content)
    assert claude_blocks(claude.content) == [("thinking", THOUGHT), ("text", ANSWER)]


def test_a_request_without_tools_keeps_its_prose_as_written() -> None:
    """Only a block that parses is dropped: a mention of a tag or of a block in the answer
    is text, and what follows it is never lost (the sanitizer of SPEC §13 would take the
    rest of the reply after a lone ``<think>``: docs/gateway.md says why it is not on)."""
    prose = (
        "Models mark a thought with a <think> tag, and a call with <|DSML|tool_calls>; "
        "the rest of this answer is still here."
    )
    with scripted(Script(text=prose, chunk=5)) as model, gateway(model) as base:
        reply = openai_client(base).chat.completions.create(model="m", messages=ASK)
    assert reply.choices[0].message.content == prose
    assert callsieve.sanitize_leaked_output(prose) != prose


def test_sanitize_in_the_settings_applies_to_prose_but_not_to_a_json_reply() -> None:
    """``[sieve] sanitize = true`` turns SPEC §13 on for every reply's text — a leaked
    special token goes — but a JSON reply is data: what looks like a leaked call array in
    it stays as the model wrote it."""
    data = '[{"type": "function", "function": {"name": "f", "arguments": "{}"}}]'
    token = "All done.<｜end▁of▁sentence｜>"
    with (
        scripted(Script(text=token, chunk=3), Script(text=data, chunk=3)) as model,
        gateway(model, sieve={"sanitize": True}) as base,
    ):
        client = openai_client(base)
        prose = client.chat.completions.create(model="m", messages=ASK)
        json_reply = client.chat.completions.create(
            model="m", messages=ASK, response_format={"type": "json_object"}
        )
    assert prose.choices[0].message.content == "All done."
    assert json_reply.choices[0].message.content == data
    assert callsieve.sanitize_leaked_output(data) != data  # (prose would lose it)


# ---------------------------------------------------------------------- reasoning_content
def test_an_upstream_that_sends_reasoning_content_has_its_content_read_as_the_answer() -> None:
    """vLLM or SGLang with a reasoning parser: the thought comes as ``reasoning_content``,
    the answer as content. Thinking was asked for, so the reply would be read as starting
    inside a thought (which would take the whole answer for one): the first delta that
    carries reasoning tells the gateway the content is the answer only. The drafted block
    in the upstream's reasoning is reasoning, never a call."""
    script = Script(reasoning=THOUGHT, text=f"{ANSWER}{CALLS}", chunk=6)
    with scripted(script) as model, gateway(model) as base:
        streamed, whole, claude = thinking_answers(base)
    for message in (streamed, whole):
        assert chat_calls(message) == ANSWER_CALLS
        assert message.content.strip() == ANSWER and reasoning_of(message) == THOUGHT
    assert claude_blocks(claude.content) == [("thinking", THOUGHT), ("text", ANSWER), *ANSWER_CALLS]


def test_white_space_before_the_upstreams_reasoning_does_not_decide() -> None:
    deltas = [{"content": "\n\n"}, {"reasoning_content": THOUGHT}, {"content": f"{ANSWER}{CALLS}"}]
    with scripted(Script(deltas=deltas)) as model, gateway(model) as base:
        streamed, whole, claude = thinking_answers(base)
    for message in (streamed, whole):
        assert chat_calls(message) == ANSWER_CALLS and message.content.strip() == ANSWER
    assert [n for n, _ in claude_blocks(claude.content)] == [
        "thinking",
        "text",
        "get_weather",
        "read_file",
    ]


@pytest.mark.parametrize(
    "models", [{"m": {"upstream_reasoning": True}}, None], ids=["entry", "no-entry"]
)
def test_content_before_reasoning_is_the_answer(models: dict[str, Any] | None) -> None:
    """The other order: content first, reasoning after it. With an entry saying the
    model's server separates reasoning, the content is the answer from its first
    character. Without one, the request asked for thinking, so the reply is read as
    starting inside a thought — a guess, so that thought is held until it is settled: the
    reasoning that arrives shows the content was the answer, and it is read again so."""
    deltas = [
        {"content": "Checking the weather"},
        {"reasoning_content": "(Paris, then the README.)"},
        {"content": f" and the README.{CALLS}"},
    ]
    settings: dict[str, Any] = {"models": models} if models else {}
    with scripted(Script(deltas=deltas)) as model, gateway(model, **settings) as base:
        streamed, whole, claude = thinking_answers(base)
    for message in (streamed, whole):
        assert chat_calls(message) == ANSWER_CALLS and message.content.strip() == ANSWER
        assert reasoning_of(message) == "(Paris, then the README.)"
    assert [n for n, _ in claude_blocks(claude.content)] == [
        "text",
        "thinking",
        "text",
        "get_weather",
        "read_file",
    ]


def test_content_before_reasoning_read_as_a_thought_by_the_entry_reads_the_rest_as_answer() -> None:
    """An entry says the template always writes ``<think>``, so the content is read as a
    thought as it comes (nothing held). When reasoning arrives while the sieve still stands
    inside that thought, what went out stays reasoning, and the rest is read as the answer:
    its calls are found."""
    deltas = [
        {"content": "Looking at"},
        {"reasoning_content": " the question."},
        {"content": f"{ANSWER}{CALLS}"},
    ]
    with (
        scripted(Script(deltas=deltas)) as model,
        gateway(model, models={"m": {"thinking": "always"}}) as base,
    ):
        streamed, whole, claude = thinking_answers(base)
    for message in (streamed, whole):
        assert chat_calls(message) == ANSWER_CALLS and message.content.strip() == ANSWER
        assert reasoning_of(message) == "Looking at the question."
    assert claude_blocks(claude.content) == [
        ("thinking", "Looking at the question."),
        ("text", ANSWER),
        *ANSWER_CALLS,
    ]


def test_reasoning_after_the_answer_began_leaves_the_answer_as_it_is() -> None:
    """Thinking not asked for, the answer begun: a late ``reasoning_content`` is shown as
    reasoning where it came, and the answer reads on with its call."""
    deltas = [
        {"content": "Checking"},
        {"reasoning_content": "(an afterthought)"},
        {"content": PLAIN_REPLY[len("Checking") :]},
    ]
    with scripted(Script(deltas=deltas)) as model, gateway(model) as base:
        message = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(message.choices[0].message) == [("get_weather", {"city": "Paris"})]
    assert message.choices[0].message.content.strip() == PLAIN
    assert reasoning_of(message.choices[0].message) == "(an afterthought)"


# ---------------------------------------------------------------------- the switch upstream
@pytest.mark.parametrize(
    ("extra", "models", "switch"),
    [
        ({"chat_template_kwargs": {"enable_thinking": False}}, None, False),
        ({"chat_template_kwargs": {"thinking": True, "x": 1}}, None, True),
        ({"reasoning_effort": "none"}, None, False),
        ({}, {"qwen3*": {"thinking": "on"}}, True),
        ({}, {"deepseek-v3.1*": {"thinking": "off"}}, False),
        ({"reasoning_effort": "low"}, {"qwen3*": {"thinking": "off"}}, True),
        ({}, None, None),
    ],
)
def test_the_thinking_switch_goes_upstream_as_the_request_or_the_model_decides(
    extra: dict[str, Any], models: dict[str, Any] | None, switch: bool | None
) -> None:
    """``chat_template_kwargs`` carries ``thinking`` and ``enable_thinking`` (each template
    reads its own) when the request or the model's entry decides; a key the client set is
    kept, and so are its other keys."""
    name = "qwen3-8b" if models and "qwen3*" in models else "deepseek-v3.1-terminus"
    settings: dict[str, Any] = {"models": models} if models else {}
    with scripted(Script(text="Hi.")) as model, gateway(model, **settings) as base:
        openai_client(base).chat.completions.create(model=name, messages=ASK, extra_body=extra)
    sent = model.requests[0]
    if switch is None:
        assert "chat_template_kwargs" not in sent
    else:
        own = extra.get("chat_template_kwargs", {})
        assert sent["chat_template_kwargs"] == {
            "thinking": switch,
            "enable_thinking": switch,
            **own,
        }


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"thinking": "yes"}, "chat_template_kwargs.thinking"),
        ({"thinking": True, "enable_thinking": False}, "chat_template_kwargs"),
    ],
)
def test_a_switch_that_cannot_be_read_is_400(kwargs: dict[str, Any], param: str) -> None:
    with scripted(Script(text="x")) as model, gateway(model) as base:
        with pytest.raises(openai.BadRequestError) as info:
            openai_client(base).chat.completions.create(
                model="m", messages=ASK, extra_body={"chat_template_kwargs": kwargs}
            )
        with pytest.raises(openai.BadRequestError) as effort:
            openai_client(base).chat.completions.create(
                model="m", messages=ASK, extra_body={"reasoning_effort": 3}
            )
    assert info.value.param == param and effort.value.param == "reasoning_effort"
    assert not model.requests


def test_anthropic_thinking_disabled_and_gemini_budget_zero_turn_the_switch_off() -> None:
    from google.genai import types

    with scripted(Script(text="Hi.")) as model, gateway(model) as base:
        anthropic_client(base).messages.create(
            model="m", max_tokens=9, messages=ASK, thinking={"type": "disabled"}
        )
        genai_client(base).models.generate_content(
            model="g",
            contents="hi",
            config=types.GenerateContentConfig(
                thinking_config=types.ThinkingConfig(thinking_budget=0)
            ),
        )
    off = {"thinking": False, "enable_thinking": False}
    assert [r["chat_template_kwargs"] for r in model.requests] == [off, off]

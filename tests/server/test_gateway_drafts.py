"""No drafted call reaches a client by default (issue 33, item 5; SPEC §15, §17): when
neither the request nor the settings say whether the template pre-writes ``<think>``, a
reply's calls are held until it shows which side of a ``</think>`` they stand on. A
``</think>`` with no opener means what came before was reasoning: the calls there are
dropped as drafts, and counted. Real clients over 127.0.0.1, in replay mode and against the
scripted upstream."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from loopback import Script, anthropic_client, openai_client, running, scripted
from test_gateway_thinking import (
    ANSWER,
    ANSWER_CALLS,
    ASK,
    CALLS,
    CLAUDE_TOOLS,
    PLAIN_REPLY,
    THINKING_REPLY,
    THOUGHT,
    TOOLS,
    chat_calls,
)

from callsieve.server import ServerConfig


def streamed_calls(base: str, **kw: Any) -> tuple[list[tuple[str, Any]], list[str]]:
    """The Chat stream's calls (accumulated) and, in order, what each chunk carried."""
    stream = openai_client(base).chat.completions.create(
        model="m", messages=ASK, tools=TOOLS, stream=True, **kw
    )
    names: dict[int, str] = {}
    args: dict[int, str] = {}
    order: list[str] = []
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            order.append("text")
        for c in delta.tool_calls or []:
            order.append("call")
            if c.function and c.function.name:
                names[c.index] = c.function.name
            args[c.index] = args.get(c.index, "") + ((c.function and c.function.arguments) or "")
    return [(names[i], json.loads(args[i])) for i in sorted(names)], order


@pytest.fixture(scope="module")
def thinking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A thinking template's reply (the template wrote ``<think>``), replayed by a gateway
    told nothing of the model."""
    path = tmp_path_factory.mktemp("drafts") / "thinking.txt"
    path.write_text(THINKING_REPLY, encoding="utf-8")
    with running(ServerConfig.build(transcript=str(path))) as base:
        yield base


def test_a_call_drafted_before_an_unopened_think_close_is_dropped(thinking: str) -> None:
    calls, _ = streamed_calls(thinking)
    assert calls == ANSWER_CALLS
    whole = openai_client(thinking).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert chat_calls(whole.choices[0].message) == ANSWER_CALLS
    with anthropic_client(thinking).messages.stream(
        model="m", max_tokens=2000, messages=ASK, tools=CLAUDE_TOOLS
    ) as stream:
        claude = stream.get_final_message()
    assert [(b.name, b.input) for b in claude.content if b.type == "tool_use"] == ANSWER_CALLS
    assert any(b.type == "text" and ANSWER in b.text for b in claude.content)


def test_the_drafts_are_counted(thinking: str) -> None:
    pytest.importorskip("prometheus_client")

    def drafts() -> float:
        text = httpx.get(f"{thinking}/metrics", timeout=10).text
        lines = [ln for ln in text.splitlines() if 'reason="draft"' in ln and "_total" in ln]
        return sum(float(ln.rsplit(" ", 1)[1]) for ln in lines)

    before = drafts()
    openai_client(thinking).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert drafts() == before + 1


def test_an_operator_who_says_tags_gets_every_call(tmp_path: Path) -> None:
    """``[sieve] reasoning = "tags"`` says the template writes no ``<think>``: nothing is
    held, and the block before the stray ``</think>`` is a call (what the default was)."""
    path = tmp_path / "thinking.txt"
    path.write_text(THINKING_REPLY, encoding="utf-8")
    config = ServerConfig.build(transcript=str(path), sieve={"reasoning": "tags"})
    with running(config) as base:
        calls, _ = streamed_calls(base)
    assert [name for name, _ in calls] == ["delete_everything", *(n for n, _ in ANSWER_CALLS)]


def test_a_plain_reply_keeps_its_call_released_at_the_end(tmp_path: Path) -> None:
    """Text streams; a call is held, with what follows it, until the reply ends (no
    ``</think>`` came), and then it is a call, in the order the model wrote it."""
    path = tmp_path / "plain.txt"
    path.write_text(PLAIN_REPLY + "\nDone, more text after the call.", encoding="utf-8")
    with running(ServerConfig.build(transcript=str(path))) as base:
        calls, order = streamed_calls(base)
    assert calls == [("get_weather", {"city": "Paris"})]
    first_call = order.index("call")
    assert order[:first_call].count("text") > 1 and "text" in order[first_call:]


def test_a_think_the_model_writes_itself_releases_the_calls_at_once() -> None:
    """A ``<think>`` the model writes: its template wrote none, so the calls are settled then
    (they stream before the reply ends)."""
    reply = f"<think>{THOUGHT}</think>{ANSWER}{CALLS}" + " tail" * 40
    with (
        scripted(Script(text=reply, chunk=5, delay=0.01)) as model,
        running(ServerConfig.build(upstream=model.url)) as base,
    ):
        calls, order = streamed_calls(base)
    assert calls == ANSWER_CALLS
    assert "text" in order[order.index("call") :]  # (the tail streamed after the calls)


def test_drafts_are_dropped_against_the_upstream_in_small_pieces() -> None:
    with (
        scripted(Script(text=THINKING_REPLY, chunk=3)) as model,
        running(ServerConfig.build(upstream=model.url)) as base,
    ):
        calls, _ = streamed_calls(base)
        whole = openai_client(base).chat.completions.create(model="m", messages=ASK, tools=TOOLS)
    assert calls == ANSWER_CALLS
    assert chat_calls(whole.choices[0].message) == ANSWER_CALLS


def test_an_upstream_that_sends_reasoning_settles_the_calls_as_real() -> None:
    """Reasoning the upstream separated itself: its content is the answer, so a call in it
    before any ``</think>`` is real."""
    with (
        scripted(Script(reasoning="Let me think.", text=PLAIN_REPLY, chunk=4)) as model,
        running(ServerConfig.build(upstream=model.url)) as base,
    ):
        calls, _ = streamed_calls(base)
    assert calls == [("get_weather", {"city": "Paris"})]


def test_the_hold_costs_the_time_to_the_end_of_the_reply() -> None:
    """The latency the default costs (docs/gateway.md): a call written early arrives with
    the end of the reply, not when its block closes."""
    reply = PLAIN_REPLY + " and a long tail of text" * 30
    timings = {}
    for name, sieve in (("held", {}), ("told", {"reasoning": "tags"})):
        with (
            scripted(Script(text=reply, chunk=8, delay=0.01)) as model,
            running(ServerConfig.build(upstream=model.url, sieve=sieve)) as base,
        ):
            started = time.perf_counter()
            stream = openai_client(base).chat.completions.create(
                model="m", messages=ASK, tools=TOOLS, stream=True
            )
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.tool_calls:
                    timings[name] = time.perf_counter() - started
                    break
            stream.close()
    assert timings["told"] < timings["held"]

"""Issue 35: the LiteLLM hook's options (``callsieve.integrations.litellm._options``), which
need no LiteLLM: checked once, naming where a bad one came from, and turned into a reply's
``Sieve`` options by the request's tools, ``tool_choice``, ``parallel_tool_calls`` and
thinking switch, as the gateway reads them (``server._reply.thinking``). The hook itself is
tested end to end in tests/integrations/test_litellm_proxy.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from callsieve import ConfigurationError
from callsieve.integrations.litellm import (
    ReplyPlan,
    default_options,
    read_options,
    reply_plan,
    request_thinking,
)

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {}}},
]


def test_options_are_checked_and_name_where_they_came_from() -> None:
    assert read_options(False, "x") is None
    assert read_options({"dialects": ["hermes"]}, "x") == {"dialects": ["hermes"]}
    with pytest.raises(ConfigurationError, match="model 'm'.*no_such_dialect"):
        read_options({"dialects": ["no_such_dialect"]}, "model 'm'")
    with pytest.raises(ConfigurationError, match="'tools' comes from each request"):
        read_options({"tools": []}, "x")


def test_the_plan_follows_tools_and_tool_choice() -> None:
    assert reply_plan({}, {"model": "m"}) is None
    assert reply_plan({}, {"tools": TOOLS, "tool_choice": "none"}) is None
    assert reply_plan(None, {"tools": TOOLS}) is None
    named = reply_plan(
        {"dialects": ["hermes"]},
        {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    )
    assert named == ReplyPlan({"dialects": ["hermes"], "tools": TOOLS}, only="get_time")
    assert reply_plan({}, {"tools": TOOLS, "tool_choice": "required"}) == ReplyPlan(
        {"tools": TOOLS}
    )
    one = reply_plan({}, {"tools": TOOLS, "parallel_tool_calls": False})
    assert one is not None and one.max_calls == 1


@pytest.mark.parametrize(
    ("request_fields", "thinking"),
    [
        ({}, None),
        ({"chat_template_kwargs": {"enable_thinking": False}}, False),
        ({"chat_template_kwargs": {"thinking": True}}, True),
        ({"chat_template_kwargs": {"thinking": True, "enable_thinking": False}}, None),
        ({"chat_template_kwargs": {"thinking": "yes"}}, None),
        ({"reasoning_effort": "none"}, False),
        ({"reasoning_effort": "low"}, True),
        ({"thinking": {"type": "enabled", "budget_tokens": 1024}}, True),
        ({"thinking": {"type": "adaptive"}}, True),
        ({"thinking": {"type": "disabled"}}, False),
        # the chat template's switch first, as the gateway reads it
        ({"chat_template_kwargs": {"enable_thinking": False}, "reasoning_effort": "high"}, False),
    ],
)
def test_the_request_says_whether_the_model_thinks(
    request_fields: dict[str, object], thinking: bool | None
) -> None:
    assert request_thinking(request_fields) is thinking


@pytest.mark.parametrize(
    ("said", "thinking", "reasoning", "guess"),
    [
        (None, None, None, False),  # nothing said: the options' setting (Sieve's default)
        (None, True, "open", True),  # asked to think: a thought, guessed at
        (None, False, "tags", False),
        ("open", True, "open", False),  # the operator vouches the template opens one
        ("open", False, "tags", False),
        ("tags", True, "open", True),
        ("off", True, "off", False),  # the upstream splits the thought itself
        ("off", False, "off", False),
    ],
)
def test_the_thinking_switch_decides_the_reading_as_in_the_gateway(
    said: str | None, thinking: bool | None, reasoning: str | None, guess: bool
) -> None:
    base = {} if said is None else {"reasoning": said}
    switch = {} if thinking is None else {"chat_template_kwargs": {"enable_thinking": thinking}}
    plan = reply_plan(base, {"tools": TOOLS, **switch})
    assert plan is not None
    assert plan.options.get("reasoning") == reasoning
    assert plan.guess is guess


def test_the_environment_gives_every_model_its_options() -> None:
    env = {"CALLSIEVE_LITELLM_OPTIONS": '{"dialects": ["hermes"], "policy": "schema"}'}
    assert default_options(env) == {"dialects": ["hermes"], "policy": "schema"}
    assert default_options({}) == {}
    assert default_options({"CALLSIEVE_LITELLM_OPTIONS": "false"}) is None
    with pytest.raises(ConfigurationError, match="CALLSIEVE_LITELLM_OPTIONS: not JSON"):
        default_options({"CALLSIEVE_LITELLM_OPTIONS": "{"})


def test_a_grammar_without_reasoning_tags_keeps_the_options_reading(tmp_path: Path) -> None:
    """As in the gateway: a grammar folder whose ``common.lark`` defines no ``<think>``
    cannot read a reply as starting inside one, so the switch changes nothing."""
    from callsieve._grammar.files import grammar_dirs

    source = (grammar_dirs()[0] / "common.lark").read_text(encoding="utf-8")
    kept = [line for line in source.splitlines() if not line.startswith("THINK_")]
    assert len(kept) == len(source.splitlines()) - 2  # (THINK_OPEN and THINK_CLOSE)
    (tmp_path / "common.lark").write_text("\n".join(kept) + "\n", encoding="utf-8")
    base = {"grammar_dirs": [str(tmp_path)]}
    switch = {"chat_template_kwargs": {"thinking": True}}
    plan = reply_plan(base, {"tools": TOOLS, **switch})
    assert plan == ReplyPlan({**base, "tools": TOOLS})
    with_tags = reply_plan({}, {"tools": TOOLS, **switch})
    assert with_tags is not None and with_tags.options["reasoning"] == "open"

"""Issue 35: the LiteLLM hook's options (``callsieve.integrations.litellm._options``), which
need no LiteLLM: checked once, naming where a bad one came from, and turned into a reply's
``Sieve`` options by the request's tools and ``tool_choice``. The hook itself is tested
end to end in tests/integrations/test_litellm_proxy.py."""

from __future__ import annotations

import pytest

from callsieve import ConfigurationError
from callsieve.integrations.litellm import default_options, read_options, request_options

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


def test_request_options_follow_tools_and_tool_choice() -> None:
    assert request_options({}, {"model": "m"}) is None
    assert request_options({}, {"tools": TOOLS, "tool_choice": "none"}) is None
    assert request_options(None, {"tools": TOOLS}) is None
    named = request_options(
        {"dialects": ["hermes"]},
        {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    )
    assert named == {"dialects": ["hermes"], "policy": "allowlist", "tools": [TOOLS[1]]}


def test_the_environment_gives_every_model_its_options() -> None:
    env = {"CALLSIEVE_LITELLM_OPTIONS": '{"dialects": ["hermes"], "policy": "schema"}'}
    assert default_options(env) == {"dialects": ["hermes"], "policy": "schema"}
    assert default_options({}) == {}
    assert default_options({"CALLSIEVE_LITELLM_OPTIONS": "false"}) is None
    with pytest.raises(ConfigurationError, match="CALLSIEVE_LITELLM_OPTIONS: not JSON"):
        default_options({"CALLSIEVE_LITELLM_OPTIONS": "{"})

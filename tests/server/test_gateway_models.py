"""The ``[models]`` table (docs/gateway.md, "Reasoning"): an operator says once how each
model thinks, and every request to it is read so. Which entry a model gets, the precedence
of the request over the entry's default over the ``[sieve]`` setting, and a malformed table
refused at start-up with a message that names the entry and the key."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import ROOT

from callsieve import ConfigurationError
from callsieve.server import ServerConfig
from callsieve.server._read.turns import ModelRequest, Turn
from callsieve.server._reply.thinking import Reading, decide

TRANSCRIPT = str(ROOT / "examples" / "transcript.txt")
MODELS = {
    "deepseek-ai/DeepSeek-R1": {"thinking": "always"},
    "deepseek-ai/DeepSeek-V3.1*": {"thinking": "off"},
    "deepseek-ai/DeepSeek-*": {"thinking": "on"},
    "Qwen/Qwen3-*-Instruct-2507": {"thinking": "never"},
    "zai-org/GLM-4.5*": {"thinking": "on", "prewrites_think": False},
    "behind-vllm/*": {"upstream_reasoning": True},
    "only-prewrites": {"prewrites_think": True},
}


def config(**settings: Any) -> ServerConfig:
    return ServerConfig.build(transcript=TRANSCRIPT, models=MODELS, **settings)


def read(model: str, thinking: bool | None, **settings: Any) -> Reading:
    req = ModelRequest(model=model, turns=[Turn("user", "x")], thinking=thinking)
    return decide(config(**settings), req)


# ---------------------------------------------------------------------- which entry
@pytest.mark.parametrize(
    ("model", "pattern"),
    [
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1"),
        ("DEEPSEEK-AI/deepseek-r1", "deepseek-ai/DeepSeek-R1"),  # (names are compared without case)
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-ai/DeepSeek-V3.1*"),  # (first match)
        ("deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-*"),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-*-Instruct-2507"),
        ("Qwen/Qwen3-8B", None),
    ],
)
def test_a_model_gets_its_own_entry_else_the_first_pattern_that_matches(
    model: str, pattern: str | None
) -> None:
    profile = config().profile(model)
    assert (profile.pattern if profile else None) == pattern


def test_the_upstream_model_name_is_the_one_looked_up() -> None:
    """``--upstream-model`` names what actually answers, whatever the client asked for."""
    req = ModelRequest(model="anything", turns=[Turn("user", "x")], thinking=False)
    upstream = ServerConfig.build(
        upstream="http://127.0.0.1:1/v1", upstream_model="deepseek-ai/DeepSeek-R1", models=MODELS
    )
    assert decide(upstream, req) == Reading("open", False)


# ---------------------------------------------------------------------- precedence
@pytest.mark.parametrize(
    ("model", "thinking", "expected"),
    [
        # the request decides, with no entry: on -> "open" (a guess: the thought is held
        # until it closes), off -> "tags", silent -> [sieve]
        ("Qwen/Qwen3-8B", True, Reading("open", True, guess=True)),
        ("Qwen/Qwen3-8B", False, Reading("tags", False)),
        ("Qwen/Qwen3-8B", None, Reading(None, None, unknown=True)),  # (its calls held)
        # the entry's default, and the request over it
        ("deepseek-ai/DeepSeek-V3.1", None, Reading("tags", False)),
        ("deepseek-ai/DeepSeek-V3.1", True, Reading("open", True)),
        ("deepseek-ai/DeepSeek-V4", None, Reading("open", True)),
        ("deepseek-ai/DeepSeek-V4", False, Reading("tags", False)),
        # the entry's facts over the request (the request's switch still goes upstream)
        ("deepseek-ai/DeepSeek-R1", False, Reading("open", False)),
        ("deepseek-ai/DeepSeek-R1", None, Reading("open", None)),
        ("Qwen/Qwen3-4B-Instruct-2507", True, Reading("tags", True)),
        # a template that does not write <think>, and a server that splits reasoning
        ("zai-org/GLM-4.5-Air", None, Reading("tags", True)),
        ("behind-vllm/DeepSeek-R1", True, Reading("off", True)),
        ("only-prewrites", None, Reading(None, None, unknown=True)),
    ],
)
def test_the_request_goes_over_the_models_default_which_goes_over_the_sieve_setting(
    model: str, thinking: bool | None, expected: Reading
) -> None:
    assert read(model, thinking) == expected


def test_the_sieve_setting_stands_when_nothing_else_decides() -> None:
    """``Reading(None, …)`` leaves the ``[sieve]`` setting; the gateway's sieve options
    then carry it as the operator wrote it."""
    from callsieve.server._reply.respond import sieve_options

    settings = config(sieve={"reasoning": "open"})
    silent = ModelRequest(model="Qwen/Qwen3-8B", turns=[Turn("user", "x")])
    off = ModelRequest(model="Qwen/Qwen3-8B", turns=[Turn("user", "x")], thinking=False)
    assert sieve_options(settings, silent)["reasoning"] == "open"
    assert sieve_options(settings, off)["reasoning"] == "tags"


def test_a_grammar_without_reasoning_tags_keeps_the_sieve_setting(tmp_path: Any) -> None:
    """A grammar folder whose ``common.lark`` defines no ``<think>`` cannot read a reply as
    starting inside one: the request's switch still goes upstream, the reading stays."""
    from callsieve._grammar.files import grammar_dirs

    source = (grammar_dirs()[0] / "common.lark").read_text(encoding="utf-8")
    kept = [line for line in source.splitlines() if not line.startswith("THINK_")]
    assert len(kept) == len(source.splitlines()) - 2  # (THINK_OPEN and THINK_CLOSE)
    (tmp_path / "common.lark").write_text("\n".join(kept) + "\n", encoding="utf-8")
    settings = config(sieve={"grammar_dirs": [str(tmp_path)]})
    assert not settings.reasoning_tags and config().reasoning_tags
    req = ModelRequest(model="Qwen/Qwen3-8B", turns=[Turn("user", "x")], thinking=True)
    assert decide(settings, req) == Reading(None, True)


# ---------------------------------------------------------------------- refused at start-up
@pytest.mark.parametrize(
    ("models", "message"),
    [
        ([], "[models] must hold one table per model"),
        ({"r1*": "always"}, '[models."r1*"] must be a table of settings'),
        ({"r1*": {"thinking": "sometimes"}}, '[models."r1*"] thinking must be one of always, on'),
        ({"r1*": {"think": "on"}}, "[models.\"r1*\"] has no setting 'think'; it has thinking"),
        ({"r1*": {"prewrites_think": "yes"}}, "prewrites_think must be true or false"),
        ({"r1*": {"upstream_reasoning": 1}}, "upstream_reasoning must be true or false"),
        ({" ": {"thinking": "on"}}, "must not be empty"),
    ],
)
def test_a_malformed_table_is_refused_naming_the_entry(models: Any, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        ServerConfig.build(transcript=TRANSCRIPT, models=models)
    assert message in str(info.value)

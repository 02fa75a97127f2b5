"""Issue 26: the vLLM plugin's contract, checked without vLLM — the supported range in one
place, the operator's options, the variant table and the per-request reasoning decision."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from callsieve import ConfigurationError, available_dialects
from callsieve.integrations.vllm import (
    ENV_OPTIONS,
    SUPPORTED,
    VARIANTS,
    IncompatibleVllmError,
    active_variants,
    check_vllm,
    operator_options,
    reasoning_setting,
    version_problem,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the server extra (in the test extra) brings tomli on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
R1, V4 = (
    next(v for v in VARIANTS if v.name == n)
    for n in ("callsieve_deepseek_r1", "callsieve_deepseek_v4")
)
BASE = VARIANTS[0]


def test_the_extra_declares_the_supported_range() -> None:
    (lo, lo_minor), (hi, hi_minor) = SUPPORTED
    assert PYPROJECT["project"]["optional-dependencies"]["vllm"] == [
        f"vllm>={lo}.{lo_minor},<{hi}.{hi_minor}"
    ]


def test_the_entry_point_is_vllms_plugin_group() -> None:
    group = PYPROJECT["project"]["entry-points"]["vllm.general_plugins"]
    assert group == {"callsieve": "callsieve.integrations.vllm:register"}


@pytest.mark.parametrize("version", ["0.33.0", "0.33.2", "0.33.1.dev12+gabc.cpu"])
def test_supported_releases(version: str) -> None:
    assert version_problem(version) is None


@pytest.mark.parametrize("version", ["0.32.9", "0.34.0", "1.0.0", "0.20.2", None, "nightly"])
def test_an_unsupported_release_says_what_to_do(version: str | None) -> None:
    problem = version_problem(version)
    assert problem is not None
    assert "vllm>=0.33,<0.34" in problem and "pip install 'callsieve[vllm]'" in problem
    if version and version[0].isdigit():
        assert version in problem


def test_check_vllm_raises_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from callsieve.integrations.vllm import _contract

    monkeypatch.setattr(_contract, "installed_vllm", lambda: "0.20.0")
    with pytest.raises(
        IncompatibleVllmError,
        match=r"supports vllm>=0\.33,<0\.34, but vLLM "
        r"0\.20\.0 is installed",
    ):
        check_vllm()
    assert issubclass(IncompatibleVllmError, ImportError)


def test_operator_options() -> None:
    assert operator_options({}) == {}
    assert operator_options({ENV_OPTIONS: '{"early_emit": "invoke", "policy": "allowlist"}'}) == {
        "early_emit": "invoke",
        "policy": "allowlist",
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{nope", "not JSON"),
        ('["early_emit"]', "expected a JSON object"),
        ('{"early_emit": "soon"}', "early_emit"),
        ('{"colour": 1}', "colour"),
        ('{"tools": []}', "comes from each request"),
    ],
)
def test_a_bad_operator_option_is_a_configuration_error(raw: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(ENV_OPTIONS) + ".*" + message):
        operator_options({ENV_OPTIONS: raw})


def test_every_row_names_a_callsieve_parser_and_a_class() -> None:
    names = [v.name for v in VARIANTS]
    assert len(set(names)) == len(names) and all(n.startswith("callsieve") for n in names)
    assert BASE.name == "callsieve" and BASE.class_stem == "Callsieve"
    assert R1.class_stem == "CallsieveDeepseekR1"


def test_a_row_is_active_exactly_when_its_dialects_exist() -> None:
    have = set(available_dialects())
    assert [v for v in VARIANTS if set(v.dialects) <= have] == list(active_variants())
    assert BASE in active_variants()


@pytest.mark.parametrize(
    ("variant", "kwargs", "marker", "setting"),
    [
        (BASE, {}, None, "tags"),
        (BASE, {"thinking": True}, None, "open"),
        (BASE, {"enable_thinking": True}, None, "open"),
        (BASE, {"thinking": False, "enable_thinking": True}, None, "tags"),
        (R1, {}, None, "open"),
        (R1, {"thinking": False}, None, "tags"),
        (V4, {}, None, "open"),
        (V4, {"reasoning_effort": "none"}, None, "tags"),
        # the rendered prompt, when it shows a marker, is what the model continues
        (BASE, {}, "open", "open"),
        (R1, {"thinking": True}, "close", "tags"),
    ],
)
def test_the_reasoning_setting_per_request(
    variant: Any, kwargs: dict[str, Any], marker: Any, setting: str
) -> None:
    assert reasoning_setting(variant, kwargs, marker) == setting


def test_a_family_whose_template_lets_the_model_open_the_thought_reads_tags() -> None:
    for v in VARIANTS:
        if not v.template_opens_thought:
            assert reasoning_setting(v, {"thinking": True}) == "tags"


def test_the_families_whose_calls_end_an_unclosed_thought_are_their_dialects() -> None:
    """SPEC §15: a row takes the setting with its dialects (``//%calls_end_thought``): Kimi
    K2, GLM-4.7+ and Qwen3.5 (qwen3_coder) end a thought at a call opener; the default
    dialects (DeepSeek's, V4's included) do not (docs/families.md)."""
    ends = {v.name: v.thought_enders for v in active_variants()}
    assert ends["callsieve_deepseek_v4"] == ()
    assert ends[BASE.name] == ()
    for name, dialect in (
        ("callsieve_kimi_k2", "kimi_k2"),
        ("callsieve_glm45", "glm45"),
        ("callsieve_qwen3_coder", "qwen3_coder"),
        ("callsieve_glm53_flash", "glm53_flash"),
    ):
        if name in ends:
            assert ends[name] == (dialect,)
    assert ends.get("callsieve_hermes", ()) == ()


@pytest.mark.parametrize("name", ["callsieve_glm53_flash", "callsieve_ernie45"])
def test_a_family_whose_template_opens_the_thought_reads_open(name: str) -> None:
    """GLM-5's template (GLM-4.7's) and ERNIE-4.5 Thinking's end the prompt inside the
    thought: with nothing said the reply is read as starting in it; turned off, not."""
    v = next(v for v in VARIANTS if v.name == name)
    assert reasoning_setting(v, {}) == "open"
    assert reasoning_setting(v, {"enable_thinking": False}) == "tags"
    assert reasoning_setting(v, {}, "close") == "tags"

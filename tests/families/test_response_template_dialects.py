"""Issue 36, item 1: a model's own ``response_template`` compiled into a dialect
(``callsieve.dialect_from_response_template``, docs/model-metadata.md).

For every fixture in ``../shared/templates/response/`` (transformers' own test templates), one
of two things holds:

- it compiles, and its cases read (whole, per character, at random splits) as the fixture's
  test asserts; or
- it is refused with a ``ConfigurationError`` naming the field (``REFUSED``, with the reason).

Where callsieve reads a case otherwise by design, the case is in ``DIFFERENCES`` with the
reason (``xfail(strict=True)``). A property then renders random calls into each compiled
template's shape and asks callsieve and transformers' ``parse_response`` for the same message,
under every chunking. The fixtures are data from their vendors, read where they are and
skipped cleanly when absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from response_templates import FIXTURES, fixtures, markers, message, oracle, thought_open
from response_templates import template as fixture_template

import callsieve
from callsieve import ConfigurationError, ResponseTemplateDialect

#: The fixtures callsieve refuses, the field the error names, and why (none: every one of
#: transformers' fixtures compiles).
REFUSED: dict[str, tuple[str, str]] = {}

_OUTSIDE = (
    "text outside every field: parse_response drops it where the content field has an "
    "opener, callsieve keeps it as text (SPEC §1)"
)

_INKLING = (
    "the answer message's <|end_message|> is the thinking field's close marker too: a reasoning "
    "tag, never framing, so it stays text; so does <|content_model_end_sampling|>, outside "
    "every field"
)

#: Where callsieve reads a fixture's case otherwise than its test asserts, and why.
DIFFERENCES = {
    ("cohere", "test_cohere"): _OUTSIDE + " (<|END_OF_TURN_TOKEN|>)",
    ("cohere", "test_tokenizer_parse_response"): _OUTSIDE + " (<|END_OF_TURN_TOKEN|>)",
    ("ernie", "test_ernie_with_tools"): _OUTSIDE + " (</s>)",
    ("ernie", "test_ernie_no_tools"): _OUTSIDE + " (</s>)",
    ("ernie", "streaming 0"): _OUTSIDE + " (</s>)",
    ("inkling", "test_inkling_multi_block_message"): _INKLING,
    ("inkling", "streaming 0"): _INKLING,
    ("gpt_oss", "test_gpt_oss_with_tool_call"): (
        "the reply ends after the call's JSON with no <|call|>: callsieve makes no call whose "
        "block did not end"
    ),
    ("qwen3", "test_coercion_never_reworks_already_typed_values"): (
        "the schema says string, so callsieve keeps the raw value's text ('1.50'); "
        "parse_response keeps the JSON number its value parser read"
    ),
    ("qwen3", "test_qwen3_tools_coerces_strings_left_by_value_parser"): (
        "'007' under an integer schema: callsieve coerces a value only where its text is one "
        "JSON value of the type (SPEC §5), parse_response reads 7"
    ),
    ("qwen3", "test_prefix_partial_pattern_at_boundary"): (
        "the prompt ends inside a tag (`<thi`) that the reply finishes (`nk>`): callsieve reads "
        "the reply, not the prompt"
    ),
}


def _cases(name: str) -> list[dict[str, Any]]:
    data = json.loads((FIXTURES / f"{name}.cases.json").read_text(encoding="utf-8"))
    out = [dict(c, test=c["test"].split(".")[-1]) for c in data["cases"]]
    for i, s in enumerate(data.get("streaming_fixtures", [])):
        out.append({"test": f"streaming {i}", "input": s["input"], "prefix": ""})
    return out


_compiled: dict[str, tuple[ResponseTemplateDialect, str]] = {}


def _dialect(name: str, folder: Path) -> tuple[ResponseTemplateDialect, str]:
    """The fixture's compiled dialect (``rt_<fixture>``) and the folder it is written to."""
    if name in REFUSED:
        pytest.skip(f"{name}: refused ({REFUSED[name][1]})")
    if name not in _compiled:
        d = callsieve.dialect_from_response_template(FIXTURES / f"{name}.json", f"rt_{name}")
        _compiled[name] = (d, d.write(folder / name))
    return _compiled[name]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("response_templates")


def _reasoning(template: dict[str, Any], d: ResponseTemplateDialect, prompt: str) -> str:
    """What a server passes (SPEC §15): "open" where the prompt's last turn leaves the thinking
    field open, or where the dialect says its replies start inside the thought."""
    return "open" if d.reasoning == "open" or thought_open(template, prompt) else "tags"


def _params() -> list[Any]:
    out = []
    for name in fixtures():
        for case in _cases(name):
            why = DIFFERENCES.get((name, case["test"]))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(name, case["test"], id=f"{name}-{case['test']}", marks=marks))
    return out


# ------------------------------------------------------------------ compiling the fixtures


@pytest.mark.parametrize("name", fixtures())
def test_a_fixture_compiles_or_is_refused_naming_its_field(name: str) -> None:
    path = FIXTURES / f"{name}.json"
    if name in REFUSED:
        field = REFUSED[name][0]
        with pytest.raises(ConfigurationError, match="^" + re.escape(field) + ":"):
            callsieve.dialect_from_response_template(path, f"rt_{name}")
        return
    d = callsieve.dialect_from_response_template(path, f"rt_{name}")
    assert d.name == f"rt_{name}"
    assert d.grammar_text.startswith(f"// dialect: rt_{name} — ")
    assert callsieve.dialect_from_response_template(fixture_template(name), f"rt_{name}") == d


def test_a_tokenizer_config_is_read_for_its_template(tmp_path: Path) -> None:
    if "smollm" not in fixtures():
        pytest.skip("no fixtures")
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps({"model_max_length": 8192, "response_template": fixture_template("smollm")})
    )
    d = callsieve.dialect_from_response_template(config, "mine")
    result = callsieve.parse(
        '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        dialects=[d.name],
        grammar_dirs=[d.write(tmp_path / "g")],
    )
    assert [(c.name, c.input) for c in result.calls] == [("f", {"a": 1})]


# ------------------------------------------------------------------ the fixtures' cases


def _expectations(case: dict[str, Any]) -> list[tuple[str, Any]]:
    keys = (
        "expected",
        "expected_first_tool_args",
        "expected_first_tool_args_with_tools",
        "expected_first_tool_args_without_tools",
        "expected_first_tool_name",
        "expected_tool_call_count",
    )
    return [(k, case[k]) for k in keys if k in case]


@pytest.mark.parametrize(("name", "test"), _params())
def test_a_fixture_case_reads_as_its_test_asserts(name: str, test: str, folder: Path) -> None:
    d, where = _dialect(name, folder)
    template = fixture_template(name)
    case = next(c for c in _cases(name) if c["test"] == test)
    opts = {
        "dialects": (d.name,),
        "grammar_dirs": (where,),
        "reasoning": _reasoning(template, d, case["prefix"]),
    }
    expectations = _expectations(case) or [("expected", oracle(template, case["input"]))]
    for key, want in expectations:
        typed = key in ("expected_first_tool_args", "expected_first_tool_args_with_tools")
        result = run_all_ways(case["input"], tools=case["tools"] if typed else None, **opts)
        got = {
            "expected": lambda r: message(r),
            "expected_first_tool_name": lambda r: r.calls[0].name,
            "expected_tool_call_count": lambda r: len(r.calls),
        }.get(key, lambda r: r.calls[0].input)(result)
        assert got == want, key


def test_every_difference_names_a_case_of_its_fixture() -> None:
    for name, test in DIFFERENCES:
        if (FIXTURES / f"{name}.cases.json").is_file():
            assert test in [c["test"] for c in _cases(name)], (name, test)


# ------------------------------------------------------------------ random calls, both readers


_names = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
_plain = st.text(st.sampled_from("abc XYZ.,:;!?-_é"), min_size=1, max_size=12)
_scalars = st.one_of(_plain, st.integers(-1000, 1000), st.booleans())
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner, max_size=3),
    max_leaves=6,
)
_calls = st.lists(
    st.tuples(_names, st.dictionaries(_names, _values, max_size=3)), min_size=1, max_size=3
)

Calls = list[tuple[str, dict[str, Any]]]


def _envelopes(open_: str, close: str, name: str = "name", args: str = "arguments") -> Any:
    def render(calls: Calls) -> str:
        return "".join(f"{open_}\n{json.dumps({name: n, args: a})}\n{close}" for n, a in calls)

    return render


def _cohere(calls: Calls) -> str:
    items = [
        {"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)
    ]
    return f"<|START_ACTION|>{json.dumps(items, indent=4)}<|END_ACTION|>"


def _gpt_oss(calls: Calls) -> str:
    return "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json"
        f"<|message|>{json.dumps(a)}<|call|>"
        for n, a in calls
    )


def _qwen3_value(value: Any) -> str:
    if isinstance(value, str):
        # (a string that reads as JSON, or with white space at its ends, is no case: the
        # template's value parser reads it as that value and its pattern trims the ends)
        assume(value == value.strip() and not _reads_as_json(value))
        return value
    return json.dumps(value)


def _reads_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _qwen3(calls: Calls) -> str:
    out = []
    for n, a in calls:
        params = "".join(
            f"<parameter={k}>\n{_qwen3_value(v)}\n</parameter>\n" for k, v in a.items()
        )
        out.append(f"<tool_call>\n<function={n}>\n{params}</function>\n</tool_call>")
    return "".join(out)


def _gemma4_value(value: Any) -> str:
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, list):
        return "[" + ",".join(_gemma4_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma4_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _gemma4(calls: Calls) -> str:
    return "".join(f"<|tool_call>call:{n}{_gemma4_value(a)}<tool_call|>" for n, a in calls)


def _inkling(calls: Calls) -> str:
    return "".join(
        f"<|message_model|>{n}<|content_invoke_tool_json|>"
        f"{json.dumps({'name': n, 'args': a})}<|end_message|>"
        for n, a in calls
    )


#: Each compiled fixture's shape, as its model writes calls (no vendor ships an encoder).
RENDER: dict[str, Callable[[Calls], str]] = {
    "cohere": _cohere,
    "ernie": _envelopes("<tool_call>", "</tool_call>"),
    "gemma4": _gemma4,
    "gpt_oss": _gpt_oss,
    "inkling": _inkling,
    "qwen3": _qwen3,
    "smollm": _envelopes("<tool_call>", "</tool_call>"),
}


def _thought(template: dict[str, Any]) -> str:
    thinking = template["fields"].get("thinking")
    if thinking is None or "open" not in thinking:
        return ""
    return markers(thinking["open"])[0] + "Let me see." + markers(thinking["close"])[0]


@pytest.mark.parametrize("name", [n for n in fixtures() if n not in REFUSED])
@settings(max_examples=25, deadline=None)
@given(calls=_calls, think=st.booleans())
def test_random_calls_are_read_by_both_alike(
    name: str, calls: Calls, think: bool, folder: Path
) -> None:
    assert name in RENDER, f"{name}: compiled, so it needs a renderer here"
    d, where = _dialect(name, folder)
    template = fixture_template(name)
    reply = (_thought(template) if think else "") + RENDER[name](calls)
    result = run_all_ways(reply, dialects=(d.name,), grammar_dirs=(where,))
    assert [(c.name, c.input) for c in result.calls] == calls
    assert message(result) == oracle(template, reply)

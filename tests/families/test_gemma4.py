"""SPEC §19 ``gemma4``: Google Gemma 4. Each call ``<|tool_call>call:NAME{…}<tool_call|>``, its
arguments in Gemma's value syntax: keys unquoted, strings between ``<|"|>`` tokens, numbers,
booleans and null as JSON. The cases follow transformers' ``gemma4_template`` tests
(test_chat_parsing.py; the fixtures in ``../shared/templates/response/gemma4*.json``) and
llama.cpp's Gemma 4 tests (test-chat.cpp), rewritten here; reasoning in
``<|channel>thought`` … ``<channel|>``.

Not read (grammar/gemma4.lark says why): an argument whose value is an object or a list needs
a contract value node that reads Gemma's syntax as JSON. Such a call stays text, pinned below,
so that the day the node lands this test says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from family_cases import Case, FamilySuite, check_every_way

Q = '<|"|>'
FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "templates" / "response"


def call(name: str, args: str) -> str:
    return f"<|tool_call>call:{name}{{{args}}}<tool_call|>"


CASES = [
    Case(
        "transformers-tool-call",
        "<|channel>thought\nThe user is asking for the temperature in Paris.<channel|>"
        + call(
            "get_current_temperature",
            f"detail_level:0,location:{Q}Paris, France{Q},unit:{Q}celsius{Q}",
        )
        + "<|tool_response>",
        [
            (
                "get_current_temperature",
                {"detail_level": 0, "location": "Paris, France", "unit": "celsius"},
            )
        ],
        answer="<|tool_response>",
        wraps=False,
    ),
    Case(
        "string-with-content-before",
        "Hello, world!\nWhat's up?" + call("get_time", f"city:{Q}San Francisco{Q}"),
        [("get_time", {"city": "San Francisco"})],
        answer="Hello, world!\nWhat's up?",
    ),
    Case(
        "scalars",
        call("amount", f"orig:1.5e10,n:-7,ratio:3.14,on:true,off:false,none:null,code:{Q}0042{Q}"),
        [
            (
                "amount",
                {
                    "orig": 1.5e10,
                    "n": -7,
                    "ratio": 3.14,
                    "on": True,
                    "off": False,
                    "none": None,
                    "code": "0042",
                },
            )
        ],
        answer="",
    ),
    Case(
        "parallel-and-empty",
        call("get_time", f"city:{Q}London{Q}")
        + call("get_weather", f"city:{Q}Paris{Q}")
        + call("empty_args", ""),
        [("get_time", {"city": "London"}), ("get_weather", {"city": "Paris"}), ("empty_args", {})],
        answer="",
    ),
    Case(
        "string-verbatim",
        call("say", f'text:{Q} He said "hi", {{ok}} <b>x</b>\n{Q},n:1'),
        [("say", {"text": ' He said "hi", {ok} <b>x</b>\n', "n": 1})],
        answer="",
    ),
    Case(
        "empty-reasoning",
        "<|channel>thought<channel|>" + call("get_time", f"city:{Q}Paris{Q}"),
        [("get_time", {"city": "Paris"})],
        answer="",
        wraps=False,
    ),
    Case(
        "unclosed-string-is-text",
        f"<|tool_call>call:get_time{{city:{Q}Paris}}<tool_call|>",
        [],
        answer=f"<|tool_call>call:get_time{{city:{Q}Paris}}<tool_call|>",
        wraps=False,
    ),
    Case(
        # (the missing contract node: a list or an object value; the reference parsers read
        # {"todos": ["buy milk", "walk dog"]})
        "list-value-stays-text-until-the-contract-reads-it",
        call("todo_list", f"todos:[{Q}buy milk{Q},{Q}walk dog{Q}]"),
        [],
        answer=call("todo_list", f"todos:[{Q}buy milk{Q},{Q}walk dog{Q}]"),
        wraps=False,
    ),
]


class TestGemma4(FamilySuite):
    dialect = "gemma4"
    cases = CASES


def _flat(args: dict[str, Any]) -> bool:
    return not any(isinstance(v, (dict, list)) for v in args.values())


def test_transformers_fixtures_with_flat_arguments() -> None:
    """transformers' own Gemma 4 cases: those whose arguments are flat give its calls and
    thinking; the others (a list or an object value) stay text."""
    path = FIXTURES / "gemma4.cases.json"
    if not path.is_file():
        pytest.skip("../shared/templates is absent")
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    assert cases
    for case in cases:
        want = case["expected"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in want["tool_calls"]]
        flat = all(_flat(a) for _, a in calls)
        result = check_every_way(
            "gemma4",
            Case(case["test"], case["input"], calls if flat else []),
        )
        assert result.reasoning == want["thinking"]

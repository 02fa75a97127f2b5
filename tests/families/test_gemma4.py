"""SPEC §19 ``gemma4``: Google Gemma 4. Each call ``<|tool_call>call:NAME{…}<tool_call|>``, its
arguments in Gemma's value syntax: keys unquoted, strings between ``<|"|>`` tokens, numbers,
booleans and null as JSON. The cases follow transformers' ``gemma4_template`` tests
(test_chat_parsing.py; the fixtures in ``../shared/templates/response/gemma4*.json``) and
llama.cpp's Gemma 4 tests (test-chat.cpp), rewritten here; reasoning in
``<|channel>thought`` … ``<channel|>``.

Objects and lists, at any depth, are read by the contract's value nodes (grammar/README.md,
"Value nodes") as transformers' ``content_args`` and vLLM's Gemma 4 parser read them: keys
unquoted, strings verbatim between ``<|"|>``s, scalars as JSON. A malformed nested value
fails the call, and its block stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from family_cases import Case, FamilySuite, check_every_way

from callsieve import FormatError
from callsieve.prompt import format_calls

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
        answer="",
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
        # (llama.cpp's and vLLM's list of strings)
        "list-of-strings",
        call("todo_list", f"todos:[{Q}buy milk{Q},{Q}walk dog{Q}]"),
        [("todo_list", {"todos": ["buy milk", "walk dog"]})],
        answer="",
    ),
    Case(
        # (the chat template's `format_argument` of a nested mapping: keys sorted, unquoted)
        "nested-objects-and-lists-of-objects",
        "Booking.\n"
        + call(
            "book",
            f"guests:[{{age:34,name:{Q}Ada{Q}}},{{age:7,name:{Q}Bo{Q},tags:[]}}],"
            f"stay:{{dates:{{from:{Q}2026-05-01{Q},to:{Q}2026-05-03{Q}}},nights:2}}",
        ),
        [
            (
                "book",
                {
                    "guests": [{"age": 34, "name": "Ada"}, {"age": 7, "name": "Bo", "tags": []}],
                    "stay": {"dates": {"from": "2026-05-01", "to": "2026-05-03"}, "nights": 2},
                },
            )
        ],
        answer="Booking.\n",
    ),
    Case(
        "nested-strings-hold-the-syntax",
        call("note", f"o:{{t:{Q}a {{b}}, c: [d]{Q},u:[{Q},{Q},{Q}:}}{Q}]}}"),
        [("note", {"o": {"t": "a {b}, c: [d]", "u": [",", ":}"]}})],
        answer="",
    ),
    Case(
        "empty-nested-and-scalars",
        call("f", f"o:{{}},l:[],m:[[],{{}}],s:{{x:-1.5,y:true,z:null,w:{Q}{Q},v:false}}"),
        [
            (
                "f",
                {
                    "o": {},
                    "l": [],
                    "m": [[], {}],
                    "s": {"x": -1.5, "y": True, "z": None, "w": "", "v": False},
                },
            )
        ],
        answer="",
    ),
    Case(
        "nested-value-unclosed-is-text",
        call("f", f"o:{{k:{Q}v{Q}") + " then prose",
        [],
        answer=call("f", f"o:{{k:{Q}v{Q}") + " then prose",
        wraps=False,
    ),
    Case(
        "nested-bare-word-is-text",
        call("f", "o:{k:maybe}"),
        [],
        answer=call("f", "o:{k:maybe}"),
        wraps=False,
    ),
]


class TestGemma4(FamilySuite):
    dialect = "gemma4"
    cases = CASES


def test_transformers_fixtures() -> None:
    """transformers' own Gemma 4 cases give its calls and thinking, nested values too."""
    path = FIXTURES / "gemma4.cases.json"
    if not path.is_file():
        pytest.skip("../shared/templates is absent")
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    assert cases
    for case in cases:
        want = case["expected"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in want["tool_calls"]]
        result = check_every_way("gemma4", Case(case["test"], case["input"], calls))
        assert result.reasoning == want["thinking"]


def test_the_writer_writes_gemma_syntax_and_refuses_what_it_cannot_carry() -> None:
    """``format_calls`` writes nested values as the chat template's ``format_argument`` does
    (keys bare, strings between ``<|"|>``s); a string holding ``<|"|>`` (Gemma's strings have
    no escape) and a key that is no name are ``FormatError``s."""
    args = {"o": {"k": [1, "a, b", {"n": None}]}, "s": "x}"}
    text = format_calls([("f", args)], dialect="gemma4")
    assert text == call("f", f"o:{{k:[1,{Q}a, b{Q},{{n:null}}]}},s:{Q}x}}{Q}")
    assert check_every_way("gemma4", Case("written", text, [("f", args)])).text == ""
    for bad in ({"s": f"a{Q}b"}, {"o": {"a b": 1}}):
        with pytest.raises(FormatError):
            format_calls([("f", bad)], dialect="gemma4")

"""``firefunction``: FireFunction v2 (Fireworks, on Llama 3). `` functools[…]`` after the
text, a JSON list of call objects with no closing marker. The cases follow the chat
template's rendering of past calls (the arguments as a JSON string) and llama.cpp's
FireFunction v2 handler and tests (rewritten): one call, parallel calls, ids, text before;
and what must stay text. With every dialect enabled, the list is phi4_mini's (the same
format, whose opener outranks this one): the same calls."""

from __future__ import annotations

from typing import Any

from family_cases import Case, FamilySuite

from callsieve import parse


def case(id: str, text: str, calls: Any, answer: str, **kw: Any) -> Case:
    return Case(id, text, calls, answer=answer, with_all=calls, **kw)


CASES = [
    case(
        "template-past-call",
        'I will look it up. functools[{"name": "get_weather", "arguments": '
        '"{\\"city\\": \\"Paris\\", \\"unit\\": \\"celsius\\"}"}]',
        [("get_weather", {"city": "Paris", "unit": "celsius"})],
        "I will look it up. ",
    ),
    case(
        "one-call-object-arguments",
        ' functools[{"name": "special_function", "arguments": {"arg1": 1}}]',
        [("special_function", {"arg1": 1})],
        " ",
    ),
    case(
        "parallel-with-ids",
        ' functools[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "123456789"}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}, "id": "987654321"}]',
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        " ",
        ids=("123456789", "987654321"),
    ),
    case(
        "nested-values-and-brackets-in-strings",
        ' functools[{"name": "query", "arguments": {"sql": "select a[1] from t]", '
        '"opts": {"limit": [10, {"page": null}]}}}]',
        [("query", {"sql": "select a[1] from t]", "opts": {"limit": [10, {"page": None}]}})],
        " ",
    ),
    case(
        "text-after",
        ' functools[{"name": "ping", "arguments": {}}]<|eot_id|>',
        [("ping", {})],
        " <|eot_id|>",
    ),
    # what is no call stays text
    case(
        "no-name",
        ' functools[{"arguments": {"a": 1}}]',
        [],
        ' functools[{"arguments": {"a": 1}}]',
        wraps=False,
    ),
    case(
        "unknown-key",
        ' functools[{"name": "f", "arguments": {}, "confidence": 0.9}]',
        [],
        ' functools[{"name": "f", "arguments": {}, "confidence": 0.9}]',
        wraps=False,
    ),
    Case(
        "cut-off",
        ' functools[{"name": "f", "arguments": {"a": 1}}, {"name": "g"',
        [],
        answer=' functools[{"name": "f", "arguments": {"a": 1}}, {"name": "g"',
        wraps=False,
        # (the block fails and is prose again, where llama3_json reads a whole call object
        # as a call: grammar/llama3_json.lark)
        with_all=[("f", {"a": 1})],
    ),
]


class TestFirefunction(FamilySuite):
    dialect = "firefunction"
    cases = CASES


def test_with_phi4_mini_the_list_is_phi4_minis() -> None:
    text = ' functools[{"name": "f", "arguments": {"a": 1}}]'
    result = parse(text, dialects=("firefunction", "phi4_mini"))
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [("f", {"a": 1}, "phi4_mini")]

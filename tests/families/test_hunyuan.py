"""``hunyuan``: Tencent Hunyuan-A13B. One JSON list of call objects inside ``<tool_calls>``
(the default ``xml`` dialect's opener, told apart by the ``[`` after it). The cases follow
vLLM's ``hunyuan_a13b`` parser tests (rewritten): one call, parallel calls with every JSON
type, text before and after, deep nesting, non-ASCII values, the model's ``<think>`` and
``<answer>`` sections; and what must stay text. The ``<answer>`` tags are frames, dropped
from the text."""

from __future__ import annotations

from family_cases import Case, FamilySuite

from callsieve import parse

WEATHER = {"city": "San Francisco", "metric": "celsius"}
USER = {
    "name": "John Doe",
    "age": 37,
    "address": {"city": "San Francisco", "state": "CA"},
    "role": None,
    "passed_test": True,
    "aliases": ["John", "Johnny"],
}

CASES = [
    Case(
        "one-call",
        '<tool_calls>[{"name": "get_weather", "arguments": '
        '{"city": "San Francisco", "metric": "celsius"}}]</tool_calls>',
        [("get_weather", WEATHER)],
        answer="",
    ),
    Case(
        "parallel-every-json-type",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "San Francisco", '
        '"metric": "celsius"}}, {"name": "register_user", "arguments": {"name": "John Doe", '
        '"age": 37, "address": {"city": "San Francisco", "state": "CA"}, "role": null, '
        '"passed_test": true, "aliases": ["John", "Johnny"]}}]</tool_calls>',
        [("get_weather", WEATHER), ("register_user", USER)],
        answer="",
    ),
    Case(
        "text-before",
        'I will call the tool now. <tool_calls>[{"name": "get_weather", "arguments": '
        '{"city": "Boston"}}]</tool_calls>',
        [("get_weather", {"city": "Boston"})],
        answer="I will call the tool now. ",
    ),
    Case(
        # (vLLM drops the text after the block; every character is kept here)
        "text-after",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]'
        "</tool_calls>\nThank you!",
        [("get_weather", {"city": "Seattle"})],
        answer="\nThank you!",
    ),
    Case(
        "deep-nesting-and-white-space",
        '<tool_calls>\n[\n  {"name": "complex_tool", "arguments": {"level1": {"level2": '
        '{"level3": {"value": 123}}}}},\n  {"name": "a", "arguments": {}}\n]\n</tool_calls>',
        [("complex_tool", {"level1": {"level2": {"level3": {"value": 123}}}}), ("a", {})],
        answer="",
    ),
    Case(
        "non-ascii-and-tags-in-strings",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "北京", '
        '"note": "]</tool_calls> inside"}}]</tool_calls>',
        [("get_weather", {"city": "北京", "note": "]</tool_calls> inside"})],
        answer="",
    ),
    Case(
        # (the model's `<answer>` tags are frames: dropped from the text)
        "think-then-answer",
        "<think>\nThe user asks for the weather in Boston.\n</think>\n<answer>\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>'
        "\n</answer>",
        [("get_weather", {"city": "Boston"})],
        answer="\n\n",
        wraps=False,
    ),
    Case(
        "answer-framed",
        "<think>\nA greeting.\n</think>\n<answer>\nHello! How can I help you today?\n</answer>",
        [],
        answer="\nHello! How can I help you today?\n",
        wraps=False,
    ),
    # what is no call stays text
    Case(
        "unclosed-arguments",
        '<tool_calls>[{"name": "f", "arguments": {}</tool_calls>',
        [],
        answer='<tool_calls>[{"name": "f", "arguments": {}</tool_calls>',
        wraps=False,
    ),
    Case(
        "empty-list",
        "<tool_calls>[]</tool_calls> was all it wrote.",
        [],
        answer="<tool_calls>[]</tool_calls> was all it wrote.",
        wraps=False,
    ),
    Case(
        "python-quotes-are-not-json",
        "<tool_calls>[{'name': 'f', 'arguments': {}}]</tool_calls>",
        [],
        answer="<tool_calls>[{'name': 'f', 'arguments': {}}]</tool_calls>",
        wraps=False,
    ),
]


class TestHunyuan(FamilySuite):
    dialect = "hunyuan"
    cases = CASES


def test_the_xml_dialect_keeps_its_opener() -> None:
    """With both enabled, ``<tool_calls><invoke`` is xml's and ``<tool_calls>[`` hunyuan's."""
    text = (
        '<tool_calls><invoke name="f"><parameter name="a">1</parameter></invoke></tool_calls>'
        '<tool_calls>[{"name": "g", "arguments": {"b": 2}}]</tool_calls>'
    )
    result = parse(text, dialects=("xml", "hunyuan"))
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [
        ("f", {"a": 1}, "xml"),
        ("g", {"b": 2}, "hunyuan"),
    ]
    assert result.text == ""

"""SPEC §19 ``hermes``: Hermes 2 Pro / 3, Qwen2.5 and Qwen3 (`<tool_call>` around one JSON
object). The cases follow what these models write (their chat templates' own example, Qwen's
function-calling docs, vLLM's and SGLang's parser tests): a newline inside the tags, parallel
calls as blocks one after another, "arguments" or "parameters", text around the calls."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way

TEMP = {"location": "San Francisco, CA, USA"}

CASES = [
    Case(
        "qwen25-one-call",
        '<tool_call>\n{"name": "get_current_temperature", "arguments": '
        '{"location": "San Francisco, CA, USA"}}\n</tool_call>',
        [("get_current_temperature", TEMP)],
        answer="",
    ),
    Case(
        "parallel-with-text",
        "I'll check the temperature and the date.\n\n"
        '<tool_call>\n{"name": "get_current_temperature", "arguments": '
        '{"location": "San Francisco, CA, USA", "unit": "celsius"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_temperature_date", "arguments": '
        '{"location": "San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call>',
        [
            ("get_current_temperature", {**TEMP, "unit": "celsius"}),
            ("get_temperature_date", {**TEMP, "date": "2024-10-01"}),
        ],
        answer="I'll check the temperature and the date.\n\n\n",
    ),
    Case(
        "nested-json-and-unicode",
        '<tool_call>\n{"name": "book", "arguments": {"city": "東京", "guests": '
        '[{"name": "Zoë", "age": 7}, {"name": "李雷", "tags": ["😀", "\\u00e9"]}], '
        '"note": "ends with </tool_call> and <tool_call> inside", "opts": {"a": {"b": null}}}}'
        "\n</tool_call>",
        [
            (
                "book",
                {
                    "city": "東京",
                    "guests": [{"name": "Zoë", "age": 7}, {"name": "李雷", "tags": ["😀", "é"]}],
                    "note": "ends with </tool_call> and <tool_call> inside",
                    "opts": {"a": {"b": None}},
                },
            )
        ],
        answer="",
    ),
    Case(
        "hermes2pro-key-order",
        '<tool_call>\n{"arguments": {"symbol": "TSLA"}, "name": "get_stock_fundamentals"}\n'
        "</tool_call>",
        [("get_stock_fundamentals", {"symbol": "TSLA"})],
        answer="",
    ),
    Case(
        "parameters-key",
        '<tool_call>{"name": "search", "parameters": {"q": "lark parser"}}</tool_call>',
        [("search", {"q": "lark parser"})],
        answer="",
    ),
    Case(
        "arguments-as-a-json-string",
        '<tool_call>\n{"name": "search", "arguments": "{\\"q\\": \\"lark\\", \\"n\\": 3}"}\n'
        "</tool_call>",
        [("search", {"q": "lark", "n": 3})],
        answer="",
    ),
    Case(
        "no-arguments",
        '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_date"}\n</tool_call>',
        [("get_time", {}), ("get_date", {})],
        answer="\n",
    ),
    Case(
        "text-after-the-call",
        'Checking.<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\n'
        "I will summarise once it returns.",
        [("f", {"x": 1})],
        answer="Checking.\nI will summarise once it returns.",
    ),
    Case(
        "qwen3-thinking",
        "<think>\nThe user wants the weather, so I call get_weather.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        [("get_weather", {"city": "Paris"})],
        answer="\n\n",
        wraps=False,
    ),
    # malformations: what is no JSON object, or never closed, stays text
    Case(
        "python-quotes-are-not-json",
        "<tool_call>\n{'name': 'f', 'arguments': {}}\n</tool_call>",
        [],
        answer="<tool_call>\n{'name': 'f', 'arguments': {}}\n</tool_call>",
        wraps=False,
    ),
    Case(
        "cut-off-before-the-closing-tag",
        '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n',
        [],
        answer='<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n',
        wraps=False,
        # (the block fails and its text is prose again, where the `json` family reads a whole
        # call object as a call: grammar/json.lark)
        with_all=[("f", {"x": 1})],
    ),
    Case(
        "json-without-a-name",
        '<tool_call>\n{"arguments": {"x": 1}}\n</tool_call>',
        [],
        answer='<tool_call>\n{"arguments": {"x": 1}}\n</tool_call>',
        wraps=False,
    ),
    Case(
        "mention-in-prose",
        "Wrap each call in <tool_call></tool_call> tags, like <tool_call> {json} </tool_call>.",
        [],
        answer="Wrap each call in <tool_call></tool_call> tags, like <tool_call> {json} "
        "</tool_call>.",
        wraps=False,
    ),
]


class TestHermes(FamilySuite):
    dialect = "hermes"
    cases = CASES


def test_a_schema_does_not_change_json_values() -> None:
    """JSON arguments are typed already: a string stays a string, a number a number."""
    tools = [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
            },
        }
    ]
    check_every_way(
        "hermes",
        Case(
            "typed",
            '<tool_call>{"name": "f", "arguments": {"n": 2, "s": "2"}}</tool_call>',
            [("f", {"n": 2, "s": "2"})],
            tools=tools,
        ),
    )

"""``longcat``: Meituan LongCat-Flash. One JSON object per ``<longcat_tool_call>`` block,
Hermes' shape under LongCat's own tags; or its XML form, GLM-4.5's shape under LongCat's tags
(mlx-lm's ``longcat`` parser reads both). The cases follow vLLM's ``longcat`` parser tests
(rewritten): one call, parallel blocks, every JSON type, escapes, text around the calls,
reasoning; the XML form's values, raw text typed by the schema; and what must stay text."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way

TYPES = {
    "string_field": "hello",
    "int_field": 42,
    "float_field": 3.14,
    "bool_field": True,
    "null_field": None,
    "array_field": ["a", "b", "c"],
    "object_field": {"nested": "value"},
    "empty_array": [],
    "empty_object": {},
}

CASES = [
    Case(
        "one-call",
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}'
        "</longcat_tool_call>",
        [("get_weather", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        "parallel",
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}'
        '</longcat_tool_call>\n<longcat_tool_call>{"name": "get_time", "arguments": '
        '{"timezone": "Asia/Tokyo"}}</longcat_tool_call>',
        [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        answer="\n",
    ),
    Case(
        "every-json-type",
        '<longcat_tool_call>{\n  "name": "test_function",\n  "arguments": {\n'
        '    "string_field": "hello",\n    "int_field": 42,\n    "float_field": 3.14,\n'
        '    "bool_field": true,\n    "null_field": null,\n    "array_field": ["a", "b", "c"],\n'
        '    "object_field": {"nested": "value"},\n    "empty_array": [],\n'
        '    "empty_object": {}\n  }\n}</longcat_tool_call>',
        [("test_function", TYPES)],
        answer="",
    ),
    Case(
        "escaped-strings",
        '<longcat_tool_call>{"name": "f", "arguments": {"quoted": "He said \\"hello\\"", '
        '"path": "C:\\\\Users\\\\file.txt", "newline": "line1\\nline2", '
        '"unicode": "emoji: 🎉", "tag": "</longcat_tool_call>"}}</longcat_tool_call>',
        [
            (
                "f",
                {
                    "quoted": 'He said "hello"',
                    "path": "C:\\Users\\file.txt",
                    "newline": "line1\nline2",
                    "unicode": "emoji: 🎉",
                    "tag": "</longcat_tool_call>",
                },
            )
        ],
        answer="",
    ),
    Case(
        "empty-arguments",
        '<longcat_tool_call>{"name": "refresh", "arguments": {}}</longcat_tool_call>',
        [("refresh", {})],
        answer="",
    ),
    Case(
        "text-around",
        'Let me check the weather for you.\n<longcat_tool_call>{"name": "get_weather", '
        '"arguments": {"city": "Tokyo"}}</longcat_tool_call>\nHere is the result.',
        [("get_weather", {"city": "Tokyo"})],
        answer="Let me check the weather for you.\n\nHere is the result.",
    ),
    Case(
        "reasoning-then-call",
        "<think>\nTokyo weather: one call.\n</think>\n"
        '<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n'
        "</longcat_tool_call>",
        [("get_weather", {"city": "Tokyo"})],
        answer="\n",
        wraps=False,
    ),
    Case(
        "xml-form",
        "I will look.\n<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n"
        "<longcat_arg_value>Tokyo</longcat_arg_value>\n<longcat_arg_key>days</longcat_arg_key>\n"
        "<longcat_arg_value>3</longcat_arg_value>\n<longcat_arg_key>opts</longcat_arg_key>\n"
        '<longcat_arg_value>{"units": ["C"], "x": null}</longcat_arg_value>\n</longcat_tool_call>',
        [("get_weather", {"city": "Tokyo", "days": 3, "opts": {"units": ["C"], "x": None}})],
        answer="I will look.\n",
    ),
    Case(
        "xml-form-no-line-breaks-and-markup",
        "<longcat_tool_call>write_file<longcat_arg_key>path</longcat_arg_key>"
        "<longcat_arg_value>a.html</longcat_arg_value><longcat_arg_key>body</longcat_arg_key>"
        "<longcat_arg_value><p>a < b</p></longcat_arg_value></longcat_tool_call>",
        [("write_file", {"path": "a.html", "body": "<p>a < b</p>"})],
        answer="",
    ),
    # what is no call stays text
    Case(
        "cut-off",
        'Some text <longcat_tool_call>{"name": "func", "arguments": {',
        [],
        answer='Some text <longcat_tool_call>{"name": "func", "arguments": {',
        wraps=False,
    ),
    Case(
        "arguments-not-an-object",
        '<longcat_tool_call>{"name": "func", "arguments": "not a dict"}</longcat_tool_call>',
        [],
        answer='<longcat_tool_call>{"name": "func", "arguments": "not a dict"}</longcat_tool_call>',
        wraps=False,
    ),
    Case(
        "invalid-json",
        "Some text with <longcat_tool_call>invalid json</longcat_tool_call>",
        [],
        answer="Some text with <longcat_tool_call>invalid json</longcat_tool_call>",
        wraps=False,
    ),
]


class TestLongcat(FamilySuite):
    dialect = "longcat"
    cases = CASES


def test_a_string_schema_keeps_an_xml_value_as_text() -> None:
    """``42`` is a number without the tool's schema, the text ``"42"`` under a string type."""
    tools = [
        {
            "name": "f",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
        }
    ]
    text = (
        "<longcat_tool_call>f<longcat_arg_key>code</longcat_arg_key>"
        "<longcat_arg_value>42</longcat_arg_value></longcat_tool_call>"
    )
    check_every_way("longcat", Case("string-typed", text, [("f", {"code": "42"})], tools=tools))
    check_every_way("longcat", Case("untyped", text, [("f", {"code": 42})]))

"""``longcat``: Meituan LongCat-Flash. One JSON object per ``<longcat_tool_call>`` block,
Hermes' shape under LongCat's own tags. The cases follow vLLM's ``longcat`` parser tests
(rewritten): one call, parallel blocks, every JSON type, escapes, text around the calls,
reasoning; and what must stay text."""

from __future__ import annotations

from family_cases import Case, FamilySuite

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
        answer='<longcat_tool_call>{"name": "func", "arguments": "not a dict"}'
        "</longcat_tool_call>",
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

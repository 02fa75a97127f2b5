"""``phi4_mini``: Phi-4-mini-instruct. ``functools[…]``, a JSON list of call objects with no
closing marker (vLLM's ``phi4_mini_json`` parser); and llama.cpp's tool template's
``<|tool_call|>{…}<|/tool_call|>``. The cases follow vLLM's parser tests and the llama.cpp
template's rendering (rewritten): one call, parallel calls over several lines, every JSON
type, text around the list, ``"parameters"``; and what must stay text."""

from __future__ import annotations

from family_cases import Case, FamilySuite

CASES = [
    Case(
        "one-call",
        'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
        [("get_weather", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        "parallel-over-lines",
        'functools[\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n'
        '  {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n]',
        [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        answer="",
    ),
    Case(
        "every-json-type",
        'functools[{\n  "name": "test_function",\n  "arguments": {\n    "int_field": 42,\n'
        '    "float_field": 3.14,\n    "bool_field": true,\n    "null_field": null,\n'
        '    "array_field": ["a", "b"],\n    "object_field": {"nested": "value"},\n'
        '    "path": "C:\\\\Users\\\\file.txt",\n    "quoted": "He said \\"]\\""\n  }\n}]',
        [
            (
                "test_function",
                {
                    "int_field": 42,
                    "float_field": 3.14,
                    "bool_field": True,
                    "null_field": None,
                    "array_field": ["a", "b"],
                    "object_field": {"nested": "value"},
                    "path": "C:\\Users\\file.txt",
                    "quoted": 'He said "]"',
                },
            )
        ],
        answer="",
    ),
    Case(
        # (vLLM drops the text around the list; every character is kept here)
        "text-around",
        'Let me check the weather for you.\nfunctools[{"name": "get_weather", "arguments": '
        '{"city": "Tokyo"}}]\nWould you like to know more?',
        [("get_weather", {"city": "Tokyo"})],
        answer="Let me check the weather for you.\n\nWould you like to know more?",
    ),
    Case(
        "parameters-key-and-empty-arguments",
        'functools[{"name": "search", "parameters": {"q": "phi"}}, '
        '{"name": "refresh", "arguments": {}}]',
        [("search", {"q": "phi"}), ("refresh", {})],
        answer="",
    ),
    Case(
        # (llama.cpp's template writes the OpenAI call object, arguments as a JSON string)
        "llama-cpp-template-tags",
        'Sure.<|tool_call|>{"id": "call_1", "type": "function", "function": '
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}<|/tool_call|>'
        '<|tool_call|>{"name": "get_time", "arguments": {}}<|/tool_call|>',
        [("get_weather", {"city": "Paris"}), ("get_time", {})],
        answer="Sure.",
    ),
    # what is no call stays text
    Case(
        "no-arguments-key",
        'functools[{"name": "func"}] was the example.',
        [],
        answer='functools[{"name": "func"}] was the example.',
        wraps=False,
    ),
    Case(
        "arguments-not-an-object",
        'functools[{"name": "func", "arguments": "not a dict"}]',
        [],
        answer='functools[{"name": "func", "arguments": "not a dict"}]',
        wraps=False,
    ),
    Case(
        "empty-and-invalid-lists",
        "functools[] This is just text, functools[ This is just text ], "
        'functools{"name": "func"} and from functools import partial.',
        [],
        answer="functools[] This is just text, functools[ This is just text ], "
        'functools{"name": "func"} and from functools import partial.',
        wraps=False,
    ),
    Case(
        "cut-off",
        'functools[{"name": "func", "arguments": {',
        [],
        answer='functools[{"name": "func", "arguments": {',
        wraps=False,
    ),
]


class TestPhi4Mini(FamilySuite):
    dialect = "phi4_mini"
    cases = CASES

"""``internlm2``: InternLM2/2.5 and Intern-S1. ``<|action_start|><|plugin|>`` and one JSON
object, its arguments under ``"parameters"``, then ``<|action_end|>``. The cases follow vLLM's
``internlm2`` and ``intern-s1`` parser tests and the chat template's rendering (rewritten):
one call, every JSON type, white space between the tokens, several action blocks, text
around, reasoning; and what must stay text."""

from __future__ import annotations

from family_cases import Case, FamilySuite

CASES = [
    Case(
        "one-call",
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}'
        "<|action_end|>",
        [("get_weather", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        # (the template writes a past call so: a line break, and "arguments")
        "template-shape",
        'Sure.<|action_start|><|plugin|>\n{"name": "get_weather", "arguments": '
        '{"city": "Tokyo", "days": 3}}<|action_end|>',
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="Sure.",
    ),
    Case(
        "every-json-type",
        '<|action_start|><|plugin|>{\n  "name": "test_function",\n  "parameters": {\n'
        '    "int_field": 42,\n    "float_field": 3.14,\n    "bool_field": true,\n'
        '    "null_field": null,\n    "array_field": ["a", "b"],\n'
        '    "object_field": {"nested": "value"},\n    "empty_object": {}\n  }\n}'
        "<|action_end|>",
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
                    "empty_object": {},
                },
            )
        ],
        answer="",
    ),
    Case(
        "intern-s1-spaced-tokens",
        '<|action_start|> <|plugin|>\n{"name": "get_weather", "parameters": {"city": "Tokyo"}}'
        "\n<|action_end|>",
        [("get_weather", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        "several-blocks-then-text",
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}'
        '<|action_end|>\n<|action_start|><|plugin|>{"name": "get_time", "parameters": '
        '{"timezone": "Asia/Tokyo"}}<|action_end|>\nVisible answer.',
        [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        answer="\n\nVisible answer.",
    ),
    Case(
        "escapes-and-tags-in-strings",
        '<|action_start|><|plugin|>{"name": "f", "parameters": {"path": "C:\\\\Users", '
        '"text": "<|action_end|> is a token"}}<|action_end|>',
        [("f", {"path": "C:\\Users", "text": "<|action_end|> is a token"})],
        answer="",
    ),
    Case(
        "reasoning-then-call",
        "<think>\nOne call will do.\n</think>\n"
        '<|action_start|><|plugin|>\n{"name": "refresh", "parameters": {}}<|action_end|>',
        [("refresh", {})],
        answer="\n",
        wraps=False,
    ),
    # what is no call stays text
    Case(
        "not-json",
        "<|action_start|><|plugin|>not json<|action_end|>",
        [],
        answer="<|action_start|><|plugin|>not json<|action_end|>",
        wraps=False,
    ),
    Case(
        "unclosed",
        '<|action_start|><|plugin|>{"name": "get_weather", "parameters": {<|action_end|>',
        [],
        answer='<|action_start|><|plugin|>{"name": "get_weather", "parameters": {<|action_end|>',
        wraps=False,
    ),
    Case(
        "no-plugin-token",
        '<|action_start|>{"name": "func"}',
        [],
        answer='<|action_start|>{"name": "func"}',
        wraps=False,
    ),
]


class TestInternlm2(FamilySuite):
    dialect = "internlm2"
    cases = CASES

"""SPEC §2 ``json``: tool calls written as JSON in the reply — ``{"tool_calls": […]}``, a list
of call objects, one object, OpenAI's wire form (grammar/json.lark). Each case runs every way
``check_dialect`` drives it. What matters most here is what is *not* a call: ordinary JSON in
prose comes out unchanged, and so does any payload inside a Markdown fence (SPEC §6).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import check_dialect, run_all_ways, table

import callsieve

D = "json"

PARIS = ("get_weather", {"city": "Paris"})

ROWS: list[tuple[Any, ...]] = [
    # ---------------------------------------------------------------- {"tool_calls": […]}
    (
        "tool-calls",
        '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}',
        "",
        [PARIS],
    ),
    (
        "tool-calls-every-key",
        (
            '{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "input": {"y": 2}}, '
            '{"parameters": {"z": 3}, "name": "c"}]}'
        ),
        "",
        [("a", {"x": 1}), ("b", {"y": 2}), ("c", {"z": 3})],
    ),
    (
        "tool-calls-openai-items",
        (
            '{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", '
            '"arguments": "{\\"city\\": \\"Paris\\"}"}}]}'
        ),
        "",
        [PARIS],
    ),
    (
        "tool-calls-more-members",
        (
            '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "content": null, '
            '"meta": {"n": [1, {"m": "}"}]}}'
        ),
        "",
        [PARIS],
    ),
    (
        "tool-calls-pretty",
        (
            '{\n  "tool_calls": [\n    {\n      "name": "get_weather",\n      "arguments": {\n'
            '        "city": "Paris"\n      }\n    }\n  ]\n}'
        ),
        "",
        [PARIS],
    ),
    (
        "tool-calls-prose-around",
        'Sure.\n{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}\nDone.',
        "Sure.\n\nDone.",
        [PARIS],
    ),
    # ---------------------------------------------------------------- a list of call objects
    (
        "list",
        '[{"name": "a", "arguments": {}}, {"name": "b", "input": {"x": [1, 2]}}]',
        "",
        [("a", {}), ("b", {"x": [1, 2]})],
    ),
    (
        "list-openai-wire",
        (
            '[{"id": "call_abc", "type": "function", "function": {"name": "get_weather", '
            '"arguments": "{\\"city\\": \\"Paris\\"}"}}]'
        ),
        "",
        [PARIS],
    ),
    (
        "list-function-first",
        '[{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]',
        "",
        [PARIS],
    ),
    # ---------------------------------------------------------------- one object
    (
        "one",
        'Calling: {"name": "get_weather", "arguments": {"city": "Paris"}} now',
        "Calling:  now",
        [PARIS],
    ),
    (
        "one-parameters",
        '{"name": "search", "parameters": {"q": "Zürich café ☕"}}',
        "",
        [("search", {"q": "Zürich café ☕"})],
    ),
    (
        "one-openai-type-first",
        '{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
        "",
        [PARIS],
    ),
    (
        "one-function-only",
        '{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}',
        "",
        [PARIS],
    ),
    (
        "one-nested-and-strings",
        '{"name": "write", "arguments": {"path": "a}.txt", "body": "{\\"k\\": [\\"]\\"]}"}}',
        "",
        [("write", {"path": "a}.txt", "body": '{"k": ["]"]}'})],
    ),
    (
        "two-objects",
        '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}',
        "\n",
        [("a", {}), ("b", {})],
    ),
    # ---------------------------------------------------------------- JSON that is no call
    (
        "prose-config",
        'The config is {"name": "prod", "replicas": 3}.',
        'The config is {"name": "prod", "replicas": 3}.',
        [],
    ),
    (
        "prose-list",
        'Rows: [{"id": 1, "title": "x"}, {"id": 2}]',
        'Rows: [{"id": 1, "title": "x"}, {"id": 2}]',
        [],
    ),
    (
        "prose-people",
        '[{"name": "Alice"}, {"name": "Bob"}]',
        '[{"name": "Alice"}, {"name": "Bob"}]',
        [],
    ),
    ("no-arguments-key", '{"name": "get_time"}', '{"name": "get_time"}', []),
    ("tool-calls-not-a-list", '{"tool_calls": "none"}', '{"tool_calls": "none"}', []),
    ("name-not-a-string", '{"name": 5, "arguments": {}}', '{"name": 5, "arguments": {}}', []),
    (
        "arguments-not-an-object",
        '{"name": "f", "arguments": [1]}',
        '{"name": "f", "arguments": [1]}',
        [],
    ),
    (  # (the list is cut off; the whole call object in it is a call of its own)
        "never-closed",
        '{"tool_calls": [{"name": "a", "arguments": {}}',
        '{"tool_calls": [',
        [("a", {})],
    ),
    ("braces", 'a {b} c [d] {"e" f} [{x}] {{', 'a {b} c [d] {"e" f} [{x}] {{', []),
]


@table(ROWS)
def test_json(row: tuple[Any, ...]) -> None:
    text, want_text, want_calls = row
    check_dialect(text, want_text, want_calls, D)


def test_openai_ids_are_kept() -> None:
    r = callsieve.parse(
        '[{"id": "call_abc", "type": "function", "function": {"name": "f", '
        '"arguments": "{}"}}, {"name": "g", "arguments": {}, "id": "call_d"}]',
        dialects=(D,),
    )
    assert [(c.name, c.id) for c in r.calls] == [("f", "call_abc"), ("g", "call_d")]


@pytest.mark.parametrize(
    "doc",
    [
        'Send:\n```json\n{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}\n```\n',
        'Send:\n~~~\n[{"name": "a", "arguments": {}}]\n~~~\n',
        'Inline `{"name": "a", "arguments": {}}` is an example.',
    ],
)
def test_quoted_payloads_are_examples(doc: str) -> None:
    r = run_all_ways(doc, dialects=(D,))
    assert r.calls == () and r.text == doc

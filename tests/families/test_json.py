"""SPEC §2 ``json``: tool calls written as JSON in the reply — ``{"tool_calls": […]}``, a list
of call objects, one object, OpenAI's wire form (grammar/json.lark). Each case runs every way
``family_cases.FamilySuite`` drives it. What matters most here is what is *not* a call: ordinary JSON in
prose comes out unchanged, and so does any payload inside a Markdown fence (SPEC §6).
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from family_cases import Case, FamilySuite
from helpers import run_all_ways

import callsieve

D = "json"

PARIS = ("get_weather", {"city": "Paris"})

CASES = [
    Case(
        "tool-calls",
        '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}',
        [PARIS],
        answer="",
    ),
    Case(
        "tool-calls-every-key",
        '{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "input": {"y": 2}}, '
        '{"parameters": {"z": 3}, "name": "c"}]}',
        [("a", {"x": 1}), ("b", {"y": 2}), ("c", {"z": 3})],
        answer="",
    ),
    Case(
        "tool-calls-openai-items",
        '{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", '
        '"arguments": "{\\"city\\": \\"Paris\\"}"}}]}',
        [PARIS],
        answer="",
    ),
    Case(
        "tool-calls-more-members",
        '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "content": null, '
        '"meta": {"n": [1, {"m": "}"}]}}',
        [PARIS],
        answer="",
    ),
    Case(
        "tool-calls-pretty",
        '{\n  "tool_calls": [\n    {\n      "name": "get_weather",\n      "arguments": {\n'
        '        "city": "Paris"\n      }\n    }\n  ]\n}',
        [PARIS],
        answer="",
    ),
    Case(
        "tool-calls-prose-around",
        'Sure.\n{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}\nDone.',
        [PARIS],
        answer="Sure.\n\nDone.",
    ),
    Case(
        "list",
        '[{"name": "a", "arguments": {}}, {"name": "b", "input": {"x": [1, 2]}}]',
        [("a", {}), ("b", {"x": [1, 2]})],
        answer="",
    ),
    Case(
        "list-openai-wire",
        '[{"id": "call_abc", "type": "function", "function": {"name": "get_weather", '
        '"arguments": "{\\"city\\": \\"Paris\\"}"}}]',
        [PARIS],
        answer="",
    ),
    Case(
        "list-function-first",
        '[{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]',
        [PARIS],
        answer="",
    ),
    Case(
        "one",
        'Calling: {"name": "get_weather", "arguments": {"city": "Paris"}} now',
        [PARIS],
        answer="Calling:  now",
        # (with llama3_json enabled too, a bare object is its: the same call)
        with_all=[PARIS],
    ),
    Case(
        "one-parameters",
        '{"name": "search", "parameters": {"q": "Zürich café ☕"}}',
        [("search", {"q": "Zürich café ☕"})],
        answer="",
        # (with llama3_json enabled too, a bare object is its: the same call)
        with_all=[("search", {"q": "Zürich café ☕"})],
    ),
    Case(
        "one-openai-type-first",
        '{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
        [PARIS],
        answer="",
    ),
    Case(
        "one-function-only",
        '{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}',
        [PARIS],
        answer="",
    ),
    Case(
        "one-nested-and-strings",
        '{"name": "write", "arguments": {"path": "a}.txt", "body": "{\\"k\\": [\\"]\\"]}"}}',
        [("write", {"path": "a}.txt", "body": '{"k": ["]"]}'})],
        answer="",
        # (with llama3_json enabled too, a bare object is its: the same call)
        with_all=[("write", {"path": "a}.txt", "body": '{"k": ["]"]}'})],
    ),
    Case(
        "two-objects",
        '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}',
        [("a", {}), ("b", {})],
        answer="\n",
        # (with llama3_json enabled too, a bare object is its: the same call)
        with_all=[("a", {}), ("b", {})],
    ),
    Case(
        "prose-config",
        'The config is {"name": "prod", "replicas": 3}.',
        [],
        answer='The config is {"name": "prod", "replicas": 3}.',
        wraps=False,
    ),
    Case(
        "prose-list",
        'Rows: [{"id": 1, "title": "x"}, {"id": 2}]',
        [],
        answer='Rows: [{"id": 1, "title": "x"}, {"id": 2}]',
        wraps=False,
    ),
    Case(
        "prose-people",
        '[{"name": "Alice"}, {"name": "Bob"}]',
        [],
        answer='[{"name": "Alice"}, {"name": "Bob"}]',
        wraps=False,
    ),
    Case(
        "no-arguments-key",
        '{"name": "get_time"}',
        [],
        answer='{"name": "get_time"}',
        wraps=False,
    ),
    Case(
        "tool-calls-not-a-list",
        '{"tool_calls": "none"}',
        [],
        answer='{"tool_calls": "none"}',
        wraps=False,
    ),
    Case(
        "name-not-a-string",
        '{"name": 5, "arguments": {}}',
        [],
        answer='{"name": 5, "arguments": {}}',
        wraps=False,
    ),
    Case(
        "arguments-not-an-object",
        '{"name": "f", "arguments": [1]}',
        [],
        answer='{"name": "f", "arguments": [1]}',
        wraps=False,
    ),
    Case(
        "never-closed",
        '{"tool_calls": [{"name": "a", "arguments": {}}',
        [("a", {})],
        answer='{"tool_calls": [',
        # (with every dialect enabled, llamacpp_generic's more specific opener takes the
        # first object's `{` too, and its block fails at the end of the text: no call)
        with_all=[],
    ),
    Case(
        "braces",
        'a {b} c [d] {"e" f} [{x}] {{',
        [],
        answer='a {b} c [d] {"e" f} [{x}] {{',
        wraps=False,
    ),
]

#: With every dialect enabled, ``{"tool_calls": [{`` opens a ``llamacpp_generic`` block: its
#: opener, which takes the first object's ``{`` too, is the more specific (dialect isolation,
#: grammar/README.md "Entries"). The same calls.
CASES = [
    replace(c, with_all=c.calls)
    if re.search(r'\{\s*"tool_calls"\s*:\s*\[\s*\{', c.text) and c.with_all is None
    else c
    for c in CASES
]


class TestJson(FamilySuite):
    dialect = D
    cases = CASES


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

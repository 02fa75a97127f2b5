"""SPEC §19 ``llama3_json``: Llama 3.1-3.3's JSON tool calls, after ``<|python_tag|>`` or as a
bare object, several joined by ``;`` (grammar/llama3_json.lark). The cases follow Meta's prompt
format and the fixtures of vLLM's ``tests/tool_parsers/test_llama3_json_tool_parser.py``; each
runs every way ``check_dialect`` drives it.

Where vLLM differs, on purpose: it drops the text around the calls (``content=None``), and
any ``{`` may begin a call there; here the text stays, and a bare object begins a block only
with the key ``"name"`` first and must be a whole envelope — prose that holds JSON which is no
call comes out unchanged.
"""

from __future__ import annotations

from typing import Any

from helpers import check_dialect, run_all_ways, table

import callsieve

D = "llama3_json"

SEARCH1 = ("searchTool", {"query": "test1"})
INCIDENTS = ("getOpenIncidentsTool", {})
SEARCH2 = ("searchTool", {"query": "test2"})
THREE = (
    '{"name": "searchTool", "parameters": {"query": "test1"}}; '
    '{"name": "getOpenIncidentsTool", "parameters": {}}; '
    '{"name": "searchTool", "parameters": {"query": "test2"}}'
)

ROWS: list[tuple[Any, ...]] = [
    (
        "python-tag",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "San Francisco"}}',
        "",
        [("get_weather", {"city": "San Francisco"})],
    ),
    (
        "python-tag-white-space",
        '<|python_tag|>\n{"parameters": {"q": "x"}, "name": "search"}',
        "",
        [("search", {"q": "x"})],
    ),
    (
        "bare-meta-docs",
        (
            '{"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", '
            '"unit": "Fahrenheit"}}'
        ),
        "",
        [("get_current_conditions", {"location": "San Francisco, CA", "unit": "Fahrenheit"})],
    ),
    (
        "bare-arguments-key",
        '{"name": "searchTool", "arguments": {"query": "test"}}',
        "",
        [("searchTool", {"query": "test"})],
    ),
    ("semicolons", THREE, "", [SEARCH1, INCIDENTS, SEARCH2]),
    ("semicolons-spaced", THREE.replace("; ", " ; "), "", [SEARCH1, INCIDENTS, SEARCH2]),
    ("semicolon-newline", THREE.replace("; ", ";\n"), "", [SEARCH1, INCIDENTS, SEARCH2]),
    ("python-tag-semicolons", "<|python_tag|>" + THREE, "", [SEARCH1, INCIDENTS, SEARCH2]),
    (
        "text-around",
        (
            'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like '
            "to know more?"
        ),
        "Here is the result:  Would you like to know more?",
        [INCIDENTS],
    ),
    (
        "text-around-semicolons",
        "Here are the results: " + THREE + " Would you like more?",
        "Here are the results:  Would you like more?",
        [SEARCH1, INCIDENTS, SEARCH2],
    ),
    (
        "deeply-nested",
        (
            '{"name": "complexTool", "parameters": {"level1": {"level2": {"level3": {"level4": '
            '{"value": "deep"}}}}}}'
        ),
        "",
        [("complexTool", {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}})],
    ),
    (
        "quotes-and-brackets-in-strings",
        (
            '{"name": "searchTool", "parameters": {"query": "test {value} [complex]",'
            '"nested": {"inner": "more {brackets}"}}}'
        ),
        "",
        [
            (
                "searchTool",
                {"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}},
            )
        ],
    ),
    (
        "escaped-quotes",
        '{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}',
        "",
        [("parserTool", {"text": 'He said "Hello {world}"'})],
    ),
    (
        "unicode",
        '{"name": "translate", "parameters": {"text": "你好，世界 👋", "to": "fr"}}',
        "",
        [("translate", {"text": "你好，世界 👋", "to": "fr"})],
    ),
    (
        "brace-in-trailing-text",
        '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
        " I used {searchTool} for this.",
        [("searchTool", {"query": "test"})],
    ),
    (
        "json-fragment-in-trailing-text",
        (
            '{"name": "searchTool", "parameters": {"query": "test"}} The arguments I passed were '
            '{"query": "test"}'
        ),
        ' The arguments I passed were {"query": "test"}',
        [("searchTool", {"query": "test"})],
    ),
    (
        "semicolon-then-prose",
        '{"name": "searchTool", "parameters": {"query": "a"}}; and that is all.',
        "; and that is all.",
        [("searchTool", {"query": "a"})],
    ),
    # ---------------------------------------------------------------- not calls: text
    (
        "prose-json-with-a-name-key",
        'The config is {"name": "prod", "replicas": 3}.',
        'The config is {"name": "prod", "replicas": 3}.',
        [],
    ),
    ("no-parameters", '{"name": "toolWithoutParams"}', '{"name": "toolWithoutParams"}', []),
    ("no-name", '{"parameters": {}}', '{"parameters": {}}', []),
    (
        "invalid-json",
        '{"name": "invalidTool", "parameters": {invalid json}',
        '{"name": "invalidTool", "parameters": {invalid json}',
        [],
    ),
    (
        "built-in-tool",
        '<|python_tag|>brave_search.call(query="weather in SF")',
        '<|python_tag|>brave_search.call(query="weather in SF")',
        [],
    ),
    (
        "braces-in-prose",
        "if (x) { y(); } else {z}; {{template}} {",
        "if (x) { y(); } else {z}; {{template}} {",
        [],
    ),
]


@table(ROWS)
def test_llama3_json(row: tuple[Any, ...]) -> None:
    text, want_text, want_calls = row
    check_dialect(text, want_text, want_calls, D)


def test_an_object_ends_the_block_unless_a_semicolon_and_object_follow() -> None:
    """After an object the block may end or go on: the sieve holds only text that may still be
    `;` and the next `{` (at most the separator's width: a chunk that could not complete it is
    held until that much is), and emits the calls when something else comes."""
    sieve = callsieve.Sieve(dialects=(D,))
    assert sieve.feed('{"name": "a", "parameters": {}}') == []  # ("; {…" may follow)
    events = sieve.feed(" ;")
    assert events == []
    events = sieve.feed(" done" + "." * 80)
    assert [type(e).__name__ for e in events] == ["ToolCalls", "Text"]
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == " ; done" + "." * 80
    sieve = callsieve.Sieve(dialects=(D,))
    events = sieve.feed('{"name": "a", "parameters": {}}') + sieve.feed("; {") + sieve.close()
    assert [type(e).__name__ for e in events] == ["Text"]  # (the second object never closed)


def test_the_block_ends_at_the_end_of_the_input() -> None:
    sieve = callsieve.Sieve(dialects=(D,))
    assert sieve.feed('<|python_tag|>{"name": "a", "parameters": {}}') == []
    events = sieve.close()
    assert [c.name for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls] == ["a"]


def test_a_fenced_payload_is_an_example() -> None:
    doc = 'Reply with:\n```json\n{"name": "get_weather", "parameters": {"city": "SF"}}\n```\n'
    r = run_all_ways(doc, dialects=(D,))
    assert r.calls == () and r.text == doc

"""SPEC §19 ``llama3_json``: Llama 3.1-3.3's JSON tool calls, after ``<|python_tag|>`` or as a
bare object, several joined by ``;`` (grammar/llama3_json.lark). The cases follow Meta's prompt
format and the fixtures of vLLM's ``tests/tool_parsers/test_llama3_json_tool_parser.py``; each
runs every way ``family_cases.FamilySuite`` drives it.

Where vLLM differs, on purpose: it drops the text around the calls (``content=None``), and
any ``{`` may begin a call there; here the text stays, and a bare object begins a block only
with the key ``"name"`` first and must be a whole envelope — prose that holds JSON which is no
call comes out unchanged.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite
from helpers import run_all_ways

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

CASES = [
    Case(
        "python-tag",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "San Francisco"}}',
        [("get_weather", {"city": "San Francisco"})],
        answer="",
    ),
    Case(
        "python-tag-white-space",
        '<|python_tag|>\n{"parameters": {"q": "x"}, "name": "search"}',
        [("search", {"q": "x"})],
        answer="",
    ),
    Case(
        "bare-meta-docs",
        '{"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", '
        '"unit": "Fahrenheit"}}',
        [("get_current_conditions", {"location": "San Francisco, CA", "unit": "Fahrenheit"})],
        answer="",
    ),
    Case(
        "bare-arguments-key",
        '{"name": "searchTool", "arguments": {"query": "test"}}',
        [("searchTool", {"query": "test"})],
        answer="",
    ),
    Case(
        "semicolons",
        THREE,
        [SEARCH1, INCIDENTS, SEARCH2],
        answer="",
    ),
    Case(
        "semicolons-spaced",
        THREE.replace("; ", " ; "),
        [SEARCH1, INCIDENTS, SEARCH2],
        answer="",
    ),
    Case(
        "semicolon-newline",
        THREE.replace("; ", ";\n"),
        [SEARCH1, INCIDENTS, SEARCH2],
        answer="",
    ),
    Case(
        "python-tag-semicolons",
        "<|python_tag|>" + THREE,
        [SEARCH1, INCIDENTS, SEARCH2],
        answer="",
    ),
    Case(
        "text-around",
        'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like '
        "to know more?",
        [INCIDENTS],
        answer="Here is the result:  Would you like to know more?",
    ),
    Case(
        "text-around-semicolons",
        "Here are the results: " + THREE + " Would you like more?",
        [SEARCH1, INCIDENTS, SEARCH2],
        answer="Here are the results:  Would you like more?",
    ),
    Case(
        "deeply-nested",
        '{"name": "complexTool", "parameters": {"level1": {"level2": {"level3": {"level4": '
        '{"value": "deep"}}}}}}',
        [("complexTool", {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}})],
        answer="",
    ),
    Case(
        "quotes-and-brackets-in-strings",
        '{"name": "searchTool", "parameters": {"query": "test {value} [complex]",'
        '"nested": {"inner": "more {brackets}"}}}',
        [
            (
                "searchTool",
                {"query": "test {value} [complex]", "nested": {"inner": "more {brackets}"}},
            )
        ],
        answer="",
    ),
    Case(
        "escaped-quotes",
        '{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}',
        [("parserTool", {"text": 'He said "Hello {world}"'})],
        answer="",
    ),
    Case(
        "unicode",
        '{"name": "translate", "parameters": {"text": "你好，世界 👋", "to": "fr"}}',
        [("translate", {"text": "你好，世界 👋", "to": "fr"})],
        answer="",
    ),
    Case(
        "brace-in-trailing-text",
        '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
        [("searchTool", {"query": "test"})],
        answer=" I used {searchTool} for this.",
    ),
    Case(
        "json-fragment-in-trailing-text",
        '{"name": "searchTool", "parameters": {"query": "test"}} The arguments I passed were '
        '{"query": "test"}',
        [("searchTool", {"query": "test"})],
        answer=' The arguments I passed were {"query": "test"}',
    ),
    Case(
        "semicolon-then-prose",
        '{"name": "searchTool", "parameters": {"query": "a"}}; and that is all.',
        [("searchTool", {"query": "a"})],
        answer="; and that is all.",
    ),
    Case(
        "prose-json-with-a-name-key",
        'The config is {"name": "prod", "replicas": 3}.',
        [],
        answer='The config is {"name": "prod", "replicas": 3}.',
        wraps=False,
    ),
    Case(
        "no-parameters",
        '{"name": "toolWithoutParams"}',
        [],
        answer='{"name": "toolWithoutParams"}',
        wraps=False,
    ),
    Case(
        "no-name",
        '{"parameters": {}}',
        [],
        answer='{"parameters": {}}',
        wraps=False,
    ),
    Case(
        "invalid-json",
        '{"name": "invalidTool", "parameters": {invalid json}',
        [],
        answer='{"name": "invalidTool", "parameters": {invalid json}',
        wraps=False,
    ),
    Case(
        "built-in-tool",
        '<|python_tag|>brave_search.call(query="weather in SF")',
        [],
        answer='<|python_tag|>brave_search.call(query="weather in SF")',
        wraps=False,
        # (with every dialect, llama3_builtin reads the built-in tool's call)
        with_all=[("brave_search", {"query": "weather in SF"})],
    ),
    Case(
        "braces-in-prose",
        "if (x) { y(); } else {z}; {{template}} {",
        [],
        answer="if (x) { y(); } else {z}; {{template}} {",
        wraps=False,
    ),
]


class TestLlama3Json(FamilySuite):
    dialect = D
    cases = CASES


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

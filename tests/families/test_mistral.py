"""SPEC §19 ``mistral``: Mistral's and Devstral's ``[TOOL_CALLS]`` in every tokenizer version
(grammar/mistral.lark). The cases are what the models write (mistral-common's encoders, the
fixtures of vLLM's ``tests/tool_parsers/test_mistral_tool_parser.py`` and llama.cpp's
``test-chat.cpp``); each runs every way ``family_cases.FamilySuite`` drives it.

Where the peers differ from us, on purpose: vLLM drops the text after a pre-v11 list and
returns a v11 call whose object never closed with its partial arguments; we keep every
character of text and release an unfinished call as text (SPEC §7: a client never gets a
call that was cut off).
"""

from __future__ import annotations

import pytest
from family_cases import Case, FamilySuite
from helpers import run_all_ways

import callsieve

D = "mistral"

ADD = ("add", {"a": 3.5, "b": 4})
WEATHER = ("get_current_weather", {"city": "San Francisco", "state": "CA", "unit": "celsius"})

CASES = [
    Case(
        "v3-single",
        '[TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5, "b": 4}}]',
        [ADD],
        answer="",
    ),
    Case(
        "v3-space-after-token",
        '[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"city": "San Francisco", '
        '"state": "CA", "unit": "celsius"}}]',
        [WEATHER],
        answer="",
    ),
    Case(
        "v3-white-space-everywhere",
        '[TOOL_CALLS]  [ {"name":"add" , "arguments" : {"a": 3.5, "b": 4} } ]',
        [ADD],
        answer="",
    ),
    Case(
        "v3-arguments-before-name",
        '[TOOL_CALLS] [{"arguments": {"name": "John Doe"}, "name": "get_age"}]',
        [("get_age", {"name": "John Doe"})],
        answer="",
    ),
    Case(
        "v3-parallel",
        '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, '
        '{"name": "get_current_weather", "arguments": {"city": "San Francisco", "state": "CA", '
        '"unit": "celsius"}}]',
        [ADD, WEATHER],
        answer="",
    ),
    Case(
        "nemo-with-ids",
        '[TOOL_CALLS][{"name": "special_function", "arguments": {"arg1": 1}, "id": "123456789"}]',
        [("special_function", {"arg1": 1})],
        answer="",
    ),
    Case(
        "v3-text-before-and-after",
        'Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]\nextra trailing data',
        [("add", {"a": 1, "b": 2})],
        answer="Hello\nextra trailing data",
    ),
    Case(
        "v3-string-arguments",
        '[TOOL_CALLS][{"name": "add", "arguments": "{\\"a\\": \\"3\\", \\"b\\": \\"4\\"}"}]',
        [("add", {"a": "3", "b": "4"})],
        answer="",
    ),
    Case(
        "v13-args-token",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}',
        [("get_weather", {"city": "Paris", "days": 3})],
        answer="",
    ),
    Case(
        "v13-no-args-token",
        '[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}',
        [("add_this_and_that", {"a": 3.5, "b": 4})],
        answer="",
    ),
    Case(
        "v13-parallel",
        '[TOOL_CALLS]add[ARGS]{"a": 3.5, "b": 4}[TOOL_CALLS]multiply[ARGS]{"a": 3, "b": 6}',
        [ADD, ("multiply", {"a": 3, "b": 6})],
        answer="",
    ),
    Case(
        "v13-parallel-llama-cpp",
        '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}'
        '[TOOL_CALLS]special_function_with_opt[ARGS]{"arg1": 1, "arg2": 2}',
        [("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})],
        answer="",
    ),
    Case(
        "v11-call-id",
        '[TOOL_CALLS]get_weather[CALL_ID]abc123def[ARGS]{"city": "Paris"}',
        [("get_weather", {"city": "Paris"})],
        answer="",
    ),
    Case(
        "v13-text-before",
        'bla[TOOL_CALLS]add_this_and_that[ARGS]{"a": 3.5, "b": 4}',
        [("add_this_and_that", {"a": 3.5, "b": 4})],
        answer="bla",
    ),
    Case(
        "v13-text-after",
        'Checking.\n[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}\nI will wait.',
        [("get_weather", {"city": "Paris"})],
        answer="Checking.\n\nI will wait.",
    ),
    Case(
        "v13-braces-and-quotes-in-strings",
        'hi{hi[TOOL_CALLS]bash[ARGS]{"command": "print(\\"hello world!\\")\\nre.compile(r\'{}\')"}',
        [("bash", {"command": "print(\"hello world!\")\nre.compile(r'{}')"})],
        answer="hi{hi",
    ),
    Case(
        "v13-nested-unicode",
        '[TOOL_CALLS]book[ARGS]{"trip": {"from": "Zürich", "to": "東京", "legs": [{"n": 1}, '
        '{"n": 2, "note": "🚄 ]}"}]}, "ok": true, "seat": null}',
        [
            (
                "book",
                {
                    "trip": {
                        "from": "Zürich",
                        "to": "東京",
                        "legs": [{"n": 1}, {"n": 2, "note": "🚄 ]}"}],
                    },
                    "ok": True,
                    "seat": None,
                },
            )
        ],
        answer="",
    ),
    Case(
        "v13-empty-arguments",
        "[TOOL_CALLS]list_files[ARGS]{}",
        [("list_files", {})],
        answer="",
    ),
    Case(
        "v13-namespaced-name",
        '[TOOL_CALLS]browser.search[ARGS]{"q": "lark"}',
        [("browser.search", {"q": "lark"})],
        answer="",
    ),
    Case(
        "v13-no-arguments",
        "[TOOL_CALLS]toolname_no_args",
        [],
        answer="[TOOL_CALLS]toolname_no_args",
        wraps=False,
    ),
    Case(
        "not-json",
        "[TOOL_CALLS] not json at all",
        [],
        answer="[TOOL_CALLS] not json at all",
        wraps=False,
    ),
    Case(
        "v13-object-never-closed",
        '[TOOL_CALLS]bash[ARGS]{"command": "ls',
        [],
        answer='[TOOL_CALLS]bash[ARGS]{"command": "ls',
        wraps=False,
    ),
    Case(
        "v3-list-never-closed",
        '[TOOL_CALLS][{"name": "add", "arguments": {}}',
        [],
        answer='[TOOL_CALLS][{"name": "add", "arguments": {}}',
        wraps=False,
    ),
    Case(
        "v3-bad-item",
        '[TOOL_CALLS][{"name": "add", "arguments": {}}, {"name": 5}] ok',
        [],
        answer='[TOOL_CALLS][{"name": "add", "arguments": {}}, {"name": 5}] ok',
        wraps=False,
    ),
    Case(
        "v13-arguments-not-object",
        '[TOOL_CALLS]f[ARGS]{"a": [1, }',
        [],
        answer='[TOOL_CALLS]f[ARGS]{"a": [1, }',
        wraps=False,
    ),
    Case(
        "v13-bracket-closes-object",
        '[TOOL_CALLS]f[ARGS]{"a": 1] x',
        [],
        answer='[TOOL_CALLS]f[ARGS]{"a": 1] x',
        wraps=False,
    ),
    Case(
        "mention-then-call",
        "I answer with the [TOOL_CALLS] token: [TOOL_CALLS]get_time[ARGS]{}",
        [("get_time", {})],
        answer="I answer with the [TOOL_CALLS] token: ",
    ),
    Case(
        "markdown-links-and-citations",
        "See [the docs](https://example.com) and [1], [TOOL_CALLS is a token].",
        [],
        answer="See [the docs](https://example.com) and [1], [TOOL_CALLS is a token].",
        wraps=False,
    ),
]


class TestMistral(FamilySuite):
    dialect = D
    cases = CASES


def test_call_ids_are_the_models() -> None:
    """The model's id is the call's id: v11's `[CALL_ID]`, Nemo's "id" key (as the model wrote
    it); a call without one gets the id factory's."""
    r = callsieve.parse("[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{}", dialects=(D,))
    assert [c.id for c in r.calls] == ["abc123def"]
    r = callsieve.parse(
        '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "a1b2c3d4e"}, '
        '{"name": "g", "arguments": {}}]',
        dialects=(D,),
        id_factory=lambda: "x",
    )
    assert [c.id for c in r.calls] == ["a1b2c3d4e", "x"]


def test_v11_calls_are_blocks_of_their_own() -> None:
    """Each v11+ call is a block, complete the moment its object closes: the sieve emits it
    then, without waiting for what follows."""
    sieve = callsieve.Sieve(dialects=(D,))
    events = sieve.feed('[TOOL_CALLS]a[ARGS]{"x": {"y": 1}}')
    assert [c.name for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls] == ["a"]
    events = sieve.feed("[TOOL_CALLS]b[ARGS]{}") + sieve.close()
    assert [c.name for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls] == ["b"]
    r = callsieve.parse("[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]b[ARGS]{}", dialects=(D,))
    assert [b.raw for b in r.blocks] == ["[TOOL_CALLS]a[ARGS]{}", "[TOOL_CALLS]b[ARGS]{}"]
    assert {b.dialect for b in r.blocks} == {D}


def test_a_pre_v11_list_ends_at_its_bracket() -> None:
    sieve = callsieve.Sieve(dialects=(D,))
    events = sieve.feed('[TOOL_CALLS][{"name": "a", "arguments": {}}]')
    assert [type(e).__name__ for e in events] == ["ToolCalls"]


@pytest.mark.parametrize("fence", ["```", "~~~", "````json"])
def test_a_fenced_payload_is_an_example(fence: str) -> None:
    doc = (
        f'Call it like this:\n{fence}\n[TOOL_CALLS]get_weather[ARGS]{{"city": "Paris"}}\n'
        f"{fence.rstrip('json')}\nor not."
    )
    r = run_all_ways(doc, dialects=(D,))
    assert r.calls == () and r.text == doc


def test_off_by_default() -> None:
    doc = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    assert D not in callsieve.DEFAULT_DIALECTS
    assert callsieve.parse(doc).text == doc

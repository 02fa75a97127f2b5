"""SPEC §2 ``text_kv``: a call written as ``key: value`` lines — ``function.name: f`` and
``function.arguments: {…}`` (the JSON may span lines), the other lines of the record
belonging to it (grammar/text_kv.lark). Each case runs every way ``family_cases.FamilySuite`` drives it.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite
from helpers import run_all_ways

import callsieve

D = "text_kv"

PARIS = ("get_weather", {"city": "Paris"})

CASES = [
    Case(
        "two-lines",
        'function.name: get_weather\nfunction.arguments: {"city": "Paris"}',
        [PARIS],
        answer="",
    ),
    Case(
        "multi-line-json",
        'function.name: get_weather\nfunction.arguments: {\n  "city": "Paris",\n  "days": 3\n}',
        [("get_weather", {"city": "Paris", "days": 3})],
        answer="",
    ),
    Case(
        "json-on-the-next-line",
        'function.name: get_weather\nfunction.arguments:\n{"city": "Paris"}',
        [PARIS],
        answer="",
    ),
    Case(
        "record-lines-after",
        'function.name: get_weather\nfunction.arguments: {"city": "Paris"}\ntool_call_id: call_7\n'
        "status: completed\norigin: assistant",
        [PARIS],
        answer="",
    ),
    Case(
        "record-lines-between",
        'function.name: get_weather\ntype: function\nfunction.arguments: {"city": "Paris"}',
        [PARIS],
        answer="",
    ),
    Case(
        "text-around",
        'I will look it up.\nfunction.name: get_weather\nfunction.arguments: {"city": "Paris"}\n'
        "status: pending\n\nThat is all.",
        [PARIS],
        answer="I will look it up.\n\n\nThat is all.",
    ),
    Case(
        "crlf",
        'function.name: get_weather\r\nfunction.arguments: {"city": "Paris"}\r\nstatus: ok',
        [PARIS],
        answer="",
    ),
    Case(
        "quoted-name",
        'function.name: "get_weather"\nfunction.arguments: {"city": "Paris"}',
        [PARIS],
        answer="",
    ),
    Case(
        "two-records",
        'function.name: a\nfunction.arguments: {}\nfunction.name: b\nfunction.arguments: {"x": 1}',
        [("a", {}), ("b", {"x": 1})],
        answer="\n",
    ),
    Case(
        "unicode-and-braces",
        'function.name: note\nfunction.arguments: {"text": "}{ 日本語 \\n 🎉"}\nstatus: ok',
        [("note", {"text": "}{ 日本語 \n 🎉"})],
        answer="",
    ),
    Case(
        "no-arguments",
        "function.name: get_weather\nstatus: pending",
        [],
        answer="function.name: get_weather\nstatus: pending",
        wraps=False,
    ),
    Case(
        "mention",
        "Set function.name: to the tool you call.",
        [],
        answer="Set function.name: to the tool you call.",
        wraps=False,
    ),
    Case(
        "prose-after-name",
        "function.name: get_weather\nand then the arguments.",
        [],
        answer="function.name: get_weather\nand then the arguments.",
        wraps=False,
    ),
    Case(
        "arguments-not-json",
        "function.name: f\nfunction.arguments: city=Paris",
        [],
        answer="function.name: f\nfunction.arguments: city=Paris",
        wraps=False,
    ),
    Case(
        "words-with-f",
        "fine food from France, fast.",
        [],
        answer="fine food from France, fast.",
        wraps=False,
    ),
]


class TestTextKv(FamilySuite):
    dialect = D
    cases = CASES


def test_the_record_ends_at_a_line_that_is_no_key() -> None:
    sieve = callsieve.Sieve(dialects=(D,))
    events = sieve.feed("function.name: f\nfunction.arguments: {}\nstatus: done")
    assert events == []  # (another `key:` line may follow)
    events = sieve.feed("\nThanks!")
    assert [type(e).__name__ for e in events] == ["ToolCalls", "Text"]
    assert events[0].block.raw == "function.name: f\nfunction.arguments: {}\nstatus: done"


def test_a_fenced_record_is_an_example() -> None:
    doc = "Like this:\n```\nfunction.name: f\nfunction.arguments: {}\n```\n"
    r = run_all_ways(doc, dialects=(D,))
    assert r.calls == () and r.text == doc

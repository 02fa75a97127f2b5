"""SPEC §2 ``text_kv``: a call written as ``key: value`` lines — ``function.name: f`` and
``function.arguments: {…}`` (the JSON may span lines), the other lines of the record
belonging to it (grammar/text_kv.lark). Each case runs every way ``check_dialect`` drives it.
"""

from __future__ import annotations

from typing import Any

from helpers import check_dialect, run_all_ways, table

import callsieve

D = "text_kv"

PARIS = ("get_weather", {"city": "Paris"})

ROWS: list[tuple[Any, ...]] = [
    ("two-lines", 'function.name: get_weather\nfunction.arguments: {"city": "Paris"}', "", [PARIS]),
    (
        "multi-line-json",
        'function.name: get_weather\nfunction.arguments: {\n  "city": "Paris",\n  "days": 3\n}',
        "",
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    (
        "json-on-the-next-line",
        'function.name: get_weather\nfunction.arguments:\n{"city": "Paris"}',
        "",
        [PARIS],
    ),
    (
        "record-lines-after",
        (
            'function.name: get_weather\nfunction.arguments: {"city": "Paris"}\ntool_call_id: call_7\n'
            "status: completed\norigin: assistant"
        ),
        "",
        [PARIS],
    ),
    (
        "record-lines-between",
        'function.name: get_weather\ntype: function\nfunction.arguments: {"city": "Paris"}',
        "",
        [PARIS],
    ),
    (
        "text-around",
        (
            'I will look it up.\nfunction.name: get_weather\nfunction.arguments: {"city": "Paris"}\n'
            "status: pending\n\nThat is all."
        ),
        "I will look it up.\n\n\nThat is all.",
        [PARIS],
    ),
    (
        "crlf",
        'function.name: get_weather\r\nfunction.arguments: {"city": "Paris"}\r\nstatus: ok',
        "",
        [PARIS],
    ),
    (
        "quoted-name",
        'function.name: "get_weather"\nfunction.arguments: {"city": "Paris"}',
        "",
        [PARIS],
    ),
    (
        "two-records",
        'function.name: a\nfunction.arguments: {}\nfunction.name: b\nfunction.arguments: {"x": 1}',
        "\n",
        [("a", {}), ("b", {"x": 1})],
    ),
    (
        "unicode-and-braces",
        'function.name: note\nfunction.arguments: {"text": "}{ 日本語 \\n 🎉"}\nstatus: ok',
        "",
        [("note", {"text": "}{ 日本語 \n 🎉"})],
    ),
    # ---------------------------------------------------------------- not calls: text
    (
        "no-arguments",
        "function.name: get_weather\nstatus: pending",
        "function.name: get_weather\nstatus: pending",
        [],
    ),
    (
        "mention",
        "Set function.name: to the tool you call.",
        "Set function.name: to the tool you call.",
        [],
    ),
    (
        "prose-after-name",
        "function.name: get_weather\nand then the arguments.",
        "function.name: get_weather\nand then the arguments.",
        [],
    ),
    (
        "arguments-not-json",
        "function.name: f\nfunction.arguments: city=Paris",
        "function.name: f\nfunction.arguments: city=Paris",
        [],
    ),
    ("words-with-f", "fine food from France, fast.", "fine food from France, fast.", []),
]


@table(ROWS)
def test_text_kv(row: tuple[Any, ...]) -> None:
    text, want_text, want_calls = row
    check_dialect(text, want_text, want_calls, D)


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

"""SPEC §2 Dialects: each default dialect, mixed spellings of one tag, attributes, the
opt-in dialects off by default.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

from helpers import (
    DSML,
    DSML_V4,
    DSML_V32,
    DSML_V41,
    INV,
    NATIVE_V3,
    NATIVE_V31,
    READ,
    XML,
    X,
    canon_calls,
    canon_value,
    check,
    run_all_ways,
    table,
)

import callsieve

DIALECT_ROWS = [
    ("dsml", DSML, READ, "dsml"),
    ("dsml_v4", DSML_V4, [("get_weather", {"location": "杭州", "days": 3})], "dsml_v4"),
    ("dsml_v32", DSML_V32, [("get_weather", {"zip": "75001", "days": 2})], "dsml_v32"),
    (
        "dsml_v41",
        DSML_V41,
        [("browser::search", {"query": "Hangzhou weather", "top_k": 3})],
        "dsml_v41",
    ),
    ("xml", XML, READ, "xml"),
    (
        "native-v3",
        NATIVE_V3,
        [("get_weather", {"location": "Tokyo"}), ("get_time", {})],
        "deepseek_native",
    ),
    ("native-v31", NATIVE_V31, [("search", {"q": "lark", "n": 2})], "deepseek_native"),
]


@table(DIALECT_ROWS)
def test_s2_each_default_dialect(row: tuple[Any, ...]) -> None:
    text, calls, dialect = row
    r = check(f"Before.\n{text}\nAfter.", "Before.\n\nAfter.", calls)
    assert [c.dialect for c in r.calls] == [dialect] * len(calls)
    complete = [b for b in r.blocks if b.status == "complete"]
    assert [b.dialect for b in complete] == [dialect]
    assert complete[0].raw == text


def test_s2_default_dialects_listed() -> None:
    assert callsieve.DEFAULT_DIALECTS == (
        "dsml",
        "dsml_v4",
        "dsml_v32",
        "dsml_v41",
        "xml",
        "deepseek_native",
    )


MIXED_ROWS = [
    # "A block opened in one dialect may close in another spelling of the same tag (a DSML
    # wrapper around canonical invokes parses)."
    (
        "dsml-wrapper-xml-invokes",
        (
            '<|DSML|tool_calls><invoke name="a"><parameter name="p">v</parameter></invoke>'
            "</|DSML|tool_calls>"
        ),
        [("a", {"p": "v"})],
    ),
    (
        "xml-wrapper-dsml-invokes",
        (
            '<tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">v</|DSML|parameter>'
            "</|DSML|invoke></tool_calls>"
        ),
        [("a", {"p": "v"})],
    ),
    (
        "xml-open-dsml-close",
        X(INV("a"))[: -len("</tool_calls>")] + "</|DSML|tool_calls>",
        [("a", {})],
    ),
    (
        "dsml-open-xml-close",
        ('<|DSML|tool_calls><|DSML|invoke name="a"></|DSML|invoke></tool_calls>'),
        [("a", {})],
    ),
    (
        "v4-open-dsml-invokes",
        (
            '<｜DSML｜tool_calls><|DSML|invoke name="a"><|DSML|parameter '
            'name="p">1</|DSML|parameter></|DSML|invoke></｜DSML｜tool_calls>'
        ),
        [("a", {"p": 1})],
    ),
    (
        "v4-open-ascii-close",
        ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"></｜DSML｜invoke></|DSML|tool_calls>'),
        [("a", {})],
    ),
    (
        "param-closed-other-spelling",
        (
            '<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter'
            ' name="p">v</parameter></invoke></|DSML|tool_calls>'
        ),
        [("a", {"p": "v"})],
    ),
    (
        "v32-canonical-invokes",
        (
            '<｜DSML｜function_calls><invoke name="a"><parameter name="p">'
            "2</parameter></invoke></｜DSML｜function_calls>"
        ),
        [("a", {"p": 2})],
    ),
    # "Only name/string attributes carry meaning; others are ignored."
    (
        "other-attrs-ignored",
        (
            '<tool_calls><invoke id="7" name="a" type="fn"><parameter '
            'type="integer" name="p" required="true">v</parameter></invoke></tool_calls>'
        ),
        [("a", {"p": "v"})],
    ),
    (
        "other-attrs-with-string",
        (
            '<｜DSML｜tool_calls><｜DSML｜invoke name="a"><｜DSML｜parameter'
            ' name="p" kind="x" string="true">5</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
        ),
        [("a", {"p": "5"})],
    ),
]


BARE_ATTR_ROWS = [
    ("bare-invoke-name", "<tool_calls><invoke name=f></invoke></tool_calls>", ("f", {})),
    (
        "bare-parameter-name",
        ('<tool_calls><invoke name="f"><parameter name=p>1</parameter></invoke></tool_calls>'),
        ("f", {"p": 1}),
    ),
    (
        "bare-string-attr",
        (
            '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="p" '
            "string=true>1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"
        ),
        ("f", {"p": "1"}),
    ),
]


@table(BARE_ATTR_ROWS)
def test_s2_unquoted_attribute_values_are_read_or_rejected(row: tuple[Any, ...]) -> None:
    """SPEC names quoted values only; an unquoted one may be accepted or make the block text,
    but it must never be misread (a call named ``name=f``, an ignored ``string=true``)."""
    text, (name, args) = row
    r = run_all_ways(text)
    got = (r.text, canon_calls(r.calls))
    assert got in [("", [(name, canon_value(args))]), (text, [])], got


@table(MIXED_ROWS)
def test_s2_mixed_spellings(row: tuple[Any, ...]) -> None:
    text, calls = row
    check("x " + text + " y", "x  y", calls)


def test_s2_blocks_of_several_dialects_in_order() -> None:
    text = f"a {XML} b {NATIVE_V31} c {DSML_V32} d {DSML}"
    r = check(
        text,
        "a  b  c  d ",
        [
            *READ,
            ("search", {"q": "lark", "n": 2}),
            ("get_weather", {"zip": "75001", "days": 2}),
            *READ,
        ],
    )
    assert [b.dialect for b in r.blocks] == ["xml", "deepseek_native", "dsml_v32", "dsml"]
    assert [c.dialect for c in r.calls] == ["xml", "deepseek_native", "dsml_v32", "dsml"]


# "dsml_v41 … DeepSeek V4.1: a space after the marker, wrapper named `calls`; `namespace::tool`
# names; same body rules as `dsml_v4`. `calls` without the DSML marker is a plain word, never
# an opener."
V41_ROWS = [
    (
        "the-issues-example",
        (
            'Let me check.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n'
            '<｜DSML｜ parameter name="city" string="true">Hangzhou</｜DSML｜ parameter>\n'
            '<｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>\n'
            "</｜DSML｜ invoke>\n</｜DSML｜ calls>"
        ),
        "Let me check.\n\n",
        [("get_weather", {"city": "Hangzhou", "days": 3})],
    ),
    (
        "string-true-keeps-digits",
        (
            '<｜DSML｜ calls><｜DSML｜ invoke name="a">'
            '<｜DSML｜ parameter name="zip" string="true">007</｜DSML｜ parameter></｜DSML｜ invoke>'
            "</｜DSML｜ calls>"
        ),
        "",
        [("a", {"zip": "007"})],
    ),
    (
        "string-false-json",
        (
            '<｜DSML｜ calls><｜DSML｜ invoke name="a">'
            '<｜DSML｜ parameter name="o" string="false">{"k": [1, null]}</｜DSML｜ parameter>'
            "</｜DSML｜ invoke></｜DSML｜ calls>"
        ),
        "",
        [("a", {"o": {"k": [1, None]}})],
    ),
    (
        "namespaced-names-and-parallel-calls",
        (
            "<｜DSML｜ calls>\n"
            '<｜DSML｜ invoke name="browser::search"><｜DSML｜ parameter name="q" string="true">x'
            '</｜DSML｜ parameter></｜DSML｜ invoke>\n<｜DSML｜ invoke name="python::run"/>\n'
            "</｜DSML｜ calls>"
        ),
        "",
        [("browser::search", {"q": "x"}), ("python::run", {})],
    ),
    (
        "cdata-body",
        (
            '<｜DSML｜ calls><｜DSML｜ invoke name="w"><｜DSML｜ parameter name="content" '
            'string="true"><![CDATA[a </｜DSML｜ parameter> b]]></｜DSML｜ parameter></｜DSML｜ invoke>'
            "</｜DSML｜ calls>"
        ),
        "",
        [("w", {"content": "a </｜DSML｜ parameter> b"})],
    ),
    (
        "v4-invokes-in-a-v41-wrapper",
        (
            '<｜DSML｜ calls><｜DSML｜invoke name="a"><｜DSML｜parameter '
            'name="p">1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜ calls>'
        ),
        "",
        [("a", {"p": 1})],
    ),
    (
        "v41-open-v4-close",
        ('<｜DSML｜ calls><｜DSML｜ invoke name="a"></｜DSML｜ invoke></｜DSML｜tool_calls>'),
        "",
        [("a", {})],
    ),
    (
        "v4-open-v41-close",
        ('<｜DSML｜tool_calls><｜DSML｜ invoke name="a"></｜DSML｜ invoke></｜DSML｜ calls>'),
        "",
        [("a", {})],
    ),
]


@table(V41_ROWS)
def test_s2_dsml_v41(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    r = check(text, want_text, calls)
    complete = [b for b in r.blocks if b.status == "complete"]
    assert len(complete) == 1 and complete[0].raw == text[len(want_text) :]


def test_s2_a_v41_block_is_dsml_v41_and_a_v4_block_stays_dsml_v4() -> None:
    r = check(
        f"a {DSML_V41} b {DSML_V4} c",
        "a  b  c",
        [
            ("browser::search", {"query": "Hangzhou weather", "top_k": 3}),
            ("get_weather", {"location": "杭州", "days": 3}),
        ],
    )
    assert [b.dialect for b in r.blocks] == ["dsml_v41", "dsml_v4"]


CALLS_WORD_ROWS = [
    # "`calls` without the DSML marker is a plain word, never an opener"
    ("bare-calls", '<calls><invoke name="f"></invoke></calls>'),
    ("bare-calls-space", '< calls><invoke name="f"></invoke></ calls>'),
    ("prose", "The API makes <many calls> a day; see <calls> and </calls>."),
    ("other-prefix", '<|tool| calls><invoke name="f"></invoke></|tool| calls>'),
    ("pascal-no-marker", '<Calls><invoke name="f"/></Calls>'),
    ("marker-then-word", '<｜DSML｜ some calls><｜DSML｜ invoke name="f"/></｜DSML｜ some calls>'),
    ("marker-inside-a-word", '<｜DSMLX｜ calls><｜DSML｜ invoke name="f"/></｜DSMLX｜ calls>'),
]


@table(CALLS_WORD_ROWS)
def test_s2_calls_without_the_dsml_marker_is_a_plain_word(row: tuple[Any, ...]) -> None:
    (text,) = row
    r = check(text, text, [])
    assert not r.saw_tool_call_syntax

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
    ("xml", XML, READ, "xml"),
    ("native-v3", NATIVE_V3, [("get_weather", {"location": "Tokyo"}), ("get_time", {})],
     "deepseek_native"),
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
    assert set(callsieve.DEFAULT_DIALECTS) == {"dsml", "dsml_v4", "dsml_v32", "xml",
                                               "deepseek_native"}


MIXED_ROWS = [
    # "A block opened in one dialect may close in another spelling of the same tag (a DSML
    # wrapper around canonical invokes parses)."
    ("dsml-wrapper-xml-invokes",
     ('<|DSML|tool_calls><invoke name="a"><parameter name="p">v</parameter></invoke>'
     '</|DSML|tool_calls>'), [("a", {"p": "v"})]),
    ("xml-wrapper-dsml-invokes",
     ('<tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">v</|DSML|parameter>'
     '</|DSML|invoke></tool_calls>'), [("a", {"p": "v"})]),
    ("xml-open-dsml-close", X(INV("a"))[:-len("</tool_calls>")] + "</|DSML|tool_calls>",
     [("a", {})]),
    ("dsml-open-xml-close", ('<|DSML|tool_calls><|DSML|invoke name="a"></|DSML|invoke>'
     '</tool_calls>'), [("a", {})]),
    ("v4-open-dsml-invokes", ('<｜DSML｜tool_calls><|DSML|invoke name="a"><|DSML|parameter '
     'name="p">1</|DSML|parameter></|DSML|invoke></｜DSML｜tool_calls>'), [("a", {"p": 1})]),
    ("v4-open-ascii-close", ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"></｜DSML｜invoke>'
     '</|DSML|tool_calls>'), [("a", {})]),
    ("param-closed-other-spelling", ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter'
     ' name="p">v</parameter></invoke></|DSML|tool_calls>'), [("a", {"p": "v"})]),
    ("v32-canonical-invokes", ('<｜DSML｜function_calls><invoke name="a"><parameter name="p">'
     '2</parameter></invoke></｜DSML｜function_calls>'), [("a", {"p": 2})]),
    # "Only name/string attributes carry meaning; others are ignored."
    ("other-attrs-ignored", ('<tool_calls><invoke id="7" name="a" type="fn"><parameter '
     'type="integer" name="p" required="true">v</parameter></invoke></tool_calls>'),
     [("a", {"p": "v"})]),
    ("other-attrs-with-string", ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"><｜DSML｜parameter'
     ' name="p" kind="x" string="true">5</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'),
     [("a", {"p": "5"})]),
]


BARE_ATTR_ROWS = [
    ("bare-invoke-name", "<tool_calls><invoke name=f></invoke></tool_calls>", ("f", {})),
    ("bare-parameter-name", ('<tool_calls><invoke name="f"><parameter name=p>1</parameter>'
     "</invoke></tool_calls>"), ("f", {"p": 1})),
    ("bare-string-attr", ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="p" '
                          "string=true>1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"),
     ("f", {"p": "1"})),
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
    r = check(text, "a  b  c  d ", [*READ, ("search", {"q": "lark", "n": 2}),
                                    ("get_weather", {"zip": "75001", "days": 2}), *READ])
    assert [b.dialect for b in r.blocks] == ["xml", "deepseek_native", "dsml_v32", "dsml"]
    assert [c.dialect for c in r.calls] == ["xml", "deepseek_native", "dsml_v32", "dsml"]

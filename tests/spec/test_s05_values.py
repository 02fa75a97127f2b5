"""SPEC §5 Parameter values: CDATA, entities, JSON literals, element children, the
``string`` attribute, repeated names and schema-typed strings.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    INV,
    P,
    X,
    check,
    table,
    xml_call,
)

from callsieve import parse
from callsieve._base.values import MAX_XML_DEPTH

VALUE_ROWS = [
    # CDATA verbatim; several sections concatenate
    ("cdata-verbatim", "<![CDATA[  x < y  ]]>", "  x < y  "),
    ("cdata-entities-kept", "<![CDATA[&lt;b&gt; &amp;]]>", "&lt;b&gt; &amp;"),
    ("cdata-newlines", "<![CDATA[\nline1\n  line2\n]]>", "\nline1\n  line2\n"),
    ("cdata-concat", "<![CDATA[a]]><![CDATA[b]]>", "ab"),
    ("cdata-concat-split-close", "<![CDATA[x]]]]><![CDATA[>y]]>", "x]]>y"),
    ("cdata-number-stays-string", "<![CDATA[42]]>", "42"),
    ("cdata-empty", "<![CDATA[]]>", ""),
    # plain text beside CDATA keeps its place: the body reads in order, its plain white
    # space trimmed at both ends, CDATA verbatim (what streamed is the value's start, §7.5)
    ("text-then-cdata", "see <![CDATA[x < y]]>", "see x < y"),
    ("cdata-then-text", "<![CDATA[x]]> and &lt;y&gt;  ", "x and <y>"),
    ("text-between-cdata", "<![CDATA[a]]>\n &amp; <![CDATA[b]]>", "a\n & b"),
    ("white-space-around-cdata", "\n  <![CDATA[ x ]]>\n", " x "),
    # plain bodies trimmed, entities decoded
    ("trim", "  hello world \n", "hello world"),
    ("entities-named", "&lt;a&gt; &amp; &quot;q&quot; &apos;s&apos;", "<a> & \"q\" 's'"),
    ("entities-numeric", "&#65;&#x42;&#X43;&#233;", "ABCé"),
    ("entities-decoded-once", "&amp;lt;", "&lt;"),
    ("entities-trim", "  x &lt; y &amp; z  ", "x < y & z"),
    ("empty-body", "", ""),
    ("blank-body", "   \n ", ""),
    # JSON literals become values; anything else is a string
    ("json-int", "10", 10),
    ("json-negative", "-3", -3),
    ("json-float", "2.5", 2.5),
    ("json-exponent", "1e3", 1000.0),
    ("json-true", "true", True),
    ("json-false", "false", False),
    ("json-null", "null", None),
    ("json-array", '[1, "a", null]', [1, "a", None]),
    ("json-object", '{"k": {"n": [true]}}', {"k": {"n": [True]}}),
    ("json-trimmed", "\n  42  \n", 42),
    ("json-from-entities", "[&quot;a&quot;]", ["a"]),
    ("not-json-word", "hello", "hello"),
    ("not-json-capital-true", "True", "True"),
    ("not-json-leading-zero", "007", "007"),
    ("not-json-version", "1.2.3", "1.2.3"),
    ("not-json-quoted-string", '"x"', '"x"'),
    ("not-json-broken-array", "[1, 2", "[1, 2"),
    ("not-json-sentence", "3 apples", "3 apples"),
    # element children: <item> lists are arrays, other children objects, recursively
    ("items", "<item>1</item><item>two</item>", [1, "two"]),
    ("single-item", "<item>x</item>", ["x"]),
    ("items-of-objects", "<item><q>x</q></item><item><q>y</q></item>", [{"q": "x"}, {"q": "y"}]),
    ("object", "<a>1</a><b>x</b>", {"a": 1, "b": "x"}),
    ("object-nested", "<a><b><c>true</c></b></a><d>null</d>", {"a": {"b": {"c": True}}, "d": None}),
    (
        "object-with-items",
        "<list><item>a</item><item>b</item></list><n>2</n>",
        {"list": ["a", "b"], "n": 2},
    ),
    ("object-repeated-child", "<k>1</k><j>x</j><k>2</k>", {"k": [1, 2], "j": "x"}),
    ("object-whitespace", "\n  <a>1</a>\n  <b> x </b>\n", {"a": 1, "b": "x"}),
    ("object-entities", "<a>&lt;x&gt;</a>", {"a": "<x>"}),
    # CDATA holding a structured XML fragment is decoded as such
    ("cdata-siblings", "<![CDATA[<a>1</a><b>2</b>]]>", {"a": 1, "b": 2}),
    ("cdata-nesting", "<![CDATA[<o><p>x</p></o>]]>", {"o": {"p": "x"}}),
    ("cdata-items", "<![CDATA[<item>1</item><item>2</item>]]>", [1, 2]),
    # ... but a single flat inline tag stays a string
    ("cdata-flat-inline-tag", "<![CDATA[<b>urgent</b>]]>", "<b>urgent</b>"),
    ("cdata-html-with-text", "<![CDATA[see <b>this</b> now]]>", "see <b>this</b> now"),
]


@table(VALUE_ROWS)
def test_s5_parameter_values(row: tuple[Any, ...]) -> None:
    body, value = row
    check(xml_call(body), "", [("f", {"p": value})])


RAW_TEXT_FIELDS = ["content", "command", "prompt", "old_string", "new_string", "code", "text"]
STRUCTURED_CDATA = ["<a>1</a><b>2</b>", "<o><p>x</p></o>", "<item>1</item><item>2</item>"]


@pytest.mark.parametrize("field", RAW_TEXT_FIELDS)
@pytest.mark.parametrize("xml", STRUCTURED_CDATA, ids=["siblings", "nesting", "items"])
def test_s5_raw_text_fields_keep_cdata_xml_as_string(field: str, xml: str) -> None:
    check(xml_call(f"<![CDATA[{xml}]]>", pname=field), "", [("f", {field: xml})])


def test_s5_non_raw_text_field_decodes_the_same_cdata() -> None:
    check(
        xml_call("<![CDATA[<a>1</a><b>2</b>]]>", pname="contents"),
        "",
        [("f", {"contents": {"a": 1, "b": 2}})],
    )


STRING_ATTR_ROWS = [
    # string="true" keeps the raw string; string="false" parses JSON (raw string if invalid)
    ("true-number", "true", "10", "10"),
    ("true-bool", "true", "true", "true"),
    ("true-array", "true", "[1]", "[1]"),
    ("true-word", "true", "杭州", "杭州"),
    ("true-beside-cdata", "true", " a &amp; <![CDATA[b]]>\n", " a &amp; b\n"),
    ("false-number", "false", "3", 3),
    ("false-array", "false", "[1, 2]", [1, 2]),
    ("false-object", "false", '{"a": {"b": null}}', {"a": {"b": None}}),
    ("false-json-string", "false", '"x"', "x"),
    ("false-invalid", "false", "not json", "not json"),
    ("false-invalid-array", "false", "[1,", "[1,"),
    # NaN, Infinity and out-of-range numbers are not JSON (strict JSON clients refuse them)
    ("false-infinity", "false", "Infinity", "Infinity"),
    ("false-nan-in-array", "false", "[1, NaN]", "[1, NaN]"),
    ("false-out-of-range", "false", "1e999", "1e999"),
]


@table(STRING_ATTR_ROWS)
def test_s5_string_attribute(row: tuple[Any, ...]) -> None:
    attr, body, value = row
    for opener, closer in (("<｜DSML｜", "</｜DSML｜"), ("<", "</")):
        text = (
            f'{opener}tool_calls>{opener}invoke name="f">{opener}parameter name="p" '
            f'string="{attr}">{body}{closer}parameter>{closer}invoke>{closer}tool_calls>'
        )
        check(text, "", [("f", {"p": value})])


def test_s5_values_are_strict_json() -> None:
    """A value is only ever JSON a client accepts: ``NaN``, ``Infinity`` and numbers out of a
    float's range (which Python's ``json`` reads, then writes as no JSON) are not JSON
    values, so such a body is a string and such arguments are not an object."""
    for body in ("[1e999]", "-1e400", '{"a": NaN}', "[Infinity]"):
        check(xml_call(body), "", [("f", {"p": body})])
    check(xml_call("1e300"), "", [("f", {"p": 1e300})])
    native = (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": NaN}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    assert parse(native).calls == () and parse(native).text == native


def test_s5_repeated_parameter_names_collect_into_an_array() -> None:
    text = X(INV("a", P("p", "1") + P("q", "x") + P("p", "two") + P("p", "[3]")))
    check(text, "", [("a", {"p": [1, "two", [3]], "q": "x"})])


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "n": {"type": "integer"},
            "s": {"type": "string"},
            "flag": {"type": "boolean"},
        },
    }


TOOL_STYLES = {
    "openai": [{"type": "function", "function": {"name": "run", "parameters": _schema()}}],
    "flat": [{"name": "run", "parameters": _schema()}],
}
SCHEMA_ROWS = [
    # "a parameter whose schema type is string always stays a string"
    ("number", "command", "123", "123"),
    ("bool", "s", "true", "true"),
    ("null", "s", "null", "null"),
    ("array", "s", "[1, 2]", "[1, 2]"),
    ("object", "s", '{"a": 1}', '{"a": 1}'),
    ("trimmed-decoded", "s", "  1 &lt; 2 ", "1 < 2"),
    ("cdata-structured", "s", "<![CDATA[<a>1</a><b>2</b>]]>", "<a>1</a><b>2</b>"),
    # other types keep the ordinary rules
    ("integer-typed", "n", "5", 5),
    ("boolean-typed", "flag", "false", False),
    ("unknown-param", "other", "7", 7),
]


@pytest.mark.parametrize("style", sorted(TOOL_STYLES))
@table(SCHEMA_ROWS)
def test_s5_schema_typed_strings(row: tuple[Any, ...], style: str) -> None:
    pname, body, value = row
    check(
        xml_call(body, pname=pname, tool="run"),
        "",
        [("run", {pname: value})],
        tools=TOOL_STYLES[style],
    )


SCHEMA_STRING_ATTR_ROWS = [
    # "... always stays a string, whatever its string attribute and whether its body is plain
    # text or CDATA" (plain text trimmed and decoded, CDATA verbatim, as ever)
    ("null", "null", "null", "null"),
    ("number", " 3 ", "3", " 3 "),
    ("bool", "true", "true", "true"),
    ("array", "[1, 2]", "[1, 2]", "[1, 2]"),
    ("object", '{"a": 1}', '{"a": 1}', '{"a": 1}'),
    ("json-string", '"x"', '"x"', '"x"'),
    ("entities", "1 &lt; 2", "1 < 2", "1 &lt; 2"),
]


@pytest.mark.parametrize("attr", ["false", "true"])
@table(SCHEMA_STRING_ATTR_ROWS)
def test_s5_schema_string_wins_over_the_string_attribute(row: tuple[Any, ...], attr: str) -> None:
    body, plain, cdata = row
    for text, value in ((body, plain), (f"<![CDATA[{body}]]>", cdata)):
        if attr == "true" and text == body:
            value = body  # string="true" keeps the raw string, untrimmed
        block = (
            f'<｜DSML｜tool_calls><｜DSML｜invoke name="run"><｜DSML｜parameter name="s" '
            f'string="{attr}">{text}</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
        )
        check(block, "", [("run", {"s": value})], tools=TOOL_STYLES["openai"])


def test_s5_without_a_schema_string_false_parses_plain_and_cdata_alike() -> None:
    for body in ("null", "<![CDATA[null]]>", " [1] ", "<![CDATA[ [1] ]]>"):
        block = (
            f'<｜DSML｜tool_calls><｜DSML｜invoke name="run"><｜DSML｜parameter name="s" '
            f'string="false">{body}</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
        )
        check(block, "", [("run", {"s": [1] if "[1]" in body else None})])


@pytest.mark.parametrize("style", sorted(TOOL_STYLES))
def test_s5_schema_applies_to_its_own_tool_only(style: str) -> None:
    text = xml_call("123", pname="command", tool="other") + xml_call(
        "123", pname="command", tool="run"
    )
    check(
        text,
        "",
        [("other", {"command": 123}), ("run", {"command": "123"})],
        tools=TOOL_STYLES[style],
    )


# Structured values nest at most MAX_XML_DEPTH deep (a hostile-input finding: a deeper
# value is kept as its text, tests/unit/test_hostile_input.py measures its memory).
def nested(n: int) -> str:
    return xml_call("<item>" * n + "1" + "</item>" * n)


def test_s5_structured_values_nest_up_to_the_bound_deeper_stays_a_string() -> None:
    value = parse(nested(MAX_XML_DEPTH)).calls[0].input["p"]
    for _ in range(MAX_XML_DEPTH):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == 1
    deeper = nested(MAX_XML_DEPTH + 1)
    assert (
        parse(deeper).calls[0].input["p"]
        == deeper[deeper.index("<item>") : deeper.index("</parameter>")]
    )

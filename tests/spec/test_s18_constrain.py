"""SPEC §18 Constrained decoding: "the grammar exports the constraint a decoding engine
takes … Property: whatever the constraint accepts, ``parse()`` reads back as the calls it
spells; schema-breaking calls and unknown tools are rejected."

Checked by a real consumer, llguidance's matcher over a byte-level tokenizer
(``engines.py``), for every default dialect, antml, and both grammar formats (GBNF through
llguidance's own converter): calls drawn from the tools' schemas, written by
``prompt.format_calls`` after free text, are accepted and read back; random walks through
the matcher's masks end in replies whose calls ``parse()`` reads and the schemas accept;
schema-breaking calls, tools not offered, blocks cut short, text alone under
``"required"`` and free text that would hide or add a block are rejected.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from engines import EOS, ByteMatcher, accepts, complete
from helpers import canon_calls, canon_value
from hypothesis import assume, given
from hypothesis import strategies as st
from schema_values import SCHEMAS, TOOLS, arguments, breaking
from strategies import INLINE_CODE, LOOKALIKES, NAMES, PROSE_SNIPPETS, soak_settings
from strategies import PROSE as PROSE_PIECES
from test_s16_prompt import HOSTILE

from callsieve import DEFAULT_DIALECTS, ConfigurationError, parse
from callsieve._prompt.write import PRODUCT_STATES
from callsieve.constrain import gbnf, lark_grammar
from callsieve.prompt import format_calls

#: The default dialects, and antml: every markup dialect that exports (antml is read by
#: the defaults too, through dsml_v32's opener).
DIALECTS = (*DEFAULT_DIALECTS, "antml")
FORMATS = ("lark", "gbnf")
#: The dialects that write a string plain where it reads back (``STRING_BODY: "plain"``).
PLAIN_DIALECTS = ("dsml_v4", "dsml_v32", "dsml_v41")
NATIVE = "deepseek_native"
DEL = "\x7f"


def export(fmt: str, dialect: str, choice: Any = "auto", **options: Any) -> str:
    make = lark_grammar if fmt == "lark" else gbnf
    return make(TOOLS, dialect, choice, **options)


# ------------------------------------------------------------------------- strategies
#: The pieces strings are made of: ``test_s16_prompt``'s hostile ones, DEL, and tags of the
#: dialects and families (each property meets its own and the others').
PIECES = [
    *HOSTILE,
    DEL,
    "a < b",
    '<invoke name="x">',
    "</invoke>",
    '<parameter name="city">',
    "</tool_call>",
    "<parameter=x>",
    "</function>",
    "</arg_value>",
    "<arg_value>",
    "<![CDATA[x]]>",
]
TEXT = st.lists(
    st.one_of(
        st.sampled_from(PIECES), st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
    ),
    max_size=5,
).map("".join)


def _scrub(bad: str, no_fence: bool) -> Any:
    def clean(s: str) -> str:
        s = "".join(c for c in s if c not in bad)
        while no_fence and "```" in s:
            s = s.replace("```", "``")
        return s

    return clean


def strings(dialect: str, fmt: str) -> st.SearchStrategy[str]:
    """Any string: tag leads, ``]]>``, quotes, line breaks, backticks (runs of three in a
    native fence too), DEL and the dialect's own tags included (issue 35: whatever
    ``format_calls`` writes for schema-valid arguments, the constraint accepts;
    docs/constrained-decoding.md)."""
    return TEXT


def calls_for(dialect: str, fmt: str = "gbnf") -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    return st.sampled_from(sorted(SCHEMAS)).flatmap(
        lambda name: arguments(SCHEMAS[name], strings(dialect, fmt), strings(dialect, fmt)).map(
            lambda args: (name, args)
        )
    )


#: Free text the constraint allows: prose, tag leads the parser drops at once, closed code.
PROSE = st.lists(
    st.sampled_from(
        [
            "Let me check. ",
            "a < b ",
            "x <= 3 ",
            "<> ",
            "1 <'x' ",
            "héllo 你好 💥 ",
            "\n",
            "\n\n",
            "use `code` here ",
            "quote `<tool_calls>` as code ",
            "~5 min ",
            "</b> ",
            "| ｜ ▁ ",
            "\n```py\nprint('<tool_calls><invoke name=\"f\">')\n```\n",
            "\n```\n  <｜tool▁calls▁begin｜>\n```\n",
            "&amp; ",
            "]]> ",
            '{"a": 1} ',
            "“q” ",
            "\t",
        ]
    ),
    max_size=5,
).map("".join)


def _want(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(n, canon_value(i)) for n, i in calls]


def validate(args: Any, name: str) -> None:
    """jsonschema's verdict, formats checked, no undeclared properties (as exported)."""
    schema = {**SCHEMAS[name], "additionalProperties": False}
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(
        args
    )


# ------------------------------------------------------------------ every export validates
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("choice", ["auto", "required", "none", {"name": "search"}])
def test_every_export_validates_in_llguidance(fmt: str, dialect: str, choice: Any) -> None:
    m = ByteMatcher(export(fmt, dialect, choice), fmt)
    assert not m.error()


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_free_names_and_single_calls_validate(fmt: str, dialect: str) -> None:
    for options in ({"free_names": True}, {"parallel_tool_calls": False}):
        assert not ByteMatcher(export(fmt, dialect, "required", **options), fmt).error()


# ------------------------------------------------------- written calls: accepted, read back
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(40)
@given(data=st.data())
def test_written_calls_are_accepted_and_read_back(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=3))
    prose = data.draw(PROSE)
    # (written under the tools: a null string-typed parameter, or a constrained string
    # holding "]]>" in CDATA, is the JSON object body)
    text = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    assert accepts(export(fmt, dialect), text, fmt), text
    assert accepts(export(fmt, dialect, "required"), text, fmt), text
    result = parse(text)
    assert canon_calls(result.calls) == _want(calls), text
    assert result.text == prose
    typed = parse(text, dialects=(dialect,), tools=TOOLS)
    assert canon_calls(typed.calls) == _want(calls), text
    for call in typed.calls:
        validate(call.input, call.name)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_native_string_spells_a_backtick_run_escaped_never_raw(fmt: str) -> None:
    """The fence stays whole: three raw backticks in the JSON would close it, so the writer
    spells them ``\\u0060``, and both formats take that and refuse the raw run (under Lark
    our JSON rules stand for ``%json`` here: llguidance's spells a backtick raw only)."""
    grammar = export(fmt, NATIVE)
    for value in ("a```b", "```", "``x``", "x`"):
        text = format_calls([("get_weather", {"city": value})], dialect=NATIVE)
        assert accepts(grammar, text, fmt), text
        assert parse(text).calls[0].input == {"city": value}
    raw = format_calls([("get_weather", {"city": "HERE"})], dialect=NATIVE)
    assert not accepts(grammar, raw.replace("HERE", "a```b"), fmt)
    assert accepts(grammar, raw.replace("HERE", "a``b"), fmt)


#: A tool whose strings are constrained by a length and by a pattern.
BOUNDED = [
    {
        "name": "t",
        "parameters": {
            "type": "object",
            "properties": {
                "s": {"type": "string", "maxLength": 4},
                "p": {"type": "string", "pattern": "^[a-z]*>[]>a-z]*$"},
            },
        },
    }
]


def _words(alphabet: str, longest: int) -> list[str]:
    words = [""]
    for _ in range(longest):
        words += [w + c for w in words if len(w) == len(words[-1]) for c in alphabet]
    return list(dict.fromkeys(words))


@pytest.mark.parametrize("dialect", ["dsml", "xml"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_constrained_cdata_string_takes_exactly_what_both_languages_allow(
    fmt: str, dialect: str
) -> None:
    """One CDATA section holding a constrained string: the values of the schema's language
    that the section can hold (no ``]]>``), no fewer — ``>`` included, which GBNF once kept
    out — and no more (GBNF: the product of both automata, ``constrain._product``)."""
    grammar = (lark_grammar if fmt == "lark" else gbnf)(BOUNDED, dialect)
    spot = format_calls([("t", {"s": "HERE"})], dialect=dialect, tools=BOUNDED)
    pattern = format_calls([("t", {"p": "HERE"})], dialect=dialect, tools=BOUNDED)
    for value in _words("a]>", 5):
        inside = "]]>" not in value
        got = accepts(grammar, spot.replace("HERE", value), fmt)
        assert got == (inside and len(value) <= 4), value
        got = accepts(grammar, pattern.replace("HERE", value), fmt)
        want = inside and re.fullmatch("[a-z]*>[]>a-z]*", value) is not None
        assert got == want, value
    # the writer's value, ``]]>`` in it: the JSON object body (one section cannot hold it)
    text = format_calls([("t", {"s": "a]]>"})], dialect=dialect, tools=BOUNDED)
    assert accepts(grammar, text, fmt), text
    assert parse(text, dialects=(dialect,), tools=BOUNDED).calls[0].input == {"s": "a]]>"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_constrained_native_string_takes_backticks_as_the_writer_spells_them(
    fmt: str,
) -> None:
    """In the fence a constrained string holds raw backticks (a run of three closes it) and
    ``\\u0060``: every value up to its length, as ``format_calls`` writes it."""
    grammar = (lark_grammar if fmt == "lark" else gbnf)(BOUNDED, NATIVE)
    for value in _words("a`", 5):
        text = format_calls([("t", {"s": value})], dialect=NATIVE)
        assert accepts(grammar, text, fmt) == (len(value) <= 4), text
    raw = format_calls([("t", {"s": "HERE"})], dialect=NATIVE)
    assert not accepts(grammar, raw.replace("HERE", "```"), fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_string_past_the_product_bound_is_one_json_object_body(fmt: str) -> None:
    """A CDATA string whose length's product with the section is past ``PRODUCT_STATES``
    is written in the JSON object body, under the tools, which the constraint offers: any
    value up to its length, ``>`` and ``]]>`` included. Just within the bound it stays a
    parameter line (docs/constrained-decoding.md, the writer and the constraint agree)."""
    states = len("]]>")
    over = PRODUCT_STATES // states  # (``over + 1`` counts times 3 states: past the bound)
    for hi, body in ((over, True), (over - 1, False), (2000, True)):
        tools = [
            {"name": "t", "parameters": {"properties": {"s": {"type": "string", "maxLength": hi}}}}
        ]
        grammar = (lark_grammar if fmt == "lark" else gbnf)(tools, "dsml")
        for value in ("<a>", "a]]>b", "x" * hi):
            text = format_calls([("t", {"s": value})], dialect="dsml", tools=tools)
            assert text.count('{"s": ') == (body or "]]>" in value), (hi, text)
            assert accepts(grammar, text, fmt), (hi, text)
            assert parse(text, dialects=("dsml",), tools=tools).calls[0].input == {"s": value}
        too_long = format_calls([("t", {"s": "x" * (hi + 1)})], dialect="dsml", tools=tools)
        assert not accepts(grammar, too_long, fmt)


#: Lengths past the product's bound (``PRODUCT_STATES``, and ``MAX_STATES``: 2,000 in a
#: section), and one just within it, beside a plain string, a length with a string branch
#: and one inside an array: where a GBNF once kept ``>`` out of a long string.
LONG = [
    {
        "name": "post",
        "parameters": {
            "type": "object",
            "properties": {
                "body": {"type": "string", "maxLength": 2000},
                "title": {"type": "string", "minLength": 1, "maxLength": 120},
                "tag": {"type": "string", "maxLength": 80},
                "alt": {"type": ["string", "integer"], "maxLength": 300},
                "raw": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 200}},
            },
            "required": ["body"],
        },
    }
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(15)
@given(data=st.data())
def test_long_strings_are_written_as_the_constraint_takes_them(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    """Strings under length bounds past the product's, ``>``, ``]]>``, backticks and tags
    in them: what ``format_calls`` writes under the tools is accepted, and reads back."""
    schema = LONG[0]["parameters"]
    args = data.draw(arguments(schema, strings(dialect, fmt), strings(dialect, fmt)))
    text = format_calls([("post", args)], dialect=dialect, tools=LONG)
    make = lark_grammar if fmt == "lark" else gbnf
    assert accepts(make(LONG, dialect, "required"), text, fmt), text
    typed = parse(text, dialects=(dialect,), tools=LONG)
    assert canon_calls(typed.calls) == _want([("post", args)]), text


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_native_string_past_the_product_bound_spells_every_backtick_escaped(
    fmt: str,
) -> None:
    """In the fence a tool with a string past the product's bound takes backticks only as
    ``\\u0060``, and under the tools its calls are written so: any value up to its length,
    with no product. Just within the bound a lone backtick stays raw."""
    for hi, escaped in ((PRODUCT_STATES // 3, True), (PRODUCT_STATES // 3 - 1, False)):
        tools = [
            {"name": "t", "parameters": {"properties": {"s": {"type": "string", "maxLength": hi}}}}
        ]
        grammar = (lark_grammar if fmt == "lark" else gbnf)(tools, NATIVE)
        for value in ("a`b", "```", "``" * (hi // 2), "x" * hi):
            text = format_calls([("t", {"s": value})], dialect=NATIVE, tools=tools)
            assert ("`" not in text.split("json\n", 1)[1].split("\n```")[0]) or not escaped
            assert accepts(grammar, text, fmt), (hi, text)
            assert parse(text, dialects=(NATIVE,), tools=tools).calls[0].input == {"s": value}
        raw = format_calls([("t", {"s": "a`b"})], dialect=NATIVE)
        assert accepts(grammar, raw, fmt) != escaped, raw
        too_long = format_calls([("t", {"s": "x" * (hi + 1)})], dialect=NATIVE, tools=tools)
        assert not accepts(grammar, too_long, fmt)


def test_a_raw_value_past_the_product_bound_is_refused_not_narrowed() -> None:
    """Where no other spelling can stand in (a raw family's value), a product past
    ``MAX_STATES`` is a ``ConfigurationError`` naming the tool and the path: never a GBNF
    that refuses values the writer writes. Lark intersects at any length."""
    long = {"name": "t", "parameters": {"properties": {"s": {"type": "string", "maxLength": 2000}}}}
    with pytest.raises(ConfigurationError, match=r"tools\[0\]\.parameters\.properties\.s.*4096"):
        gbnf([long], "qwen3_coder")
    text = format_calls([("t", {"s": "<a> ``"})], dialect="qwen3_coder", tools=[long])
    assert accepts(lark_grammar([long], "qwen3_coder"), text, "lark"), text


def test_a_native_schema_our_json_rules_do_not_take_keeps_json_under_lark() -> None:
    """A schema outside GBNF's subset (an ``email`` format) keeps llguidance's ``%json``: it
    validates, and a written call is accepted, its strings' backtick runs aside."""
    mail = {"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}
    grammar = lark_grammar([{"name": "mail", "parameters": mail}], NATIVE)
    assert "%json" in grammar and not ByteMatcher(grammar).error()
    text = format_calls([("mail", {"to": "a`b@c.io"})], dialect=NATIVE)
    assert accepts(grammar, text), text


#: A tool with keywords outside GBNF's subset beside plain strings: a bounded float, a
#: ``multipleOf``, an ``email``; an ``anyOf`` with one such branch, a recursive ``$ref``.
WIDE = [
    {
        "name": "t",
        "parameters": {
            "type": "object",
            "properties": {
                "x": {"type": "number", "minimum": 0.5},
                "s": {"type": "string"},
                "m": {"type": "integer", "multipleOf": 3},
                "e": {"type": "string", "format": "email"},
                "u": {"anyOf": [{"type": "string"}, {"type": "number", "maximum": 9.5}]},
                "n": {"$ref": "#/$defs/node"},
            },
            "required": ["x", "s"],
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
                    },
                    "required": ["label"],
                }
            },
        },
    }
]


@pytest.mark.parametrize(
    "args",
    [
        {"x": 1.5, "s": "a```b"},
        {"x": 0.5, "s": "```", "m": 6, "u": "``x```"},
        {"x": 2, "s": "x`", "e": "a@b.io", "u": 9.5},
        {"x": 3, "s": "", "n": {"label": "```", "next": {"label": "a``", "next": None}}},
    ],
)
def test_a_native_subschema_our_rules_refuse_is_json_for_that_value_alone(
    args: dict[str, Any],
) -> None:
    """Under Lark only the subschema outside GBNF's subset is ``%json``: the tool's other
    strings take a backtick run as the writer spells it (``\\u0060``), and read back."""
    grammar = lark_grammar(WIDE, NATIVE)
    assert "%json" in grammar and not ByteMatcher(grammar).error()
    text = format_calls([("t", args)], dialect=NATIVE, tools=WIDE)
    assert accepts(grammar, text), text
    assert parse(text, dialects=(NATIVE,), tools=WIDE).calls[0].input == args
    low = format_calls([("t", {**args, "x": 0.25})], dialect=NATIVE, tools=WIDE)
    assert not accepts(grammar, low), low
    raw = format_calls([("t", {"x": 1, "s": "HERE"})], dialect=NATIVE)
    assert not accepts(grammar, raw.replace("HERE", "a```b")), raw


# ---------------------------------------------------------------------------- rejected
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(30)
@given(data=st.data())
def test_schema_breaking_calls_are_rejected(fmt: str, dialect: str, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(n for n in SCHEMAS if SCHEMAS[n]["properties"])))
    args = data.draw(breaking(SCHEMAS[name]))
    with pytest.raises(jsonschema.ValidationError):
        validate(args, name)
    text = "Sure.\n" + format_calls([(name, args)], dialect=dialect)
    assert not accepts(export(fmt, dialect), text, fmt), text


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_tools_and_cut_blocks_are_rejected(fmt: str, dialect: str) -> None:
    grammar = export(fmt, dialect)
    assert not accepts(grammar, format_calls([("delete_all", {})], dialect=dialect), fmt)
    assert not accepts(grammar, format_calls([("get_weathe", {"city": "x"})], dialect=dialect), fmt)
    prose = "Checking. "
    text = prose + format_calls(
        [("get_weather", {"city": "Hangzhou", "days": 3}), ("now", {})], dialect=dialect
    )
    m = ByteMatcher(grammar, fmt)
    data = text.encode("utf-8")
    for k, byte in enumerate(data):
        if k > len(prose.encode("utf-8")):
            assert not m.accepting(), data[:k].decode("utf-8", "replace")
        assert m.feed(bytes([byte])), m.error()
    assert m.accepting()


#: Names no offered tool has: near misses of the offered names, and other names.
UNKNOWN = st.one_of(
    st.sampled_from(sorted(SCHEMAS)).flatmap(
        lambda n: st.sampled_from([n[:-1], n + "s", n.upper(), "x" + n, n[1:]])
    ),
    NAMES,
).filter(lambda n: n not in SCHEMAS)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(25)
@given(data=st.data())
def test_unknown_tools_cut_blocks_and_text_alone_under_required_are_rejected(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    prose = data.draw(PROSE)
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=3))
    auto = export(fmt, dialect)
    # a tool not offered, at any place in the block, with an offered tool's arguments
    k = data.draw(st.integers(0, len(calls) - 1))
    swapped = [*calls[:k], (data.draw(UNKNOWN), calls[k][1]), *calls[k + 1 :]]
    assert not accepts(auto, prose + format_calls(swapped, dialect=dialect, tools=TOOLS), fmt), (
        swapped
    )
    # the block cut anywhere after its first character
    text = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    cut = data.draw(st.integers(len(prose) + 1, len(text) - 1))
    assert not accepts(auto, text[:cut], fmt), text[:cut]
    assert not accepts(export(fmt, dialect, "required"), text[:cut], fmt), text[:cut]
    # the text alone: a whole reply under "auto", never under "required" or a named tool
    assert accepts(auto, prose, fmt), prose
    assert not accepts(export(fmt, dialect, "required"), prose, fmt), prose
    assert not accepts(export(fmt, dialect, {"name": calls[0][0]}), prose, fmt), prose


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_tool_choice_is_enforced(fmt: str, dialect: str) -> None:
    weather = format_calls([("get_weather", {"city": "Paris"})], dialect=dialect)
    two = format_calls([("get_weather", {"city": "Paris"}), ("now", {})], dialect=dialect)
    assert accepts(export(fmt, dialect), "Just text.", fmt)
    assert not accepts(export(fmt, dialect, "required"), "Just text.", fmt)
    assert not accepts(export(fmt, dialect, "none"), "Hi " + weather, fmt)
    assert accepts(export(fmt, dialect, "none"), "Hi, no tools today.", fmt)
    named = {"type": "function", "function": {"name": "now"}}
    assert not accepts(export(fmt, dialect, named), weather, fmt)
    assert accepts(export(fmt, dialect, named), format_calls([("now", {})], dialect=dialect), fmt)
    assert not accepts(export(fmt, dialect, parallel_tool_calls=False), two, fmt)
    assert accepts(export(fmt, dialect), two, fmt)


#: Free text the parser would not release as text before a block: an opener (any dialect's,
#: or an alias spelling), a call whose wrapper the repair inserts, reasoning, open code.
HIDING = [
    "<tool_calls> ",
    "<|DSML|tool_calls>",
    "<DSML|tool_calls>",
    "<｜DSML｜ calls>",
    '<invoke name="f">',
    "<｜tool▁call▁begin｜>",
    "<think>",
    "＜tool_calls＞",
    "```\ncode\n",
    "~~~\ncode\n",
    "`open span ",
    "``two`` ",
    "<\u200btool_calls>",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("hiding", HIDING)
def test_free_text_cannot_hide_or_add_a_block(fmt: str, dialect: str, hiding: str) -> None:
    text = "Well, " + hiding + format_calls([("now", {})], dialect=dialect)
    assert not accepts(export(fmt, dialect), text, fmt), text


#: Hostile prose: the pieces the invariant properties use (look-alike tags, code, leads).
HOSTILE_PROSE = st.lists(
    st.one_of(st.sampled_from(PROSE_SNIPPETS), LOOKALIKES, INLINE_CODE, PROSE_PIECES), max_size=6
).map("".join)


@pytest.mark.parametrize("dialect", DIALECTS)
@soak_settings(200)
@given(prose=HOSTILE_PROSE)
def test_free_text_the_constraint_accepts_is_released_as_text(dialect: str, prose: str) -> None:
    """Whatever free text the constraint allows, the block after it is read as its call and
    the text is released whole (the lark and gbnf exports share this language)."""
    block = format_calls([("now", {})], dialect=dialect)
    if accepts(export("lark", dialect, "none"), prose):
        result = parse(prose + block)
        assert [c.name for c in result.calls] == ["now"], prose
        assert result.text == prose and not result.reasoning, prose
        assert accepts(export("gbnf", dialect, "none"), prose, "gbnf"), prose


# ------------------------------------------------------------------- whatever it accepts
def walk(grammar: str, fmt: str, template: bytes, data: st.DataObject) -> bytes:
    """A reply the matcher allows: it follows ``template`` (a written reply) byte by byte
    until the draw turns off at some point, then takes a few bytes the draw picks among
    the allowed ones, then the shortest ending (``engines.complete``)."""
    m = ByteMatcher(grammar, fmt)
    out = bytearray()
    turn = data.draw(st.integers(0, len(template)))
    out += template[:turn]
    assert m.feed(bytes(out)), m.error()
    for _ in range(data.draw(st.integers(0, 24))):
        allowed = m.allowed()
        pick = data.draw(st.sampled_from(allowed))
        if pick == EOS:
            return bytes(out)
        assert m.feed(bytes([pick])), m.error()
        out.append(pick)
    ending = rejoin(m, template[turn:]) or complete(m)
    assume(ending is not None)
    assert ending is not None and m.feed(ending) and m.accepting(), m.error()
    return bytes(out + ending)


def rejoin(m: ByteMatcher, rest: bytes) -> bytes | None:
    """The shortest tail of the template that ``m`` accepts to the end, if any."""
    for k in range(len(rest) + 1):
        trial = m.copy()
        if trial.feed(rest[k:]) and trial.accepting():
            return rest[k:]
    return None


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(30)
@given(data=st.data())
def test_whatever_the_constraint_accepts_parses_as_calls_it_allows(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    choice = data.draw(st.sampled_from(["auto", "required"]))
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=2))
    template = (data.draw(PROSE) + format_calls(calls, dialect=dialect, tools=TOOLS)).encode(
        "utf-8"
    )
    text = walk(export(fmt, dialect, choice), fmt, template, data).decode("utf-8")
    result = parse(text)
    assert len(result.blocks) == (1 if result.calls else 0), text
    assert [b.status for b in result.blocks] == ["complete"] * len(result.blocks), text
    if choice == "required":
        assert result.calls, text
    for call in result.calls:
        validate(call.input, call.name)
    typed = parse(text, dialects=(dialect,), tools=TOOLS)
    assert canon_calls(typed.calls) == canon_calls(result.calls), text
    start = result.blocks[0].span[0] if result.blocks else len(text)
    assert result.text == text[:start], text


def test_an_export_is_cached_per_tool_set() -> None:
    first = lark_grammar(TOOLS, "dsml")
    assert lark_grammar(json.loads(json.dumps(TOOLS)), "dsml") is first
    assert lark_grammar(TOOLS[:2], "dsml") != first

"""SPEC §18 Constrained decoding, for the families written from a call template (issue 25's:
``ARGS`` ``"envelope"``, ``"json"`` or ``"raw"`` in their spelling files): the same
properties ``test_s18_constrain`` checks for the default dialects — every export validates
in llguidance (Lark, and GBNF through its converter); calls drawn from the tools' schemas,
written by ``prompt.format_calls`` after free text, are accepted and ``parse()`` with the
family (and ``tools=``) gives them back; schema-breaking calls, tools not offered, blocks cut
short and text alone under ``"required"`` are rejected; a raw value cannot end its block;
random replies the matcher allows parse as complete blocks of schema-valid calls.
The families no shape fits keep the ``ConfigurationError``.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from engines import ByteMatcher, accepts
from helpers import canon_calls
from hypothesis import assume, given
from hypothesis import strategies as st
from schema_values import SCHEMAS, TOOLS, arguments, breaking
from strategies import soak_settings
from test_s18_constrain import PROSE, TEXT, UNKNOWN, _want, validate, walk

from callsieve import ConfigurationError, FormatError, parse
from callsieve._base.values import decode_raw
from callsieve._grammar.compiled import load_grammar
from callsieve._grammar.spelling import spelling
from callsieve.constrain import gbnf, lark_grammar, shape_name, structural_tag
from callsieve.constrain._text import safe_followers
from callsieve.prompt import format_calls

#: JSON arguments: the envelope, or one object after a head.
JSON_FAMILIES = (
    "hermes",
    "llama3_json",
    "json",
    "mistral",
    "gpt_oss",
    "tool_call_xml",
    "tool_use",
    "function_call",
    "text_kv",
    "functionary",
    "hunyuan",
    "nemotron",
    "longcat",
    "internlm2",
    "phi4_mini",
    "firefunction",
    "xlam",
    "llamacpp_generic",
    "kimi_k3",
    "gigachat3",
    "apertus",
    "ernie45",
    "solar_open2",
    "inkling",
)
#: Raw parameters: a string as it is, anything else as JSON.
RAW_FAMILIES = ("qwen3_coder", "glm45", "glm53_flash", "minimax_m2", "seed_oss", "hy_v3", "step3")
#: Raw families whose writer puts a value with a line break at either end on lines of its own.
LINES = ("seed_oss",)
FAMILIES = JSON_FAMILIES + RAW_FAMILIES
#: No exported shape: a call index in the head (kimi_k2,
#: command_r7b), Python literals (pythonic, lfm2,
#: olmo3, llama3_builtin), a parameter's closing tag named by its key (minimax_m3), a
#: separator between raw arguments (functiongemma), Gemma's value syntax (gemma4), SPEC §5
#: markup values without an invoke (minicpm5), openers anchored at the reply's start
#: (functionary_v32).
NOT_EXPORTED = (
    "kimi_k2",
    "command_r7b",
    "pythonic",
    "lfm2",
    "minimax_m3",
    "functiongemma",
    "gemma4",
    "olmo3",
    "llama3_builtin",
    "minicpm5",
    "functionary_v32",
)
FORMATS = ("lark", "gbnf")


#: Free text: ``test_s18_constrain``'s, less a JSON object (``{"``: one may begin a json or
#: llama3_json block, so the constraint keeps it out of their free text).
FREE = PROSE.filter(lambda p: '{"' not in p)


def free(dialect: str) -> st.SearchStrategy[str]:
    """``FREE``, less prose the dialect's free text keeps out: a tag lead before a character
    at which one of its entries goes on (ernie45's and hunyuan's frames begin with `</`)."""
    kills = dict(safe_followers(load_grammar((dialect,))))

    def allowed(p: str) -> bool:
        return all(p[i + 1 : i + 2] in ("", *kills[c]) for i, c in enumerate(p) if c in kills)

    return FREE.filter(allowed)


def export(fmt: str, dialect: str, choice: Any = "auto", **options: Any) -> str:
    make = lark_grammar if fmt == "lark" else gbnf
    return make(TOOLS, dialect, choice, **options)


def carried(dialect: str, value: str) -> bool:
    """Does the family carry ``value`` as a raw string (``get_weather``'s ``city``, typed
    string)? Asked of the parser, from the family's spelling: in its tags, or on lines of
    their own where the spelling has those (seed_oss). A string holding the closing tag does
    not read back: that is the family's limit, the writer refuses such a string, and the
    property draws around it."""
    sp = spelling(dialect)
    for open_, close in (("ARG_OPEN", "ARG_CLOSE"), ("ARG_OPEN_LINES", "ARG_CLOSE_LINES")):
        if open_ not in sp:
            continue
        call = sp.fill("CALL_HEAD", "get_weather") + sp.fill(open_, "city") + value
        text = sp.get("BLOCK_OPEN") + call + sp.get(close) + sp.get("CALL_TAIL")
        got = parse(text + sp.get("BLOCK_CLOSE"), dialects=(dialect,), tools=TOOLS).calls
        if len(got) == 1 and got[0].input == {"city": value}:
            return True
    return False


def strings(dialect: str, nested: bool, fmt: str) -> st.SearchStrategy[str]:
    """Any string, tag leads, ``]]>``, quotes, line breaks, DEL and the family's own tags
    included (issue 35), less what the family cannot carry: a raw value its parser does not
    read back (``carried``), and, being a string, none that reads as JSON (the writer would
    write it as a JSON string). A string inside a raw family's JSON value may hold tag
    leads: the writer spells them ``\\u003c``, and under Lark too the constraint's JSON is
    our rules, which take that (llguidance's ``%json`` spells ``<`` raw only)."""
    if dialect in RAW_FAMILIES and not nested:
        return TEXT.filter(lambda s: decode_raw(s) == s and carried(dialect, s))
    return TEXT


def calls_for(dialect: str, fmt: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    # (a raw family cannot write null in a parameter typed ["string", "null"]: its text
    # reads as a string whatever it is, and the writer refuses it, naming the parameter)
    nulls = dialect not in RAW_FAMILIES
    return st.sampled_from(sorted(SCHEMAS)).flatmap(
        lambda name: arguments(
            SCHEMAS[name], strings(dialect, False, fmt), strings(dialect, True, fmt), nulls
        ).map(lambda args: (name, args))
    )


def test_the_template_families_export_as_templates() -> None:
    for dialect in FAMILIES:
        assert shape_name(dialect) == "template", dialect


@pytest.mark.parametrize("dialect", NOT_EXPORTED)
@pytest.mark.parametrize("fmt", FORMATS)
def test_families_no_shape_fits_are_a_configuration_error(fmt: str, dialect: str) -> None:
    with pytest.raises(ConfigurationError, match=dialect):
        export(fmt, dialect)


@pytest.mark.parametrize("dialect", FAMILIES)
def test_structural_tags_are_not_exported_for_templates(dialect: str) -> None:
    with pytest.raises(ConfigurationError, match="structural"):
        structural_tag(TOOLS, dialect)


@pytest.mark.parametrize("dialect", FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("choice", ["auto", "required", "none", {"name": "search"}])
def test_every_export_validates_in_llguidance(fmt: str, dialect: str, choice: Any) -> None:
    assert not ByteMatcher(export(fmt, dialect, choice), fmt).error()
    for options in ({"free_names": True}, {"parallel_tool_calls": False}):
        assert not ByteMatcher(export(fmt, dialect, "required", **options), fmt).error()


@pytest.mark.parametrize("dialect", FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(30)
@given(data=st.data())
def test_written_calls_are_accepted_and_read_back(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=3))
    prose = data.draw(free(dialect))
    # (written under the tools it is read back with: a raw family writes a string-typed
    # string as it is, so "null" stays a string, not the JSON text '"null"')
    text = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    assert accepts(export(fmt, dialect), text, fmt), text
    assert accepts(export(fmt, dialect, "required"), text, fmt), text
    typed = parse(text, dialects=(dialect,), tools=TOOLS)
    assert canon_calls(typed.calls) == _want(calls), text
    # (a family that writes each call in a block of its own parts them with white space,
    # which is text between the blocks)
    assert typed.text[: len(prose)] == prose and not typed.text[len(prose) :].strip(), text
    for call in typed.calls:
        validate(call.input, call.name)


@pytest.mark.parametrize("dialect", FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(20)
@given(data=st.data())
def test_schema_breaking_calls_unknown_tools_and_cut_blocks_are_rejected(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(n for n in SCHEMAS if SCHEMAS[n]["properties"])))
    args = data.draw(breaking(SCHEMAS[name]))
    with pytest.raises(jsonschema.ValidationError):
        validate(args, name)
    auto = export(fmt, dialect)
    text = "Sure.\n" + format_calls([(name, args)], dialect=dialect)
    if dialect in JSON_FAMILIES:
        assert not accepts(auto, text, fmt), text
    elif accepts(auto, text, fmt):  # a raw value's text has no type: 5 and "5" are one
        typed = parse(text, dialects=(dialect,), tools=TOOLS).calls
        assert typed, text
        for call in typed:
            validate(call.input, call.name)
    prose = data.draw(free(dialect))
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=3))
    # (a tool not offered has no schema: a raw-strings family has no spelling for a string
    # that reads as null without one, and the writer refuses it)
    assume(not any(str(v).lower() == "null" for _, args in calls for v in args.values()))
    k = data.draw(st.integers(0, len(calls) - 1))
    swapped = [*calls[:k], (data.draw(UNKNOWN), calls[k][1]), *calls[k + 1 :]]
    assert not accepts(auto, prose + format_calls(swapped, dialect=dialect, tools=TOOLS), fmt), (
        swapped
    )
    whole = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    cut = data.draw(st.integers(len(prose) + 1, len(whole) - 1))
    if not parse(whole[:cut], dialects=(dialect,), tools=TOOLS).calls:
        # (a block that may end where its balanced run closes is whole at that point:
        # only a cut the parser reads no call from must be refused)
        assert not accepts(auto, whole[:cut], fmt), whole[:cut]
    assert accepts(auto, prose, fmt), prose
    assert not accepts(export(fmt, dialect, "required"), prose, fmt), prose
    assert not accepts(export(fmt, dialect, {"name": calls[0][0]}), prose, fmt), prose


#: A string parameter with a length bound, in a tool of its own.
SHORT = [{"name": "t", "parameters": {"properties": {"s": {"type": "string", "maxLength": 14}}}}]
#: Values near a raw family's tags: ``>``, line breaks, its own closing tags, other tags.
NEAR_TAGS = [
    "a>b",
    "x>" * 7,
    "x>" * 8,
    "a\nb",
    "a\n",
    "\nb",
    "<p>",
    "a<",
    "</parameter>",
    "a</parameter",
    "\n</parameter",
    "< /parameter >",
    "</arg_value>",
    "<parameter=s>",
    "]]>",
]


@pytest.mark.parametrize("dialect", RAW_FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_length_bound_raw_value_takes_exactly_what_reads_back(fmt: str, dialect: str) -> None:
    """A raw string with ``maxLength``: the intersection of the length and the raw language
    (Lark: ``&``; GBNF: the product automaton, ``constrain._product``). Every value the
    writer writes, ``>`` and line breaks included, is taken when it is short enough; one
    that would end the value early is the writer's ``FormatError`` and the constraint's
    refusal."""
    grammar = (lark_grammar if fmt == "lark" else gbnf)(SHORT, dialect)
    spot = format_calls([("t", {"s": "HERE"})], dialect=dialect, tools=SHORT)
    for value in NEAR_TAGS:
        if not carried(dialect, value):
            with pytest.raises(FormatError, match="'s'"):
                format_calls([("t", {"s": value})], dialect=dialect, tools=SHORT)
            assert not accepts(grammar, spot.replace("HERE", value), fmt), value
            continue
        text = format_calls([("t", {"s": value})], dialect=dialect, tools=SHORT)
        assert accepts(grammar, text, fmt) == (len(value) <= 14), text


#: A raw value under a length whose product with the value's automaton is past GBNF's bound.
LONG = [{"name": "t", "parameters": {"properties": {"s": {"type": "string", "maxLength": 1000}}}}]


@pytest.mark.parametrize("dialect", RAW_FAMILIES)
def test_a_raw_value_past_the_product_bound_is_refused_in_gbnf_and_taken_in_lark(
    dialect: str,
) -> None:
    """No JSON object body stands in for a raw value: past the product's bound GBNF is a
    ``ConfigurationError`` naming the parameter, not a language without ``>`` (or, in
    seed_oss, line breaks). Lark intersects at any length and takes what the writer writes."""
    with pytest.raises(ConfigurationError, match=r"properties\.s.*product states"):
        gbnf(LONG, dialect)
    text = format_calls([("t", {"s": "a > b\n<c>"})], dialect=dialect, tools=LONG)
    assert accepts(lark_grammar(LONG, dialect, "required"), text, "lark"), text


@pytest.mark.parametrize("dialect", RAW_FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_raw_value_cannot_end_its_block(fmt: str, dialect: str) -> None:
    """A raw value holds a tag lead wherever the parser reads it back (``a < b``, ``<b>``,
    another family's tags), and no tag that would end it early (the family's closing tags):
    the constraint takes exactly the values ``carried`` says."""
    grammar = export(fmt, dialect)
    spot = format_calls([("get_weather", {"city": "HERE"})], dialect=dialect)
    assert accepts(grammar, spot, fmt), spot
    values = ["a</parameter>b", "x</arg_value>", "</function></tool_call>", "a<b", "a＜b"]
    values += ["a < b", "<b>x</b>", "< /parameter>", "</Parameter>", "<", "a<", "〈x〉", "<<"]
    values += ["</steptml:parameter>", "</arg_value:opensource>", "<parameter=x>", "]]>"]
    for value in values:
        raw = spot.replace("HERE", value)
        assert accepts(grammar, raw, fmt) == carried(dialect, value), raw
    assert not all(carried(dialect, v) for v in values)


@pytest.mark.parametrize("dialect", FAMILIES)
@pytest.mark.parametrize("fmt", FORMATS)
@soak_settings(20)
@given(data=st.data())
def test_whatever_the_constraint_accepts_parses_as_calls_it_allows(
    fmt: str, dialect: str, data: st.DataObject
) -> None:
    choice = data.draw(st.sampled_from(["auto", "required"]))
    calls = data.draw(st.lists(calls_for(dialect, fmt), min_size=1, max_size=2))
    # (written under the tools, as above: a raw-strings family's string "null" has no
    # schemaless spelling)
    written = format_calls(calls, dialect=dialect, tools=TOOLS)
    template = (data.draw(free(dialect)) + written).encode("utf-8")
    text = walk(export(fmt, dialect, choice), fmt, template, data).decode("utf-8")
    typed = parse(text, dialects=(dialect,), tools=TOOLS)
    assert [b.status for b in typed.blocks] == ["complete"] * len(typed.blocks), text
    if choice == "required":
        assert typed.calls, text
    for call in typed.calls:
        validate(call.input, call.name)
    start = typed.blocks[0].span[0] if typed.blocks else len(text)
    assert typed.text[:start] == text[:start], text

"""SPEC §16 Prompt side: ``tool_instructions``, ``format_calls``, ``format_results`` for every
default dialect, and "``parse(format_calls(calls, d), dialects=(d,))`` gives back the same
names and inputs for any calls, whatever characters their values hold".

The round trip is a hypothesis property over values built from the characters that break
naive writers (``]]>``, ``</parameter>``, ``<｜DSML｜``, backticks, newlines, quotes, non-BMP
characters, empty strings, nesting); a smaller sample also goes through ``run_all_ways``
(``Sieve`` per character and at random splits). The shapes of results follow DeepSeek's
templates (docs/prompt.md cites them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways
from hypothesis import given
from hypothesis import strategies as st
from strategies import hostile_values, soak_settings

from callsieve import DEFAULT_DIALECTS, FormatError, GrammarError, ToolCall, parse
from callsieve.prompt import format_calls, format_results, tool_instructions

DIALECTS = DEFAULT_DIALECTS

HOSTILE = [
    "]]>",
    "]]",
    "]",
    "</parameter>",
    "</|DSML|parameter>",
    "</｜DSML｜parameter>",
    "<｜DSML｜",
    '<|DSML|invoke name="x">',
    "<![CDATA[",
    "<！[CDATA[",
    "```",
    "`",
    "``",
    "\n",
    "\r\n",
    '"',
    "'",
    "“",
    "&amp;",
    "&lt;",
    "<",
    ">",
    "＜",
    "〈",
    "𝄞",
    "😀",
    "",
    " ",
    "\t",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "```json\n",
    "\\",
    "\\u0060",
    "{",
    "}",
    "null",
    "true",
    "1",
    "<think>",
    "</tool_calls>",
    "<b>x</b><i>y</i>",
]
STRINGS, VALUES = hostile_values(HOSTILE, piece=6, pieces=5, integers=10**12, leaves=8)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-.:]{0,12}", fullmatch=True)
CALL = st.tuples(NAMES, st.dictionaries(NAMES, VALUES, max_size=4))
CALLS = st.lists(CALL, min_size=1, max_size=3)


def _want(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(n, canon_value(i)) for n, i in calls]


@pytest.mark.parametrize("dialect", DIALECTS)
@soak_settings(150)
@given(calls=CALLS)
def test_format_calls_round_trips(dialect: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    text = format_calls(calls, dialect=dialect)
    result = parse(text, dialects=(dialect,))
    assert canon_calls(result.calls) == _want(calls), text
    assert result.text.strip() == "", text
    assert {b.dialect for b in result.blocks} == {dialect}


ANY_KEYS = st.lists(
    st.tuples(NAMES, st.dictionaries(STRINGS, VALUES, max_size=3)), min_size=1, max_size=2
)


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "deepseek_native"])
@soak_settings(60)
@given(calls=ANY_KEYS)
def test_any_argument_names_round_trip(
    dialect: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    """A name ``name="…"`` cannot carry (quotes, line breaks, white space at its ends, empty)
    makes the call's body one JSON object, which any key fits in (SPEC §4)."""
    text = format_calls(calls, dialect=dialect)
    assert canon_calls(parse(text, dialects=(dialect,)).calls) == _want(calls), text


def test_a_call_with_an_unwritable_argument_name_gets_a_json_body() -> None:
    text = format_calls([("f", {'say "hi"': 1, "ok": "x"})], dialect="dsml_v41")
    assert text == (
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="f">\n{"say \\"hi\\"": 1, "ok": "x"}'
        "\n</｜DSML｜ invoke>\n</｜DSML｜ calls>"
    )
    deep: Any = 1
    for _ in range(70):
        deep = [deep]
    with pytest.raises(FormatError):
        format_calls([("f", {"a\nb": deep})], dialect="dsml")
    assert parse(format_calls([("f", {"ab": deep})], dialect="dsml")).calls[0].input == {"ab": deep}


@pytest.mark.parametrize("dialect", DIALECTS)
@soak_settings(8)
@given(calls=CALLS)
def test_format_calls_round_trips_under_every_chunking(
    dialect: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    text = "Let me check.\n\n" + format_calls(calls, dialect=dialect)
    result = run_all_ways(text, dialects=(dialect,))
    assert canon_calls(result.calls) == _want(calls)
    assert result.text == "Let me check.\n\n"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_default_dialects_read_what_each_dialect_writes(dialect: str) -> None:
    calls = [("get_weather", {"city": "Hangzhou", "days": 3, "tags": ["a", "]]>"]})]
    assert canon_calls(parse(format_calls(calls, dialect=dialect)).calls) == _want(calls)


OPENAI_MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "SF", "days": 2}'},
        },
        {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": ""}},
    ],
}
ANTHROPIC_MESSAGE = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me check."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "get_weather",
            "input": {"city": "SF", "days": 2},
        },
        {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}},
    ],
}
SAME_CALLS = [
    ("openai message", [OPENAI_MESSAGE]),
    ("openai tool_calls", OPENAI_MESSAGE["tool_calls"]),
    ("anthropic message", [ANTHROPIC_MESSAGE]),
    ("anthropic blocks", ANTHROPIC_MESSAGE["content"][1:]),
    ("ToolCall", [ToolCall("get_weather", {"city": "SF", "days": 2}), ToolCall("now", {})]),
    ("pairs", [("get_weather", {"city": "SF", "days": 2}), ("now", {})]),
    (
        "flat",
        [
            {"name": "get_weather", "arguments": {"city": "SF", "days": 2}},
            {"name": "now", "input": {}},
        ],
    ),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("label", "calls"), SAME_CALLS, ids=[r[0] for r in SAME_CALLS])
def test_every_call_shape_writes_the_same_block(dialect: str, label: str, calls: Any) -> None:
    text = format_calls(calls, dialect=dialect)
    assert text == format_calls(SAME_CALLS[0][1], dialect=dialect)
    got = parse(text, dialects=(dialect,)).calls
    assert canon_calls(got) == _want([("get_weather", {"city": "SF", "days": 2}), ("now", {})])


def test_dsml_v32_writes_values_as_its_template_does() -> None:
    """DeepSeek-V3.2's encoding_dsv32.py: plain values, ``string="true|false"``."""
    text = format_calls([("get_weather", {"city": "Hangzhou", "days": 3})], dialect="dsml_v32")
    assert text == (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Hangzhou</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )


def test_a_value_that_would_end_its_parameter_goes_in_split_cdata() -> None:
    value = "a]]>b</｜DSML｜parameter>c"
    text = format_calls([("f", {"p": value})], dialect="dsml_v4")
    assert "<![CDATA[a]]]]><![CDATA[>b</｜DSML｜parameter>c]]>" in text
    assert parse(text).calls[0].input == {"p": value}


def test_dsml_writes_strings_in_cdata() -> None:
    text = format_calls([("read_file", {"path": "README.MD"})], dialect="dsml")
    assert '<|DSML|parameter name="path" string="true"><![CDATA[README.MD]]>' in text


def test_no_calls_is_no_block() -> None:
    for d in DIALECTS:
        assert format_calls([], dialect=d) == ""
        assert format_results([], dialect=d) == ""


# ------------------------------------------------------------------------------ results
RESULTS = ["22°C, sunny", "line 1\nline 2"]
RESULT_SHAPES = [
    (
        "deepseek_native",
        (
            "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>22°C, sunny"
            "<｜tool▁output▁end｜>\n<｜tool▁output▁begin｜>line 1\nline 2<｜tool▁output▁end｜>"
            "<｜tool▁outputs▁end｜>"
        ),
    ),
    (
        "dsml_v32",
        (
            "<function_results>\n<result>22°C, sunny</result>\n"
            "<result>line 1\nline 2</result>\n</function_results>"
        ),
    ),
    (
        "dsml_v4",
        ("<tool_result>22°C, sunny</tool_result>\n<tool_result>line 1\nline 2</tool_result>"),
    ),
    (
        "dsml_v41",
        ("<tool_result>22°C, sunny</tool_result>\n<tool_result>line 1\nline 2</tool_result>"),
    ),
    (
        "xml",
        (
            "<tool_results>\n<result>22°C, sunny</result>\n<result>line 1\nline 2</result>\n"
            "</tool_results>"
        ),
    ),
    (
        "dsml",
        (
            "<|DSML|tool_results>\n<|DSML|result>22°C, sunny</|DSML|result>\n"
            "<|DSML|result>line 1\nline 2</|DSML|result>\n</|DSML|tool_results>"
        ),
    ),
]


@pytest.mark.parametrize(("dialect", "want"), RESULT_SHAPES, ids=[r[0] for r in RESULT_SHAPES])
def test_results_take_the_templates_shape(dialect: str, want: str) -> None:
    assert format_results(RESULTS, dialect=dialect) == want


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_result_shape_writes_the_same_text(dialect: str) -> None:
    openai = [
        {"role": "tool", "tool_call_id": "call_1", "content": RESULTS[0]},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": [{"type": "text", "text": "line 1\n"}, {"type": "text", "text": "line 2"}],
        },
    ]
    blocks = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULTS[0]},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [{"type": "text", "text": RESULTS[1]}],
        },
    ]
    anthropic = [{"role": "user", "content": blocks}]
    want = format_results(RESULTS, dialect=dialect)
    for shape in (openai, blocks, anthropic):
        assert format_results(shape, dialect=dialect) == want


def test_a_result_that_is_json_is_written_as_json() -> None:
    got = format_results([{"role": "tool", "content": {"temp": 22}}], dialect="dsml_v4")
    assert got == '<tool_result>{"temp": 22}</tool_result>'


# -------------------------------------------------------------------------- instructions
WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "object",
        "required": ["city", "unit"],
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
    },
}
OPENAI_TOOLS = [
    {"type": "function", "function": WEATHER},
    {"type": "function", "function": {"name": "browser::search", "parameters": {"type": "object"}}},
]
ANTHROPIC_TOOLS = [
    {
        "name": "get_weather",
        "description": WEATHER["description"],
        "input_schema": WEATHER["parameters"],
    },
    {"name": "browser::search", "input_schema": {"type": "object"}},
]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_instructions_teach_the_format_with_the_real_tools(dialect: str) -> None:
    text = tool_instructions(OPENAI_TOOLS, dialect=dialect)
    assert text == tool_instructions(ANTHROPIC_TOOLS, dialect=dialect)
    assert "browser::search" in text and WEATHER["description"] in text
    calls = parse(text, dialects=(dialect,)).calls
    example = [c for c in calls if c.name == "get_weather"]
    assert [c.input for c in example] == [{"city": "value", "unit": "celsius"}]
    assert (
        format_calls([("get_weather", {"city": "value", "unit": "celsius"})], dialect=dialect)
        in text
    )


BAD_INPUTS = [
    ("calls", lambda: format_calls([('bad"name', {})], dialect="dsml")),
    ("calls", lambda: format_calls([("f", {1: 1})], dialect="xml")),
    ("calls", lambda: format_calls([("has space", {})], dialect="deepseek_native")),
    ("calls", lambda: format_calls([("f", {"x": float("nan")})], dialect="dsml")),
    ("calls", lambda: format_calls([("f", {"x": object()})], dialect="deepseek_native")),
    ("calls", lambda: format_calls([{"function": {"name": "f", "arguments": "{oops"}}])),
    ("calls", lambda: format_calls([{"function": {"name": "f", "arguments": "[1]"}}])),
    ("calls", lambda: format_calls([{"role": "user", "content": "hi"}])),
    ("calls", lambda: format_calls("not a list")),
    ("results", lambda: format_results([42])),
    ("results", lambda: format_results([{"role": "user", "content": [{"type": "text"}]}])),
    ("tools", lambda: tool_instructions([{"description": "no name"}])),
    ("tools", lambda: tool_instructions([{"name": "f", "parameters": "not a schema"}])),
]


@pytest.mark.parametrize(("what", "call"), BAD_INPUTS)
def test_what_cannot_be_read_or_written_is_a_format_error(what: str, call: Any) -> None:
    with pytest.raises(FormatError) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert info.value.expected


def test_a_dialect_without_spellings_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "mine.lark").write_text(
        (Path(__file__).parents[2] / "grammar" / "xml.lark")
        .read_text(encoding="utf-8")
        .replace("xml", "mine"),
        encoding="utf-8",
    )
    from callsieve import ConfigurationError

    with pytest.raises(ConfigurationError):
        format_calls([("f", {})], dialect="mine", grammar_dirs=[str(tmp_path)])
    for bad in ("../xml", 3, "nope"):
        with pytest.raises(ConfigurationError) as info:
            format_results(["x"], dialect=bad)  # type: ignore[arg-type]
        assert "dsml" in info.value.expected


def test_a_spelling_the_parser_would_not_read_is_refused(tmp_path: Path) -> None:
    spelling = tmp_path / "spelling"
    spelling.mkdir()
    good = (Path(__file__).parents[2] / "grammar" / "spelling" / "xml.lark").read_text(
        encoding="utf-8"
    )
    (spelling / "xml.lark").write_text(good.replace('"</invoke>"', '"</invoke"'), encoding="utf-8")
    with pytest.raises(GrammarError, match="INVOKE_CLOSE"):
        format_calls([("f", {})], dialect="xml", grammar_dirs=[str(tmp_path)])
    (spelling / "xml.lark").write_text(
        good.replace('"<tool_calls>"', '"<tool_call>"'), encoding="utf-8"
    )
    with pytest.raises(GrammarError, match="CALLS_OPEN"):
        format_calls([("f", {})], dialect="xml", grammar_dirs=[str(tmp_path)])


DOC = (Path(__file__).parents[2] / "docs" / "prompt.md").read_text(encoding="utf-8")
DOC_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
DOC_REPLIES = {
    "dsml_v41": (
        'Let me check.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n'
        '<｜DSML｜ parameter name="city" string="true">Hangzhou</｜DSML｜ parameter>\n'
        '<｜DSML｜ parameter name="days" string="false">3</｜DSML｜ parameter>\n'
        "</｜DSML｜ invoke>\n</｜DSML｜ calls>"
    ),
    "deepseek_native": (
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
        '<｜tool▁sep｜>get_weather\n```json\n{"city": "Hangzhou", "days": 3}\n'
        "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
}


@pytest.mark.parametrize("dialect", list(DOC_REPLIES))
def test_the_documented_multi_turn_exchange_holds(dialect: str) -> None:
    """docs/prompt.md shows one exchange per V4.1 and V3 native: tools → instructions, a
    reply → calls, results → prompt text. What it shows is what the code writes."""
    system = tool_instructions(DOC_TOOLS, dialect=dialect)
    if dialect == "dsml_v41":
        assert system in DOC
    else:
        assert system.split("\n\n")[2] in DOC  # the block's shape
    result = run_all_ways(DOC_REPLIES[dialect])
    assert canon_calls(result.calls) == _want([("get_weather", {"city": "Hangzhou", "days": 3})])
    assert format_calls(result.calls, dialect=dialect) + "\n" in DOC
    results = [{"role": "tool", "tool_call_id": result.calls[0].id, "content": "Sunny, 22°C"}]
    assert format_results(results, dialect=dialect) + "\n" in DOC


JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=8),
        st.sampled_from(
            [
                "function",
                "tool_use",
                "tool_result",
                "tool",
                "assistant",
                "user",
                "text",
                "name",
                "arguments",
                "input",
                "content",
            ]
        ),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "name",
                    "function",
                    "arguments",
                    "input",
                    "content",
                    "tool_calls",
                    "parameters",
                    "input_schema",
                    "description",
                    "text",
                    "required",
                    "properties",
                ]
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


@soak_settings(300)
@given(value=JSONISH, dialect=st.sampled_from(DIALECTS))
def test_any_input_is_text_or_a_typed_error(value: Any, dialect: str) -> None:
    """Bad input never gives an unhandled exception: each function returns text or raises
    ``FormatError``."""
    for fn in (format_calls, format_results, tool_instructions):
        for arg in (value, [value]):
            try:
                out = fn(arg, dialect=dialect)
            except FormatError:
                continue
            assert isinstance(out, str)


def test_a_dialect_of_ones_own_gets_a_writer_from_its_spelling_file(tmp_path: Path) -> None:
    """grammar/README.md, "Spellings for writing": a ``spelling/<name>.lark`` beside it."""
    grammar = Path(__file__).parents[2] / "grammar"
    (tmp_path / "mine.lark").write_text(
        (grammar / "xml.lark").read_text(encoding="utf-8").replace("xml", "mine"), encoding="utf-8"
    )
    (tmp_path / "spelling").mkdir()
    (tmp_path / "spelling" / "mine.lark").write_text(
        (grammar / "spelling" / "xml.lark").read_text(encoding="utf-8"), encoding="utf-8"
    )
    calls = [("f", {"a": "]]> x", "b": [1, {"c": None}]})]
    text = format_calls(calls, dialect="mine", grammar_dirs=[str(tmp_path)])
    got = parse(text, dialects=("mine",), grammar_dirs=[str(tmp_path)])
    assert canon_calls(got.calls) == _want(calls)
    assert {b.dialect for b in got.blocks} == {"mine"}

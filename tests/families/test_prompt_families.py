"""SPEC §16 for the families (SPEC §19, §2): ``format_calls`` writes each family's own format,
and ``parse(format_calls(calls, d), dialects=(d,))`` gives back the same calls for any values,
the family's own closing tags, JSON-looking strings and markup included (a hypothesis
property); with the tools' schemas too, ``parse(format_calls(calls, d, tools=T),
dialects=(d,), tools=T)``, in every dialect the prompt side writes, T typing each value as it
is — a raw-text family writes a string-typed parameter's string as it is, as its template
does; the instructions' example parses as the call it shows; results take the shape the
family's template writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways
from hypothesis import given
from hypothesis import strategies as st
from strategies import hostile_values, soak_settings

import callsieve
from callsieve import DEFAULT_DIALECTS, FormatError, parse
from callsieve._grammar.compiled import load_grammar
from callsieve.prompt import format_calls, format_results, tool_instructions

FAMILIES = (
    "hermes",
    "qwen3_coder",
    "glm45",
    "glm53_flash",
    "kimi_k2",
    "minimax_m2",
    "seed_oss",
    "gpt_oss",
    "tool_call_xml",
    "function_call",
    "antml",
    "tool_use",
    "mistral",
    "llama3_json",
    "pythonic",
    "json",
    "text_kv",
    "functionary_v32",
    "functionary",
    "hunyuan",
    "nemotron",
    "longcat",
    "internlm2",
    "phi4_mini",
    "firefunction",
    "xlam",
    "llamacpp_generic",
    "lfm2",
    "minimax_m3",
    "kimi_k3",
    "hy_v3",
    "functiongemma",
    "gemma4",
    "command_r7b",
    "step3",
    "gigachat3",
    "apertus",
    "olmo3",
    "llama3_builtin",
    "ernie45",
    "solar_open2",
    "minicpm5",
    "inkling",
)
#: The families whose calls are Python calls (keyword arguments named by identifiers).
PYTHONIC = ("pythonic", "lfm2", "olmo3", "llama3_builtin")
P = "antml" + ":"
CLOSERS = [
    "</tool_call>",
    "<tool_call>",
    "</parameter>",
    "\n</parameter>",
    "</function>",
    "<function=x>",
    "<parameter=y>",
    "</arg_value>",
    "<arg_key>k</arg_key>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "</minimax:tool_call>",
    "]<]minimax[>[</x>",
    "<|close|>json<|sep|>",
    "</arg_value:opensource>",
    "<escape>",
    "<end_function_call>",
    "</invoke>",
    "</seed:tool_call>",
    "<|call|>",
    "<|end|>",
    "</parameters>",
    "</tool_name>",
    "</" + P + "parameter>",
    "</" + P + "invoke>",
    "</tool_use>",
    "</function_call>",
    "</tool_calls>",
    "]</tool_calls>",
    "</TOOLCALL>",
    "</longcat_tool_call>",
    "<|action_end|>",
    "<|message_sep|>",
    "<|function_call|>",
    "<|tools_suffix|>",
    "</function_calls>",
    "<|eom_id|>",
    "<|python_tag|>",
    "<|tool_call:end|>",
    "<|calls|>",
    "</param>",
    "<|end_message|>",
    "}]",
]
HOSTILE = [
    *CLOSERS,
    "\n",
    "  ",
    "42",
    "true",
    "null",
    '"q"',
    "[1]",
    "{",
    "}",
    "<",
    ">",
    "&amp;",
    "]]>",
    "😀",
    "é",
    "\\u003c",
    "",
    "`",
]
STRINGS, VALUES = hostile_values(HOSTILE, piece=5, pieces=4, integers=10**9, leaves=6)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-.]{0,12}", fullmatch=True)
CALLS = st.lists(
    st.tuples(NAMES, st.dictionaries(NAMES, VALUES, max_size=4)), min_size=1, max_size=3
)
#: Python calls name their arguments with identifiers (a tool's name may be dotted).
IDENTIFIERS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
#: Gemma's keys are bare names at every depth, as its template writes them (gemma4's writer
#: refuses others): its values' objects are keyed by names.
GEMMA_VALUES = st.recursive(
    st.one_of(
        STRINGS,
        st.integers(-(10**9), 10**9),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)
GEMMA_CALLS = st.lists(
    st.tuples(NAMES, st.dictionaries(NAMES, GEMMA_VALUES, max_size=4)), min_size=1, max_size=3
)
PYTHON_CALLS = st.lists(
    st.tuples(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,12}", fullmatch=True),
        st.dictionaries(IDENTIFIERS, VALUES, max_size=4),
    ),
    min_size=1,
    max_size=3,
)


def _want(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(n, canon_value(i)) for n, i in calls]


def _raw_strings(dialect: str) -> bool:
    """The family reads a raw value without a schema as its text (SPEC §19)."""
    return bool(load_grammar((dialect,)).dialect_map.value_readings[dialect].raw_strings)


def _read_as(
    dialect: str,
    calls: list[tuple[str, dict[str, Any]]],
    typed: dict[str, set[str]] | None = None,
) -> list[tuple[str, str]]:
    """``calls`` as a read gives them back: in a family whose raw values are strings, a value
    that is no string nor null, in a parameter the schema does not type (``typed``: the
    typed keys of each tool), comes back as the JSON text written for it (``_same_read``)."""
    if not _raw_strings(dialect):
        return _want(calls)
    keys = typed or {}
    return [
        (
            n,
            canon_value(
                {
                    k: v
                    if k in keys.get(n, ()) or v is None or isinstance(v, str)
                    else _json_text(v)
                    for k, v in args.items()
                }
            ),
        )
        for n, args in calls
    ]


#: Marks "the JSON text of this value" in ``_read_as``'s spelling.
JSON_TEXT = "\0json:"


def _json_text(value: Any) -> str:
    return JSON_TEXT + canon_value(value)


def _got(dialect: str, result: Any, want: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls read, a JSON text standing where ``want`` has a ``_json_text`` read as its
    value (the writer's JSON spelling is its own; the value is what matters)."""
    got = canon_calls(result.calls)
    if not _raw_strings(dialect) or len(got) != len(want):
        return got
    out = []
    for (name, text), (_, wanted) in zip(got, want, strict=True):
        value, expected = json.loads(text), json.loads(wanted)
        if isinstance(value, dict) and isinstance(expected, dict):
            for k, v in value.items():
                marked = expected.get(k)
                if isinstance(marked, str) and marked.startswith(JSON_TEXT):
                    try:
                        value[k] = _json_text(json.loads(v))
                    except (TypeError, ValueError):
                        pass
        out.append((name, canon_value(value)))
    return out


def _unwritable_raw(value: Any) -> bool:
    """A string a raw-strings family cannot write without a schema: one that reads as null,
    or may hold its closing tag (a tag lead; some of those are writable, which is fine)."""
    return isinstance(value, str) and (value.lower() == "null" or not TAG_LEADS.isdisjoint(value))


def _without_raw_unwritable(
    calls: list[tuple[str, dict[str, Any]]], typed: dict[str, set[str]] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The calls less each untyped string ``_unwritable_raw`` names."""
    keys = typed or {}
    return [
        (n, {k: v for k, v in a.items() if k in keys.get(n, ()) or not _unwritable_raw(v)})
        for n, a in calls
    ]


def _format_raw(
    dialect: str, calls: list[tuple[str, dict[str, Any]]], **opts: Any
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """``format_calls``; in a raw-strings family, a string no text gives back without a
    schema is a ``FormatError`` naming it ("without a schema"): then the calls less those."""
    try:
        return format_calls(calls, dialect=dialect, **opts), calls
    except FormatError as exc:
        if not (_raw_strings(dialect) and "without a schema" in str(exc)):
            raise
        kept = _without_raw_unwritable(calls, _typed_keys(opts.get("tools")))
        assert kept != calls, exc
        return format_calls(kept, dialect=dialect, **opts), kept


@pytest.mark.parametrize("dialect", FAMILIES)
@soak_settings(60)
@given(data=st.data())
def test_format_calls_round_trips(dialect: str, data: Any) -> None:
    """Every family gives the calls back; one whose raw values are strings without a schema
    gives back a string as it is and any other value as its JSON text, and refuses a string
    it cannot carry (``_format_raw``)."""
    calls = data.draw(
        PYTHON_CALLS if dialect in PYTHONIC else GEMMA_CALLS if dialect == "gemma4" else CALLS
    )
    text, calls = _format_raw(dialect, calls)
    result = parse(text, dialects=(dialect,))
    want = _read_as(dialect, calls)
    assert _got(dialect, result, want) == want, text
    assert result.text.strip() == "", text
    assert {b.dialect for b in result.blocks} == {dialect} or not calls


#: The families that write a value as raw text, typed by the tool's schema (SPEC §19).
RAW = (
    "step3",
    "qwen3_coder",
    "glm45",
    "glm53_flash",
    "minimax_m2",
    "seed_oss",
    "minimax_m3",
    "hy_v3",
    "functiongemma",
)
#: Every dialect the prompt side writes.
WRITTEN = tuple(callsieve.dialects())
#: Where a raw value's run may stop (a tag may begin there).
TAG_LEADS = frozenset("<＜〈")
#: The families' hostile strings, and the default dialects' closing tags and CDATA.
_, TYPED_VALUES = hostile_values(
    [*HOSTILE, "</｜DSML｜parameter>", "</|DSML|parameter>", "<![CDATA[", "```"],
    piece=5,
    pieces=4,
    integers=10**9,
    leaves=6,
)
#: Strings a schemaless read takes for another JSON value (a raw-text family quotes them
#: without a schema, and writes them as they are under a string one).
JSON_LOOKING = st.one_of(
    st.sampled_from(["42", "true", "false", "null", '"q"', "[1]", "{}", " 7 ", "-0.5", "1e5"]),
    st.integers().map(str),
    TYPED_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),
)
ARGUMENTS = st.dictionaries(NAMES, st.one_of(JSON_LOOKING, TYPED_VALUES), max_size=4)
#: Calls of distinct tools (each tool's schema types its own calls' values).
TYPED_CALLS = st.lists(
    st.tuples(NAMES, ARGUMENTS),
    min_size=1,
    max_size=3,
    unique_by=lambda call: call[0],
)
TYPED_GEMMA_CALLS = st.lists(
    st.tuples(NAMES, st.dictionaries(NAMES, st.one_of(JSON_LOOKING, GEMMA_VALUES), max_size=4)),
    min_size=1,
    max_size=3,
    unique_by=lambda call: call[0],
)
TYPED_PYTHON_CALLS = st.lists(
    st.tuples(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,12}", fullmatch=True),
        st.dictionaries(IDENTIFIERS, st.one_of(JSON_LOOKING, TYPED_VALUES), max_size=4),
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda call: call[0],
)
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)


def _schema(value: Any) -> dict[str, Any]:
    """A JSON Schema typing ``value`` as it is (an object's properties and a list's items,
    when they are all of one schema, too)."""
    out: dict[str, Any] = {"type": next(t for k, t in _JSON_TYPES if isinstance(value, k))}
    if isinstance(value, dict):
        out["properties"] = {k: _schema(v) for k, v in value.items()}
    elif isinstance(value, list) and value:
        items = [_schema(v) for v in value]
        if len({json.dumps(i, sort_keys=True) for i in items}) == 1:
            out["items"] = items[0]
    return out


def _tool(name: str, schema: dict[str, Any], shape: str) -> dict[str, Any]:
    if shape == "openai":
        return {"type": "function", "function": {"name": name, "parameters": schema}}
    return {"name": name, ("input_schema" if shape == "anthropic" else "parameters"): schema}


@st.composite
def typed_calls(draw: Any, dialect: str) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    """Calls, and tools whose schemas type some of their parameters (most) as their values
    are, in one of the shapes ``parse`` takes (a tool without a schema, or a parameter left
    untyped, is written and read as without one)."""
    calls = draw(
        TYPED_PYTHON_CALLS
        if dialect in PYTHONIC
        else TYPED_GEMMA_CALLS
        if dialect == "gemma4"
        else TYPED_CALLS
    )
    tools = []
    for name, args in calls:
        typed = [k for k in args if draw(st.integers(0, 3))]
        props = {k: _schema(args[k]) for k in typed}
        shape = draw(st.sampled_from(["openai", "anthropic", "flat"]))
        tools.append(_tool(name, {"type": "object", "properties": props}, shape))
    return calls, tools


def _typed_keys(tools: list[dict[str, Any]] | None) -> dict[str, set[str]]:
    """The typed parameters of each tool."""
    out: dict[str, set[str]] = {}
    for tool in tools or ():
        spec = tool.get("function", tool)
        schema = spec.get("parameters") or spec.get("input_schema") or {}
        out[spec["name"]] = set(schema.get("properties", {}))
    return out


def _typed_strings(tools: list[dict[str, Any]]) -> dict[str, set[str]]:
    """The string-typed parameters of each tool."""
    out = {}
    for tool in tools:
        spec = tool.get("function", tool)
        schema = spec.get("parameters") or spec.get("input_schema")
        out[spec["name"]] = {k for k, p in schema["properties"].items() if p["type"] == "string"}
    return out


def _without_unwritable(
    calls: list[tuple[str, dict[str, Any]]], tools: list[dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """The calls less each string-typed parameter whose string holds a tag lead: the one kind
    of value a raw-text family may refuse under a string schema (its closing tag would end
    it, and a JSON string reads back with its quotes)."""
    strings = _typed_strings(tools)
    return [
        (
            name,
            {
                k: v
                for k, v in args.items()
                if not (k in strings[name] and isinstance(v, str) and not TAG_LEADS.isdisjoint(v))
            },
        )
        for name, args in calls
    ]


def test_every_dialect_has_a_writer() -> None:
    assert set(WRITTEN) == {*FAMILIES, *DEFAULT_DIALECTS}


@pytest.mark.parametrize("dialect", WRITTEN)
@soak_settings(60)
@given(data=st.data())
def test_format_calls_round_trips_under_the_tools_schemas(dialect: str, data: Any) -> None:
    """``parse(format_calls(calls, d, tools=T), dialects=(d,), tools=T)`` gives the calls back,
    T's schemas typing their values as they are; a raw-text family refuses only a
    string-typed string that holds a tag lead its closing tag would end (a ``FormatError``
    naming the parameter), and the rest of the calls then round-trips. Without the tools the
    same calls round-trip as they always did, those strings included (a raw-strings family:
    as ``test_format_calls_round_trips`` says)."""
    calls, tools = data.draw(typed_calls(dialect))
    text, plain_calls = _format_raw(dialect, calls)
    want = _read_as(dialect, plain_calls)
    assert _got(dialect, parse(text, dialects=(dialect,)), want) == want
    calls = _without_raw_unwritable(calls, _typed_keys(tools)) if _raw_strings(dialect) else calls
    try:
        text = format_calls(calls, dialect=dialect, tools=tools)
    except FormatError as exc:
        assert dialect in RAW and "is typed string" in str(exc), exc
        kept = _without_unwritable(calls, tools)
        assert kept != calls, exc
        calls = kept
        text = format_calls(calls, dialect=dialect, tools=tools)
    result = parse(text, dialects=(dialect,), tools=tools)
    want = _read_as(dialect, calls, _typed_keys(tools))
    assert _got(dialect, result, want) == want, text
    assert result.text.strip() == "", text
    assert {b.dialect for b in result.blocks} == {dialect}


@pytest.mark.parametrize("dialect", [d for d in WRITTEN if d not in RAW])
def test_the_other_dialects_write_the_same_with_or_without_tools(dialect: str) -> None:
    calls = [("f", {"s": "42", "t": "true", "n": 42, "o": {"k": "null"}})]
    tools = [{"name": "f", "parameters": _schema(calls[0][1])}]
    assert format_calls(calls, dialect=dialect, tools=tools) == format_calls(calls, dialect=dialect)


STRING_TOOLS = [
    {
        "name": "f",
        "input_schema": {
            "type": "object",
            "properties": {"s": {"type": "string"}, "n": {"type": "integer"}},
        },
    }
]
#: How each raw-text family writes a string-typed ``s`` holding ``42`` (as its template does)
#: and an untyped one (as a JSON string, so a schemaless read gives the string back; as it
#: is where the family reads a raw value without a schema as its text).
RAW_42 = {
    "qwen3_coder": ("<parameter=s>\n42\n</parameter>", "<parameter=s>\n42\n</parameter>"),
    "glm45": ("<arg_value>42</arg_value>", "<arg_value>42</arg_value>"),
    "glm53_flash": ("<arg_value>42</arg_value>", "<arg_value>42</arg_value>"),
    "minimax_m2": ('<parameter name="s">42</parameter>', '<parameter name="s">"42"</parameter>'),
    "seed_oss": ("<parameter=s>42</parameter>", "<parameter=s>42</parameter>"),
    "minimax_m3": ("<s>42]<]minimax[>[</s>", '<s>"42"]<]minimax[>[</s>'),
    "hy_v3": (
        "<arg_value:opensource>42</arg_value:opensource>",
        '<arg_value:opensource>"42"</arg_value:opensource>',
    ),
    "functiongemma": ("s:<escape>42<escape>", 's:<escape>"42"<escape>'),
    "step3": (
        '<steptml:parameter name="s">42</steptml:parameter>',
        '<steptml:parameter name="s">"42"</steptml:parameter>',
    ),
}


@pytest.mark.parametrize("dialect", RAW)
def test_a_string_typed_parameter_is_written_as_it_is(dialect: str) -> None:
    """Issue 25: ``"42"`` in a parameter the schema types ``string`` is written ``42``, as the
    template writes a string, and the parser reads it back under the same tools; without
    tools it is still quoted, and reads back without them."""
    calls = [("f", {"s": "42", "n": 42})]
    typed, untyped = RAW_42[dialect]
    text = format_calls(calls, dialect=dialect, tools=STRING_TOOLS)
    assert typed in text and (untyped not in text or _raw_strings(dialect))
    assert parse(text, dialects=(dialect,), tools=STRING_TOOLS).calls[0].input == {
        "s": "42",
        "n": 42,
    }
    plain = format_calls(calls, dialect=dialect)
    assert untyped in plain
    n = "42" if _raw_strings(dialect) else 42  # (no schema: the text, SPEC §19)
    assert parse(plain, dialects=(dialect,)).calls[0].input == {"s": "42", "n": n}


@pytest.mark.parametrize("dialect", RAW)
def test_what_a_string_schema_cannot_carry_is_a_format_error(dialect: str) -> None:
    """A string-typed string holding the family's closing tag, and a value that is not a
    string in a string-typed parameter: no text reads back as them under that schema."""
    close_tag = {
        "glm45": "</arg_value>",
        "glm53_flash": "</arg_value>",
        "minimax_m3": "]<]minimax[>[</s>",
        "hy_v3": "</arg_value:opensource>",
        "functiongemma": "<escape>",
        "step3": "</steptml:parameter>",
    }.get(dialect, "</parameter>")
    for value, why in ((f"a{close_tag}b", "would end it early"), (7, "its value is an integer")):
        with pytest.raises(FormatError, match=f"parameter 's' is typed string.*{why}"):
            format_calls([("f", {"s": value})], dialect=dialect, tools=STRING_TOOLS)
        if _raw_strings(dialect) and isinstance(value, str):  # (no schema: no text carries it)
            with pytest.raises(FormatError, match="without a schema for parameter 's'"):
                format_calls([("f", {"s": value})], dialect=dialect)
            continue
        written = format_calls([("f", {"s": value})], dialect=dialect)  # (no schema: as JSON)
        got = parse(written, dialects=(dialect,)).calls[0].input
        assert got == {"s": str(value) if _raw_strings(dialect) else value}


@pytest.mark.parametrize("dialect", RAW)
def test_line_breaks_at_a_strings_ends_are_kept(dialect: str) -> None:
    """A string that begins or ends with a line break reads back as it is, under a string
    schema or none (seed_oss writes it on lines of its own: its tags take one line break each
    side); the other values of the call stay as the template writes them."""
    calls = [("f", {"s": "\ndef f():\n    pass\n", "n": 1})]
    for tools in (STRING_TOOLS, None):
        text = format_calls(calls, dialect=dialect, tools=tools)
        assert "\\n" not in text, text  # (no JSON string)
        want = dict(calls[0][1], n="1") if tools is None and _raw_strings(dialect) else calls[0][1]
        assert parse(text, dialects=(dialect,), tools=tools).calls[0].input == want


HARD = [
    (
        "write",
        {
            "path": "a.py",
            "code": "x = '</parameter>'\n</function>\n</tool_call>\n",
            "n": "42",
            "empty": "",
            "nested": {"k": ["<|call|>", {"z": None}]},
        },
    ),
    ("now", {}),
]


#: ``HARD`` without the closing tags in a string, which a raw-strings family cannot carry.
HARD_UNTAGGED = [(HARD[0][0], dict(HARD[0][1], code="x = 'a < b'\n")), HARD[1]]


@pytest.mark.parametrize("dialect", FAMILIES)
def test_a_written_block_reads_back_under_every_chunking(dialect: str) -> None:
    calls = HARD
    try:
        text = format_calls(calls, dialect=dialect)
    except FormatError as exc:  # (its closing tag in the code: no text carries it)
        assert _raw_strings(dialect) and "without a schema for parameter 'code'" in str(exc)
        calls = HARD_UNTAGGED
        text = format_calls(calls, dialect=dialect)
    result = run_all_ways(text, dialects=(dialect,))
    want = _read_as(dialect, calls)
    assert _got(dialect, result, want) == want


@pytest.mark.parametrize("dialect", FAMILIES)
def test_the_instructions_example_parses_as_the_call_it_shows(dialect: str) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "required": ["city", "days"],
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                },
            },
        }
    ]
    text = tool_instructions(tools, dialect=dialect)
    assert text.startswith("## Tools\n")
    calls = parse(text, dialects=(dialect,), tools=tools).calls
    assert [(c.name, c.input) for c in calls][-1] == ("get_weather", {"city": "value", "days": 1})


def _pick(odd: dict[str, Any]) -> list[dict[str, Any]]:
    props = {"code": {"type": "string", "enum": ["42", "7"]}, "odd": odd}
    schema = {"type": "object", "required": ["code", "odd"], "properties": props}
    return [{"name": "pick", "input_schema": schema}]


@pytest.mark.parametrize("dialect", WRITTEN)
def test_the_instructions_example_is_written_under_the_tools(dialect: str) -> None:
    """The example's values come from the schema (an enum's first): a string-typed ``"42"``
    is written as the dialect writes a string, and reads back as it under those tools."""
    tools = _pick({"type": "integer", "default": 3})
    text = tool_instructions(tools, dialect=dialect)
    example = parse(text, dialects=(dialect,), tools=tools).calls[-1]
    assert (example.name, example.input) == ("pick", {"code": "42", "odd": 3})
    if dialect in RAW and _raw_strings(dialect):  # (no schema: every value its text)
        assert "in quotes" not in text
        assert parse(text, dialects=(dialect,)).calls[-1].input == {"code": "42", "odd": "3"}
    elif dialect in RAW:
        assert "a JSON string in quotes" in text
        assert parse(text, dialects=(dialect,)).calls[-1].input == {"code": 42, "odd": 3}


@pytest.mark.parametrize("dialect", RAW)
def test_an_example_the_schema_cannot_carry_is_written_as_without_it(dialect: str) -> None:
    """A number in a string-typed enum (no value fits such a schema): the example is written
    as without the tools' schemas, and reads back so."""
    tools = _pick({"type": "string", "enum": [3]})
    text = tool_instructions(tools, dialect=dialect)
    odd = "3" if _raw_strings(dialect) else 3
    assert parse(text, dialects=(dialect,)).calls[-1].input == {"code": "42", "odd": odd}


RESULTS = [
    ("hermes", "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>"),
    (
        "qwen3_coder",
        "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>",
    ),
    ("glm45", "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>"),
    ("glm53_flash", "<tool_response>Sunny</tool_response><tool_response>22</tool_response>"),
    ("kimi_k2", "## Return of functions.get_weather:0\nSunny\n\n## Return of 1\n22"),
    ("minimax_m2", "<response>Sunny</response>\n<response>22</response>"),
    ("seed_oss", "Sunny\n\n22"),
    ("gpt_oss", "Sunny\n\n22"),
    ("mistral", "[TOOL_RESULTS]Sunny[/TOOL_RESULTS][TOOL_RESULTS]22[/TOOL_RESULTS]"),
    (
        "llama3_json",
        (
            "<|start_header_id|>ipython<|end_header_id|>\n\nSunny<|eot_id|>"
            "<|start_header_id|>ipython<|end_header_id|>\n\n22<|eot_id|>"
        ),
    ),
    ("json", "Tool result (functions.get_weather:0): Sunny\nTool result (1): 22"),
    (
        "text_kv",
        "tool_call_id: functions.get_weather:0\noutput: Sunny\n\ntool_call_id: 1\noutput: 22",
    ),
    ("hunyuan", "Sunny\n22"),
    ("nemotron", "<TOOL_RESPONSE>[Sunny, 22]</TOOL_RESPONSE>"),
    (
        "longcat",
        (
            "<longcat_tool_response>Sunny</longcat_tool_response>\n"
            "<longcat_tool_response>22</longcat_tool_response>"
        ),
    ),
    (
        "internlm2",
        (
            "<|im_start|>environment name=<|plugin|>\nSunny<|im_end|>\n"
            "<|im_start|>environment name=<|plugin|>\n22<|im_end|>\n"
        ),
    ),
    ("phi4_mini", "<|tool_response|>Sunny<|end|><|tool_response|>22<|end|>"),
    (
        "firefunction",
        (
            "<|start_header_id|>tool<|end_header_id|>\n\nSunny<|eot_id|>"
            "<|start_header_id|>tool<|end_header_id|>\n\n22<|eot_id|>"
        ),
    ),
    ("xlam", "<|im_start|>tool\nSunny<|im_end|>\n<|im_start|>tool\n22<|im_end|>\n"),
    ("llamacpp_generic", "Sunny\n22"),
    ("minimax_m3", "<response>Sunny</response>\n<response>22</response>"),
    (
        "functiongemma",
        (
            "<start_function_response>response:<escape>Sunny<escape><end_function_response>\n"
            "<start_function_response>response:<escape>22<escape><end_function_response>"
        ),
    ),
    (
        "hy_v3",
        (
            "<tool_responses:opensource>\n<tool_response:opensource>\nSunny\n"
            "</tool_response:opensource>\n<tool_response:opensource>\n22\n"
            "</tool_response:opensource>\n</tool_responses:opensource>"
        ),
    ),
    (
        "kimi_k3",
        (
            '<|open|>message role="tool"<|sep|>Sunny<|close|>message<|sep|><|end_of_msg|>'
            '<|open|>message role="tool"<|sep|>22<|close|>message<|sep|><|end_of_msg|>'
        ),
    ),
    (
        "lfm2",
        (
            "<|im_start|>tool\n<|tool_response_start|>Sunny<|tool_response_end|><|im_end|>\n"
            "<|im_start|>tool\n<|tool_response_start|>22<|tool_response_end|><|im_end|>"
        ),
    ),
]


@pytest.mark.parametrize(("dialect", "want"), RESULTS, ids=[d for d, _ in RESULTS])
def test_results_take_the_templates_shape(dialect: str, want: str) -> None:
    results = [
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "Sunny"},
        "22",
    ]
    assert format_results(results, dialect=dialect) == want

"""SPEC §16 for the families (SPEC §19, §2): ``format_calls`` writes each family's own format,
and ``parse(format_calls(calls, d), dialects=(d,))`` gives back the same calls for any values,
the family's own closing tags, JSON-looking strings and markup included (a hypothesis
property); the instructions' example parses as the call it shows; results take the shape
the family's template writes."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways
from hypothesis import given
from hypothesis import strategies as st
from strategies import hostile_values, soak_settings

from callsieve import parse
from callsieve.prompt import format_calls, format_results, tool_instructions

FAMILIES = (
    "hermes",
    "qwen3_coder",
    "glm45",
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
)
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


@pytest.mark.parametrize("dialect", FAMILIES)
@soak_settings(60)
@given(data=st.data())
def test_format_calls_round_trips(dialect: str, data: Any) -> None:
    calls = data.draw(PYTHON_CALLS if dialect == "pythonic" else CALLS)
    text = format_calls(calls, dialect=dialect)
    result = parse(text, dialects=(dialect,))
    assert canon_calls(result.calls) == _want(calls), text
    assert result.text.strip() == "", text
    assert {b.dialect for b in result.blocks} == {dialect}


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


@pytest.mark.parametrize("dialect", FAMILIES)
def test_a_written_block_reads_back_under_every_chunking(dialect: str) -> None:
    text = format_calls(HARD, dialect=dialect)
    result = run_all_ways(text, dialects=(dialect,))
    assert canon_calls(result.calls) == _want(HARD)


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
    calls = parse(text, dialects=(dialect,)).calls
    assert [(c.name, c.input) for c in calls][-1] == ("get_weather", {"city": "value", "days": 1})


RESULTS = [
    ("hermes", "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>"),
    (
        "qwen3_coder",
        "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>",
    ),
    ("glm45", "<tool_response>\nSunny\n</tool_response>\n<tool_response>\n22\n</tool_response>"),
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
]


@pytest.mark.parametrize(("dialect", "want"), RESULTS, ids=[d for d, _ in RESULTS])
def test_results_take_the_templates_shape(dialect: str, want: str) -> None:
    results = [
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "Sunny"},
        "22",
    ]
    assert format_results(results, dialect=dialect) == want

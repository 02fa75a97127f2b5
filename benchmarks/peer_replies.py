"""Strategy: model replies from the test suites of the peer parsers — vLLM's and SGLang's
DeepSeek tool parsers — as data for ``abort_counts.py`` (issue 23: how often argument
streaming aborts a call on inputs other projects test with).

What it holds: ``REPLIES``, one ``(id, text, tools)`` per model output those tests feed their
parsers, written out here the way each test builds it (its f-strings and helpers, the
tools it passes where it passes schemas). The source of each group is named below with the
file and the commit read (through the search tools; issue 23). They are test inputs, not
code: the tests' expectations are theirs, and callsieve's own reading of each reply is what
``abort_counts.py`` reports.

What it guarantees: nothing is generated; the texts are the peers' as far as a string can
be (SGLang's tokenizer-split streaming is replaced by ``abort_counts.py``'s chunkings).
What it costs: nothing; a module of constants.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REPLIES", "SOURCES"]

Reply = tuple[str, str, Any]

#: Where each group of replies comes from (repository, path, commit read).
SOURCES = {
    "vllm-v32": (
        "vllm-project/vllm",
        "tests/tool_parsers/test_deepseekv32_tool_parser.py",
        "00816550e740a13736f7ef9921097d51a3f01ede",
    ),
    "vllm-v4": (
        "vllm-project/vllm",
        "tests/tool_parsers/test_deepseekv4_tool_parser.py",
        "023f36c62e71a247a9bacb7eb4cea5d55505cb63",
    ),
    "vllm-v31": (
        "vllm-project/vllm",
        "tests/tool_parsers/test_deepseekv31_tool_parser.py",
        "100fe7e0c14678963aafa5e53001099f761e0f26",
    ),
    "sglang-v32": (
        "sgl-project/sglang",
        "test/srt/test_function_call_parser.py (TestDeepSeekV32Detector)",
        "278e503a5e16252fb4ff513018b6a73e30976f63",
    ),
}


def _tool(name: str, properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"name": name, "parameters": {"type": "object", "properties": properties, **more}}


# ---------------------------------------------------------------- vLLM, DeepSeek V3.2 (DSML)
FC_START = "<｜DSML｜function_calls>"
FC_END = "</｜DSML｜function_calls>"
INV_START = '<｜DSML｜invoke name="'
INV_END = "</｜DSML｜invoke>"
PARAM_START = '<｜DSML｜parameter name="'
PARAM_END = "</｜DSML｜parameter>"


def _v32_call(func_name: str, params: dict[str, str]) -> str:
    """vLLM's ``build_tool_call`` for V3.2: every parameter ``string="true"``."""
    param_strs = "".join(
        f'{PARAM_START}{k}" string="true">{v}{PARAM_END}' for k, v in params.items()
    )
    return f'{FC_START}\n{INV_START}{func_name}">\n{param_strs}\n{INV_END}\n{FC_END}'


def _v32_typed(func_name: str, params: list[tuple[str, str, str]]) -> str:
    """The typed-parameter replies of the same file (``name``, ``string`` attribute, body)."""
    lines = "".join(f'{PARAM_START}{k}" string="{s}">{v}{PARAM_END}\n' for k, s, v in params)
    return f'{FC_START}\n{INV_START}{func_name}">\n{lines}{INV_END}\n{FC_END}'


_TIMER = _tool(
    "set_timer",
    {
        "wait": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"type": {"const": "until"}, "date": {"type": "string"}},
                },
                {
                    "type": "object",
                    "properties": {"type": {"const": "for"}, "minutes": {"type": "number"}},
                },
            ]
        },
        "patches": {"oneOf": [{"type": "array", "items": {"type": "object"}}, {"type": "null"}]},
    },
)

VLLM_V32: list[Reply] = [
    ("vllm-v32-no-params", f'{FC_START}\n{INV_START}get_time">\n{INV_END}\n{FC_END}', None),
    (
        "vllm-v32-params",
        _v32_call("get_weather", {"location": "SF", "date": "2024-01-16"}),
        None,
    ),
    (
        "vllm-v32-content-before",
        "Sure, let me check! " + _v32_call("get_weather", {"location": "NYC"}),
        None,
    ),
    (
        "vllm-v32-two-calls",
        (
            f"{FC_START}\n"
            f'{INV_START}get_weather">\n{PARAM_START}location" string="true">SF{PARAM_END}\n'
            f"{INV_END}\n"
            f'{INV_START}get_weather">\n{PARAM_START}location" string="true">NYC{PARAM_END}\n'
            f"{INV_END}\n{FC_END}"
        ),
        None,
    ),
    (
        "vllm-v32-typed",
        _v32_typed("toggle", [("enabled", "false", "true"), ("count", "false", "42")]),
        [_tool("toggle", {"enabled": {"type": "boolean"}, "count": {"type": "integer"}})],
    ),
    (
        "vllm-v32-string-true-integer",
        _v32_typed("score", [("value", "true", "42")]),
        [_tool("score", {"value": {"type": "integer"}})],
    ),
    (
        "vllm-v32-composed-schema",
        _v32_typed(
            "set_timer",
            [
                ("wait", "false", '{"type":"for","minutes":2880}'),
                ("patches", "false", '[{"op":"replace","path":"/schedule","value":"quiet"}]'),
            ],
        ),
        [_TIMER],
    ),
    (
        "vllm-v32-arguments-wrapper",
        _v32_typed("get_weather", [("arguments", "false", '{"location":"Beijing"}')]),
        [_tool("get_weather", {"location": {"type": "string"}})],
    ),
    (
        "vllm-v32-object-array",
        _v32_typed("update", [("tags", "false", '["a", "b"]'), ("meta", "false", '{"k": 1}')]),
        [_tool("update", {"tags": {"type": "array"}, "meta": {"type": "object"}})],
    ),
    (
        "vllm-v32-number",
        _v32_typed("measure", [("ratio", "false", "3.14"), ("whole", "false", "5.0")]),
        [_tool("measure", {"ratio": {"type": "number"}, "whole": {"type": "number"}})],
    ),
    (
        "vllm-v32-type-lists",
        _v32_typed("set_val", [("count", "false", "42"), ("label", "false", "hello")]),
        [
            _tool(
                "set_val",
                {"count": {"type": ["integer", "null"]}, "label": {"type": ["string", "null"]}},
            )
        ],
    ),
    (
        "vllm-v32-null",
        _v32_typed("clear", [("value", "false", "null")]),
        [_tool("clear", {"value": {"type": ["integer", "null"]}})],
    ),
    (
        "vllm-v32-null-as-string",
        _v32_typed("echo", [("text", "false", "null")]),
        [_tool("echo", {"text": {"type": "string"}})],
    ),
    (
        "vllm-v32-no-schema",
        _v32_typed("unknown_fn", [("count", "false", "42"), ("flag", "false", "true")]),
        None,
    ),
    (
        "vllm-v32-fallbacks",
        _v32_typed(
            "coerce",
            [
                ("union_value", "false", "hello"),
                ("bad_int", "false", "abc"),
                ("nullable_string", "false", "null"),
                ("null_string", "false", "null"),
                ("whole_number", "false", "3.0"),
            ],
        ),
        [
            _tool(
                "coerce",
                {
                    "union_value": {"type": ["null", "string"]},
                    "bad_int": {"type": "integer"},
                    "nullable_string": {"type": ["null", "string"]},
                    "null_string": {"type": "string"},
                    "whole_number": {"type": "number"},
                },
            )
        ],
    ),
    (
        "vllm-v32-two-functions",
        (
            f"{FC_START}\n"
            f'{INV_START}func_a">\n{PARAM_START}p" string="true">v1{PARAM_END}\n{INV_END}\n'
            f'{INV_START}func_b">\n{PARAM_START}q" string="true">v2{PARAM_END}\n{INV_END}\n'
            f"{FC_END}"
        ),
        None,
    ),
]

# ---------------------------------------------------------------- vLLM, DeepSeek V4 (DSML)
TC_START = "<｜DSML｜tool_calls>"
TC_END = "</｜DSML｜tool_calls>"


def _v4_call(func_name: str, params: dict[str, str]) -> str:
    """vLLM's ``build_tool_call`` for V4 (a line break after each parameter)."""
    param_strs = "".join(
        f'{PARAM_START}{k}" string="true">{v}{PARAM_END}\n' for k, v in params.items()
    )
    return f'{TC_START}\n{INV_START}{func_name}">\n{param_strs}{INV_END}\n{TC_END}'


VLLM_V4: list[Reply] = [
    (
        "vllm-v4-content-before",
        "Let me check. " + _v4_call("get_weather", {"location": "Beijing", "unit": "celsius"}),
        None,
    ),
    (
        "vllm-v4-function-calls-wrapper",
        _v4_call("search", {"query": "vllm"}).replace("tool_calls", "function_calls"),
        None,
    ),
    ("vllm-v4-streaming", _v4_call("search", {"query": "deepseek v4"}), None),
]

# ---------------------------------------------------------------- vLLM, DeepSeek V3.1 (native)
VLLM_V31: list[Reply] = [
    (
        "vllm-v31-one",
        (
            "normal text<｜tool▁calls▁begin｜>"
            '<｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>'
            "<｜tool▁calls▁end｜>"
        ),
        None,
    ),
    (
        "vllm-v31-two",
        (
            "some prefix text<｜tool▁calls▁begin｜>"
            '<｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>'
            '<｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜>'
            "<｜tool▁calls▁end｜> some suffix text"
        ),
        None,
    ),
    ("vllm-v31-cut-off", "Let me look that up.<｜tool▁calls▁begin｜>get_weather", None),
    (
        "vllm-v31-no-call-markers",
        '<｜tool▁calls▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁calls▁end｜>',
        None,
    ),
]

# ---------------------------------------------------------------- SGLang, DeepSeek V3.2 (DSML)
SGLANG_V32: list[Reply] = [
    (
        "sglang-v32-two-calls",
        (
            "I'll help you with information about San Francisco and get its favorite tourist "
            "spot for you.\n\n\n        <｜DSML｜function_calls>\n\n"
            '            <｜DSML｜invoke name="get_favorite_tourist_spot">\n\n'
            '                <｜DSML｜parameter name="city" string="true">San Francisco'
            "</｜DSML｜parameter>\n\n            </｜DSML｜invoke>\n\n"
            '            <｜DSML｜invoke name="search">\n'
            '                <｜DSML｜parameter name="query" string="true">WebNav benchmark'
            "</｜DSML｜parameter>\n"
            '                <｜DSML｜parameter name="topn" string="false">10</｜DSML｜parameter>\n'
            '                <｜DSML｜parameter name="source" string="true">web</｜DSML｜parameter>\n'
            "            </｜DSML｜invoke>\n        </｜DSML｜function_calls>\n        "
        ),
        None,
    ),
    (
        "sglang-v32-json-bodies",
        (
            "I'll help you with information about San Francisco and get its favorite tourist "
            "spot for you.\n\n        <｜DSML｜function_calls>\n"
            '            <｜DSML｜invoke name="get_favorite_tourist_spot">\n            {\n'
            '                "city": "San Francisco"\n            }\n        </｜DSML｜invoke>\n'
            '            <｜DSML｜invoke name="search">\n            {\n'
            '                "query": "WebNav benchmark",\n                "topn": 10,\n'
            '                "source": "web"\n            }\n        </｜DSML｜invoke>\n'
            "        </｜DSML｜function_calls>\n        "
        ),
        None,
    ),
    (
        "sglang-v32-streaming-params",
        (
            "<｜DSML｜function_calls>\n"
            '            <｜DSML｜invoke name="get_favorite_tourist_spot">\n'
            '                <｜DSML｜parameter name="city" string="true">San Francisco'
            "</｜DSML｜parameter>\n"
            '                <｜DSML｜parameter name="another_city" string="true">London'
            "</｜DSML｜parameter>\n"
            '                <｜DSML｜parameter name="topn" string="false">10</｜DSML｜parameter>\n'
            '                <｜DSML｜parameter name="obj" string="false">{"name": "John", "age": 30}'
            "</｜DSML｜parameter>\n"
            "            </｜DSML｜invoke>\n        </｜DSML｜function_calls>"
        ),
        None,
    ),
    (
        "sglang-v32-streaming-json",
        (
            "<｜DSML｜function_calls>\n"
            '            <｜DSML｜invoke name="get_favorite_tourist_spot">\n            {\n'
            '                "city": "San Francisco"\n            }\n'
            "            </｜DSML｜invoke>\n        </｜DSML｜function_calls>"
        ),
        None,
    ),
    (
        "sglang-v32-no-params",
        (
            "Let me get the current date for you.\n\n<｜DSML｜function_calls>\n"
            '<｜DSML｜invoke name="get_date">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
        ),
        None,
    ),
    (
        "sglang-v32-no-params-blank-lines",
        (
            "<｜DSML｜function_calls>\n"
            '<｜DSML｜invoke name="get_date">\n\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
        ),
        None,
    ),
]

REPLIES: list[Reply] = [*VLLM_V32, *VLLM_V4, *VLLM_V31, *SGLANG_V32]

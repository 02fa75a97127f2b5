"""SPEC §19 ``qwen3_coder``: Qwen3-Coder and Qwen3.5's XML calls. Values are raw text with one
newline dropped on each side (the template writes ``<parameter=p>\\nVALUE\\n</parameter>``),
typed by the tool's schema; without one, a value is its text (``null`` is null), as vLLM's,
SGLang's and ollama's parsers read it, and a parameter named twice keeps its last value. The
cases follow the template and what vLLM's and SGLang's parser tests feed their parsers,
the known malformations included: a ``</parameter>`` the model left out (closed at
``</function>`` or the next ``<parameter=``, the repair recorded) and a call written without
its ``<tool_call>`` (the missing-wrapper repair of SPEC §4)."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way

WEATHER = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)
CODE = 'def f(a, b):\n    if a < b:\n        return "<div>" + a + "</div>"\n    return b\n'
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "zip": {"type": "string"},
                },
            },
        },
    }
]

CASES = [
    Case(
        "template-shape",
        WEATHER,
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="",
        tools=TOOLS,
    ),
    Case(
        "text-around",
        "Let me look that up.\n\n" + WEATHER + "\n\nOne moment.",
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="Let me look that up.\n\n\n\nOne moment.",
        tools=TOOLS,
    ),
    Case(
        "parallel-blocks",
        WEATHER + "\n<tool_call>\n<function=get_time>\n<parameter=tz>\nAsia/Tokyo\n"
        "</parameter>\n</function>\n</tool_call>",
        [("get_weather", {"city": "Tokyo", "days": 3}), ("get_time", {"tz": "Asia/Tokyo"})],
        answer="\n",
        tools=TOOLS,
    ),
    Case(
        "two-functions-in-one-block",
        "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n"
        "<function=b>\n</function>\n</tool_call>",
        [("a", {"x": "1"}), ("b", {})],
        answer="",
    ),
    Case(
        "code-value-with-markup",
        "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
        "<parameter=content>\n" + CODE + "\n</parameter>\n</function>\n</tool_call>",
        [("write_file", {"path": "src/app.py", "content": CODE})],
        answer="",
    ),
    Case(
        "json-and-unicode-values",
        "<tool_call>\n<function=plan>\n<parameter=stops>\n"
        '["東京", "Zürich", {"name": "😀", "n": [1, 2.5, null]}]\n</parameter>\n'
        '<parameter=options>\n{"fast": true, "via": {"a": false}}\n</parameter>\n'
        "<parameter=title>\nPlan für Zoë — 旅行\n</parameter>\n</function>\n</tool_call>",
        [
            (
                "plan",
                {
                    "stops": ["東京", "Zürich", {"name": "😀", "n": [1, 2.5, None]}],
                    "options": {"fast": True, "via": {"a": False}},
                    "title": "Plan für Zoë — 旅行",
                },
            )
        ],
        answer="",
        tools=[
            {
                "name": "plan",
                "parameters": {
                    "type": "object",
                    "properties": {"stops": {"type": "array"}, "options": {"type": "object"}},
                },
            }
        ],
    ),
    Case(
        "inline-values-without-newlines",
        "<tool_call><function=f><parameter=a>x y</parameter><parameter=b> 7 </parameter>"
        "</function></tool_call>",
        [("f", {"a": "x y", "b": " 7 "})],
        answer="",
    ),
    Case(
        "only-one-newline-is-the-tags",
        "<tool_call>\n<function=f>\n<parameter=a>\n\nindented\n\n</parameter>\n</function>\n"
        "</tool_call>",
        [("f", {"a": "\nindented\n"})],
        answer="",
    ),
    Case(
        "missing-parameter-close-before-function-close",
        "<tool_call>\n<function=run>\n<parameter=command>\nls -la /tmp\n</function>\n</tool_call>",
        [("run", {"command": "ls -la /tmp"})],
        answer="",
        repairs=("unclosed_parameter",),
    ),
    Case(
        "missing-parameter-close-before-the-next-parameter",
        "<tool_call>\n<function=run>\n<parameter=command>\nls\n<parameter=timeout>\n30\n"
        "</parameter>\n</function>\n</tool_call>",
        [("run", {"command": "ls", "timeout": "30"})],
        answer="",
        repairs=("unclosed_parameter",),
    ),
    Case(
        "missing-tool-call-opener",
        "<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>",
        [("get_weather", {"city": "Oslo"})],
        answer="",
        repairs=("missing_opener",),
    ),
    Case(
        "typed-by-schema",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=zip>\n07001\n</parameter>\n"
        "</function>\n</tool_call>",
        [("get_weather", {"city": "42", "days": 3, "zip": "07001"})],
        answer="",
        tools=TOOLS,
    ),
    Case(
        "no-schema-strings-and-null",
        "<tool_call>\n<function=f>\n<parameter=n>\n1\n</parameter>\n<parameter=ok>\ntrue\n"
        "</parameter>\n<parameter=list>\n[1, 2]\n</parameter>\n<parameter=none>\nNULL\n"
        "</parameter>\n</function>\n</tool_call>",
        [("f", {"n": "1", "ok": "true", "list": "[1, 2]", "none": None})],
        answer="",
    ),
    Case(
        "repeated-parameter-keeps-the-last",
        "<tool_call>\n<function=f>\n<parameter=a>\nfirst\n</parameter>\n<parameter=b>\nx\n"
        "</parameter>\n<parameter=a>\nsecond\n</parameter>\n</function>\n</tool_call>",
        [("f", {"a": "second", "b": "x"})],
        answer="",
    ),
    Case(
        "mention-in-prose",
        "The call goes in <tool_call> tags with <function=NAME> inside.",
        [],
        answer="The call goes in <tool_call> tags with <function=NAME> inside.",
        wraps=False,
    ),
    Case(
        "cut-off-inside-a-value",
        "<tool_call>\n<function=f>\n<parameter=a>\nhalf",
        [],
        answer="<tool_call>\n<function=f>\n<parameter=a>\nhalf",
        wraps=False,
    ),
]


class TestQwen3Coder(FamilySuite):
    dialect = "qwen3_coder"
    cases = CASES


def test_without_a_schema_a_value_is_its_text() -> None:
    check_every_way(
        "qwen3_coder",
        Case(
            "untyped",
            "<tool_call>\n<function=f>\n<parameter=a>\nTrue\n</parameter>\n"
            '<parameter=b>\n007\n</parameter>\n<parameter=c>\n"quoted"\n</parameter>\n'
            "</function>\n</tool_call>",
            [("f", {"a": "True", "b": "007", "c": '"quoted"'})],
            answer="",
        ),
    )


def test_a_boolean_schema_reads_pythons_spelling() -> None:
    """The template writes a Python ``True``; a ``boolean`` property reads it (§9)."""
    tools = [
        {"name": "f", "parameters": {"type": "object", "properties": {"flag": {"type": "boolean"}}}}
    ]
    check_every_way(
        "qwen3_coder",
        Case(
            "bool",
            "<tool_call>\n<function=f>\n<parameter=flag>\nTrue\n</parameter>\n"
            "</function>\n</tool_call>",
            [("f", {"flag": True})],
            tools=tools,
        ),
    )

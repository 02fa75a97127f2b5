"""SPEC §19 ``seed_oss``: ByteDance Seed-OSS. qwen3_coder's ``<function=…>`` body inside
``<seed:tool_call>``, one block per call; reasoning in ``<seed:think>`` (its
``<seed:cot_budget_reflect>`` notes are reasoning text). The cases are the outputs vLLM's
Seed-OSS parser is tested on, with thinking budgets of 0, 512 and unlimited. Without a schema
a value is its text (``null`` is null) and a parameter named twice keeps its last value, as
vLLM's parser reads them (SPEC §19)."""

from __future__ import annotations

from family_cases import Case, FamilySuite

BARCELONA = (
    "<seed:tool_call>\n<function=get_weather>\n"
    "<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
)
THOUGHT_512 = (
    "The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze the "
    "question. The user wants to know the weather in Barcelona, Spain.\n"
    "<seed:cot_budget_reflect>I have used 131 tokens, and there are 381 tokens remaining for "
    "use.</seed:cot_budget_reflect>\n The unit parameter can be omitted since it's optional."
)
THOUGHT_DRAFT = (
    "\nGot it, let's see. Let me format the function call correctly. The format is "
    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, "
    "Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. "
    "Let me go with that."
)

CASES = [
    Case("budget-0", BARCELONA, [("get_weather", {"location": "Barcelona, Spain"})], answer=""),
    Case(
        "budget-512-with-reflections",
        "<seed:think>" + THOUGHT_512 + "</seed:think>\n" + BARCELONA,
        [("get_weather", {"location": "Barcelona, Spain"})],
        answer="\n",
        wraps=False,
    ),
    Case(
        "a-call-drafted-in-the-thought-is-no-call",
        "<seed:think>" + THOUGHT_DRAFT + "</seed:think><seed:tool_call>\n<function=get_weather>"
        "\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius"
        "</parameter>\n</function>\n</seed:tool_call>",
        [("get_weather", {"location": "Barcelona, Spain", "unit": "celsius"})],
        answer="",
        wraps=False,
    ),
    Case(
        "two-calls-two-blocks",
        "Checking both.\n" + BARCELONA + "\n<seed:tool_call>\n<function=get_time>\n"
        "<parameter=tz>Europe/Madrid</parameter>\n</function>\n</seed:tool_call>",
        [("get_weather", {"location": "Barcelona, Spain"}), ("get_time", {"tz": "Europe/Madrid"})],
        answer="Checking both.\n\n",
    ),
    Case(
        "multiline-and-json-values",
        "<seed:tool_call>\n<function=report>\n<parameter=body>This is the value for the second "
        "parameter\nthat can span\nmultiple lines</parameter>\n<parameter=ids>[3, 5]</parameter>\n"
        "</function>\n</seed:tool_call>",
        [
            (
                "report",
                {
                    "body": "This is the value for the second parameter\nthat can span\n"
                    "multiple lines",
                    "ids": [3, 5],
                },
            )
        ],
        answer="",
        tools=[
            {
                "name": "report",
                "parameters": {"type": "object", "properties": {"ids": {"type": "array"}}},
            }
        ],
    ),
    Case(
        "no-schema-text-null-and-last-parameter",
        "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n<parameter=b>null"
        "</parameter>\n<parameter=a>2</parameter>\n</function>\n</seed:tool_call>",
        [("f", {"a": "2", "b": None})],
        answer="",
    ),
    Case(
        "missing-parameter-close",
        "<seed:tool_call>\n<function=f>\n<parameter=a>x\n</function>\n</seed:tool_call>",
        [("f", {"a": "x"})],
        answer="",
        repairs=("unclosed_parameter",),
    ),
]


class TestSeedOss(FamilySuite):
    dialect = "seed_oss"
    cases = CASES


def test_seed_reasoning_is_reasoning() -> None:
    from helpers import run_all_ways

    r = run_all_ways(CASES[1].text, dialects=("seed_oss",))
    assert r.reasoning == THOUGHT_512
    r = run_all_ways(CASES[2].text, dialects=("seed_oss",))
    assert r.reasoning == THOUGHT_DRAFT and len(r.calls) == 1


def test_an_object_schema_reads_the_templates_python_spelling() -> None:
    """Seed-OSS's template writes a non-string value with ``str()``: ``{'unit': 'c'}``; an
    ``object`` (or ``array``) property reads it as the value (SPEC §9 coercion)."""
    from family_cases import check_every_way

    tools = [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"opts": {"type": "object"}, "ids": {"type": "array"}},
            },
        }
    ]
    text = (
        "<seed:tool_call>\n<function=f>\n<parameter=opts>{'unit': 'c', 'deep': True}</parameter>\n"
        "<parameter=ids>[1, None]</parameter>\n</function>\n</seed:tool_call>"
    )
    check_every_way(
        "seed_oss",
        Case(
            "python",
            text,
            [("f", {"opts": {"unit": "c", "deep": True}, "ids": [1, None]})],
            tools=tools,
        ),
    )

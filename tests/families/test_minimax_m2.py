"""SPEC §19 ``minimax_m2``: MiniMax-M2's ``<minimax:tool_call>`` blocks of invokes, values raw
text kept verbatim (as MiniMax's own parser does), typed by the tool's schema. The cases
follow MiniMax-M2's chat template (parallel invokes in one block, a string as it is, anything
else as JSON) and its interleaved thinking (``<think>`` before the calls). A parameter named
twice keeps its last value, as vLLM's, SGLang's and lmdeploy's parsers read it; without a
schema a JSON-looking value is JSON (the peers disagree there: docs/families.md)."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way

ONE = (
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Tokyo'
    "</parameter>\n</invoke>\n</minimax:tool_call>"
)

CASES = [
    Case("template-shape", ONE, [("get_weather", {"city": "Tokyo"})], answer=""),
    Case(
        "parallel-invokes-with-text",
        'I\'ll search both.\n<minimax:tool_call>\n<invoke name="search">\n'
        '<parameter name="query">MiniMax M2</parameter>\n<parameter name="top_k">5</parameter>\n'
        '</invoke>\n<invoke name="search">\n<parameter name="query">潮汐</parameter>\n'
        "</invoke>\n</minimax:tool_call>",
        [("search", {"query": "MiniMax M2", "top_k": 5}), ("search", {"query": "潮汐"})],
        answer="I'll search both.\n",
    ),
    Case(
        "json-values",
        '<minimax:tool_call>\n<invoke name="create">\n<parameter name="tags">["a", "b"]'
        '</parameter>\n<parameter name="meta">{"x": {"y": [1, null]}}</parameter>\n'
        '<parameter name="ok">true</parameter>\n</invoke>\n</minimax:tool_call>',
        [("create", {"tags": ["a", "b"], "meta": {"x": {"y": [1, None]}}, "ok": True})],
        answer="",
    ),
    Case(
        "verbatim-value-with-markup",
        '<minimax:tool_call>\n<invoke name="write">\n<parameter name="content">\n'
        "<html>\n  <b>a &amp; b</b>\n</html>\n</parameter>\n</invoke>\n</minimax:tool_call>",
        [("write", {"content": "\n<html>\n  <b>a &amp; b</b>\n</html>\n"})],
        answer="",
    ),
    Case(
        "no-parameters-and-single-quotes",
        "<minimax:tool_call>\n<invoke name='now'>\n</invoke>\n</minimax:tool_call>",
        [("now", {})],
        answer="",
    ),
    Case(
        "interleaved-thinking",
        "<think>\nThe user wants Tokyo weather.\n</think>\n\n" + ONE,
        [("get_weather", {"city": "Tokyo"})],
        answer="\n\n",
        wraps=False,
    ),
    Case(
        "unclosed-invoke-is-text",
        '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\n'
        "</minimax:tool_call>",
        [],
        answer='<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\n'
        "</minimax:tool_call>",
        wraps=False,
    ),
    Case(
        "repeated-parameter-keeps-the-last-json-stays-json",
        '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\n'
        '<parameter name="a">[2]</parameter>\n</invoke>\n</minimax:tool_call>',
        [("f", {"a": [2]})],
        answer="",
    ),
]


class TestMinimaxM2(FamilySuite):
    dialect = "minimax_m2"
    cases = CASES


def test_a_string_schema_keeps_json_looking_text() -> None:
    tools = [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
            },
        }
    ]
    check_every_way(
        "minimax_m2",
        Case(
            "typed",
            '<minimax:tool_call><invoke name="f"><parameter name="q">[1]</parameter>'
            '<parameter name="n">12</parameter></invoke></minimax:tool_call>',
            [("f", {"q": "[1]", "n": 12})],
            tools=tools,
        ),
    )

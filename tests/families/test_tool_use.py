"""SPEC §2 ``tool_use`` (legacy, opt-in), its markup forms: ``<tool_use>`` holding
``<function name="f">`` with ``<parameter name>`` children (SPEC §5 values), or a name element
with ``<parameters>`` (one JSON object, or child elements) or child elements; and its JSON
object form, an Anthropic Messages ``tool_use`` content block written into the reply,
``{"type": "tool_use", "id": …, "name": …, "input": {…}}``."""

from __future__ import annotations

from family_cases import Case, FamilySuite

import callsieve

# The JSON object form: an Anthropic Messages content block written into the reply.
SF = ("get_weather", {"location": "San Francisco, CA"})
BLOCK = (
    '{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", '
    '"input": {"location": "San Francisco, CA"}}'
)

CASES = [
    Case(
        "function-with-parameters",
        '<tool_use>\n<function name="get_weather">\n<parameter name="city">Tokyo</parameter>\n'
        '<parameter name="days">3</parameter>\n</function>\n</tool_use>',
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="",
    ),
    Case(
        "name-and-json",
        "Let me search.<tool_use><tool_name>search</tool_name>"
        '<parameters>{"q": "lark", "filters": {"lang": ["en", "中文"]}}</parameters></tool_use>',
        [("search", {"q": "lark", "filters": {"lang": ["en", "中文"]}})],
        answer="Let me search.",
    ),
    Case(
        "name-and-children",
        "<tool_use><function_name>mv</function_name><src>a.txt</src><dst>b.txt</dst></tool_use>",
        [("mv", {"src": "a.txt", "dst": "b.txt"})],
        answer="",
    ),
    Case(
        "cdata-value",
        '<tool_use><function name="write"><parameter name="code"><![CDATA[if a < b: pass]]>'
        "</parameter></function></tool_use>",
        [("write", {"code": "if a < b: pass"})],
        answer="",
    ),
    Case(
        "no-name-is-text",
        "<tool_use><function>x</function></tool_use>",
        [],
        answer="<tool_use><function>x</function></tool_use>",
        wraps=False,
    ),
    # ---------------------------------------------------------------- the JSON object form
    Case(
        "anthropic-docs",
        BLOCK,
        [SF],
        answer="",
    ),
    Case(
        "text-around",
        f"I'll check.\n{BLOCK}\nOne moment.",
        [SF],
        answer="I'll check.\n\nOne moment.",
    ),
    Case(
        "parallel",
        '{"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}}\n'
        '{"type": "tool_use", "id": "toolu_2", "name": "b", "input": {"q": [1, {"r": "}"}]}}',
        [("a", {}), ("b", {"q": [1, {"r": "}"}]})],
        answer="\n",
    ),
    Case(
        "other-keys",
        '{"type":"tool_use","name":"f","input":{"x":1},"cache_control":{"type":"ephemeral"}}',
        [("f", {"x": 1})],
        answer="",
    ),
    Case(
        "unicode",
        '{"type": "tool_use", "name": "translate", "input": {"text": "Grüß Gott 🙏"}}',
        [("translate", {"text": "Grüß Gott 🙏"})],
        answer="",
    ),
    Case(
        "no-name",
        '{"type": "tool_use", "input": {}}',
        [],
        answer='{"type": "tool_use", "input": {}}',
        wraps=False,
    ),
    Case(
        "text-block",
        '{"type": "text", "text": "hi"}',
        [],
        answer='{"type": "text", "text": "hi"}',
        wraps=False,
    ),
    Case(
        "never-closed",
        '{"type": "tool_use", "name": "f", "input": {',
        [],
        answer='{"type": "tool_use", "name": "f", "input": {',
        wraps=False,
    ),
]


class TestToolUse(FamilySuite):
    dialect = "tool_use"
    cases = CASES


def test_the_block_id_is_the_models() -> None:
    r = callsieve.parse(BLOCK, dialects=("tool_use",))
    assert [c.id for c in r.calls] == ["toolu_01A09q90qw90lq917835lq9"]

"""SPEC §2 ``tool_use`` (legacy, opt-in), its markup forms: ``<tool_use>`` holding
``<function name="f">`` with ``<parameter name>`` children (SPEC §5 values), or a name element
with ``<parameters>`` (one JSON object, or child elements) or child elements."""

from __future__ import annotations

from family_cases import Case, FamilySuite

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
]


class TestToolUse(FamilySuite):
    dialect = "tool_use"
    cases = CASES

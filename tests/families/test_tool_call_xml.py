"""SPEC §2 ``tool_call_xml`` (legacy, opt-in): ``<tool_call>`` holding the name in
``<tool_name>`` (or ``<name>``, ``<function_name>``) and the arguments in ``<parameters>`` (a
JSON object, or one child element per argument) or as child elements. Child values follow
SPEC §5 (trimmed, entities decoded, CDATA verbatim, JSON literals typed)."""

from __future__ import annotations

from family_cases import Case, FamilySuite

CASES = [
    Case(
        "json-parameters",
        "<tool_call>\n<tool_name>get_weather</tool_name>\n"
        '<parameters>{"city": "Tokyo", "days": 3}</parameters>\n</tool_call>',
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="",
    ),
    Case(
        "element-parameters",
        "<tool_call>\n<name>get_weather</name>\n<parameters>\n<city>Zürich</city>\n"
        "<days>2</days>\n</parameters>\n</tool_call>",
        [("get_weather", {"city": "Zürich", "days": 2})],
        answer="",
    ),
    Case(
        "direct-children",
        "I'll look.\n<tool_call><function_name>search</function_name><query>a &amp; b</query>"
        "<limit>10</limit></tool_call> Then I answer.",
        [("search", {"query": "a & b", "limit": 10})],
        answer="I'll look.\n Then I answer.",
    ),
    Case(
        "cdata-and-nested-json",
        "<tool_call><tool_name>write</tool_name><parameters><path>a.html</path>"
        '<content><![CDATA[<p>x</p> & </content>]]></content><meta>{"k": [1, {"z": null}]}'
        "</meta></parameters></tool_call>",
        [
            (
                "write",
                {
                    "path": "a.html",
                    "content": "<p>x</p> & </content>",
                    "meta": {"k": [1, {"z": None}]},
                },
            )
        ],
        answer="",
    ),
    Case(
        "no-arguments",
        "<tool_call><tool_name>now</tool_name></tool_call>",
        [("now", {})],
        answer="",
    ),
    Case(
        "parallel",
        "<tool_call><name>a</name></tool_call>\n<tool_call><name>b</name><x>1</x></tool_call>",
        [("a", {}), ("b", {"x": 1})],
        answer="\n",
    ),
    Case(
        "no-name-is-text",
        "<tool_call><parameters>{}</parameters></tool_call>",
        [],
        answer="<tool_call><parameters>{}</parameters></tool_call>",
        wraps=False,
    ),
]


class TestToolCallXml(FamilySuite):
    dialect = "tool_call_xml"
    cases = CASES

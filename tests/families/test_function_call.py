"""SPEC §2 ``function_call`` (legacy, opt-in): ``<function_call>`` holding the name in
``<function>`` and the arguments in ``<parameters>`` (one JSON object, or child elements) or
as child elements."""

from __future__ import annotations

from family_cases import Case, FamilySuite

CASES = [
    Case(
        "json-parameters",
        "<function_call>\n<function>get_weather</function>\n"
        '<parameters>{"city": "Lima", "units": ["c", "f"]}</parameters>\n</function_call>',
        [("get_weather", {"city": "Lima", "units": ["c", "f"]})],
        answer="",
    ),
    Case(
        "element-parameters-and-text",
        "Sure.\n<function_call><function>send</function><parameters><to>ana@example.com</to>"
        "<body>¡Hola! 👋</body></parameters></function_call>",
        [("send", {"to": "ana@example.com", "body": "¡Hola! 👋"})],
        answer="Sure.\n",
    ),
    Case(
        "direct-children",
        "<function_call><function>add</function><a>1</a><b>2.5</b></function_call>",
        [("add", {"a": 1, "b": 2.5})],
        answer="",
    ),
    Case(
        "parallel",
        "<function_call><function>a</function></function_call>"
        "<function_call><function>b</function><parameters>{}</parameters></function_call>",
        [("a", {}), ("b", {})],
        answer="",
    ),
    Case(
        "unclosed-is-text",
        "<function_call><function>a</function>",
        [],
        answer="<function_call><function>a</function>",
        wraps=False,
    ),
]


class TestFunctionCall(FamilySuite):
    dialect = "function_call"
    cases = CASES

"""SPEC §2 ``function_call`` (legacy, opt-in), in its two forms: ``<function_call>`` holding
the name in ``<function>`` and the arguments in ``<parameters>`` (one JSON object, or child
elements) or as child elements; and the open form, ``<function_call>NAME</function_call>``
followed by ``<function parameter name="x">v</function parameter>`` elements, whose call
ends where its block does (grammar/README.md, "Where a block ends")."""

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


_WEATHER = [
    {
        "name": "get_weather",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    }
]

OPEN_FORM = [
    Case(
        "open-parameters-then-text",
        "<function_call>get_weather</function_call>\n"
        '<function parameter name="city">Tokyo</function parameter>\n'
        '<function parameter name="days">3</function parameter>\n\nIt is sunny there.',
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="\n\nIt is sunny there.",
    ),
    Case(
        "open-no-parameters-in-prose",
        "Checking the time. <function_call>now</function_call> One moment.",
        [("now", {})],
        answer="Checking the time.  One moment.",
    ),
    Case(
        "open-at-the-end-of-the-reply",
        'Sure.\n<function_call>send</function_call><function parameter name="to">'
        'ana@example.com</function parameter><function parameter name="body">¡Hola! 👋 '
        "a < b</function parameter>",
        [("send", {"to": "ana@example.com", "body": "¡Hola! 👋 a < b"})],
        answer="Sure.\n",
    ),
    Case(
        "open-cdata-and-json-values",
        "<function_call>write</function_call>\n"
        '<function parameter name="path">notes.md</function parameter>\n'
        '<function parameter name="text"><![CDATA[</function parameter> & <b>]]></function parameter>\n'
        '<function parameter name="opts">{"mode": "a", "n": [1, 2]}</function parameter>',
        [
            (
                "write",
                {
                    "path": "notes.md",
                    "text": "</function parameter> & <b>",
                    "opts": {"mode": "a", "n": [1, 2]},
                },
            )
        ],
        answer="",
    ),
    Case(
        "open-parallel-and-closed-after",
        "<function_call>a</function_call>\n"
        '<function parameter name="x">1</function parameter>\n'
        "<function_call>b</function_call>\n"
        "<function_call><function>c</function><parameters>{}</parameters></function_call>",
        [("a", {"x": 1}), ("b", {}), ("c", {})],
        answer="\n\n",
    ),
    Case(
        "open-typed-by-the-schema",
        "<function_call>get_weather</function_call>"
        '<function parameter name="city">2046</function parameter>'
        '<function parameter name="days">3</function parameter>',
        [("get_weather", {"city": "2046", "days": 3})],
        answer="",
        tools=_WEATHER,
    ),
    Case(
        "open-repeated-parameter-collects",
        "<function_call>tag</function_call>"
        '<function parameter name="t">a</function parameter>'
        '<function parameter name="t">b</function parameter>',
        [("tag", {"t": ["a", "b"]})],
        answer="",
    ),
    Case(
        "open-prose-mention-is-text",
        "Wrap the name in a <function_call> tag, then a </function_call>.",
        [],
        answer="Wrap the name in a <function_call> tag, then a </function_call>.",
        wraps=False,
    ),
    Case(
        "open-cut-off-parameter-is-text",
        '<function_call>get_weather</function_call>\n<function parameter name="city">Tok',
        [],
        answer='<function_call>get_weather</function_call>\n<function parameter name="city">Tok',
        wraps=False,
    ),
]


class TestFunctionCall(FamilySuite):
    dialect = "function_call"
    cases = CASES + OPEN_FORM

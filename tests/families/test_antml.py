"""SPEC §2 ``antml`` (legacy, opt-in): the ``function_calls`` format with or without the
``antml`` prefix on every tag — ``<invoke name>`` or ``<function_call name|function [id]>``
elements whose arguments are ``<parameter name>`` / ``<argument name>`` children, one
``<parameters>`` or ``<argument>`` holding a JSON object, or a JSON body; and a lone invoke
(no wrapper) whose one child holds the JSON. (The tags are built from pieces below.)"""

from __future__ import annotations

from family_cases import Case, FamilySuite

P = "antml" + ":"


def tag(name: str, attrs: str = "", prefix: str = P) -> str:
    return f"<{prefix}{name}{attrs}>"


def end(name: str, prefix: str = P) -> str:
    return f"</{prefix}{name}>"


def block(inner: str, prefix: str = P) -> str:
    return tag("function_calls", prefix=prefix) + inner + end("function_calls", prefix)


def invoke(name: str, inner: str, prefix: str = P) -> str:
    return tag("invoke", f' name="{name}"', prefix) + inner + end("invoke", prefix)


def param(name: str, value: str, prefix: str = P, element: str = "parameter") -> str:
    return tag(element, f' name="{name}"', prefix) + value + end(element, prefix)


CASES = [
    Case(
        "prefixed",
        block(
            "\n"
            + invoke(
                "get_weather", "\n" + param("city", "Tokyo") + "\n" + param("days", "3") + "\n"
            )
            + "\n"
        ),
        [("get_weather", {"city": "Tokyo", "days": 3})],
        answer="",
    ),
    Case(
        "bare-with-text",
        "I'll check.\n"
        + block(
            "\n" + invoke("search", param("q", "a &amp; b", "") + param("n", "5", ""), "") + "\n",
            "",
        ),
        [("search", {"q": "a & b", "n": 5})],
        answer="I'll check.\n",
    ),
    Case(
        "parallel-invokes",
        block(invoke("a", param("x", "1")) + "\n" + invoke("b", "")),
        [("a", {"x": 1}), ("b", {})],
        answer="",
    ),
    Case(
        "function-call-elements-with-ids",
        block(
            tag("function_call", ' name="f" id="call_1"')
            + param("x", "1", "", "argument")
            + end("function_call")
            + tag("function_call", ' function="g"')
            + tag("parameters")
            + '{"a": ["é", {"b": null}]}'
            + end("parameters")
            + end("function_call"),
            "",
        ),
        [("f", {"x": 1}), ("g", {"a": ["é", {"b": None}]})],
        answer="",
    ),
    Case(
        "json-body-and-argument-json",
        block(
            invoke("j", '{"z": 1}') + invoke("k", tag("argument") + '{"y": [2]}' + end("argument"))
        ),
        [("j", {"z": 1}), ("k", {"y": [2]})],
        answer="",
    ),
    Case(
        "cdata-value",
        block(invoke("write", param("code", "<![CDATA[x < y && y > z]]>"))),
        [("write", {"code": "x < y && y > z"})],
        answer="",
    ),
    Case(
        "lone-invoke-with-json-argument",
        "Searching: "
        + invoke("search", tag("argument", prefix="") + '{"q": "lark"}' + end("argument", ""), ""),
        [("search", {"q": "lark"})],
        answer="Searching: ",
    ),
    Case(
        "lone-prefixed-invoke-with-parameters",
        invoke("search", tag("parameters") + '{"q": "x"}' + end("parameters")),
        [("search", {"q": "x"})],
        answer="",
    ),
    Case(
        "lone-invoke-with-parameters-is-text",
        invoke("f", param("a", "1", ""), ""),
        [],
        answer=invoke("f", param("a", "1", ""), ""),
        wraps=False,
    ),
]


class TestAntml(FamilySuite):
    dialect = "antml"
    cases = CASES

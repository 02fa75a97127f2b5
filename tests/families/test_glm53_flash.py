"""SPEC §19 ``glm53_flash``: GLM-5 and GLM-5.3-Flash. They write GLM-4.7's format — the
name right after ``<tool_call>``, then ``<arg_key>``/``<arg_value>`` pairs with no line break
between the tags, values raw text (the template's ``tojson`` for non-strings) — so the
dialect reads glm45's grammar (``//%reads glm45``) under its own name. Sources: GLM-4.7's chat
template (``GLM-4.7-Flash.jinja``: the tags, ``<think>`` written into the prompt when
thinking is on), SGLang's GLM-4.7 detector (its ``glm5`` setup: ``glm47`` tools, ``glm45``
reasoning) and vLLM's ``glm47`` parser. Its traits: calls end a thought never closed (SPEC
§15); without a schema a value is its text; a key named twice keeps its last value. Under
``dialects="all"`` the dialect is left out and glm45 reads the same calls."""

from __future__ import annotations

from family_cases import ALL_DIALECTS, Case, FamilySuite, check_every_way, check_typed_by_schema

from callsieve import parse
from callsieve.prompt import format_calls

CASES = [
    Case(
        "glm47-template-shape",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
        "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        [("get_weather", {"city": "Beijing", "days": "3"})],
        answer="",
    ),
    Case(
        "parallel-back-to-back-after-text",
        "Checking both cities.<tool_call>get_weather<arg_key>city</arg_key>"
        "<arg_value>Paris</arg_value></tool_call><tool_call>get_weather<arg_key>city</arg_key>"
        "<arg_value>London</arg_value></tool_call>",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "London"})],
        answer="Checking both cities.",
    ),
    Case(
        "bare-name",
        "<tool_call>list_files</tool_call>",
        [("list_files", {})],
        answer="",
    ),
    Case(
        "template-tojson-values-with-schema",
        "<tool_call>book<arg_key>seats</arg_key><arg_value>[12, 13]</arg_value>"
        '<arg_key>meta</arg_key><arg_value>{"window": true}</arg_value>'
        "<arg_key>refundable</arg_key><arg_value>false</arg_value></tool_call>",
        [("book", {"seats": [12, 13], "meta": {"window": True}, "refundable": False})],
        answer="",
        tools=[
            {
                "name": "book",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "seats": {"type": "array"},
                        "meta": {"type": "object"},
                        "refundable": {"type": "boolean"},
                    },
                },
            }
        ],
    ),
    Case(
        "no-schema-strings-null-and-last-key",
        "<tool_call>f<arg_key>n</arg_key><arg_value>7</arg_value><arg_key>x</arg_key>"
        "<arg_value>null</arg_value><arg_key>n</arg_key><arg_value>8</arg_value></tool_call>",
        [("f", {"n": "8", "x": None})],
        answer="",
    ),
    Case(
        "code-value-verbatim",
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value>"
        "<arg_key>content</arg_key><arg_value>def f(a, b):\n    return a < b\n</arg_value>"
        "</tool_call>",
        [("write_file", {"path": "a.py", "content": "def f(a, b):\n    return a < b\n"})],
        answer="",
    ),
    Case(
        "prompt-opened-thought",
        "The user wants the time.</think><tool_call>get_time</tool_call>",
        [("get_time", {})],
        answer="",
        wraps=False,
        opts={"reasoning": "open"},
    ),
    Case(
        "call-in-a-thought-never-closed",
        "I should look it up.<tool_call>search<arg_key>q</arg_key><arg_value>GLM-5</arg_value>"
        "</tool_call>",
        [("search", {"q": "GLM-5"})],
        answer="",
        wraps=False,
        opts={"reasoning": "open"},
    ),
    Case(
        "key-without-value-is-text",
        "<tool_call>f<arg_key>a</arg_key></tool_call>",
        [],
        answer="<tool_call>f<arg_key>a</arg_key></tool_call>",
        wraps=False,
    ),
]


class TestGlm53Flash(FamilySuite):
    dialect = "glm53_flash"
    cases = CASES

    def test_with_every_dialect_enabled(self, case: Case) -> None:
        """``"all"`` leaves glm53_flash out: glm45 reads its text, the same calls."""
        check_every_way("glm45", case, ALL_DIALECTS)


def test_a_string_schema_keeps_a_number_as_text() -> None:
    check_typed_by_schema(
        "glm53_flash",
        "<tool_call>f<arg_key>code</arg_key><arg_value>0042</arg_value>"
        "<arg_key>n</arg_key><arg_value>2.5</arg_value></tool_call>",
    )


def test_the_thought_ends_at_the_call() -> None:
    r = parse(CASES[-2].text, dialects=["glm53_flash"], reasoning="open")
    assert r.reasoning == "I should look it up."
    assert [b.reasoning for b in r.blocks] == ["ended"]


def test_the_writer_writes_glm47s_template() -> None:
    """GLM-4.7's template: no line break between the tags (glm45's writer puts them)."""
    calls = [("get_weather", {"city": "Paris"}), ("now", {})]
    text = format_calls(calls, "glm53_flash")
    assert text == (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
        "<tool_call>now</tool_call>"
    )
    assert [(c.name, c.input) for c in parse(text, dialects=["glm53_flash"]).calls] == calls

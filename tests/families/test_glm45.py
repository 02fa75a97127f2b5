"""SPEC §19 ``glm45``: GLM-4.5, 4.6 and 4.7. The name right after ``<tool_call>``, then
``<arg_key>``/``<arg_value>`` pairs; values raw text, verbatim (the template writes a string as
it is and anything else as JSON), typed by the tool's schema; without one a value is its text
(``null`` is null, SPEC §19), and a key named twice keeps its last value. GLM-4.5/4.6 write a
newline before each tag, GLM-4.7 none; a bare name is a call without arguments. GLM-4.7 and
later may open a call inside a thought they never close: the call ends it (SPEC §15)."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_typed_by_schema

CASES = [
    Case(
        "glm46-template-shape",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n"
        "<arg_key>date</arg_key>\n<arg_value>2024-06-27</arg_value>\n</tool_call>",
        [("get_weather", {"city": "北京", "date": "2024-06-27"})],
        answer="",
    ),
    Case(
        "glm47-no-newlines",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
        "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        [("get_weather", {"city": "Beijing", "days": "3"})],
        answer="",
    ),
    Case(
        "bare-name",
        "<tool_call>get_current_time</tool_call>",
        [("get_current_time", {})],
        answer="",
    ),
    Case(
        "parallel-with-text",
        "I will check both.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>Paris</arg_value>\n</tool_call>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>London</arg_value>\n</tool_call>",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "London"})],
        answer="I will check both.\n\n",
    ),
    Case(
        "json-values",
        "<tool_call>create_event\n<arg_key>attendees</arg_key>\n"
        '<arg_value>["ana@example.com", "李@example.cn"]</arg_value>\n'
        '<arg_key>options</arg_key>\n<arg_value>{"remind": true, "at": [15, 60]}</arg_value>\n'
        "<arg_key>public</arg_key>\n<arg_value>false</arg_value>\n</tool_call>",
        [
            (
                "create_event",
                {
                    "attendees": ["ana@example.com", "李@example.cn"],
                    "options": {"remind": True, "at": [15, 60]},
                    "public": False,
                },
            )
        ],
        answer="",
        tools=[
            {
                "name": "create_event",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "attendees": {"type": "array"},
                        "options": {"type": "object"},
                        "public": {"type": "boolean"},
                    },
                },
            }
        ],
    ),
    Case(
        "no-schema-text-null-and-last-key",
        "<tool_call>f<arg_key>n</arg_key><arg_value>7</arg_value><arg_key>x</arg_key>"
        "<arg_value>Null</arg_value><arg_key>n</arg_key><arg_value>[8]</arg_value></tool_call>",
        [("f", {"n": "[8]", "x": None})],
        answer="",
    ),
    Case(
        "multiline-value-with-markup",
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>index.html</arg_value>"
        "<arg_key>content</arg_key><arg_value><p>a < b</p>\n  <br/>\n</arg_value></tool_call>",
        [("write_file", {"path": "index.html", "content": "<p>a < b</p>\n  <br/>\n"})],
        answer="",
    ),
    Case(
        "value-kept-verbatim",
        "<tool_call>say<arg_key>text</arg_key><arg_value>  two spaces </arg_value></tool_call>",
        [("say", {"text": "  two spaces "})],
        answer="",
    ),
    Case(
        "glm-thinking",
        "<think>The user wants Paris weather.</think>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        [("get_weather", {"city": "Paris"})],
        answer="\n",
        wraps=False,
    ),
    Case(
        "key-without-value-is-text",
        "<tool_call>f\n<arg_key>a</arg_key>\n</tool_call>",
        [],
        answer="<tool_call>f\n<arg_key>a</arg_key>\n</tool_call>",
        wraps=False,
    ),
    Case(
        "mention-in-prose",
        "Call tools as <tool_call> name <arg_key>k</arg_key> and so on.",
        [],
        answer="Call tools as <tool_call> name <arg_key>k</arg_key> and so on.",
        wraps=False,
    ),
]


class TestGlm45(FamilySuite):
    dialect = "glm45"
    cases = CASES


def test_a_string_schema_keeps_a_number_as_text() -> None:
    check_typed_by_schema(
        "glm45",
        "<tool_call>f<arg_key>code</arg_key><arg_value>0042</arg_value>"
        "<arg_key>n</arg_key><arg_value>2.5</arg_value></tool_call>",
    )

"""SPEC §19 ``minicpm5``: OpenBMB MiniCPM 5. Each call one ``<function name="…">`` element with
``<param name="…">`` children, no wrapper; a value holding ``<``, ``&`` or a line break in
CDATA. The cases follow the chat template (``openbmb-MiniCPM5-1B.jinja``: its instructions and
its rendering of past calls, several joined by a line break) and llama.cpp's minicpm5 parser
(PR #24889). Values follow SPEC §5, typed by the tool's schema.

Where the template differs: it prints a non-string value with Jinja's Python printing
(``True``); without a schema that stays the text ``"True"``.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way

WEATHER = ("get_weather", {"city": "Paris", "days": 3})
ONE = '<function name="get_weather"><param name="city">Paris</param><param name="days">3</param></function>'

CASES = [
    Case("template-shape", ONE, [WEATHER], answer=""),
    Case(
        "cdata-multiline",
        '<function name="write_file"><param name="path">a.py</param><param name="body">'
        "<![CDATA[def f():\n    return 1 < 2 & True\n]]></param></function>",
        [("write_file", {"path": "a.py", "body": "def f():\n    return 1 < 2 & True\n"})],
        answer="",
    ),
    Case(
        "parallel-joined-by-a-line-break",
        "I'll check both cities.\n" + ONE + '\n<function name="get_weather">'
        '<param name="city">Lyon</param><param name="days">3</param></function>',
        [WEATHER, ("get_weather", {"city": "Lyon", "days": 3})],
        answer="I'll check both cities.\n\n",
    ),
    Case(
        "no-arguments",
        '<function name="get_time"></function>',
        [("get_time", {})],
        answer="",
    ),
    Case(
        "white-space-between-params",
        '<function name="search">\n  <param name="q">MiniCPM 5</param>\n'
        '  <param name="filters">{"lang": ["zh", "en"], "safe": true}</param>\n</function>',
        [("search", {"q": "MiniCPM 5", "filters": {"lang": ["zh", "en"], "safe": True}})],
        answer="",
    ),
    Case(
        "thinking-then-call",
        "<think>\nThe user asks for the weather.\n</think>\n\n" + ONE,
        [WEATHER],
        answer="\n\n",
        wraps=False,
    ),
    Case(
        "unclosed-is-text",
        '<function name="get_weather"><param name="city">Paris</param>',
        [],
        answer='<function name="get_weather"><param name="city">Paris</param>',
        wraps=False,
    ),
    Case(
        "html-function-mention-is-text",
        "Use <function> tags; see <function name=x> docs.",
        [],
        answer="Use <function> tags; see <function name=x> docs.",
        wraps=False,
    ),
]


class TestMinicpm5(FamilySuite):
    dialect = "minicpm5"
    cases = CASES


def test_the_schema_types_the_values() -> None:
    """A string-typed parameter keeps ``0042`` as written; a boolean one reads the template's
    Python ``True`` as ``true`` (SPEC §9's coercion, recorded on the call)."""
    tools = [
        {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "n": {"type": "integer"},
                    "ok": {"type": "boolean"},
                },
            },
        }
    ]
    result = check_every_way(
        "minicpm5",
        Case(
            "typed",
            '<function name="f"><param name="code">0042</param><param name="n">7</param>'
            '<param name="ok">True</param></function>',
            [("f", {"code": "0042", "n": 7, "ok": True})],
            tools=tools,
        ),
    )
    assert result.calls[0].coercions == ("/ok: string -> boolean",)

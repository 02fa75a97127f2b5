"""SPEC §19 ``hy_v3``: Tencent HY V3 (Hy3). GLM's key/value pairs in a block of calls, every
tag suffixed ``:opensource``, ``<tool_sep>`` after the tool's name; values raw text (the
template writes a string as it is and anything else as JSON), typed by the tool's schema.
The cases follow the Hy3 chat template (tencent-Hy3.jinja), from which llama.cpp derives its
parser; reasoning in ``<think:opensource>``."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_typed_by_schema

OPEN, CLOSE = "<tool_calls:opensource>\n", "</tool_calls:opensource>"


def call(name: str, *pairs: tuple[str, str], nl: str = "\n") -> str:
    args = "".join(
        f"<arg_key:opensource>{k}</arg_key:opensource>{nl}"
        f"<arg_value:opensource>{v}</arg_value:opensource>{nl}"
        for k, v in pairs
    )
    return f"<tool_call:opensource>{name}<tool_sep:opensource>{nl}{args}</tool_call:opensource>{nl}"


CASES = [
    Case(
        "template-shape",
        OPEN + call("get_weather", ("city", "北京"), ("date", "2024-06-27")) + CLOSE,
        [("get_weather", {"city": "北京", "date": "2024-06-27"})],
        answer="",
    ),
    Case(
        "no-newlines",
        "<tool_calls:opensource>"
        + call("get_weather", ("city", "Paris"), ("days", "3"), nl="")
        + CLOSE,
        [("get_weather", {"city": "Paris", "days": 3})],
        answer="",
    ),
    Case(
        "parallel-with-text-and-no-arguments",
        "Checking both.\n"
        + OPEN
        + call("get_weather", ("city", "Paris"))
        + call("get_time")
        + CLOSE
        + "<｜hy_eos:opensource｜>",
        [("get_weather", {"city": "Paris"}), ("get_time", {})],
        answer="Checking both.\n<｜hy_eos:opensource｜>",
    ),
    Case(
        "json-values",
        OPEN
        + call(
            "create_event",
            ("attendees", '["ana@example.com", "李@example.cn"]'),
            ("options", '{"remind": true, "at": [15, 60]}'),
            ("public", "false"),
        )
        + CLOSE,
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
    ),
    Case(
        "value-verbatim-with-markup",
        OPEN
        + call("write_file", ("path", "a.html"), ("content", "<p>a < b</p>\n  <br/>\n"))
        + CLOSE,
        [("write_file", {"path": "a.html", "content": "<p>a < b</p>\n  <br/>\n"})],
        answer="",
    ),
    Case(
        "thinking",
        "<think:opensource>The user wants Paris weather.</think:opensource>"
        + OPEN
        + call("get_weather", ("city", "Paris"))
        + CLOSE,
        [("get_weather", {"city": "Paris"})],
        answer="",
        wraps=False,
    ),
    Case(
        "reasoning-opened-by-the-prompt",
        "Paris, then.</think:opensource>" + OPEN + call("get_weather", ("city", "Paris")) + CLOSE,
        [("get_weather", {"city": "Paris"})],
        answer="",
        wraps=False,
        opts={"reasoning": "open"},
    ),
    Case(
        "key-without-value-is-text",
        OPEN
        + "<tool_call:opensource>f<tool_sep:opensource>\n<arg_key:opensource>a</arg_key:opensource>\n"
        + "</tool_call:opensource>\n"
        + CLOSE,
        [],
        answer=OPEN
        + "<tool_call:opensource>f<tool_sep:opensource>\n<arg_key:opensource>a</arg_key:opensource>\n"
        + "</tool_call:opensource>\n"
        + CLOSE,
        wraps=False,
    ),
    Case(
        "mention-in-prose",
        "Hy3 wraps its calls in <tool_calls:opensource> and names each one.",
        [],
        answer="Hy3 wraps its calls in <tool_calls:opensource> and names each one.",
        wraps=False,
    ),
]


class TestHyV3(FamilySuite):
    dialect = "hy_v3"
    cases = CASES


def test_a_string_schema_keeps_a_number_as_text() -> None:
    check_typed_by_schema("hy_v3", OPEN + call("f", ("code", "0042"), ("n", "2.5")) + CLOSE)

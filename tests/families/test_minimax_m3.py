"""SPEC §19 ``minimax_m3``: MiniMax-M3. MiniMax-M2's block with every tag after the namespace
token ``]<]minimax[>[``, each parameter an element named by its key, objects and arrays
written as elements (``<item>`` per entry), leaves raw. Reasoning in ``<mm:think>``. The
cases follow the MiniMax-M3 chat template and llama.cpp's MiniMax-M3 parser tests
(test-chat.cpp), rewritten here.

Where llama.cpp differs: it reads the elements by the tool's schema; without one, SPEC §5's
rules read them here (an element body trimmed, a JSON literal its value)."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_typed_by_schema

NS = "]<]minimax[>["


def block(*invokes: str) -> str:
    return f"{NS}<tool_call>\n" + "".join(invokes) + f"{NS}</tool_call>"


def invoke(name: str, *params: str) -> str:
    return f'{NS}<invoke name="{name}">' + "".join(params) + f"{NS}</invoke>\n"


def el(key: str, *body: str) -> str:
    return f"{NS}<{key}>" + "".join(body) + f"{NS}</{key}>"


CASES = [
    Case(
        "one-string-param",
        block(invoke("get_time", el("city", "Tokyo"))),
        [("get_time", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        "scalars-raw",
        block(
            invoke(
                "magic_int",
                el("ref", "-14"),
                el("orig", "3.14"),
                el("enabled", "true"),
                el("name", "foo bar"),
            )
        ),
        [("magic_int", {"ref": -14, "orig": 3.14, "enabled": True, "name": "foo bar"})],
        answer="",
    ),
    Case(
        "nested-object",
        block(invoke("imaginary_number", el("number", el("real", "1.5"), el("imaginary", "-2.5")))),
        [("imaginary_number", {"number": {"real": 1.5, "imaginary": -2.5}})],
        answer="",
    ),
    Case(
        "arrays-of-scalars-and-objects",
        block(
            invoke(
                "nested_args",
                el("tags", el("item", "alpha"), el("item", "beta")),
                el("entries", el("item", el("id", "1"), el("label", "one"))),
            )
        ),
        [("nested_args", {"tags": ["alpha", "beta"], "entries": [{"id": 1, "label": "one"}]})],
        answer="",
    ),
    Case(
        "parallel-and-empty-with-text",
        "Let me look both up.\n"
        + block(
            invoke("get_time", el("city", "Paris")),
            invoke("get_weather", el("city", "Paris")),
            invoke("empty_args"),
        )
        + "\nDone.",
        [("get_time", {"city": "Paris"}), ("get_weather", {"city": "Paris"}), ("empty_args", {})],
        answer="Let me look both up.\n\nDone.",
    ),
    Case(
        "value-verbatim-with-markup",
        block(invoke("write_file", el("path", "a.html"), el("content", "<p>a < b</p>\n  "))),
        [("write_file", {"path": "a.html", "content": "<p>a < b</p>\n  "})],
        answer="",
    ),
    Case(
        "thinking-then-call",
        "<mm:think>Let me check the time</mm:think>"
        + block(invoke("get_time", el("city", "Tokyo"))),
        [("get_time", {"city": "Tokyo"})],
        answer="",
        wraps=False,
    ),
    Case(
        "unclosed-element-is-text",
        block(invoke("get_time", f"{NS}<city>Tokyo")),
        [],
        answer=block(invoke("get_time", f"{NS}<city>Tokyo")),
        wraps=False,
    ),
    Case(
        "mention-in-prose",
        "MiniMax-M3 opens its calls with ]<]minimax[>[<tool_call> and an invoke.",
        [],
        answer="MiniMax-M3 opens its calls with ]<]minimax[>[<tool_call> and an invoke.",
        wraps=False,
    ),
]


class TestMinimaxM3(FamilySuite):
    dialect = "minimax_m3"
    cases = CASES


def test_a_string_schema_keeps_a_number_as_text() -> None:
    check_typed_by_schema("minimax_m3", block(invoke("f", el("code", "0042"), el("n", "2.5"))))

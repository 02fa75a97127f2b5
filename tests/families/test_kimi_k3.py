"""SPEC §19 ``kimi_k3``: Kimi K3 (Moonshot AI). Its "XTML" sections: a ``tools`` section, one
``call`` per call (``tool`` and ``index`` attributes), one ``argument`` per parameter with its
JSON ``type`` (``string``: the text as written; any other: JSON), or one ``json`` object of
all the arguments. The cases follow the Kimi K3 chat template (``render_assistant``) and
llama.cpp's Kimi-K3 parser tests (test-chat.cpp), rewritten here.

The ``response`` section's tags, ``<|close|>message<|sep|>`` and ``<|end_of_msg|>`` are
frames: dropped from the answer, as llama.cpp drops them, and kept as blocks of status
``"frame"``."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_typed_by_schema

TOOLS_OPEN, TOOLS_CLOSE = "<|open|>tools<|sep|>", "<|close|>tools<|sep|>"
RESPONSE = "<|open|>response<|sep|>{}<|close|>response<|sep|>"
END = "<|close|>message<|sep|>"


def call(name: str, index: int, *args: str) -> str:
    return (
        f'<|open|>call tool="{name}" index="{index}"<|sep|>'
        + "".join(args)
        + "<|close|>call<|sep|>"
    )


def arg(key: str, kind: str, value: str) -> str:
    return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'


def tools(*calls: str) -> str:
    return TOOLS_OPEN + "".join(calls) + TOOLS_CLOSE


CASES = [
    Case(
        "one-number-argument",
        RESPONSE.format("") + tools(call("special_function", 1, arg("arg1", "number", "1"))) + END,
        [("special_function", {"arg1": 1})],
        answer="",
    ),
    Case(
        "typed-arguments",
        tools(
            call(
                "create_event",
                1,
                arg("title", "string", "Stand-up"),
                arg("code", "string", "0042"),
                arg("minutes", "number", "15"),
                arg("remote", "boolean", "true"),
                arg("room", "null", "null"),
                arg("tags", "array", '["a", "b"]'),
                arg("options", "object", '{"remind": 5}'),
            )
        ),
        [
            (
                "create_event",
                {
                    "title": "Stand-up",
                    "code": "0042",
                    "minutes": 15,
                    "remote": True,
                    "room": None,
                    "tags": ["a", "b"],
                    "options": {"remind": 5},
                },
            )
        ],
        answer="",
    ),
    Case(
        "string-kept-verbatim",
        tools(call("python", 1, arg("code", "string", "print('hey')\n  x = 1 < 2 | 3\n"))),
        [("python", {"code": "print('hey')\n  x = 1 < 2 | 3\n"})],
        answer="",
    ),
    Case(
        "parallel-with-content",
        RESPONSE.format("On it.")
        + tools(
            call("special_function", 1, arg("arg1", "number", "1")),
            call(
                "special_function_with_opt",
                2,
                arg("arg1", "number", "1"),
                arg("arg2", "number", "2"),
            ),
        )
        + END,
        [("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})],
        answer="On it.",
    ),
    Case(
        "json-arguments-and-no-arguments",
        tools(
            call(
                "search",
                1,
                '<|open|>json type="object"<|sep|>{"q": "a}b", "n": [1, 2]}<|close|>json<|sep|>',
            ),
            call("get_time", 2),
        ),
        [("search", {"q": "a}b", "n": [1, 2]}), ("get_time", {})],
        answer="",
    ),
    Case(
        "reasoning-opened-by-the-prompt",
        "I should call it<|close|>think<|sep|>"
        + RESPONSE.format("On it.")
        + tools(call("special_function", 1, arg("arg1", "number", "1")))
        + END,
        [("special_function", {"arg1": 1})],
        answer="On it.",
        wraps=False,
        opts={"reasoning": "open"},
    ),
    Case(
        "reasoning-section",
        "<|open|>think<|sep|>The user wants Paris.<|close|>think<|sep|>"
        + tools(call("get_weather", 1, arg("city", "string", "Paris"))),
        [("get_weather", {"city": "Paris"})],
        answer="",
        wraps=False,
    ),
    Case(
        "unclosed-argument-is-text",
        tools(call("f", 1, '<|open|>argument key="a" type="string"<|sep|>x')),
        [],
        answer=tools(call("f", 1, '<|open|>argument key="a" type="string"<|sep|>x')),
        wraps=False,
    ),
    Case(
        "prose-mentions-the-section-names",
        RESPONSE.format("Use the tools section, then call the handler.") + END,
        [],
        answer="Use the tools section, then call the handler.",
        wraps=False,
    ),
]


class TestKimiK3(FamilySuite):
    dialect = "kimi_k3"
    cases = CASES


def test_a_schema_types_a_non_string_argument() -> None:
    check_typed_by_schema(
        "kimi_k3",
        tools(call("f", 1, arg("code", "number", "42"), arg("n", "string", "2.5"))),
        code="42",
    )


def test_the_framing_is_kept_as_frame_blocks() -> None:
    """Conservation: the answer is what the response section holds; the dropped tags are
    the frames' text."""
    from helpers import run_all_ways

    text = RESPONSE.format("Sunny.") + END + "<|end_of_msg|>"
    r = run_all_ways(text, dialects=("kimi_k3",))
    assert r.text == "Sunny."
    assert "".join(b.raw for b in r.blocks if b.status == "frame") == text.replace("Sunny.", "")

"""SPEC §19 ``kimi_k2``: Kimi K2's special-token section, each call named by the model's own
id ``functions.NAME:IDX`` (kept as ``ToolCall.id``: Kimi's template writes it back into the
next turn), its arguments one JSON object. The cases follow Kimi-K2's chat template and the
outputs vLLM's and SGLang's Kimi parsers are tested on; unlike vLLM's parser, text after the
section is kept (no character is lost)."""

from __future__ import annotations

from family_cases import Case, FamilySuite

B, E = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def call(ident: str, args: str) -> str:
    return f"<|tool_call_begin|>{ident}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


CASES = [
    Case(
        "one-call",
        B + call("functions.get_weather:0", '{"city": "Beijing"}') + E,
        [("get_weather", {"city": "Beijing"})],
        answer="",
        ids=("functions.get_weather:0",),
    ),
    Case(
        "parallel-with-text",
        "Let me check both cities."
        + B
        + call("functions.get_weather:0", '{"city": "Tokyo"}')
        + call("functions.get_weather:1", '{"city": "Paris"}')
        + E,
        [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Paris"})],
        answer="Let me check both cities.",
        ids=("functions.get_weather:0", "functions.get_weather:1"),
    ),
    Case(
        "newlines-between-tokens",
        "Checking.\n" + B + "\n<|tool_call_begin|>functions.search:2\n"
        '<|tool_call_argument_begin|>{"q": "kimi"}\n<|tool_call_end|>\n' + E + "\nDone?",
        [("search", {"q": "kimi"})],
        answer="Checking.\n\nDone?",
        ids=("functions.search:2",),
    ),
    Case(
        "nested-json-and-unicode",
        B
        + call(
            "functions.book:0",
            '{"who": ["Zoë", "王"], "room": {"floor": 3, '
            '"view": "海", "extras": [null, true, 1.5e3]}, "note": "<|tool_call_end|> '
            'in a string"}',
        )
        + E,
        [
            (
                "book",
                {
                    "who": ["Zoë", "王"],
                    "room": {"floor": 3, "view": "海", "extras": [None, True, 1500.0]},
                    "note": "<|tool_call_end|> in a string",
                },
            )
        ],
        answer="",
    ),
    Case(
        "id-without-namespace",
        B + call("get_time:0", "{}") + E,
        [("get_time", {})],
        answer="",
        ids=("get_time:0",),
    ),
    Case(
        "singular-section-marker",
        "<|tool_call_section_begin|>"
        + call("functions.f:0", '{"a": 1}')
        + "<|tool_call_section_end|>",
        [("f", {"a": 1})],
        answer="",
    ),
    Case(
        "kimi-thinking",
        "<think>Need the weather first.</think>"
        + B
        + call("functions.get_weather:0", '{"city": "Oslo"}')
        + E,
        [("get_weather", {"city": "Oslo"})],
        answer="",
        wraps=False,
    ),
    Case(
        "malformed-json-is-text",
        B + call("functions.f:0", '{"a": 1,}') + E,
        [],
        answer=B + call("functions.f:0", '{"a": 1,}') + E,
        wraps=False,
    ),
    Case(
        "unclosed-section-is-text",
        B + call("functions.f:0", '{"a": 1}'),
        [],
        answer=B + call("functions.f:0", '{"a": 1}'),
        wraps=False,
    ),
]


class TestKimiK2(FamilySuite):
    dialect = "kimi_k2"
    cases = CASES

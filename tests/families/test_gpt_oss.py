"""SPEC §19 ``gpt_oss``: gpt-oss's Harmony format read as text. A call is a message to a
``functions.`` recipient on the commentary channel (the header in either order, the
``<|constrain|>json`` type optional, ``<|start|>assistant`` missing where the prompt ended
with it), its arguments one JSON object, ended by ``<|call|>`` — or, as openai/harmony's
parser ends any message, by ``<|end|>`` or ``<|return|>``. The analysis channel is reasoning;
its ``<|end|>`` and a final answer's header after it are no text. The header of a message to
no one (the final answer, a preamble) and ``<|return|>`` are framing, dropped from the text."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_every_way
from helpers import run_all_ways

CALL = (
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location": "San Francisco"}<|call|>'
)
ANALYSIS = "<|channel|>analysis<|message|>User asks for the weather; call get_weather.<|end|>"

CASES = [
    Case("channel-first", CALL, [("get_weather", {"location": "San Francisco"})], answer=""),
    Case(
        "recipient-first",
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
        '{"location": "Tokyo"}<|call|>',
        [("get_weather", {"location": "Tokyo"})],
        answer="",
    ),
    Case(
        "prompt-wrote-the-role",
        '<|channel|>commentary to=functions.lookup<|message|>{"id": 7}<|call|>',
        [("lookup", {"id": 7})],
        answer="",
    ),
    Case(
        "after-analysis",
        ANALYSIS + CALL,
        [("get_weather", {"location": "San Francisco"})],
        answer="",
        wraps=False,
    ),
    Case(
        "nested-json-and-unicode",
        "<|start|>assistant<|channel|>commentary to=functions.plan <|constrain|>json<|message|>"
        '{"cities": ["Zürich", "東京"], "prefs": {"budget": {"max": 1200.5}, "note": "<|call|>"}}'
        "<|call|>",
        [
            (
                "plan",
                {
                    "cities": ["Zürich", "東京"],
                    "prefs": {"budget": {"max": 1200.5}, "note": "<|call|>"},
                },
            )
        ],
        answer="",
    ),
    Case(
        "call-ended-by-end",
        '<|channel|>commentary to=functions.lookup json<|message|>{"id": 7}<|end|>',
        [("lookup", {"id": 7})],
        answer="",
    ),
    Case(
        "call-ended-by-return-then-text",
        '<|channel|>commentary to=functions.lookup<|message|>{"id": 8} <|return|>Done.',
        [("lookup", {"id": 8})],
        answer="Done.",
    ),
    Case(
        # (a message to no one: its header and the reply's <|return|> are framing, dropped)
        "final-answer-without-analysis",
        "<|channel|>final<|message|>It is 18°C.<|return|>",
        [],
        answer="It is 18°C.",
        wraps=False,
    ),
    Case(
        # (a preamble's <|end|> stays text: grammar/gpt_oss.lark says why)
        "preamble-then-call",
        "<|channel|>commentary<|message|>Checking.<|end|>" + CALL,
        [("get_weather", {"location": "San Francisco"})],
        answer="Checking.<|end|>",
        wraps=False,
    ),
    Case(
        "builtin-tool-is-no-function-call",
        '<|channel|>analysis to=browser.search<|message|>{"query": "x"}<|call|>',
        [],
        answer='<|channel|>analysis to=browser.search<|message|>{"query": "x"}<|call|>',
        wraps=False,
    ),
]


class TestGptOss(FamilySuite):
    dialect = "gpt_oss"
    cases = CASES


def test_analysis_then_final_answer() -> None:
    text = ANALYSIS + "<|start|>assistant<|channel|>final<|message|>It is 18°C and sunny."
    r = run_all_ways(text, dialects=("gpt_oss",))
    assert r.reasoning == "User asks for the weather; call get_weather."
    assert r.text == "It is 18°C and sunny." and r.calls == ()


def test_the_analysis_close_waits_for_what_follows() -> None:
    """``<|end|>`` is held until it is known whether a final answer's header follows."""
    check_every_way(
        "gpt_oss",
        Case(
            "end-then-call",
            ANALYSIS + "\n" + CALL,
            [("get_weather", {"location": "San Francisco"})],
            answer="\n",
        ),
    )

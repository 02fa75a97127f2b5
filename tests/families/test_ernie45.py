"""SPEC §19 ``ernie45``: Baidu ERNIE-4.5 and ERNIE-4.5-21B-A3B-Thinking. One JSON envelope per
``<tool_call>`` block, byte for byte hermes's format; the Thinking model starts its reply
inside its reasoning (``reasoning="open"``) and closes it with ``</think>``. The cases follow
vLLM's ernie45 parser (its docstring's shape), FastDeploy's ernie-x1 examples and
transformers' ERNIE response template and its test fixtures (read from
``../shared/templates/response/ernie.cases.json`` where that folder is present).

With hermes enabled too (``dialects="all"``) the same text gives the same calls, read as
hermes's (its opener outranks this one's). The ``<response>``/``</response>`` framing of an
answer with no call, and the ``</s>`` after it or after a call, are frames: dropped from the
text, kept as blocks of status ``"frame"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from family_cases import Case, FamilySuite
from helpers import canon_calls, canon_value, run_all_ways

PARIS = ("get_current_temperature", {"location": "Paris"})
PARIS_BLOCK = (
    '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Paris"}}\n'
    "</tool_call>"
)
RESPONSES = Path(__file__).resolve().parents[2].parent / "shared" / "templates" / "response"


# (each case's ``with_all``: the same calls, in blocks read as hermes's, not ernie45's)
CASES = [
    Case("one-call", PARIS_BLOCK, [PARIS], answer="", with_all=[PARIS]),
    Case(
        "thinking-model-reply",
        "The user asks about Paris. I will call the tool.\n</think>\n\n\n" + PARIS_BLOCK + "\n",
        [PARIS],
        answer="\n\n\n\n",
        wraps=False,
        with_all=[PARIS],
        opts={"reasoning": "open"},
    ),
    Case(
        "parallel",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "上海", "unit": "c"}}\n'
        "</tool_call>",
        [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海", "unit": "c"})],
        answer="\n",
        with_all=[
            ("get_weather", {"city": "北京"}),
            ("get_weather", {"city": "上海", "unit": "c"}),
        ],
    ),
    Case(
        "text-before",
        "我来查一下天气。\n" + PARIS_BLOCK,
        [PARIS],
        answer="我来查一下天气。\n",
        with_all=[PARIS],
    ),
    Case(
        "no-white-space",
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        [("get_time", {})],
        answer="",
        with_all=[("get_time", {})],
    ),
    Case(
        "nested-arguments",
        '<tool_call>\n{"name": "search", "arguments": {"q": "ERNIE {4.5}", "filters": '
        '{"year": [2025, 2026], "open": true}}}\n</tool_call>',
        [("search", {"q": "ERNIE {4.5}", "filters": {"year": [2025, 2026], "open": True}})],
        answer="",
        with_all=[
            ("search", {"q": "ERNIE {4.5}", "filters": {"year": [2025, 2026], "open": True}})
        ],
    ),
    Case(
        "answer-framed",
        "Greeting the user.\n</think>\n\n<response>\nHello! How can I help?\n</response>\n</s>",
        [],
        answer="\n\nHello! How can I help?\n",
        wraps=False,
        opts={"reasoning": "open"},
    ),
    Case(
        "end-of-turn-after-a-call",
        PARIS_BLOCK + "\n</s>",
        [PARIS],
        answer="",
        with_all=[PARIS],
    ),
    Case(
        "strike-through-in-prose-stays",
        "Use <s>old</s> new.",
        [],
        answer="Use <s>old</s> new.",
        wraps=False,
    ),
    Case(
        "broken-json-is-text",
        '<tool_call>\n{"name": "get_time", "arguments": {\n</tool_call>',
        [],
        answer='<tool_call>\n{"name": "get_time", "arguments": {\n</tool_call>',
        wraps=False,
        with_all=[],
    ),
]


class TestErnie45(FamilySuite):
    dialect = "ernie45"
    cases = CASES


def _fixtures() -> list[dict[str, Any]]:
    path = RESPONSES / "ernie.cases.json"
    if not path.exists():
        pytest.skip("../shared/templates/response is not here")
    data = json.loads(path.read_text(encoding="utf-8"))
    cases: list[dict[str, Any]] = data["cases"]
    return cases


def test_transformers_ernie_fixtures() -> None:
    """transformers' ERNIE fixtures: the same calls and the same reasoning (the Thinking model
    writes no ``<think>``: ``reasoning="open"``)."""
    for case in _fixtures():
        want = case["expected"]
        result = run_all_ways(case["input"], dialects=("ernie45",), reasoning="open")
        calls = [
            (c["function"]["name"], canon_value(c["function"]["arguments"]))
            for c in want.get("tool_calls", [])
        ]
        assert canon_calls(result.calls) == calls, case["test"]
        assert result.reasoning.strip() == want["thinking"], case["test"]
        assert result.text.strip() == want.get("content", "")  # (the framing dropped)
        assert all(b.status in ("complete", "frame") for b in result.blocks), case["test"]


def test_the_framing_is_kept_as_frame_blocks() -> None:
    """Conservation: the dropped framing is in the blocks of status ``"frame"``."""
    text = "<response>\nHi.\n</response>\n</s>"
    r = run_all_ways(text, dialects=("ernie45",))
    assert r.text == "Hi.\n"
    frames = [b for b in r.blocks if b.status == "frame"]
    assert [b.raw for b in frames] == ["<response>\n", "</response>\n</s>"]

"""SPEC §19 ``inkling``: Inkling's typed messages. A call is
``<|message_model|>NAME<|content_invoke_tool_json|>{"name": "NAME", "args": {…}}<|end_message|>``
(the keys in either order: the chat template sorts them, ``{"args": …, "name": …}``);
reasoning is ``<|content_thinking|>…<|end_message|>``. The cases follow transformers' Inkling
response template and its fixtures (read from ``../shared/templates/response/inkling.cases.json``
where that folder is present) and SGLang's inkling detector.

Every call ends with ``<|end_message|>``, which also ends a thought, so a call drafted inside
reasoning is no case here (``wraps=False``). The answer's head
(``<|message_model|><|content_text|>``) and the reply's end (``<|end_message|>`` and
``<|content_model_end_sampling|>``) are frames, dropped from the text. An answer message's
``<|end_message|>`` before another message stays text: it is also the thought's close tag, and
a frame of that spelling would keep a thought from closing. An envelope with keys other than
``name`` and ``args`` fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from family_cases import Case, FamilySuite
from helpers import canon_calls, canon_value, run_all_ways

RESPONSES = Path(__file__).resolve().parents[2].parent / "shared" / "templates" / "response"
TOKYO = ("get_weather", {"city": "Tokyo", "units": "C"})
CALL = (
    '<|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":'
    '{"city":"Tokyo","units":"C"}}<|end_message|>'
)

CASES = [
    Case("name-first", CALL, [TOKYO], answer="", wraps=False),
    Case(
        "args-first-as-the-template-sorts",
        '<|message_model|>read_file<|content_invoke_tool_json|>{"args":{"path":"a.txt"},'
        '"name":"read_file"}<|end_message|>',
        [("read_file", {"path": "a.txt"})],
        answer="",
        wraps=False,
    ),
    Case(
        "end-of-sampling",
        CALL + "<|content_model_end_sampling|>",
        [TOKYO],
        answer="",
        wraps=False,
    ),
    Case(
        "answer-framed",
        "<|message_model|><|content_text|>It is sunny in Tokyo.<|end_message|>"
        "<|content_model_end_sampling|>",
        [],
        answer="It is sunny in Tokyo.",
        wraps=False,
    ),
    Case(
        "answer-then-call-keeps-the-answers-end",
        "<|content_text|>Checking.<|end_message|>" + CALL,
        [TOKYO],
        answer="Checking.<|end_message|>",
        wraps=False,
    ),
    Case(
        "parallel-with-white-space",
        CALL + '<|message_model|>get_time<|content_invoke_tool_json|>{ "name": "get_time", '
        '"args": {} }<|end_message|>',
        [TOKYO, ("get_time", {})],
        answer="",
        wraps=False,
    ),
    Case(
        "thinking-then-call",
        "<|content_thinking|>Consider the weather.<|end_message|>"
        "<|message_model|><|content_thinking|> Tokyo, probably.<|end_message|>" + CALL,
        [TOKYO],
        answer="",
        wraps=False,
    ),
    Case(
        "nested-arguments",
        '<|message_model|>book<|content_invoke_tool_json|>{"name":"book","args":{"guests":'
        '[{"n":"Ana"}],"note":"<|end_message|> in a string"}}<|end_message|>',
        [("book", {"guests": [{"n": "Ana"}], "note": "<|end_message|> in a string"})],
        answer="",
        wraps=False,
    ),
    Case(
        "other-keys-are-text",
        '<|message_model|>f<|content_invoke_tool_json|>{"name":"f","arguments":{}}<|end_message|>',
        [],
        answer='<|message_model|>f<|content_invoke_tool_json|>{"name":"f","arguments":{}}'
        "<|end_message|>",
        wraps=False,
        # (with every dialect, llama3_json reads the bare envelope in it)
        with_all=[("f", {})],
    ),
]


class TestInkling(FamilySuite):
    dialect = "inkling"
    cases = CASES


def _fixtures() -> list[dict[str, Any]]:
    path = RESPONSES / "inkling.cases.json"
    if not path.exists():
        pytest.skip("../shared/templates/response is not here")
    data = json.loads(path.read_text(encoding="utf-8"))
    return [*data["cases"], *data["streaming_fixtures"]]


def test_transformers_inkling_fixtures() -> None:
    """transformers' Inkling fixtures: the same calls and reasoning as its parser (the answer's
    framing aside); its streaming fixtures give one call under every chunking."""
    for case in _fixtures():
        result = run_all_ways(case["input"], dialects=("inkling",))
        want = case.get("expected")
        if want is None:
            assert [c.name for c in result.calls] == ["get_weather"]
            continue
        calls = [
            (c["function"]["name"], canon_value(c["function"]["arguments"]))
            for c in want["tool_calls"]
        ]
        assert canon_calls(result.calls) == calls
        assert result.reasoning == want["thinking"]
        # (the answer's head and the reply's end dropped; its <|end_message|> before the
        # call stays, the thought's close tag)
        assert result.text == want["content"] + "<|end_message|>"
        assert [b.status for b in result.blocks] == ["frame", "complete", "frame"]


def test_a_cut_head_that_dies_ends_the_block_at_once() -> None:
    """A call block may go on with another call's head. Cut after ``<|``, that head is asked
    again at the next ``>``: the block goes out with that chunk, not at the end of the
    reply, and the frame after it with the next text."""
    from callsieve import Sieve, ToolCalls

    sieve = Sieve(dialects=("inkling",))
    assert sieve.feed(CALL + "<|") == []
    got = sieve.feed("content_model_end_sampling|>") + sieve.feed("Z")
    assert [len(e.calls) for e in got if isinstance(e, ToolCalls)] == [1, 0]

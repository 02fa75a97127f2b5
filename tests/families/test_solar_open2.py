"""SPEC §19 ``solar_open2``: Upstage Solar Open and Solar Open 2. A call message
``<|begin|>assistant<|tool_calls|>``, each call ``<|tool_call:begin|>ID<|tool_call:name|>NAME
<|tool_call:args|>{…}<|tool_call:end|>``, then ``<|calls|>``; reasoning ``<|think|>…<|end|>``
before the next message's header. The cases follow the chat template
(``upstage-Solar-Open-100B.jinja``, its rendering of past calls and its instructions) and the
shapes llama.cpp's solar-open parser (PR #18540) reads; we found no sign that Solar Open 2
writes otherwise.

An answer's head ``<|content|>`` (and the ``<|begin|>assistant`` before it) is a frame,
dropped from the text. Its ``<|end|>`` stays: it begins the thought's close tag, and a frame
of that spelling would keep a thought from closing (docs/families.md).
"""

from __future__ import annotations

from family_cases import Case, FamilySuite

SEOUL = ("get_weather", {"city": "Seoul", "unit": "celsius"})
ONE = (
    "<|tool_call:begin|>call_x7Kp2<|tool_call:name|>get_weather<|tool_call:args|>"
    '{"city": "Seoul", "unit": "celsius"}<|tool_call:end|>'
)

CASES = [
    Case(
        "template-shape",
        "<|begin|>assistant<|tool_calls|>" + ONE + "<|calls|>",
        [SEOUL],
        answer="",
        ids=("call_x7Kp2",),
    ),
    Case(
        "after-the-generation-prompt",
        "<|tool_calls|>" + ONE + "<|calls|>",
        [SEOUL],
        answer="",
        ids=("call_x7Kp2",),
    ),
    Case(
        "reasoning-then-calls",
        "<|think|>The user wants the weather in Seoul and Busan.<|end|>"
        "<|begin|>assistant<|tool_calls|>" + ONE + "<|tool_call:begin|>call_9<|tool_call:name|>"
        'get_weather<|tool_call:args|>{"city": "Busan"}<|tool_call:end|><|calls|>',
        [SEOUL, ("get_weather", {"city": "Busan"})],
        answer="",
        ids=("call_x7Kp2", "call_9"),
        wraps=False,
    ),
    Case(
        "reasoning-then-answer",
        "<|think|>Just greet.<|end|><|begin|>assistant<|content|>안녕하세요!<|end|>",
        [],
        answer="안녕하세요!<|end|>",
        wraps=False,
    ),
    Case(
        "answer-with-its-header",
        "<|begin|>assistant<|content|>The weather in Seoul is clear.<|end|>",
        [],
        answer="The weather in Seoul is clear.<|end|>",
        wraps=False,
    ),
    Case(
        "nested-arguments-and-tags-in-strings",
        "<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>save<|tool_call:args|>"
        '{"text": "<|calls|> and <|tool_call:end|>", "tags": ["x", {"y": null}]}'
        "<|tool_call:end|><|calls|>",
        [("save", {"text": "<|calls|> and <|tool_call:end|>", "tags": ["x", {"y": None}]})],
        answer="",
    ),
    Case(
        "no-id",
        "<|tool_calls|><|tool_call:begin|><|tool_call:name|>get_time<|tool_call:args|>{}"
        "<|tool_call:end|><|calls|>",
        [("get_time", {})],
        answer="",
    ),
    Case(
        "calls-end-missing",
        "<|tool_calls|>" + ONE,
        [SEOUL],
        answer="",
    ),
    Case(
        "arguments-not-json-is-text",
        "<|tool_calls|><|tool_call:begin|>a<|tool_call:name|>f<|tool_call:args|>city=Seoul"
        "<|tool_call:end|><|calls|>",
        [],
        answer="<|tool_calls|><|tool_call:begin|>a<|tool_call:name|>f<|tool_call:args|>city=Seoul"
        "<|tool_call:end|><|calls|>",
        wraps=False,
    ),
]


class TestSolarOpen2(FamilySuite):
    dialect = "solar_open2"
    cases = CASES

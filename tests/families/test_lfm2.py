"""SPEC §19 ``lfm2``: Liquid AI's LFM2 and LFM2.5. A Python list of calls with keyword
arguments between ``<|tool_call_start|>`` and ``<|tool_call_end|>`` (grammar/lfm2.lark), as
the LFM2 model cards show and the LFM2.5 chat template writes a past call; or, as llama.cpp's
first LFM2 handler and SGLang's ``lfm2`` detector also read, a list of JSON envelopes in the
same tokens. The cases follow those sources; each runs every way ``FamilySuite`` drives it.

Where the peers differ, on purpose: SGLang and vLLM keep the calls of a list they can build
when one cannot be; here a call that cannot be built fails its block, which stays text."""

from __future__ import annotations

from family_cases import Case, FamilySuite

CASES = [
    Case(
        "model-card",
        '<|tool_call_start|>[get_candidate_status(candidate_id="12345")]<|tool_call_end|>'
        "Checking the current status of candidate ID 12345.",
        [("get_candidate_status", {"candidate_id": "12345"})],
        answer="Checking the current status of candidate ID 12345.",
    ),
    Case(
        # the LFM2.5 template's past call: strings in '…', numbers and booleans as Python
        # writes them, a dict as JSON
        "template-shape",
        "<|tool_call_start|>[create_event(title='Stand-up', minutes=15, remote=True, "
        'options={"remind": true, "at": [5, 10], "room": null})]<|tool_call_end|>',
        [
            (
                "create_event",
                {
                    "title": "Stand-up",
                    "minutes": 15,
                    "remote": True,
                    "options": {"remind": True, "at": [5, 10], "room": None},
                },
            )
        ],
        answer="",
    ),
    Case(
        "parallel-with-text",
        "I'll check both cities.\n<|tool_call_start|>[get_weather(city='Paris'), "
        "get_weather(city='London', unit='celsius')]<|tool_call_end|>",
        [
            ("get_weather", {"city": "Paris"}),
            ("get_weather", {"city": "London", "unit": "celsius"}),
        ],
        answer="I'll check both cities.\n",
    ),
    Case(
        "parameterless-and-escapes",
        "<|tool_call_start|>[get_time(), say(text='it\\'s \"done\" ]) <|tool_call_end|>')]"
        "<|tool_call_end|>",
        [("get_time", {}), ("say", {"text": 'it\'s "done" ]) <|tool_call_end|>'})],
        answer="",
    ),
    Case(
        "json-form",
        '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]'
        "<|tool_call_end|>",
        [("get_weather", {"city": "Tokyo"})],
        answer="",
    ),
    Case(
        "json-form-parallel",
        '<|tool_call_start|>[\n  {"name": "search", "arguments": {"q": "a}b"}},\n'
        '  {"name": "get_time", "arguments": {}}\n]<|tool_call_end|> done',
        [("search", {"q": "a}b"}), ("get_time", {})],
        answer=" done",
    ),
    Case(
        "lfm25-thinking",
        "<think>The user wants the weather in Paris.</think>"
        "<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>",
        [("get_weather", {"city": "Paris"})],
        answer="",
        wraps=False,
    ),
    Case(
        "positional-argument-is-text",
        "<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>",
        [],
        answer="<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>",
        wraps=False,
    ),
    Case(
        "never-closed-is-text",
        "<|tool_call_start|>[get_weather(city='Paris')] and then the reply stopped",
        [],
        answer="<|tool_call_start|>[get_weather(city='Paris')] and then the reply stopped",
        wraps=False,
    ),
    Case(
        "bare-list-is-not-lfm2",
        "See [get_weather(city='Paris')]<|tool_call_end|> in the docs.",
        [],
        answer="See [get_weather(city='Paris')]<|tool_call_end|> in the docs.",
        wraps=False,
        # (with every dialect, pythonic reads the bare list)
        with_all=[("get_weather", {"city": "Paris"})],
    ),
]


class TestLfm2(FamilySuite):
    dialect = "lfm2"
    cases = CASES

"""``llamacpp_generic``: llama.cpp's generic JSON format, which llama.cpp asks of a model whose
template has no tool-call format of its own: the whole reply is one JSON object,
``{"tool_call": {…}}``, ``{"tool_calls": […]}`` or ``{"response": "…"}``. The cases follow
llama.cpp's generic handler and its tests (rewritten): one call, pretty-printed, parallel
calls with ids, other members after the call; and what is no call — ``{"response": …}``
stays that JSON text (reading it needs framing the grammar contract has not: the dialect's
header says what). With every dialect enabled, ``{"tool_calls": [`` is ``json``'s: the same
calls."""

from __future__ import annotations

from family_cases import Case, FamilySuite

from callsieve import parse

CASES = [
    Case(
        "one-call",
        '{"tool_call": {"name": "special_function", "arguments": {"arg1": 1}}}',
        [("special_function", {"arg1": 1})],
        answer="",
    ),
    Case(
        "pretty-printed",
        '{\n  "tool_call": {\n    "name": "get_weather",\n    "arguments": {\n'
        '      "city": "Paris",\n      "days": [1, 2],\n      "note": "a } in a string"\n'
        "    }\n  }\n}",
        [("get_weather", {"city": "Paris", "days": [1, 2], "note": "a } in a string"})],
        answer="",
    ),
    Case(
        "parallel-with-ids",
        '{\n  "tool_calls": [\n    {\n      "name": "special_function",\n'
        '      "arguments": {"arg1": 1},\n      "id": "123456789"\n    },\n'
        '    {"name": "python", "arguments": {"code": "print(\'hey\')"}, "id": "987654321"}\n'
        "  ]\n}",
        [("special_function", {"arg1": 1}), ("python", {"code": "print('hey')"})],
        answer="",
        ids=("123456789", "987654321"),
        with_all=[("special_function", {"arg1": 1}), ("python", {"code": "print('hey')"})],
    ),
    Case(
        "other-members-after-the-call",
        '{"tool_call": {"name": "get_time", "arguments": {}}, "thoughts": ["none", {"a": 1}]}',
        [("get_time", {})],
        answer="",
    ),
    Case(
        "text-around",
        'Here you go: {"tool_call": {"name": "ping", "arguments": {"host": "a.b"}}}\nThanks.',
        [("ping", {"host": "a.b"})],
        answer="Here you go: \nThanks.",
    ),
    # what is no call stays text
    Case(
        "a-response-is-the-json-text",
        '{"response": "Hello, world!\\nWhat\'s up?"}',
        [],
        answer='{"response": "Hello, world!\\nWhat\'s up?"}',
        wraps=False,
    ),
    Case(
        "no-name",
        '{"tool_call": {"arguments": {"a": 1}}}',
        [],
        answer='{"tool_call": {"arguments": {"a": 1}}}',
        wraps=False,
    ),
    Case(
        "not-an-object",
        'Set {"tool_call": "get_time"} in the config.',
        [],
        answer='Set {"tool_call": "get_time"} in the config.',
        wraps=False,
    ),
    Case(
        "cut-off",
        '{"tool_call": {"name": "f", "arguments": {"a": 1}',
        [],
        answer='{"tool_call": {"name": "f", "arguments": {"a": 1}',
        wraps=False,
    ),
]


class TestLlamacppGeneric(FamilySuite):
    dialect = "llamacpp_generic"
    cases = CASES


def test_json_and_this_dialect_read_the_same_calls() -> None:
    text = '{"tool_calls": [{"name": "f", "arguments": {"a": 1}, "id": "x1"}]}'
    for dialects in [("llamacpp_generic",), ("json",), ("json", "llamacpp_generic")]:
        calls = parse(text, dialects=dialects).calls
        assert [(c.name, c.input, c.id) for c in calls] == [("f", {"a": 1}, "x1")], dialects

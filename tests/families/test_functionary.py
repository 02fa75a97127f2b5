"""SPEC §19 ``functionary``: MeetKai Functionary v3.1 (functionary-small/medium-v3.1, Llama
3.1 based). A call is ``<function=NAME>{json}</function>``, one on a line, between text; the
``python`` tool's code follows ``<|python_tag|>``, raw, to ``<|eom_id|>`` or the end (the
call ``python`` with ``{"code": …}``: a ``body_code``, SPEC §12's second edition). Sources:
the chat template (meetkai-functionary-medium-v3.1.jinja) and llama.cpp's functionary v3.1
parser and tests/test-chat.cpp."""

from __future__ import annotations

from family_cases import Case, FamilySuite

from callsieve import parse

DIALECT = "functionary"

CASES = [
    Case(
        "system-prompt-example",
        '<function=example_function_name>{"example_name": "example_value"}</function>',
        [("example_function_name", {"example_name": "example_value"})],
        answer="",
    ),
    Case(
        # llama.cpp's test: calls inside the text, which reads on around them
        "calls-inside-text",
        'Hell<function=foo>{"arg1": 1}</function>o, world<function=bar>{"arg2": 2}</function>!',
        [("foo", {"arg1": 1}), ("bar", {"arg2": 2})],
        answer="Hello, world!",
    ),
    Case(
        "text-then-call",
        "Let me look that up.\n"
        '<function=get_weather>{"location": "San Francisco, CA", "unit": "celsius"}</function>',
        [("get_weather", {"location": "San Francisco, CA", "unit": "celsius"})],
        answer="Let me look that up.\n",
    ),
    Case(
        "nested-arguments",
        '<function=search>{"query": "a </function> b", "filters": {"year": [2023, 2024]}}'
        "</function>",
        [("search", {"query": "a </function> b", "filters": {"year": [2023, 2024]}})],
        answer="",
    ),
    Case(
        # llama.cpp's test: the python tag, code to the end of the reply
        "python-tag-code",
        "<|python_tag|>print('Hello, world!')",
        [("python", {"code": "print('Hello, world!')"})],
        answer="",
    ),
    Case(
        "python-tag-lines-to-eom",
        "I will compute it.\n<|python_tag|>import math\nprint(math.pi > 3)<|eom_id|>",
        [("python", {"code": "import math\nprint(math.pi > 3)"})],
        answer="I will compute it.\n<|eom_id|>",
    ),
    Case(
        "unclosed-call-stays-text",
        '<function=get_weather>{"city": "Paris"}',
        [],
        answer='<function=get_weather>{"city": "Paris"}',
    ),
    Case(
        "not-json-stays-text",
        "<function=get_weather>city=Paris</function>",
        [],
        answer="<function=get_weather>city=Paris</function>",
    ),
]


class TestFunctionary(FamilySuite):
    dialect = DIALECT
    cases = CASES


def test_python_json_is_llama3_json_s_with_both_enabled() -> None:
    text = '<|python_tag|>{"name": "f", "parameters": {"a": 1}}'
    assert parse(text, dialects=[DIALECT]).calls == ()
    r = parse(text, dialects=[DIALECT, "llama3_json"])
    assert [(c.name, c.input, c.dialect) for c in r.calls] == [("f", {"a": 1}, "llama3_json")]


def test_code_is_a_string_whatever_it_looks_like() -> None:
    r = parse("<|python_tag|>42", dialects=[DIALECT])
    assert [(c.name, c.input) for c in r.calls] == [("python", {"code": "42"})]

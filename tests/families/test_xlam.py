"""``xlam``: Salesforce xLAM-2 (fc-r, on Llama 3.1 and Qwen2.5). One bare JSON list of call
objects, as its chat template asks for and writes past calls. The cases follow vLLM's
``xlam`` parser tests (rewritten): parallel calls, after reasoning, inside ``<tool_call>``,
after ``[TOOL_CALLS]``, text before; and what must stay text — a list that is no list of
calls, a list in a Markdown fence (an example, SPEC §6; vLLM reads it). With every dialect
enabled, a bare list is ``json``'s and ``[TOOL_CALLS]`` ``mistral``'s: the same calls."""

from __future__ import annotations

from typing import Any

from family_cases import Case, FamilySuite

from callsieve import parse

DALLAS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
ORLANDO = {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}


def bare(id: str, text: str, calls: Any, answer: str, **kw: Any) -> Case:
    """A case another family (json, mistral) reads too when every dialect is enabled."""
    return Case(id, text, calls, answer=answer, with_all=calls, **kw)


CASES = [
    bare(
        "parallel",
        '[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", '
        '"unit": "fahrenheit"}}, {"name": "get_current_weather", "arguments": '
        '{"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}]',
        [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)],
        "",
    ),
    bare(
        "after-reasoning",
        "<think>I'll help you with that.</think>"
        '[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", '
        '"unit": "fahrenheit"}}]',
        [("get_current_weather", DALLAS)],
        "",
        wraps=False,
    ),
    Case(
        "in-tool-call-tags",
        'I\'ll help you check the weather.<tool_call>[{"name": "get_current_weather", '
        '"arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]</tool_call>',
        [("get_current_weather", DALLAS)],
        answer="I'll help you check the weather.",
    ),
    bare(
        # (`[TOOL_CALLS]` is Mistral's token: text here, the list a call)
        "after-mistral-token",
        'I\'ll check the weather for you.[TOOL_CALLS][{"name": "get_current_weather", '
        '"arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]',
        [("get_current_weather", DALLAS)],
        "I'll check the weather for you.[TOOL_CALLS]",
    ),
    bare(
        "template-shape-nested",
        '[{"name": "search", "arguments": {"q": "lark [parser]", "filters": '
        '{"lang": ["en", "fr"], "max": null}}}, {"name": "refresh", "arguments": {}}]',
        [
            ("search", {"q": "lark [parser]", "filters": {"lang": ["en", "fr"], "max": None}}),
            ("refresh", {}),
        ],
        "",
    ),
    bare(
        "text-before-and-after",
        'Calling it now.\n[{"name": "get_time", "parameters": {"tz": "UTC"}}]\nDone.',
        [("get_time", {"tz": "UTC"})],
        "Calling it now.\n\nDone.",
    ),
    # what is no call stays text
    bare(
        "a-list-of-names-is-no-call",
        'The users are [{"name": "Alice"}, {"name": "Bob"}].',
        [],
        'The users are [{"name": "Alice"}, {"name": "Bob"}].',
        wraps=False,
    ),
    bare(
        "unknown-key",
        '[{"name": "f", "arguments": {}, "score": 1}]',
        [],
        '[{"name": "f", "arguments": {}, "score": 1}]',
        wraps=False,
    ),
    bare(
        "fenced-is-an-example",
        "I'll help you with that.\n```json\n"
        '[{"name": "get_current_weather", "arguments": {"city": "Seattle"}}]\n```',
        [],
        "I'll help you with that.\n```json\n"
        '[{"name": "get_current_weather", "arguments": {"city": "Seattle"}}]\n```',
        wraps=False,
    ),
]


class TestXlam(FamilySuite):
    dialect = "xlam"
    cases = CASES


def test_with_mistral_the_token_is_read_too() -> None:
    text = 'Ok.[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]'
    result = parse(text, dialects=("mistral", "xlam"))
    assert [(c.name, c.input) for c in result.calls] == [("f", {"a": 1})]
    assert result.text == "Ok."

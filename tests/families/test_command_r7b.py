"""``command_r7b``: Cohere Command R7B and Command A. A plan between ``<|START_THINKING|>``
and ``<|END_THINKING|>``, then the calls, a JSON list between ``<|START_ACTION|>`` and
``<|END_ACTION|>``: one object per call, ``{"tool_call_id": "0", "tool_name": "f",
"parameters": {…}}`` (the keys the grammar declares, read in any order). The cases follow the
chat templates (``CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja``, ``Cohere2MoE.jinja``:
the list on lines of its own, ids ``"0"``, ``"1"``, …) and transformers' Cohere response
template tests (``response/cohere.cases.json``, rewritten). The answer's
``<|START_RESPONSE|>`` and ``<|END_RESPONSE|>`` wrappers and ``<|END_OF_TURN_TOKEN|>`` are
frames: dropped from the text, the answer between them kept."""

from __future__ import annotations

from family_cases import Case, FamilySuite

from callsieve import parse

ACT, END = "<|START_ACTION|>", "<|END_ACTION|>"


def item(ident: str, name: str, params: str) -> str:
    return f'{{"tool_call_id": "{ident}", "tool_name": "{name}", "parameters": {params}}}'


CASES = [
    Case(
        "transformers-cohere",
        "<|START_THINKING|>I should call a tool.<|END_THINKING|>"
        + ACT
        + "[\n    "
        + item("0", "simple_tool", '{"temperature_format": "Celsius"}')
        + "\n]"
        + END
        + "<|END_OF_TURN_TOKEN|>",
        [("simple_tool", {"temperature_format": "Celsius"})],
        answer="",
        ids=("0",),
        wraps=False,  # (its own thought: not drafted inside another)
    ),
    Case(
        "template-parallel",
        ACT
        + "[\n    "
        + item("0", "get_weather", '{"city": "Paris"}')
        + ",\n    "
        + item("1", "get_time", "{}")
        + "\n]"
        + END,
        [("get_weather", {"city": "Paris"}), ("get_time", {})],
        answer="",
        ids=("0", "1"),
    ),
    Case(
        "keys-in-another-order",
        f'{ACT}[{{"parameters": {{"q": "a, b"}}, "tool_name": "search", "tool_call_id": "7"}}]{END}',
        [("search", {"q": "a, b"})],
        answer="",
        ids=("7",),
    ),
    Case(
        "nested-values-and-braces-in-strings",
        ACT
        + "["
        + item("0", "set_alarm", '{"time": {"h": 7, "m": 30}, "label": "}]<|END_ACTION|>"}')
        + "]"
        + END,
        [("set_alarm", {"time": {"h": 7, "m": 30}, "label": "}]<|END_ACTION|>"})],
        answer="",
    ),
    Case(
        "answer-loses-its-wrappers",
        "<|START_RESPONSE|>It is sunny in Paris.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
        [],
        answer="It is sunny in Paris.",
    ),
    Case(
        "an-object-with-no-tool-name-stays-text",
        f'Plan: {ACT}[{{"tool_call_id": "0", "parameters": {{}}}}]{END}',
        [],
        answer=f'Plan: {ACT}[{{"tool_call_id": "0", "parameters": {{}}}}]{END}',
    ),
    Case(
        "a-mention-stays-text",
        f"Write {ACT} and then a JSON list.",
        [],
        answer=f"Write {ACT} and then a JSON list.",
    ),
]


class TestCommandR7B(FamilySuite):
    dialect = "command_r7b"
    cases = CASES


def test_the_keys_are_command_r7bs_own() -> None:
    """Another family's envelope keeps its keys beside command_r7b: hermes reads ``name``,
    and ``tool_name`` names nothing there (dialect-declared keys, grammar/README.md)."""
    opts = {"dialects": ("command_r7b", "hermes")}
    hermes = '<tool_call>{"tool_name": "f", "parameters": {}}</tool_call>'
    assert parse(hermes, **opts).calls == ()
    assert parse(f'{ACT}[{{"name": "f", "arguments": {{}}}}]{END}', **opts).calls == ()

"""``nemotron``: NVIDIA Llama-3.3-Nemotron-Super-49B-v1.5 and Nemotron-Nano-v2. One JSON
list of call objects inside ``<TOOLCALL>``, as their chat templates write past calls; one
object with no list around it, as vLLM's ``nemotron_json`` parser reads too. The cases follow
that parser's tests and the templates' rendering (rewritten): text before, a string holding
the arguments, nested values, parallel calls, reasoning; and what must stay text.
Nemotron 3 Nano writes qwen3_coder's XML: ``test_nemotron_3_nano_is_qwen3_coder``."""

from __future__ import annotations

from pathlib import Path

import pytest
from family_cases import Case, FamilySuite

from callsieve import parse

TEMPLATES = Path(__file__).resolve().parents[3] / "shared" / "templates" / "chat"

CASES = [
    Case(
        "text-before",
        'Let me check that.<TOOLCALL>[{"name": "get_weather", '
        '"arguments": {"city": "Tokyo", "unit": "celsius"}}]</TOOLCALL>',
        [("get_weather", {"city": "Tokyo", "unit": "celsius"})],
        answer="Let me check that.",
    ),
    Case(
        "one-object-no-list",
        '<TOOLCALL>{"name": "lookup", "arguments": {"query": "vllm"}}</TOOLCALL>',
        [("lookup", {"query": "vllm"})],
        answer="",
    ),
    Case(
        "arguments-as-a-string",
        '<TOOLCALL>[{"name": "run_query", "arguments": "{\\"sql\\": \\"select 1\\"}"}]</TOOLCALL>',
        [("run_query", {"sql": "select 1"})],
        answer="",
    ),
    Case(
        "nested-arguments",
        '<TOOLCALL>[{"name": "search", "arguments": {"filters": {"city": "Tokyo"}, '
        '"items": [{"name": "rain", "value": true}]}}]</TOOLCALL>',
        [("search", {"filters": {"city": "Tokyo"}, "items": [{"name": "rain", "value": True}]})],
        answer="",
    ),
    Case(
        # (the templates' rendering of a past turn: its content, a line break, the calls)
        "template-parallel",
        'I will look both up.\n<TOOLCALL>[{"name": "get_weather", "arguments": '
        '{"city": "Tokyo"}}, {"name": "lookup_timezone", "arguments": {"city": "Tokyo"}}]'
        "</TOOLCALL>",
        [("get_weather", {"city": "Tokyo"}), ("lookup_timezone", {"city": "Tokyo"})],
        answer="I will look both up.\n",
    ),
    Case(
        "reasoning-then-call",
        "<think>\nI need the weather for Tokyo.\n</think>\n"
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]</TOOLCALL>',
        [("get_weather", {"city": "Tokyo"})],
        answer="\n",
        wraps=False,
    ),
    Case(
        "white-space-and-tags-in-strings",
        '<TOOLCALL>\n[\n {"name": "note", "arguments": {"text": "</TOOLCALL> ] }"}}\n]\n'
        "</TOOLCALL>\nDone.",
        [("note", {"text": "</TOOLCALL> ] }"})],
        answer="\nDone.",
    ),
    # what is no call stays text
    Case(
        "malformed",
        '<TOOLCALL>[{"name": "broken", "arguments": {}</TOOLCALL>',
        [],
        answer='<TOOLCALL>[{"name": "broken", "arguments": {}</TOOLCALL>',
        wraps=False,
    ),
    Case(
        "the-prompts-placeholder",
        '<TOOLCALL>[{{"name": "tool_name1", "arguments": "tool_args1"}}]</TOOLCALL>',
        [],
        answer='<TOOLCALL>[{{"name": "tool_name1", "arguments": "tool_args1"}}]</TOOLCALL>',
        wraps=False,
    ),
]


class TestNemotron(FamilySuite):
    dialect = "nemotron"
    cases = CASES


def test_nemotron_3_nano_is_qwen3_coder() -> None:
    """Nemotron 3 Nano's template writes qwen3_coder's XML, which that dialect reads."""
    template = TEMPLATES / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja"
    if not template.exists():
        pytest.skip("the shared templates are not here")
    source = template.read_text(encoding="utf-8")
    assert "<tool_call>\\n<function=" in source and "<TOOLCALL>" not in source
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>\n"
    assert [(c.name, c.input) for c in parse(text, dialects=("qwen3_coder",)).calls] == [
        ("get_weather", {"city": "Tokyo"})
    ]
    assert parse(text, dialects=("nemotron",)).calls == ()

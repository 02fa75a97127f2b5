"""The issue-32 JSON families read back what their own chat templates write: each template
(``../shared/templates/chat``, test data, not shipped) renders a conversation with past
calls, a tool result and an answer, and the dialect reads exactly those calls from the whole
rendered prompt, the instructions' placeholders and the tool list staying text. Skips where
the templates or jinja2 are absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways

TEMPLATES = Path(__file__).resolve().parents[3] / "shared" / "templates" / "chat"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
CALLS = [
    ("get_weather", {"city": "Paris", "days": 2}),
    ("get_weather", {"city": '東京 "Tokyo" </TOOLCALL> ]', "days": 1}),
]

#: (template, dialect, the calls its instructions' own example makes: a whole call in the
#: system prompt is one)
RENDERED: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("nvidia-Llama-3_3-Nemotron-Super-49B-v1_5.jinja", "nemotron", []),
    ("NVIDIA-Nemotron-Nano-v2.jinja", "nemotron", []),
    ("tool_chat_template_xlam_qwen.jinja", "xlam", []),
    ("fireworks-ai-llama-3-firefunction-v2.jinja", "firefunction", []),
    ("tool_chat_template_internlm2_tool.jinja", "internlm2", []),
    ("llama-cpp-microsoft-Phi-4-mini-instruct.jinja", "phi4_mini", [("foo", {"a": 1})]),
]


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    # (the transformers chat templates' tojson: no HTML escaping)
    return json.dumps(value, ensure_ascii=False, indent=indent)


def render(name: str) -> str:
    jinja2 = pytest.importorskip("jinja2")
    sandbox = pytest.importorskip("jinja2.sandbox")
    path = TEMPLATES / name
    if not path.exists():
        pytest.skip("the shared templates are not here")

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = raise_exception
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)},
        }
        for i, (n, a) in enumerate(CALLS)
    ]
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Weather in Paris and Tokyo?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_0", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 18}'},
        {"role": "assistant", "content": "Paris 21°, Tokyo 18°."},
        {"role": "user", "content": "Thanks."},
    ]
    context = {
        "messages": messages,
        "tools": TOOLS,
        "add_generation_prompt": True,
        "bos_token": "<s>",
        "eos_token": "</s>",
        "functions": json.dumps([t["function"] for t in TOOLS], indent=2),
        "datetime": "Dec 04 2026",
    }
    return str(env.from_string(path.read_text(encoding="utf-8")).render(**context))


@pytest.mark.parametrize(("template", "dialect", "example"), RENDERED, ids=[r[0] for r in RENDERED])
def test_the_templates_past_calls_read_back(template: str, dialect: str, example: Any) -> None:
    prompt = render(template)
    result = run_all_ways(prompt, dialects=(dialect,))
    want = [(n, canon_value(a)) for n, a in [*example, *CALLS]]
    assert canon_calls(result.calls) == want, prompt
    assert {b.dialect for b in result.blocks if b.status == "complete"} == {dialect}

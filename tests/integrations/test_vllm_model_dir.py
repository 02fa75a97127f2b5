"""Issue 36, item 4: vLLM's ``callsieve_auto`` parsers read the model's folder in
``CALLSIEVE_MODEL_DIR`` (docs/model-metadata.md, docs/vllm.md).

vLLM's own plugin loading registers the row; ``ParserManager.get_parser`` composes it as the
server does; ``ChatStreamProcessor.step`` feeds it chunk by chunk and ``Parser.parse`` reads
a whole reply. A folder whose chat template names a dialect, or whose ``tokenizer_config.json``
holds a ``response_template``, is read as ``parse()`` reads the same text with those dialects.
A missing variable, or a folder that names nothing, stops the parser with what to do.
The module runs where vLLM is installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "vllm",
    reason="vLLM is not installed here: .ci/run runs these tests in "
    "a second environment with pip install '.[vllm]'",
)

from helpers import ROOT, char_chunks
from response_templates import FIXTURES
from response_templates import template as fixture_template
from vllm_harness import Reply, make_parser, request, stream, tool_defs, whole

from callsieve import ConfigurationError, parse
from callsieve.integrations.vllm import ENV_MODEL_DIR, VARIANTS, active_variants, resolved
from callsieve.prompt import format_calls

CHAT = ROOT.parent / "shared" / "templates" / "chat"
AUTO = next(v for v in VARIANTS if v.name == "callsieve_auto")
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_time", "arguments": {"city": "Oslo"}},
]


def folder(tmp_path: Path, config: dict[str, Any]) -> Path:
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def expected(text: str, **options: Any) -> Reply:
    r = parse(text, **options)
    reply = Reply(content=r.text, reasoning=r.reasoning)
    for i, call in enumerate(r.calls):
        reply.calls[i] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    return reply


def read_every_way(text: str, tools: list[dict[str, Any]]) -> list[Reply]:
    """The reply through the paired parsers: streamed per character, in 5s and at random,
    and whole."""
    req = request(tools)
    out = [
        stream(make_parser("callsieve_auto", "callsieve_auto", req), req, char_chunks(text, k))
        for k in (1, 5, None)
    ]
    whole_req = request(tools, stream=False)
    parser = make_parser("callsieve_auto", "callsieve_auto", whole_req)
    return [*out, whole(parser, whole_req, text)]


def test_the_auto_row_is_registered_and_names_no_dialect_until_read() -> None:
    assert AUTO in active_variants() and AUTO.dialects == () and AUTO.thought_enders == ()
    assert resolved(VARIANTS[0]) is VARIANTS[0]


@pytest.mark.skipif(not CHAT.is_dir(), reason="../shared/templates/chat is absent")
def test_a_chat_templates_markers_name_the_dialects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = (CHAT / "Qwen3-Coder.jinja").read_text(encoding="utf-8")
    monkeypatch.setenv(ENV_MODEL_DIR, str(folder(tmp_path, {"chat_template": template})))
    row = resolved(AUTO)
    assert (row.dialects, row.writes, row.grammar_dirs) == (
        ("qwen3_coder", "hermes"),
        "qwen3_coder",
        (),
    )
    tools = tool_defs(["get_weather", "get_time"], {"get_weather": SCHEMA, "get_time": SCHEMA})
    text = "Checking.\n" + format_calls(CALLS, dialect="qwen3_coder", tools=tools)
    want = expected(text, dialects=list(row.dialects), tools=tools)
    assert want.named_calls() == [(c["name"], c["arguments"]) for c in CALLS]
    for got in read_every_way(text, tools):
        assert (got.content.strip(), got.reasoning) == (want.content.strip(), want.reasoning)
        assert got.named_calls() == want.named_calls()


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/templates/response is absent")
def test_a_response_template_is_compiled_and_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"chat_template": "{{ messages }}", "response_template": fixture_template("smollm")}
    monkeypatch.setenv(ENV_MODEL_DIR, str(folder(tmp_path, config)))
    row = resolved(AUTO)
    assert row.grammar_dirs and row.writes is None
    text = (
        "<think>Paris first.</think>\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    tools = tool_defs(["get_weather"], {"get_weather": SCHEMA})
    want = expected(text, dialects=list(row.dialects), grammar_dirs=row.grammar_dirs, tools=tools)
    assert want.named_calls() == [("get_weather", {"city": "Paris"})]
    assert want.reasoning == "Paris first."
    for got in read_every_way(text, tools):
        assert got.named_calls() == want.named_calls() and got.reasoning == want.reasoning


def test_without_the_variable_the_parser_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_MODEL_DIR, raising=False)
    with pytest.raises(ConfigurationError, match=ENV_MODEL_DIR):
        resolved(AUTO)
    # (vLLM makes a parser at start-up to check it, and stops with our message in its own)
    with pytest.raises(
        TypeError, match=f"callsieve_auto reads the model's folder from {ENV_MODEL_DIR}"
    ):
        make_parser("callsieve_auto", "callsieve_auto", request(tool_defs(["f"])))


def test_a_folder_that_names_nothing_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_MODEL_DIR, str(folder(tmp_path, {"chat_template": "{{ messages }}"})))
    with pytest.raises(ConfigurationError) as e:
        resolved(AUTO)
    message = str(e.value)
    assert message.startswith(ENV_MODEL_DIR) and "--tool-call-parser" in message
    assert "response_template" in message and "draft-dialect" in message
    with pytest.raises(TypeError, match="no dialect's markers"):
        make_parser("callsieve_auto", "callsieve_auto", request(tool_defs(["f"])))

"""Issue 36, item 4: ``callsieve serve --model-dir DIR`` (docs/model-metadata.md), as a real
process over loopback.

The folder's chat template names the dialect: the upstream model is taught it, and its reply
in that format is read. A ``response_template`` in the folder comes first: its compiled
dialect reads the reply. A folder that names nothing stops the server with one line saying
what to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ROOT
from loopback import Script, openai_client, scripted, serving
from response_templates import FIXTURES
from response_templates import template as fixture_template
from test_gateway_cli import run_cli

import callsieve
from callsieve.prompt import format_calls, tool_instructions

CHAT = ROOT.parent / "shared" / "templates" / "chat"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ASK = [{"role": "user", "content": "The weather in Paris?"}]
CALL = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


def model_dir(tmp_path: Path, config: dict[str, object]) -> str:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


@pytest.mark.skipif(not CHAT.is_dir(), reason="../shared/templates/chat is absent")
def test_the_template_names_the_dialect_taught_and_read(tmp_path: Path) -> None:
    template = (CHAT / "Qwen3-Coder.jinja").read_text(encoding="utf-8")
    folder = model_dir(tmp_path, {"chat_template": template})
    reply = "Let me look.\n" + format_calls(CALL, dialect="qwen3_coder", tools=TOOLS)
    with (
        scripted(Script(text=reply)) as model,
        serving("--upstream", model.url, "--model-dir", folder) as served,
    ):
        out = openai_client(served.url).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS
        )
    calls = out.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert out.choices[0].message.content == "Let me look."
    system = model.requests[0]["messages"][0]
    assert tool_instructions(TOOLS, dialect="qwen3_coder") in system["content"]
    assert any("dialect qwen3_coder" in line for line in served.log)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/templates/response is absent")
def test_a_response_template_is_compiled_and_read(tmp_path: Path) -> None:
    folder = model_dir(tmp_path, {"response_template": fixture_template("smollm")})
    reply = tmp_path / "reply.txt"
    reply.write_text(
        '<think>Paris.</think>\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n</tool_call>',
        encoding="utf-8",
    )
    with serving("--transcript", str(reply), "--model-dir", folder) as served:
        out = openai_client(served.url).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS
        )
    calls = out.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert any("response_template" in line for line in served.log)


def test_a_folder_that_names_no_dialect_stops_the_server(tmp_path: Path) -> None:
    folder = model_dir(tmp_path, {"chat_template": "{{ messages[0].content }}"})
    proc = run_cli(
        "serve", "--transcript", str(ROOT / "examples" / "transcript.txt"), "--model-dir", folder
    )
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "no dialect's markers" in line and "--dialect" in line and "draft-dialect" in line


def test_an_explicit_dialect_is_taught_and_the_folder_read_too(tmp_path: Path) -> None:
    template = (
        "{{ '<tool_call>\\n<function=' }}{{ '<parameter=' }}</parameter></function></tool_call>"
    )
    folder = model_dir(tmp_path, {"chat_template": template})
    reply = format_calls(CALL, dialect="qwen3_coder", tools=TOOLS)
    with (
        scripted(Script(text=reply)) as model,
        serving("--upstream", model.url, "--model-dir", folder, "--dialect", "hermes") as served,
    ):
        out = openai_client(served.url).chat.completions.create(
            model="m", messages=ASK, tools=TOOLS
        )
    assert [c.function.name for c in out.choices[0].message.tool_calls or []] == ["get_weather"]
    assert tool_instructions(TOOLS, dialect="hermes") in model.requests[0]["messages"][0]["content"]


def test_the_config_file_names_the_folder_and_the_flag_wins(tmp_path: Path) -> None:
    """``[server] model_dir`` in the TOML file reads the folder as ``--model-dir`` does; the
    flag, when given too, wins."""
    from callsieve.__main__ import build_parser
    from callsieve._cli_serve import serve_settings
    from callsieve.server import ServerConfig, load_toml

    coder = "{{ '<tool_call>\\n<function=' }}{{ '<parameter=' }}</parameter></function></tool_call>"
    folder = model_dir(tmp_path, {"chat_template": coder})
    other = tmp_path / "other"
    other.mkdir()
    hermes = '{{ "<tool_call>\\n" }}{"name": {{ n }}}{{ "\\n</tool_call>" }}'
    (other / "tokenizer_config.json").write_text(json.dumps({"chat_template": hermes}), "utf-8")
    config = tmp_path / "gateway.toml"
    config.write_text(
        f"[server]\nmodel_dir = {json.dumps(folder)}\n\n"
        f"[replay]\ntranscript = {json.dumps(str(ROOT / 'examples' / 'transcript.txt'))}\n",
        encoding="utf-8",
    )
    args = build_parser().parse_args(["serve", "--config", str(config)])
    built = ServerConfig.build(**serve_settings(args, load_toml))
    assert built.dialect == "qwen3_coder"
    assert built.sieve["dialects"][-2:] == ["qwen3_coder", "hermes"]
    args = build_parser().parse_args(["serve", "--config", str(config), "--model-dir", str(other)])
    assert ServerConfig.build(**serve_settings(args, load_toml)).dialect == "hermes"
    config.write_text("[server]\nmodel_dir = 3\n", encoding="utf-8")
    args = build_parser().parse_args(["serve", "--config", str(config)])
    with pytest.raises(callsieve.ConfigurationError, match=r"\[server\] model_dir"):
        serve_settings(args, load_toml)

"""Issue 36, item 4: a model's folder names its dialect (``_config.model_dir``,
docs/model-metadata.md).

For every chat template in ``../shared/templates/chat/`` a model folder is built in
``tmp_path``: the template as ``chat_template`` in ``tokenizer_config.json``, or as
``chat_template.jinja``. The folder then names the dialect ``EXPECTED`` gives. Templates of
families we do not have are the error that says what to do. Of ours, a template with no call
marker is read by rendering a sample call (``RENDERED``) or by its tool list (``TOOL_LIST``). A ``response_template`` in the folder comes first. The templates are data
from their vendors, read where they are and skipped cleanly when absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from response_templates import FIXTURES
from response_templates import template as fixture_template

import callsieve
from callsieve import ConfigurationError, dialect_for_model_dir
from callsieve.prompt import format_calls

CHAT = ROOT.parent / "shared" / "templates" / "chat"

#: What each template's folder names: its dialects (the first is the model's own).
OURS = {
    "Apertus-8B-Instruct": ("apertus",),
    "ByteDance-Seed-OSS": ("seed_oss",),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": ("command_r7b",),
    "GLM-4.6": ("glm45", "hermes"),
    "GLM-4.7-Flash": ("glm45", "hermes"),
    "glm_4_5": ("glm45", "hermes"),
    "GigaChat3.1-10B-A1.8B": ("gigachat3",),
    "Kimi-K2-Instruct": ("kimi_k2",),
    "Kimi-K2-Thinking": ("kimi_k2",),
    "moonshotai-Kimi-K2": ("kimi_k2",),
    "Kimi-K3": ("kimi_k3",),
    "LFM2.5-8B-A1B": ("lfm2",),
    "MiniMax-M2": ("minimax_m2",),
    "MiniMax-M3": ("minimax_m3", "ernie45"),
    "Mistral-Small-3.2-24B-Instruct-2506": ("mistral",),
    "mistralai-Ministral-3-14B-Reasoning-2512": ("mistral",),
    "mistralai-Mistral-Nemo-Instruct-2407": ("mistral",),
    "unsloth-Magistral-Small-2509": ("mistral",),
    "unsloth-mistral-Devstral-Small-2507": ("mistral",),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": ("qwen3_coder", "hermes"),
    "unsloth-Nemotron-3-Nano": ("qwen3_coder", "hermes"),
    "NVIDIA-Nemotron-Nano-v2": ("nemotron",),
    "nvidia-Llama-3_3-Nemotron-Super-49B-v1_5": ("nemotron",),
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": ("hermes",),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": ("hermes",),
    "Qwen-QwQ-32B": ("hermes",),
    "Qwen-Qwen2.5-7B-Instruct": ("hermes",),
    "Qwen-Qwen3-0.6B": ("hermes",),
    "Qwen-Qwen3-Coder-30B-A3B-Instruct": ("qwen3_coder", "hermes"),
    "Qwen3-Coder": ("qwen3_coder", "hermes"),
    "Qwen3.5-4B": ("qwen3_coder", "hermes"),
    "StepFun3.5-Flash": ("qwen3_coder", "hermes"),
    "stepfun-ai-Step-3.5-Flash": ("qwen3_coder", "hermes"),
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": ("deepseek_native",),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": ("deepseek_native",),
    "llama-cpp-deepseek-r1": ("deepseek_native",),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek_native",),
    "deepseek-ai-DeepSeek-V3.2": ("dsml_v32",),
    "deepseek-ai-DeepSeek-V4": ("dsml_v4",),
    "deepseek-ai-DeepSeek-V4-Flash-0731": ("dsml_v4",),
    "fireworks-ai-llama-3-firefunction-v2": ("firefunction",),
    "gemma4": ("gemma4",),
    "google-gemma-4-31B-it": ("gemma4",),
    "google-gemma-4-31B-it-interleaved": ("gemma4",),
    "google-functiongemma": ("functiongemma",),
    "tool_chat_template_functiongemma": ("functiongemma",),
    "meetkai-functionary-medium-v3.1": ("functionary",),
    "meta-llama-Llama-3.1-8B-Instruct": ("llama3_builtin", "llama3_json"),
    "meta-llama-Llama-3.3-70B-Instruct": ("llama3_builtin", "llama3_json"),
    "openai-gpt-oss-120b": ("gpt_oss",),
    "openbmb-MiniCPM5-1B": ("minicpm5",),
    "tencent-Hy3": ("hy_v3",),
    "tool_chat_template_internlm2_tool": ("internlm2",),
    "tool_chat_template_olmo3": ("olmo3",),
    "upstage-Solar-Open-100B": ("solar_open2",),
}
#: Families not in docs/families.md whose templates write one of our formats byte for byte:
#: the folder names that format's dialect, and that dialect reads their calls.
SAME_FORMAT = {
    "ServiceNow-AI-Apriel-1.5-15b-Thinker": ("hunyuan",),  # <tool_calls>[{…}]</tool_calls>
    "unsloth-Apriel-1.5": ("hunyuan",),
    "Apriel-1.6-15b-Thinker-fixed": ("hunyuan",),
    "Bielik-11B-v3.0-Instruct": ("hermes",),  # <tool_call>\n{"name": …}\n</tool_call>
    "MiMo-VL": ("hermes",),
    "MiroThinker-v1": ("hermes",),
    "Reka-Edge": ("hermes",),
    "ibm-granite-granite-4.0": ("hermes",),
    "ibm-granite-granite-4.1": ("hermes",),
    "poolside-Laguna-S-2.1": ("glm45", "hermes"),  # <arg_key>…</arg_key><arg_value>…
    "Cohere2MoE": ("command_r7b",),  # <|START_ACTION|>[{"tool_call_id": …}]<|END_ACTION|>
}
#: Our families whose template holds no marker of their calls. Its rendering of a sample call
#: names the dialect (jinja2, the draft extra), else its tool list's markers.
RENDERED = {
    "GigaChat3-10B-A1.8B": ("gigachat3",),  # a 'function call' role turn after <|message_sep|>
    "meetkai-functionary-medium-v3.2": ("functionary_v32",),  # >>>NAME\n{…}: '>>>' has no letter
    "meta-llama-Llama-3.2-3B-Instruct": ("llama3_json",),  # the bare {"name", "parameters"}
    "llama-cpp-microsoft-Phi-4-mini-instruct": ("phi4_mini",),  # <|tool_call|>{…}<|/tool_call|>
    "tool_chat_template_xlam_qwen": ("xlam",),  # a bare JSON list; json reads it too, less near
}
TOOL_LIST = {
    "LFM2-8B-A1B": ("lfm2",),  # List of tools: <|tool_list_start|>[…]<|tool_list_end|>
    "llama-cpp-lfm2": ("lfm2",),
    "LFM2.5-Instruct": ("lfm2",),  # List of tools: [ (the words, without the tokens)
    "microsoft-Phi-4-mini-instruct": ("phi4_mini",),  # <|tool|>…<|/tool|>
}
#: Families we do not have: the error.
NOT_OURS = {
    "CohereForAI-c4ai-command-r-plus-tool_use",  # Action: ```json …```
    "HuggingFaceTB-SmolLM3-3B",
    "MiniMax-M1",  # <tool_calls>\n{…}\n{…}\n</tool_calls>: one object a line, no list
    "ibm-granite-granite-3.3-2B-Instruct",
    "muse-glimmer",
}
EXPECTED: dict[str, tuple[str, ...] | None] = {
    **OURS,
    **SAME_FORMAT,
    **RENDERED,
    **TOOL_LIST,
    **dict.fromkeys(NOT_OURS),
}


def templates() -> list[str]:
    return sorted(p.stem for p in CHAT.glob("*.jinja")) if CHAT.is_dir() else []


def folder(tmp_path: Path, source: str, as_file: bool) -> Path:
    """A model folder holding ``source`` as its chat template, one way or the other."""
    config: dict[str, object] = {"bos_token": "<s>"}
    if as_file:
        (tmp_path / "chat_template.jinja").write_text(source, encoding="utf-8")
    else:
        config["chat_template"] = source
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


# ---------------------------------------------------------------- the chat template's markers


@pytest.mark.skipif(not CHAT.is_dir(), reason="../shared/templates/chat is absent")
def test_every_template_is_in_the_table() -> None:
    assert sorted(EXPECTED) == templates()


@pytest.mark.parametrize("as_file", [False, True], ids=["tokenizer_config", "jinja_file"])
@pytest.mark.parametrize("name", templates())
def test_a_model_folder_names_its_dialect(tmp_path: Path, name: str, as_file: bool) -> None:
    source = (CHAT / f"{name}.jinja").read_text(encoding="utf-8")
    model = folder(tmp_path, source, as_file)
    want = EXPECTED[name]
    if want is None:
        with pytest.raises(ConfigurationError) as e:
            dialect_for_model_dir(model)
        message = str(e.value)
        assert "no dialect's markers" in message
        assert "--dialect" in message and "response_template" in message
        assert "draft-dialect" in message
        return
    found = dialect_for_model_dir(model)
    assert found.dialects == want
    assert (found.source, found.grammar_dirs, found.reasoning) == ("chat_template", (), None)
    assert f"dialect {want[0]}" in found.why
    if name in RENDERED:
        assert "rendering of a sample call" in found.why
    if name in TOOL_LIST:
        assert "tool list's markers" in found.why


def test_the_chosen_dialect_reads_its_own_calls(tmp_path: Path) -> None:
    """The folder's dialects read the calls its first dialect writes."""
    template = "{% for m in messages %}{{ '<tool_call>\\n<function=' + m.name + '>' }}{% endfor %}"
    source = template + "<parameter=x></parameter></function></tool_call>"
    found = dialect_for_model_dir(folder(tmp_path, source, as_file=True))
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    text = format_calls(calls, dialect=found.dialect)
    assert callsieve.parse(text, dialects=list(found.dialects)).calls[0].input == {"city": "Paris"}


def test_the_log_says_which_matched_and_which_were_less_specific(tmp_path: Path) -> None:
    source = (
        "<tool_call>{{ x }}</tool_call><function={{ n }}><parameter={{ p }}></parameter></function>"
    )
    found = dialect_for_model_dir(folder(tmp_path, source, as_file=False))
    assert found.dialects == ("qwen3_coder", "hermes")
    assert "hermes read too" in found.why and "less specific: " in found.why


def test_a_folder_without_a_template_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="no chat template.*--dialect"):
        dialect_for_model_dir(tmp_path)
    with pytest.raises(ConfigurationError, match="is not a folder"):
        dialect_for_model_dir(tmp_path / "missing")
    (tmp_path / "tokenizer_config.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a readable JSON file"):
        dialect_for_model_dir(tmp_path)


# ---------------------------------------------------------------- a sample call's rendering

#: A template with no marker: each turn's calls as one bare JSON list (xLAM's shape).
BARE_LIST = (
    "{% for m in messages %}{% if m.tool_calls %}"
    "{{ m.tool_calls | map(attribute='function') | list | tojson }}"
    "{% else %}{{ m.content }}{% endif %}{% endfor %}"
)


def test_the_nearest_writer_of_the_rendering_wins(tmp_path: Path) -> None:
    """``json`` and ``xlam`` both read the bare list; ``xlam`` writes it as the template
    does, so it wins, and its calls read back."""
    found = dialect_for_model_dir(folder(tmp_path, BARE_LIST, as_file=True))
    assert found.dialects == ("xlam",)
    assert "rendering of a sample call" in found.why and "less specific: json" in found.why
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    text = format_calls(calls, dialect=found.dialect)
    assert callsieve.parse(text, dialects=list(found.dialects)).calls[0].input == {"city": "Paris"}


def test_equally_near_writers_are_an_error_naming_them(tmp_path: Path) -> None:
    """A dialect of one's own that reads and writes as ``xlam`` does ties with it."""
    grammars = tmp_path / "grammars"
    (grammars / "spelling").mkdir(parents=True)
    for sub in ("", "spelling/"):
        text = (ROOT / "grammar" / f"{sub}xlam.lark").read_text(encoding="utf-8")
        twin = text.replace("xlam", "twin").replace("XLAM", "TWIN")
        (grammars / f"{sub}twin.lark").write_text(twin, encoding="utf-8")
    model = tmp_path / "model"
    model.mkdir()
    with pytest.raises(ConfigurationError) as e:
        dialect_for_model_dir(folder(model, BARE_LIST, True), grammar_dirs=(str(grammars),))
    message = str(e.value)
    assert "none writing the calls nearer" in message and "twin, xlam" in message
    assert "--dialect" in message


def test_without_jinja2_the_markers_decide_and_the_error_says_so(tmp_path: Path) -> None:
    """Without the draft extra the rendering is skipped: the tool list still names
    ``phi4_mini``; a template only its rendering names is an error that says why."""
    tool_list = "{{ '<|system|><|tool|>' + tools | tojson + '<|/tool|><|end|>' }}"
    for name, source in (("list", BARE_LIST), ("tools", tool_list)):
        (tmp_path / name).mkdir()
        folder(tmp_path / name, source, as_file=True)
    code = (
        "import sys\nsys.modules['jinja2'] = None\nimport callsieve\n"
        f"print(callsieve.dialect_for_model_dir({str(tmp_path / 'tools')!r}).dialects)\n"
        f"callsieve.dialect_for_model_dir({str(tmp_path / 'list')!r})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert proc.stdout.strip() == "('phi4_mini',)", proc.stderr
    assert "ConfigurationError" in proc.stderr and "no dialect's markers" in proc.stderr
    assert "needs jinja2" in proc.stderr and "callsieve[draft]" in proc.stderr


def test_tool_lists_of_two_dialects_alike_are_an_error_naming_them(tmp_path: Path) -> None:
    """Two dialects of one's own, each with tool-list tags no other spells, both in the
    template, equally many and long: a tie, never a guess."""
    grammars = tmp_path / "grammars"
    (grammars / "spelling").mkdir(parents=True)
    for twin in ("alph", "beta"):
        for sub in ("", "spelling/"):
            text = (ROOT / "grammar" / f"{sub}phi4_mini.lark").read_text(encoding="utf-8")
            text = text.replace("phi4_mini", f"{twin}_x").replace("PHI4", twin.upper())
            text = text.replace("<|tool|>", f"<|{twin}|>").replace("<|/tool|>", f"<|/{twin}|>")
            (grammars / f"{sub}{twin}_x.lark").write_text(text, encoding="utf-8")
    source = "{{ '<|alph|>' + '<|beta|>' }}{{ tools | tojson }}{{ '<|/alph|><|/beta|>' }}"
    model = tmp_path / "model"
    model.mkdir()
    with pytest.raises(ConfigurationError, match="tool-list markers of several dialects"):
        dialect_for_model_dir(folder(model, source, True), grammar_dirs=(str(grammars),))
    one = source.replace("'<|beta|>'", "''").replace("<|/beta|>", "")
    found = dialect_for_model_dir(folder(model, one, True), grammar_dirs=(str(grammars),))
    assert found.dialects == ("alph_x",) and "tool list's markers" in found.why


@pytest.mark.parametrize("name", sorted({*RENDERED, *TOOL_LIST}))
def test_vllm_auto_reads_the_folder_as_serve_does(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM's ``callsieve_auto`` (``CALLSIEVE_MODEL_DIR``) names what ``serve --model-dir``
    names: both call ``dialect_for_model_dir``."""
    if not CHAT.is_dir():
        pytest.skip("../shared/templates/chat is absent")
    from callsieve.integrations.vllm._variants import ENV_MODEL_DIR, VARIANTS, resolved

    source = (CHAT / f"{name}.jinja").read_text(encoding="utf-8")
    model = folder(tmp_path, source, as_file=False)
    monkeypatch.setenv(ENV_MODEL_DIR, str(model))
    row = resolved(next(v for v in VARIANTS if v.name == "callsieve_auto"))
    assert (row.dialects, row.writes) == (EXPECTED[name], dialect_for_model_dir(model).dialect)


# ---------------------------------------------------------------- a response_template first


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/templates/response is absent")
def test_a_response_template_comes_before_the_chat_template(tmp_path: Path) -> None:
    spec = fixture_template("smollm")
    config = {"chat_template": "<|tool_calls_section_begin|>", "response_template": spec}
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    found = dialect_for_model_dir(tmp_path / "model", write_to=tmp_path / "grammars")
    assert found.source == "response_template"
    assert found.grammar_dirs == (str(tmp_path / "grammars"),)
    reply = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    result = callsieve.parse(reply, dialects=list(found.dialects), grammar_dirs=found.grammar_dirs)
    assert [(c.name, c.input) for c in result.calls] == [("f", {"a": 1})]


def test_a_response_template_that_does_not_compile_is_its_error(tmp_path: Path) -> None:
    config = {"response_template": {"fields": {"tool_calls": {"content": "kv-lines"}}}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    with pytest.raises(ConfigurationError, match="fields.tool_calls.content"):
        dialect_for_model_dir(tmp_path)

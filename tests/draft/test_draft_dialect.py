"""Issue 36, item 3: ``callsieve draft-dialect`` — a dialect drafted from a chat template.

The extraction is tested on small templates written here; the drafts of real templates
(``../shared/templates/chat``, skipped when absent) load, read the template's own
renderings, and round-trip ``format_calls`` with their spelling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("jinja2")

from callsieve import parse
from callsieve.__main__ import main
from callsieve._grammar.compiled import load_grammar
from callsieve.draft import DraftError, dialect_name, draft, write
from callsieve.draft._extract import ARGS_ENVELOPE, ARGS_JSON, ARGS_MARKUP, tokens
from callsieve.draft._probe import trim_tags
from callsieve.prompt import format_calls

CHAT = Path(__file__).resolve().parents[3] / "shared" / "templates" / "chat"

#: A made-up markup family: a section, a name attribute, one element per argument.
ACME = """{%- for m in messages -%}
{%- if m.role == 'user' -%}<u>{{ m.content }}</u>
{%- else -%}<a>{% if m.reasoning_content %}<acme:thought>{{ m.reasoning_content }}</acme:thought>{% endif %}{{ m.content }}
{%- if m.tool_calls %}<acme:calls>
{% for c in m.tool_calls %}<call name="{{ c.function.name }}">
{% for k, v in c.function.arguments.items() %}<arg name="{{ k }}">{{ v if v is string else v | tojson }}</arg>
{% endfor %}</call>
{% endfor %}</acme:calls>{% endif %}</a>
{%- endif -%}{%- endfor -%}{% if add_generation_prompt %}<a>{% endif %}"""

#: A made-up JSON family: the name before the arguments' object, no section.
BETA = """{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}[[call {{ c.function.name }}]]<args>{{ c.function.arguments | tojson }}</args>
{%- endfor %}</{{ m.role }}>{%- endfor -%}"""

#: Writes no calls at all.
SILENT = "{% for m in messages %}{{ m.content }}{% endfor %}"

#: Writes a call's id only.
IDS = """{%- for m in messages -%}{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}<tc>{{ c.id }}<sep>{{ c.function.arguments | tojson }}</tc>
{%- endfor -%}{%- endfor -%}"""

#: Refuses two calls in one turn.
ONE_ONLY = BETA.replace(
    "{%- for c in",
    "{%- if (m.tool_calls or []) | length > 1 %}{{ raise_exception('one') }}"
    "{% endif %}{%- for c in",
)

#: Writes each call as a bare JSON object, no marker.
BARE = """{%- for m in messages -%}{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}{{ {"name": c.function.name, "parameters": c.function.arguments}
| tojson }}{% endfor -%}{%- endfor -%}"""

#: Writes the arguments object as Python repr.
REPR_ARGS = """{%- for m in messages -%}{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}<tc>{"name": "{{ c.function.name }}", "arguments": \
{{ c.function.arguments }}}</tc>{% endfor -%}{%- endfor -%}"""

#: A made-up sectioned family: plural words in its tags, a namespace before each name.
NS = """{%- for m in messages -%}{{ m.content or '' }}
{%- if m.tool_calls %}<|zeta_calls_begin|>{% for c in m.tool_calls %}<|zeta_call|>\
tools.{{ c.function.name }}<|zeta_args|>{{ c.function.arguments | tojson }}<|zeta_end|>\
{% endfor %}<|zeta_calls_end|>{% endif %}{%- endfor -%}"""

#: Writes every value as it is: objects as Python repr.
REPR = ACME.replace("v if v is string else v | tojson", "v")


def _draft(text: str, name: str = "draft_acme"):  # type: ignore[no-untyped-def]
    return draft(text, name)


# ------------------------------------------------------------------ extraction
class TestExtraction:
    def test_tokens_cut_tags_white_space_text_and_json(self) -> None:
        ts = tokens('<a x="1">f\n{"k": [1, {"j": 2}]} {x')
        assert [(t.kind, t.text) for t in ts] == [
            ("tag", '<a x="1">'),
            ("text", "f"),
            ("ws", "\n"),
            ("json", '{"k": [1, {"j": 2}]}'),
            ("ws", " "),
            ("text", "{"),
            ("text", "x"),
        ]

    def test_a_common_prefix_never_ends_inside_a_tag(self) -> None:
        a = "x<tool_call>y"
        assert trim_tags(3, 0, a) == (1, 0)
        assert trim_tags(0, 3, "a</b>") == (0, 0)

    def test_markup_family_markers(self) -> None:
        d = _draft(ACME)
        s = d.shape
        assert s.args == ARGS_MARKUP
        assert "".join(t.text for t in s.section) == "<acme:calls>"
        assert "".join(t.text for t in s.section_end) == "</acme:calls>"
        assert "".join(t.text for t in s.param) == '<arg name="keyone">valone</arg>'
        assert s.think == ("<acme:thought>", "</acme:thought>")

    def test_json_family_markers(self) -> None:
        d = _draft(BETA, "draft_beta")
        assert d.shape.args == ARGS_JSON
        assert d.shape.section == ()
        assert "[[call" in "".join(t.text for t in d.shape.head)

    def test_no_tool_rendering_is_an_error(self) -> None:
        with pytest.raises(DraftError, match="no tool rendering"):
            _draft(SILENT, "draft_silent")

    def test_a_name_only_in_an_id_is_reported(self) -> None:
        d = _draft(IDS, "draft_ids")
        assert any(n.startswith("a name only in an id") for n in d.notes)
        assert [r.what for r, ok in d.check() if not ok] == []

    def test_values_as_python_repr_are_reported(self) -> None:
        d = _draft(REPR, "draft_repr")
        assert any(n.startswith("values as Python repr") for n in d.notes)

    def test_a_template_that_refuses_two_calls_drafts_one_call_blocks(self) -> None:
        d = _draft(ONE_ONLY, "draft_one")
        assert any(n.startswith("one call per turn") for n in d.notes)
        assert [r.what for r, ok in d.check() if not ok] == []

    def test_a_bare_json_object_is_no_draft(self) -> None:
        with pytest.raises(DraftError, match="no marker"):
            _draft(BARE, "draft_bare")

    def test_arguments_as_python_repr_are_no_draft(self) -> None:
        with pytest.raises(DraftError, match="arguments as Python repr"):
            _draft(REPR_ARGS, "draft_repr_args")

    def test_a_think_tag_forced_open_is_reported(self) -> None:
        forced = ACME.replace("<a>{% endif %}", "<a><acme:thought>{% endif %}")
        d = _draft(forced)
        assert any(n.startswith("a think tag forced open") for n in d.notes)


# ------------------------------------------------------------------ drafting
class TestDrafting:
    def test_the_draft_is_built_from_tolerant_pieces_not_renderings(self) -> None:
        d = _draft(ACME)
        assert "_LT" in d.grammar and "NAME_ATTR" in d.grammar and "WS_RUN?" in d.grammar
        assert "valone" not in d.grammar and "fnalpha" not in d.grammar

    def test_the_draft_reads_its_renderings(self) -> None:
        d = _draft(ACME)
        assert [r.what for r, ok in d.check() if not ok] == []

    def test_the_draft_reads_deviations_the_renderings_did_not_show(self, tmp_path: Path) -> None:
        d = _draft(ACME)
        write(d, tmp_path)
        text = "＜acme:calls >\n<call  name='f' id=\"7\"><arg name=k>v</arg></call></acme:calls>"
        result = parse(text, dialects=["draft_acme"], grammar_dirs=[str(tmp_path)])
        assert [(c.name, c.input) for c in result.calls] == [("f", {"k": "v"})]

    def test_a_plural_s_and_a_namespace_before_the_name_may_be_left_out(
        self, tmp_path: Path
    ) -> None:
        """Models write ``zeta_call_begin`` for ``zeta_calls_begin``, and drop ``tools.``."""
        d = _draft(NS, "draft_ns")
        write(d, tmp_path)
        assert [r.what for r, ok in d.check() if not ok] == []
        for text in (
            '<|zeta_call_begin|><|zeta_call|>f<|zeta_args|>{"k": 1}<|zeta_end|><|zeta_call_end|>',
            (
                '<|zeta_calls_begin|><|zeta_call|>tools.f<|zeta_args|>{"k": 1}<|zeta_end|>'
                "<|zeta_calls_end|>"
            ),
        ):
            result = parse(text, dialects=["draft_ns"], grammar_dirs=[str(tmp_path)])
            assert [(c.name, c.input) for c in result.calls] == [("f", {"k": 1})], text

    def test_a_value_left_open_is_closed_at_the_next_tag_and_recorded(self, tmp_path: Path) -> None:
        d = _draft(ACME)
        write(d, tmp_path)
        text = '<acme:calls><call name="f"><arg name="a">x<arg name="b">y</arg></call></acme:calls>'
        result = parse(text, dialects=["draft_acme"], grammar_dirs=[str(tmp_path)])
        assert [(c.name, c.input) for c in result.calls] == [("f", {"a": "x", "b": "y"})]
        assert result.blocks[0].repairs == ("unclosed_parameter",)

    def test_the_draft_reads_reasoning_in_its_tags(self, tmp_path: Path) -> None:
        d = _draft(ACME)
        write(d, tmp_path)
        text = "<acme:thought>hm</acme:thought>ok"
        result = parse(text, dialects=["draft_acme"], grammar_dirs=[str(tmp_path)])
        assert (result.reasoning, result.text) == ("hm", "ok")

    @pytest.mark.parametrize("source", [ACME, BETA])
    def test_round_trips_format_calls(self, source: str, tmp_path: Path) -> None:
        d = _draft(source, "draft_x")
        write(d, tmp_path)
        calls = [("get_weather", {"city": "Paris", "days": 3}), ("f", {})]
        text = format_calls(calls, dialect="draft_x", grammar_dirs=[str(tmp_path)])
        result = parse(text, dialects=["draft_x"], grammar_dirs=[str(tmp_path)])
        assert [(c.name, c.input) for c in result.calls] == calls

    def test_the_command_writes_the_files_and_check_grammar_takes_them(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        template = tmp_path / "Acme-1.jinja"
        template.write_text(ACME, encoding="utf-8")
        out = tmp_path / "out"
        assert main(["draft-dialect", str(template), "--out", str(out)]) == 0
        assert "## What the renderings could not tell" in capsys.readouterr().out
        grammar = out / "draft_acme_1.lark"
        assert (out / "spelling" / "draft_acme_1.lark").is_file()
        assert main(["check-grammar", str(grammar)]) == 0
        assert ": ok" in capsys.readouterr().out

    def test_a_tokenizer_config_is_read_for_its_chat_template(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        model = tmp_path / "acme-2"
        model.mkdir()
        config = {
            "chat_template": [
                {"name": "default", "template": SILENT},
                {"name": "tool_use", "template": ACME},
            ]
        }
        (model / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        out = tmp_path / "out"
        assert main(["draft-dialect", str(model / "tokenizer_config.json"), "--out", str(out)]) == 0
        assert (out / "draft_acme_2.lark").is_file()
        capsys.readouterr()


# ------------------------------------------------------------------ real templates
#: One template per family that has a hand-written dialect (docs/families.md).
FAMILY_TEMPLATES = [
    ("Qwen-Qwen3-0.6B.jinja", ARGS_ENVELOPE),
    ("Qwen3-Coder.jinja", ARGS_MARKUP),
    ("glm_4_5.jinja", ARGS_MARKUP),
    ("GLM-4.7-Flash.jinja", ARGS_MARKUP),
    ("Kimi-K2-Thinking.jinja", ARGS_JSON),
    ("MiniMax-M2.jinja", ARGS_MARKUP),
    ("ByteDance-Seed-OSS.jinja", ARGS_MARKUP),
    ("deepseek-ai-DeepSeek-V3.1.jinja", ARGS_JSON),
    ("deepseek-ai-DeepSeek-V3.2.jinja", ARGS_MARKUP),
    ("deepseek-ai-DeepSeek-V4.jinja", ARGS_MARKUP),
]


@pytest.mark.parametrize(("file", "args"), FAMILY_TEMPLATES)
def test_a_real_template_drafts_a_dialect_that_reads_its_renderings(
    file: str, args: str, tmp_path: Path
) -> None:
    path = CHAT / file
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    name = dialect_name(str(path))
    d = draft(path.read_text(encoding="utf-8"), name, file)
    assert d.shape.args == args
    paths = write(d, tmp_path)
    load_grammar((name,), (str(tmp_path),))
    assert main(["check-grammar", str(paths[0])]) == 0
    assert len(d.renderings) >= 4
    assert [r.what for r, ok in d.check() if not ok] == []
    calls = [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "UTC"})]
    text = format_calls(calls, dialect=name, grammar_dirs=[str(tmp_path)])
    result = parse(text, dialects=[name], grammar_dirs=[str(tmp_path)])
    assert [(c.name, c.input) for c in result.calls] == calls


def test_only_the_draft_package_imports_jinja2() -> None:
    """jinja2 sits behind the ``draft`` extra: no module outside ``callsieve/draft`` names it,
    and the CLI reaches the package through ``importlib`` (only when the command runs)."""
    import ast

    import callsieve

    src = Path(callsieve.__file__).parent
    for path in src.rglob("*.py"):
        if "draft" in path.relative_to(src).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "jinja2" for n in names), path
            assert not any("draft" in n.split(".") for n in names), path

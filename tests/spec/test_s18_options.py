"""SPEC §18 Constrained decoding: the options, what cannot be exported (a
``ConfigurationError``, never a looser grammar), a dialect exported from its grammar data
alone, the command line, and the SPEC §11 loop of docs/constrained-decoding.md run as it
stands there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from engines import accepts
from helpers import ROOT
from schema_values import TOOLS

from callsieve import DEFAULT_DIALECTS, ConfigurationError, FormatError, parse
from callsieve.__main__ import main
from callsieve.constrain import arguments_grammar, gbnf, lark_grammar, shape_name, structural_tag
from callsieve.prompt import format_calls

DOC = ROOT / "docs" / "constrained-decoding.md"


def _tool(schema: dict[str, Any], name: str = "f") -> list[dict[str, Any]]:
    return [{"name": name, "parameters": schema}]


def test_the_section_11_loop_of_the_docs_runs() -> None:
    section = DOC.read_text(encoding="utf-8").split("## The SPEC §11 loop", 1)[1]
    code = section.split("```python\n", 1)[1].split("\n```\n", 1)[0]
    namespace: dict[str, Any] = {"__name__": "constrained_decoding_doc"}
    exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's block, as written
    assert [c.name for c in namespace["result"].calls] == ["get_weather"]


@pytest.mark.parametrize("dialect", DEFAULT_DIALECTS)
def test_every_default_dialect_has_a_shape(dialect: str) -> None:
    assert shape_name(dialect) == ("native" if dialect == "deepseek_native" else "markup")


@pytest.mark.parametrize(
    ("choice", "same_as"),
    [
        ({"type": "any"}, "required"),
        ({"type": "auto"}, "auto"),
        ({"type": "none"}, "none"),
        ({"type": "tool", "name": "now"}, {"name": "now"}),
        ({"type": "function", "function": {"name": "now"}}, {"name": "now"}),
    ],
)
def test_tool_choice_takes_the_apis_shapes(choice: Any, same_as: Any) -> None:
    assert lark_grammar(TOOLS, "xml", choice) == lark_grammar(TOOLS, "xml", same_as)


@pytest.mark.parametrize("fmt", ["lark", "gbnf"])
def test_free_names_take_any_spelled_name_and_any_object(fmt: str) -> None:
    make = lark_grammar if fmt == "lark" else gbnf
    for dialect in DEFAULT_DIALECTS:
        grammar = make([], dialect, "required", free_names=True)
        text = format_calls([("ns::tool.v2", {"a": [1, {"b": "c"}], "s": "x"})], dialect=dialect)
        assert accepts(grammar, "Ok. " + text, fmt), text
        assert not accepts(grammar, "Ok.", fmt)


SCHEMA_ERRORS = [
    (
        "gbnf",
        {"type": "object", "properties": {"n": {"type": "number", "minimum": 0}}},
        "bounds on a number",
    ),
    (
        "gbnf",
        {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}},
        "'multipleOf'",
    ),
    (
        "gbnf",
        {
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "^a+$", "maxLength": 3}},
        },
        "together",
    ),
    (
        "gbnf",
        {"type": "object", "properties": {"s": {"type": "string", "format": "email"}}},
        "format 'email'",
    ),
    ("lark", {"type": "object", "properties": {"s": {"not": {"type": "string"}}}}, "'not'"),
    (
        "lark",
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "(?=a)a"}}},
        "look-around",
    ),
    (
        "lark",
        {"type": "object", "properties": {"r": {"$ref": "https://x.org/s.json"}}},
        "local references",
    ),
    (
        "structural-tag",
        {"type": "object", "properties": {"n": {"type": "number", "maximum": 2}}},
        "number",
    ),
]


@pytest.mark.parametrize(("fmt", "schema", "says"), SCHEMA_ERRORS)
def test_what_cannot_be_enforced_is_a_configuration_error(fmt: str, schema: Any, says: str) -> None:
    make = {"lark": lark_grammar, "gbnf": gbnf, "structural-tag": structural_tag}[fmt]
    with pytest.raises(ConfigurationError, match=says) as info:
        make(_tool(schema), "dsml")
    assert "tools[0]" in str(info.value)


def test_misuse_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="not among the tools"):
        lark_grammar(TOOLS, "xml", {"name": "nope"})
    with pytest.raises(ConfigurationError, match="tool_choice"):
        lark_grammar(TOOLS, "xml", "sometimes")
    with pytest.raises(ConfigurationError, match="a second tool"):
        lark_grammar(TOOLS + TOOLS[:1], "xml")
    with pytest.raises(ConfigurationError, match="cannot be written"):
        lark_grammar(_tool({}, name='say "hi"'), "dsml")
    with pytest.raises(ConfigurationError, match="cannot be written"):
        gbnf(_tool({}, name="two words"), "deepseek_native")
    with pytest.raises(ConfigurationError, match="leave out"):
        lark_grammar(TOOLS, "xml", parse_dialects=("dsml",))
    with pytest.raises(ConfigurationError, match="needs tools"):
        lark_grammar([], "xml", "required")
    with pytest.raises(ConfigurationError, match="unknown dialect 'nope'; the dialects are"):
        lark_grammar(TOOLS, "nope")  # (the one error every place that takes a name gives)
    with pytest.raises(ConfigurationError, match="free_text"):
        structural_tag(TOOLS, "xml", free_text="some")
    with pytest.raises(ConfigurationError, match="not among the tools"):
        arguments_grammar(TOOLS, "nope")
    with pytest.raises(FormatError):
        lark_grammar([{"parameters": {}}], "xml")


def test_property_names_a_tag_cannot_hold_take_a_json_body() -> None:
    tools = _tool({"type": "object", "properties": {'say "hi"': {"type": "integer"}}})
    text = format_calls([("f", {'say "hi"': 1})], dialect="dsml_v4")
    assert accepts(lark_grammar(tools, "dsml_v4"), text)
    assert not accepts(lark_grammar(tools, "dsml_v4"), text.replace(": 1", ': "x"'))


# ------------------------------------------------- a dialect exported from its grammar data
MYTAGS = """\
// dialect: mytags — a family of this test's: <my_calls> around the markup body.
mytags: MY_OPEN _markup_body CALLS_CLOSE

MY_OPEN: _LT "my_calls" _OPEN_END
CALLS_CLOSE: _LT_SLASH "my_calls" _CLOSE_END
"""
SPELLING = """\
CALLS_OPEN: "<my_calls>"
CALLS_CLOSE: "</my_calls>"
INVOKE_OPEN: "<invoke"
INVOKE_CLOSE: "</invoke>"
PARAM_OPEN: "<parameter"
PARAM_CLOSE: "</parameter>"
NAME_ATTR: " name=\\"{}\\""
ATTR: " string=\\"{}\\""
TAG_END: ">"
CDATA_OPEN: "<![CDATA["
CDATA_CLOSE: "]]>"
STRING_BODY: "plain"
"""


def test_a_new_family_with_a_spelling_file_is_exported_with_no_code(tmp_path: Path) -> None:
    (tmp_path / "spelling").mkdir()
    (tmp_path / "mytags.lark").write_text(MYTAGS, encoding="utf-8")
    (tmp_path / "spelling" / "mytags.lark").write_text(SPELLING, encoding="utf-8")
    dirs = [str(tmp_path)]
    dialects = (*DEFAULT_DIALECTS, "mytags")
    text = "Sure. " + format_calls(
        [("get_weather", {"city": "a < b", "days": 2})], "mytags", grammar_dirs=dirs
    )
    assert text.startswith("Sure. <my_calls>\n<invoke")
    for fmt, make in (("lark", lark_grammar), ("gbnf", gbnf)):
        grammar = make(TOOLS, "mytags", "required", grammar_dirs=dirs)
        assert accepts(grammar, text.replace("a < b", "Paris"), fmt)
        assert not accepts(grammar, text.replace("2", "20"), fmt)
    result = parse(text.replace("a < b", "Paris"), dialects=dialects, grammar_dirs=dirs)
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [
        ("get_weather", {"city": "Paris", "days": 2}, "mytags")
    ]
    assert shape_name("mytags", dirs) == "markup"
    shutil.rmtree(tmp_path / "spelling")


# ------------------------------------------------------------------------- the CLI
def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_grammar_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    code, out, _ = _cli(["grammar", "--dialect", "dsml_v41", "--tools", str(tools)], capsys)
    assert code == 0 and out == lark_grammar(TOOLS, "dsml_v41")
    code, out, _ = _cli(
        [
            "grammar",
            "--tools",
            str(tools),
            "--format",
            "gbnf",
            "--dialect",
            "deepseek_native",
            "--tool-choice",
            "now",
        ],
        capsys,
    )
    assert code == 0 and out == gbnf(TOOLS, "deepseek_native", {"name": "now"})
    code, out, _ = _cli(
        [
            "grammar",
            "--tools",
            str(tools),
            "--format",
            "structural-tag",
            "--no-parallel-calls",
            "--free-text",
            "checked",
        ],
        capsys,
    )
    assert code == 0
    assert json.loads(out) == structural_tag(
        TOOLS, "dsml", parallel_tool_calls=False, free_text="checked"
    )
    for bad in (["--tool-choice", "nope"], ["--dialect", "nope"], ["--format", "yaml"]):
        code, out, err = _cli(["grammar", "--tools", str(tools), *bad], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
    code, _, err = _cli(["grammar", "--tools", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "no such file" in err


def test_the_grammar_command_needs_no_import_until_it_runs() -> None:
    import subprocess
    import sys

    probe = "import sys, callsieve.__main__; print('callsieve.constrain' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=60,
    ).stdout
    assert out.strip() == "False"

"""Issue 25 items 5-7 (SPEC §12, §14, §19): several families at once, a user's dialect from a
folder of their own, the one error for an unknown dialect name, the ``dialects`` and
``check-grammar`` commands, and the metrics per dialect."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways, stream_sieve

import callsieve
from callsieve import DEFAULT_DIALECTS, ConfigurationError, Metrics, Sieve, parse
from callsieve.prompt import format_calls, format_results, tool_instructions

HERMES = '<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>'
QWEN = "<tool_call>\n<function=b>\n<parameter=y>\n2\n</parameter>\n</function>\n</tool_call>"
GLM = "<tool_call>c\n<arg_key>z</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
TCX = "<tool_call><tool_name>d</tool_name><parameters>{}</parameters></tool_call>"
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.e:0<|tool_call_argument_begin|>"
    "{}<|tool_call_end|><|tool_calls_section_end|>"
)
DSML = '<|DSML|tool_calls><|DSML|invoke name="f"></|DSML|invoke></|DSML|tool_calls>'


def test_all_enables_every_dialect_the_defaults_first() -> None:
    """Every dialect, less those that read another's grammar (``//%reads``: glm53_flash
    reads glm45's, which is there)."""
    names = Sieve(dialects="all")._g.dialects
    assert names[: len(DEFAULT_DIALECTS)] == DEFAULT_DIALECTS
    assert set(names) == set(callsieve.available_dialects()) - {"glm53_flash"}


def test_families_sharing_tool_call_are_told_apart_by_what_follows() -> None:
    text = f"Go:\n{HERMES}\n{QWEN}\n{GLM}\n{TCX}\n{KIMI}\n{DSML}\ndone"
    r = run_all_ways(text, dialects="all")
    assert [(c.name, c.dialect) for c in r.calls] == [
        ("a", "hermes"),
        ("b", "qwen3_coder"),
        ("c", "glm45"),
        ("d", "tool_call_xml"),
        ("e", "kimi_k2"),
        ("f", "dsml"),
    ]
    assert r.text == "Go:\n\n\n\n\n\n\ndone"


def test_metrics_count_blocks_calls_and_failures_per_dialect() -> None:
    m = Metrics()
    text = HERMES + QWEN + QWEN + "<tool_call>\n<function=x>\n</tool_call>"
    stream_sieve([text], dialects="all", metrics=m)
    snap = m.snapshot()
    assert snap["blocks_parsed"] == {"hermes": 1, "qwen3_coder": 2}
    assert snap["calls_by_dialect"] == {"hermes": 1, "qwen3_coder": 2}
    assert snap["failed_by_dialect"] == {"qwen3_coder": 1}


# ---------------------------------------------------------------- one error for a bad name
def _error(build: Any) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as info:
        build()
    return info.value


@pytest.mark.parametrize(
    "build",
    [
        lambda: Sieve(dialects=["nope"]),
        lambda: parse("x", dialects=["nope"]),
        lambda: Sieve(dialects=["Not-A-Name"]),
        lambda: format_calls([("f", {})], dialect="nope"),
        lambda: format_results(["x"], dialect="nope"),
        lambda: tool_instructions([], dialect="nope"),
    ],
    ids=["sieve", "parse", "bad-name", "format_calls", "format_results", "tool_instructions"],
)
def test_every_place_that_takes_a_dialect_name_lists_the_valid_ones(build: Any) -> None:
    err = _error(build)
    assert "unknown dialect" in str(err) and "hermes, " in str(err) and "kimi_k2, " in str(err)
    assert {"hermes", "qwen3_coder", "all"} <= set(err.expected)


def test_the_command_line_gives_the_same_error(capsys: Any) -> None:
    from callsieve.__main__ import main

    assert main(["parse", "-", "--dialects", "nope"]) == 2
    assert "unknown dialect 'nope'; the dialects are" in capsys.readouterr().err


# ---------------------------------------------------------------- a folder of one's own
MINE = """// dialect: mine — <call f>{"a": 1}</call>
mine: mine_call
mine_call: mine_name mine_json MINE_CLOSE -> call
mine_name: MINE_OPEN -> call_name
mine_json: MINE_JSON_RUN -> call_json
MINE_OPEN: /<call (?P<v>[a-z_]{1,64})>/
MINE_CLOSE: "</call>"
MINE_JSON_RUN: /\\{[\\s\\S]*\\}/
"""


def _folder(tmp_path: Path, text: str = MINE, name: str = "mine") -> str:
    (tmp_path / f"{name}.lark").write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_a_folder_of_ones_own_adds_its_dialects_to_the_defaults(tmp_path: Path) -> None:
    d = _folder(tmp_path)
    text = 'x <call get>{"a": 1}</call> ' + DSML
    for r in (parse(text, grammar_dirs=[d]), run_all_ways(text, grammar_dirs=[d])):
        assert [(c.name, c.input, c.dialect) for c in r.calls] == [
            ("get", {"a": 1}, "mine"),
            ("f", {}, "dsml"),
        ]
    assert run_all_ways(text, grammar_dirs=[d], dialects=["mine"]).text == "x  " + DSML
    assert "mine" in callsieve.dialects([d])


def test_dialects_lists_every_dialect_with_one_line(capsys: Any, tmp_path: Path) -> None:
    from callsieve.__main__ import main

    assert main(["dialects", "--grammar-dir", _folder(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names[: len(DEFAULT_DIALECTS)] == list(DEFAULT_DIALECTS)
    assert {"hermes", "gpt_oss", "antml", "mine"} <= set(names)
    assert any(line.startswith("hermes") and "write" in line and "Qwen" in line for line in lines)


def test_check_grammar_reports_what_the_loader_refuses_with_file_and_line(
    tmp_path: Path,
) -> None:
    from callsieve.__main__ import main

    good = Path(_folder(tmp_path)) / "mine.lark"
    out = io.StringIO()
    sys_out = sys.stdout
    sys.stdout = out
    try:
        assert main(["check-grammar", str(good)]) == 0
        bad = tmp_path / "bad"
        bad.mkdir()
        path = Path(_folder(bad, 'bad: B_OPEN B_CLOSE\nB_OPEN: "<b>"\nB_CLOSE: /x+/\n', "bad"))
        assert main(["check-grammar", str(path / "bad.lark")]) == 1
        typo = tmp_path / "typo"
        typo.mkdir()
        t = Path(_folder(typo, MINE.replace("-> call_json", "-> call_jsn"), "mine"))
        main(["check-grammar", str(t / "mine.lark")])
    finally:
        sys.stdout = sys_out
    text = out.getvalue()
    assert f"{good}: ok" in text
    assert f"{path / 'bad.lark'}:3" in text and "B_CLOSE" in text
    assert f"{t / 'mine.lark'}:5: warning: alias 'call_jsn'" in text


def test_check_grammar_runs_as_a_command() -> None:
    grammar = Path(__file__).resolve().parents[2] / "grammar" / "hermes.lark"
    done = subprocess.run(
        [sys.executable, "-m", "callsieve", "check-grammar", str(grammar)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "ok" in done.stdout


SHADOW = """\
// dialect: shadow — spelled as dsml_v4's opener, read otherwise
shadow: SHADOW_OPEN shadow_call SHADOW_CLOSE
shadow_call: shadow_name ";" -> call
shadow_name: SHADOW_NAME -> call_name
SHADOW_OPEN: "<｜DSML｜tool_calls>"
SHADOW_CLOSE: "</x>"
SHADOW_NAME: /<(?P<v>[a-z]{1,9})(?=;)/
"""


@pytest.mark.parametrize(
    ("files", "company"),
    [
        ({"shadow": SHADOW}, "the default dialects"),
        (
            {
                "shadow": SHADOW.replace("<｜DSML｜tool_calls>", "<tc>"),
                "twin": SHADOW.replace("shadow", "twin").replace(
                    '"<｜DSML｜tool_calls>"', "/<[t]c>/"
                ),
            },
            "'all'",
        ),
    ],
)
def test_check_grammar_loads_the_file_beside_the_defaults_and_all(
    tmp_path: Path, capsys: Any, files: dict[str, str], company: str
) -> None:
    """A file the loader takes alone may clash with the dialects enabled beside it, as
    ``Sieve(grammar_dirs=[dir])`` or ``dialects="all"`` enable them (issue 32): check-grammar
    loads it there too and says where it was refused, naming both files."""
    from callsieve.__main__ import main

    for name, text in files.items():
        (tmp_path / f"{name}.lark").write_text(text, encoding="utf-8")
    callsieve._grammar.compiled.load_grammar(("shadow",), (str(tmp_path),))  # (alone: fine)
    assert main(["check-grammar", str(tmp_path / "shadow.lark")]) == 1
    out = capsys.readouterr().out
    assert f"loaded beside {company}:" in out and "shadow.lark:5" in out


def test_check_grammar_prints_the_loaders_warnings(tmp_path: Path, capsys: Any) -> None:
    from callsieve.__main__ import main

    text = SHADOW.replace('"<｜DSML｜tool_calls>"', '"<sh>"').replace("/<(?P<v>", "/(?P<v>")
    (tmp_path / "shadow.lark").write_text(text, encoding="utf-8")
    assert main(["check-grammar", str(tmp_path / "shadow.lark")]) == 0
    assert (
        "warning: " in capsys.readouterr().out and "SHADOW_NAME" in capsys.readouterr().out + text
    )

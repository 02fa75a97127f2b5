"""The grammar is the only place that knows a tag (issue 11, item 5): what Python used to
know of the spellings — the closing slash, the quotes around a value, the ```json fence, the
default dialects — is read from the grammar, so a scratch grammar in a temporary folder that
spells them otherwise is read its own way. Also: the order of the entry terminals (which of
two openers that match the same text is taken) is the grammar's, not the hash seed's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_all_ways

from callsieve import GrammarError

SRC = Path(__file__).resolve().parents[1] / "src"


def _write(folder: Path, **files: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.lark").write_text(text, encoding="utf-8")
    return str(folder)


# ---------------------------------------------------------------- entry order
_ENTRY_ORDER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import callsieve
from callsieve._grammar.compiled import load_grammar
zw = "\\u200b"
print(json.dumps([[e.terminal for e in load_grammar().entries],
                  [c.dialect for c in callsieve.parse(
                      "＜" + zw + 'tool_calls＞<invoke name="f"/></tool_calls>').calls],
                  [c.dialect for c in callsieve.parse(
                      '<invoke name="f"/>＜' + zw + "／tool_calls＞").calls]]))
"""


def test_the_entry_order_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """``＜\\u200btool_calls＞`` is spelled as both the dsml and the xml opener (a zero-width
    prefix): the first enabled of the two, dsml, takes it, in every process — it used to be
    whichever the parse table listed first, which followed ``PYTHONHASHSEED``."""
    seen = set()
    for seed in ("1", "2", "3"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "CALLSIEVE_CACHE_DIR": str(tmp_path / f"cache{seed}"),
        }
        out = subprocess.run(
            [sys.executable, "-c", _ENTRY_ORDER, str(SRC)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        seen.add(out)
    assert len(seen) == 1, seen
    entries, opened, repaired = json.loads(seen.pop())
    assert opened == repaired == ["dsml"]
    assert entries.index("DSML__DSML_CALLS_OPEN") < entries.index("XML__XML_CALLS_OPEN")


# ---------------------------------------------------------------- 1. the closing mark
def _tilde_grammar(folder: Path, close_group: bool) -> dict[str, object]:
    """Two dialects, ``[[a]]…`` and ``[[b]]…``, both closed by ``[[~a]]`` or ``[[~b]]``: the
    closing mark is a tilde, which the closer's pattern captures in ``close`` (or does not)."""
    mark = "(?P<close>~)" if close_group else "~"
    common = (
        "WS_RUN: /[\\s]+/\n"
        "call: CALL_OPEN call_name CALL_END\ncall_name: NAME\n"
        "CALL_OPEN: /\\[call(?= )/\nNAME: / (?P<v>[a-z]{1,9})(?=\\])/\n"
        'CALL_END: "]"\n'
        f"END: /\\[\\[{mark}[ab]\\]\\]/\n"
    )
    files = {"common": common}
    for n in ("a", "b"):
        files[f"p{n}"] = (
            f'p{n}: P{n.upper()}_OPEN WS_RUN? (call WS_RUN?)+ END\nP{n.upper()}_OPEN: "[[{n}]]"\n'
        )
    return {"dialects": ("pa", "pb"), "grammar_dirs": (_write(folder, **files),)}


def _dialects_of(text: str, opts: dict[str, object]) -> list[tuple[str, str, tuple[str, ...]]]:
    r = run_all_ways(text, **opts)  # type: ignore[arg-type]
    return [(c.name, c.dialect, c.repairs) for c in r.calls]


def test_a_repaired_block_takes_the_dialect_its_closer_mirrors(tmp_path: Path) -> None:
    """No slash anywhere: ``[[~b]]`` without its ``close`` group is ``[[b]]``, pb's opener."""
    opts = _tilde_grammar(tmp_path, close_group=True)
    assert _dialects_of("x [call f][[~b]] y", opts) == [("f", "pb", ("missing_opener",))]
    assert _dialects_of("x [call f][[~a]] y", opts) == [("f", "pa", ("missing_opener",))]
    # a block that was opened keeps the dialect of its parse, whatever its closer says
    assert _dialects_of("x [[b]][call f][[~a]] y", opts) == [("f", "pb", ())]


def test_a_closer_without_a_close_group_keeps_the_dialect_of_the_parse(tmp_path: Path) -> None:
    opts = _tilde_grammar(tmp_path, close_group=False)
    for closer in ("[[~a]]", "[[~b]]"):
        assert _dialects_of(f"x [call f]{closer} y", opts) == [("f", "pa", ("missing_opener",))]


def test_the_built_in_closers_mirror_their_openers() -> None:
    """The built-in grammar's ``close`` group: the slash (``/``, ``／``) and the white space
    and zero-width characters before it."""
    for closer, dialect in [
        ("</tool_calls>", "xml"),
        ("< /tool_calls>", "xml"),
        ("＜／tool_calls＞", "xml"),
        ("</|DSML|tool_calls>", "dsml"),
        ("<\u200b /|DSML|tool_calls>", "dsml"),
        ("</｜DSML｜tool_calls>", "dsml_v4"),
        ("</｜DSML｜function_calls>", "dsml_v32"),
    ]:
        assert _dialects_of(f'<invoke name="f"/>{closer}', {}) == [
            ("f", dialect, ("missing_opener",))
        ], closer


# ---------------------------------------------------------------- 2. the quotes
def test_the_quotes_are_the_patterns_to_say(tmp_path: Path) -> None:
    """A scratch dialect whose names are quoted in bars: ``|f|`` stands for ``f`` (the
    pattern's group ``q``), while ``"f"`` is a name with quotes in it, since to this
    grammar ``"`` is no quote."""
    common = (
        'WS_RUN: /[\\s]+/\nCALL_OPEN: /\\[call(?= )/\nCALL_END: "]"\n'
        "call: CALL_OPEN call_name CALL_END\ncall_name: NAME\n"
        'NAME: / (?P<v>\\|(?P<q>[a-z"]{0,9})\\||[a-z"]{1,9})(?=\\])/\n'
    )
    bars = (
        "bars: BARS_OPEN WS_RUN? (call WS_RUN?)+ BARS_CLOSE\n"
        'BARS_OPEN: "[[c]]"\nBARS_CLOSE: "[[/c]]"\n'
    )
    opts = {"dialects": ("bars",), "grammar_dirs": (_write(tmp_path, common=common, bars=bars),)}
    r = run_all_ways('[[c]][call |f|] [call "g"][[/c]]', **opts)  # type: ignore[arg-type]
    assert [c.name for c in r.calls] == ["f", '"g"']
    r = run_all_ways("a [[c]][call ||][[/c]] b", **opts)  # type: ignore[arg-type]
    assert r.calls == () and "a call needs a non-empty name" in r.blocks[0].diagnostics[-1]


def test_the_built_in_quotes_still_come_off() -> None:
    text = (
        "<tool_calls><invoke name=“f”><parameter name='p' string=‘true’> 1 </parameter>"
        '<parameter name="q" string=""> 2 </parameter></invoke></tool_calls>'
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"g"<｜tool▁sep｜>{}<｜tool▁call▁end｜>'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>‘h’\n```json\n{}\n```<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>"
    )
    r = run_all_ways(text)
    assert [(c.name, c.input) for c in r.calls] == [
        ("f", {"p": " 1 ", "q": 2}),
        ("g", {}),
        ("h", {}),
    ]


# ---------------------------------------------------------------- 3. the ```json fence
_V31 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"


def test_deepseek_v31_arguments_in_a_fence_are_read_by_the_grammar() -> None:
    """V3.1's JSON in a ```json fence: deepseek_native's NATIVE_FENCE_OPEN and
    NATIVE_FENCE_END read the fence (Python used to strip it from the arguments' text)."""
    for args, want in [
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('\n```\n{"a": [1, 2]}\n```\n', {"a": [1, 2]}),
        ('```json\n{"c": "```"}```', {"c": "```"}),
        ('{"a": 1}', {"a": 1}),
        # an empty fence is empty arguments, as in V3 (it used to fail V3.1)
        ("```json\n```", {}),
    ]:
        r = run_all_ways(_V31.replace("{}", args))
        assert [(c.name, c.input) for c in r.calls] == [("f", want)], args
        if args.lstrip().startswith("```"):  # V3 (a name line before the fence) agrees
            v3 = _V31.replace("f<", "function<").replace("{}", "f\n" + args.lstrip())
            assert [(c.name, c.input) for c in run_all_ways(v3).calls] == [("f", want)], args
    for bad in ('```json\n{"a": 1}\n``` x', '```json{"a": 1}```', "```json\n[1]\n```"):
        text = _V31.replace("{}", bad)
        assert run_all_ways(text).calls == (), bad


def test_a_fence_the_grammar_does_not_read_is_no_json(tmp_path: Path) -> None:
    """A scratch dialect whose arguments run takes the fence in: no Python strips it."""
    common = (
        'WS_RUN: /[\\s]+/\nCALL_OPEN: /\\[call(?= )/\nCALL_END: "[/call]"\n'
        "call: CALL_OPEN call_name ARGS_START call_args CALL_END\n"
        "call_name: NAME\ncall_args: ARGS_RUN\n"
        'ARGS_START: "]"\nNAME: / (?P<v>[a-z]{1,9})(?=\\])/\n'
        "ARGS_RUN: /(?:(?!\\[\\/call\\])[\\s\\S])+/\n"
    )
    raw = (
        'raw: RAW_OPEN WS_RUN? (call WS_RUN?)+ RAW_CLOSE\nRAW_OPEN: "[[r]]"\nRAW_CLOSE: "[[/r]]"\n'
    )
    opts = {"dialects": ("raw",), "grammar_dirs": (_write(tmp_path, common=common, raw=raw),)}
    r = run_all_ways('[[r]][call f]{"a": 1}[/call][[/r]]', **opts)  # type: ignore[arg-type]
    assert [(c.name, c.input) for c in r.calls] == [("f", {"a": 1})]
    text = '[[r]][call f]```json\n{"a": 1}\n```[/call][[/r]]'
    r = run_all_ways(text, **opts)  # type: ignore[arg-type]
    assert (r.text, r.calls) == (text, ())
    assert "not a JSON object" in r.blocks[0].diagnostics[-1]


# ---------------------------------------------------------------- 4. the default dialects
def test_the_default_dialects_are_the_grammars_declaration() -> None:
    import callsieve
    from callsieve._grammar.files import (
        DEFAULTS_DIRECTIVE,
        DIRECTIVE,
        default_dialects,
        grammar_dirs,
    )

    common = (grammar_dirs()[-1] / "common.lark").read_text(encoding="utf-8")
    (line,) = [x for x in common.splitlines() if x.startswith(DIRECTIVE)]
    assert line.split() == [DIRECTIVE + DEFAULTS_DIRECTIVE, *callsieve.DEFAULT_DIALECTS]
    assert default_dialects() == callsieve.DEFAULT_DIALECTS
    assert type(callsieve.DEFAULT_DIALECTS) is tuple


def _scratch_defaults(folder: Path, directive: str) -> str:
    common = (
        'WS_RUN: /[\\s]+/\nCALL_OPEN: /\\[call(?= )/\nCALL_END: "]"\n'
        "call: CALL_OPEN call_name CALL_END\ncall_name: NAME\n"
        "NAME: / (?P<v>[a-z]{1,9})(?=\\])/\n"
    )
    files = {"common": f"// scratch\n{directive}\n{common}"}
    for n in ("a", "b"):
        files[f"p{n}"] = (
            f"p{n}: P{n.upper()}_OPEN WS_RUN? (call WS_RUN?)+ P{n.upper()}_END\n"
            f'P{n.upper()}_OPEN: "[[{n}]]"\nP{n.upper()}_END: "[[/{n}]]"\n'
        )
    return _write(folder, **files)


def test_a_grammar_folder_declares_its_own_defaults(tmp_path: Path) -> None:
    from callsieve._grammar.compiled import load_grammar
    from callsieve._grammar.files import default_dialects

    d = _scratch_defaults(tmp_path, "//%default_dialects pb pa")
    assert default_dialects((d,)) == ("pb", "pa")
    g = load_grammar(default_dialects((d,)), (d,))
    assert g.dialects == ("pb", "pa")
    r = run_all_ways(
        "x [[a]][call f][[/a]] [[b]][call g][[/b]]", dialects=g.dialects, grammar_dirs=(d,)
    )
    assert [(c.name, c.dialect) for c in r.calls] == [("f", "pa"), ("g", "pb")]
    # a default may be a built-in dialect (the folders are searched as for any dialect)
    assert default_dialects((_scratch_defaults(tmp_path / "x", "//%default_dialects pa xml"),)) == (
        "pa",
        "xml",
    )
    # a folder whose common.lark declares none has no defaults to give (loading is fine)
    bare = _scratch_defaults(tmp_path / "bare", "")
    assert load_grammar(("pa",), (bare,)).dialects == ("pa",)
    with pytest.raises(GrammarError, match="declares no default dialects"):
        default_dialects((bare,))


@pytest.mark.parametrize(
    ("directive", "why"),
    [
        ("//%default_dialects", "names no dialect"),
        ("//%default_dialects pa Pb", "'Pb' is not a dialect name"),
        ("//%default_dialects pa common", "'common' is not a dialect name"),
        ("//%default_dialects pa pb pa", "dialect 'pa' is declared twice"),
        ("//%default_dialects pa nowhere", "no grammar file for default dialect 'nowhere'"),
        ("//%default_dialects pa\n//%default_dialects pb", "declared a second time"),
        ("//%defaults pa", "unknown loader directive '//%defaults pa'"),
        ("//%", "unknown loader directive '//%'"),
    ],
)
def test_a_malformed_declaration_is_a_grammar_error(
    tmp_path: Path, directive: str, why: str
) -> None:
    from callsieve._grammar.compiled import load_grammar
    from callsieve._grammar.files import default_dialects

    d = _scratch_defaults(tmp_path, directive)
    for load in (lambda: default_dialects((d,)), lambda: load_grammar(("pa",), (d,))):
        with pytest.raises(GrammarError) as info:
            load()
        at = "common.lark:3:" if "second" in why else "common.lark:2:"  # the line at fault
        assert why in str(info.value) and at in str(info.value), info.value


def test_a_directive_in_a_dialect_file_is_a_grammar_error(tmp_path: Path) -> None:
    from callsieve._grammar.compiled import load_grammar

    d = _scratch_defaults(tmp_path, "//%default_dialects pa")
    (tmp_path / "pb.lark").write_text(
        "//%default_dialects pb\n" + (tmp_path / "pb.lark").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    with pytest.raises(GrammarError, match="pb.lark:1: the default dialects are declared in"):
        load_grammar(("pa", "pb"), (d,))


def _with_directives(tmp_path: Path, lines: str) -> str:
    """The scratch folder, with ``lines`` heading dialect ``pb``'s file."""
    d = _scratch_defaults(tmp_path, "//%default_dialects pa")
    body = (tmp_path / "pb.lark").read_text(encoding="utf-8")
    (tmp_path / "pb.lark").write_text(f"// pb\n{lines}\n{body}", encoding="utf-8")
    return d


def test_a_dialect_file_declares_its_family_s_traits(tmp_path: Path) -> None:
    """grammar/README.md, "Dialect directives": one record per dialect, read warm or cold."""
    from callsieve._grammar.compiled import load_grammar
    from callsieve._grammar.directives import DIRECTIVES, NO_TRAITS

    d = _with_directives(tmp_path, "//%calls_end_thought")
    g = load_grammar(("pa", "pb"), (d,))
    assert g.traits["pb"].flag("calls_end_thought")
    assert g.traits["pa"] == NO_TRAITS and not g.traits["pa"].flag("calls_end_thought")
    assert g.traits["pb"].words("calls_end_thought") == ()
    with pytest.raises(KeyError):  # (an engine typo, not a grammar error)
        g.traits["pb"].flag("no_such_trait")
    assert all(x.meaning and x.shape in ("flag", "words") for x in DIRECTIVES.values())


@pytest.mark.parametrize(
    ("lines", "why", "line"),
    [
        ("//%no_such_trait", "unknown loader directive '//%no_such_trait'", 2),
        ("//%calls_end_thought\n//%calls_end_thought", "declared twice", 3),
        ("//%calls_end_thought yes", "takes no arguments", 2),
    ],
)
def test_a_malformed_dialect_directive_is_a_grammar_error(
    tmp_path: Path, lines: str, why: str, line: int
) -> None:
    from callsieve._grammar.compiled import load_grammar

    d = _with_directives(tmp_path, lines)
    with pytest.raises(GrammarError) as info:
        load_grammar(("pa", "pb"), (d,))
    assert why in str(info.value) and f"pb.lark:{line}:" in str(info.value), info.value

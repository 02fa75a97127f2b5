"""The grammar layer (issue 11, item 6), each with scratch grammars in a temporary folder:
dialect files joined in namespaces of their own (two files may define one name, or one
spelling), a block's dialect read from the rule that parsed it (not from the first dialect
with its opener), and a dialect whose block could hold no call refused at load. Every
grammar problem stays a ``GrammarError`` naming the file, the name as written and, where
Lark gives them, the line and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import GRAMMARS, run_all_ways, stream

from callsieve import DEFAULT_DIALECTS, GrammarError, ToolCalls, parse
from callsieve._grammar import names
from callsieve._grammar.compiled import load_grammar
from callsieve._grammar.files import all_dialects

#: The small dialects here begin a call with a bare name (``pa:NAME``), which the
#: missing-opener repair makes an entry: the loader's warning about it is right, and beside
#: the point of these tests (tests/spec/test_s12_grammar.py tests it).
pytestmark = pytest.mark.filterwarnings("ignore::callsieve.GrammarWarning")


def _write(folder: Path, **files: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.lark").write_text(text, encoding="utf-8")
    return str(folder)


def _refused(folder: str, dialects: tuple[str, ...]) -> str:
    with pytest.raises(GrammarError) as info:
        load_grammar(dialects, (folder,))
    return str(info.value)


def _dialect(n: str, end: str, opener: str = "<tc>", closer: str = "</tc>") -> str:
    """Dialect ``n``: ``<tc>n:NAME<end>…</tc>``, its opener and closer named ``MY_OPEN`` and
    ``MY_CLOSE`` as in every other file made here."""
    return (
        f"{n}: MY_OPEN {n}_call+ MY_CLOSE\n"
        f"{n}_call: {n}_name CALL_END -> call\n"
        f"{n}_name: NAME -> call_name\n"
        f'MY_OPEN: "{opener}"\nMY_CLOSE: "{closer}"\nCALL_END: "{end}"\n'
        f"NAME: /{n}:(?P<v>[a-z_]{{1,64}})(?=[{end}])/\n"
    )


def _seen(r: Any) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    return (
        r.text,
        [(c.name, c.dialect) for c in r.calls],
        [(b.dialect, b.status) for b in r.blocks],
    )


# ---------------------------------------------------------------- 1. namespaces
def test_two_files_may_define_the_same_names(tmp_path: Path) -> None:
    """Both files define ``MY_OPEN``, ``MY_CLOSE``, ``CALL_END`` and ``NAME``: each file's own
    names are its own (Lark refused it: "Terminal 'MY_OPEN' defined more than once")."""
    d = _write(
        tmp_path, pa=_dialect("pa", ";", "<a>", "</a>"), pb=_dialect("pb", "!", "<b>", "</b>")
    )
    for dialects in (("pa", "pb"), ("pb", "pa")):
        r = run_all_ways("x <b>pb:f!</b> y <a>pa:g;</a> z", dialects=dialects, grammar_dirs=(d,))
        assert _seen(r) == (
            "x  y  z",
            [("f", "pb"), ("g", "pa")],
            [("pb", "complete"), ("pa", "complete")],
        )


def test_one_spelling_under_one_name_in_two_files_is_one_terminal(tmp_path: Path) -> None:
    """Both files spell ``MY_OPEN`` and ``MY_CLOSE`` ``<tc>`` and ``</tc>``: merged, so the
    parser, not the order of the files, tells which dialect a block is."""
    d = _write(tmp_path, pa=_dialect("pa", ";"), pb=_dialect("pb", "!"))
    for dialects in (("pa", "pb"), ("pb", "pa")):
        r = run_all_ways(
            "x <tc>pb:f!pb:h!</tc> y <tc>pa:g;</tc> z", dialects=dialects, grammar_dirs=(d,)
        )
        assert _seen(r) == (
            "x  y  z",
            [("f", "pb"), ("h", "pb"), ("g", "pa")],
            [("pb", "complete"), ("pa", "complete")],
        )
    g = load_grammar(("pa", "pb"), (d,))
    openers = [e.terminal for e in g.entries if e.synthetic is None]
    assert openers == ["PA__MY_OPEN"]  # one entry for the one spelling


def test_one_spelling_under_two_names_is_one_terminal(tmp_path: Path) -> None:
    """``A_OPEN`` and ``B_OPEN`` are both ``<tc>``: a scanner would only ever read the first
    of them, and the other dialect's blocks would be text."""
    pb = _dialect("pb", "!").replace("MY_OPEN", "B_OPEN").replace("MY_CLOSE", "B_CLOSE")
    d = _write(tmp_path, pa=_dialect("pa", ";"), pb=pb)
    for dialects in (("pa", "pb"), ("pb", "pa")):
        r = parse("x <tc>pb:f!</tc> y <tc>pa:g;</tc>", dialects=dialects, grammar_dirs=(d,))
        assert _seen(r) == (
            "x  y ",
            [("f", "pb"), ("g", "pa")],
            [("pb", "complete"), ("pa", "complete")],
        )


def test_the_contract_and_common_names_are_shared(tmp_path: Path) -> None:
    """A dialect file uses the contract's names (``-> call``, ``param_value``) and
    ``common.lark``'s (``WS_RUN``, ``PARAM_CLOSE``) unchanged, beside the built-in dialects,
    and may define a name ``common.lark`` defines too (``TAG_END``: its own, in its file)."""
    mine = (
        "mine: MINE_OPEN WS_RUN? (mine_call WS_RUN?)+ MINE_CLOSE\n"
        "mine_call: mine_name WS_RUN? (mine_param WS_RUN?)* TAG_END -> call\n"
        "mine_name: MINE_NAME -> call_name\n"
        "mine_param: mine_param_name param_value PARAM_CLOSE -> param\n"
        "mine_param_name: MINE_PARAM -> param_name\n"
        'MINE_OPEN: "<mine>"\nMINE_CLOSE: "</mine>"\nTAG_END: "</fn>"\n'
        "MINE_NAME: /<fn=(?P<v>[a-z_]{1,64})>/\nMINE_PARAM: /<p=(?P<v>[a-z_]{1,64})>/\n"
    )
    d = _write(tmp_path, mine=mine)
    text = (
        "a <mine>\n<fn=f>\n<p=x>1</parameter>\n</fn>\n</mine> b "
        '<tool_calls><invoke name="g"><parameter name="y">2</parameter></invoke>'
        "</tool_calls> c"
    )
    r = run_all_ways(text, dialects=(*DEFAULT_DIALECTS, "mine"), grammar_dirs=(d,))
    assert (r.text, [(c.name, c.input, c.dialect) for c in r.calls]) == (
        "a  b  c",
        [("f", {"x": 1}, "mine"), ("g", {"y": 2}, "xml")],
    )


def test_a_file_may_name_another_files_terminal_in_full(tmp_path: Path) -> None:
    pb = _dialect("pb", "!").replace("MY_OPEN ", "PA__MY_OPEN ")
    d = _write(tmp_path, pa=_dialect("pa", ";"), pb=pb)
    r = parse("<tc>pb:f!</tc>", dialects=("pa", "pb"), grammar_dirs=(d,))
    assert _seen(r)[1] == [("f", "pb")]
    message = _refused(d, ("pb",))  # without pa, the name is not defined
    assert "PA__MY_OPEN" in message and str(tmp_path / "pb.lark") in message


def test_merged_spellings_that_make_the_grammar_ambiguous_are_refused(tmp_path: Path) -> None:
    """Two dialects alike but for their names: one spelling, so one terminal, and then no
    parser could tell the two apart."""
    d = _write(
        tmp_path,
        pa='pa: A_OPEN _markup_body CALLS_CLOSE\nA_OPEN: "<tc>"\n',
        pb='pb: B_OPEN _markup_body CALLS_CLOSE\nB_OPEN: "<tc>"\n',
    )
    message = _refused(d, ("pa", "pb"))
    assert "same spelling" in message and "does not compile" in message
    assert f"A_OPEN ({tmp_path / 'pa.lark'}:2)" in message
    assert f"B_OPEN ({tmp_path / 'pb.lark'}:2)" in message


def test_errors_name_the_file_the_name_as_written_and_its_column(tmp_path: Path) -> None:
    """Renaming makes names longer; positions and names are still the file's own."""
    bad = _dialect("pa", ";").replace(
        "pa_call: pa_name CALL_END -> call", "pa_call: pa_name CALL_END ] -> call"
    )
    message = _refused(_write(tmp_path / "syntax", pa=bad), ("pa",))
    column = bad.splitlines()[1].index("]") + 1
    assert f"{tmp_path / 'syntax' / 'pa.lark'}:2:{column}:" in message
    assert f"line 2, column {column} of" in message
    unbounded = _dialect("pa", ";").replace("{1,64}", "+")
    message = _refused(_write(tmp_path / "unbounded", pa=unbounded), ("pa",))
    assert f"{tmp_path / 'unbounded' / 'pa.lark'}:7: terminal NAME " in message
    undefined = _dialect("pa", ";").replace("pa_name CALL_END", "pa_name pa_missing CALL_END")
    message = _refused(_write(tmp_path / "undefined", pa=undefined), ("pa",))
    assert "pa_missing" in message and "PA__" not in message and "pa__" not in message
    assert f"{tmp_path / 'undefined' / 'pa.lark'}:" in message


# ---------------------------------------------------------------- 2. the dialect of a block
def test_a_shared_opener_credits_the_dialect_that_parsed(tmp_path: Path) -> None:
    """``<tc>`` opens both dialects (and is the entry of the first listed). Blocks, calls
    emitted early, failed blocks and blocks whose opener was repaired all name the dialect
    whose rule read them."""
    d = _write(tmp_path, pa=_dialect("pa", ";"), pb=_dialect("pb", "!"))
    # the third block fails at `pa:q;`, which then begins a block without its opener, as
    # does `pb:m!` in the fourth
    text = "x <tc>pb:f!pb:h!</tc> y <tc>pa:g;</tc> z <tc>pb:k!pa:q;</tc> w pb:m!</tc>"
    for dialects in (("pa", "pb"), ("pb", "pa")):
        opts: dict[str, Any] = {"dialects": dialects, "grammar_dirs": (d,)}
        r = parse(text, **opts)
        assert [(b.dialect, b.status) for b in r.blocks] == [
            ("pb", "complete"),
            ("pa", "complete"),
            ("pb", "failed"),
            ("pa", "complete"),
            ("pb", "complete"),
        ]
        assert [(c.name, c.dialect) for c in r.calls] == [
            ("f", "pb"),
            ("h", "pb"),
            ("g", "pa"),
            ("q", "pa"),
            ("m", "pb"),
        ]
        for chunks in ([text], list(text)):
            events = [
                e for e in stream(chunks, early_emit="invoke", **opts) if isinstance(e, ToolCalls)
            ]
            assert [(c.name, c.dialect) for e in events for c in e.calls] == [
                ("f", "pb"),
                ("h", "pb"),
                ("g", "pa"),
                ("k", "pb"),
                ("q", "pa"),
                ("m", "pb"),
            ]
            assert all(c.dialect == e.block.dialect for e in events for c in e.calls)


def test_a_shared_opener_and_body_take_the_dialect_from_the_closer(tmp_path: Path) -> None:
    """The same opener and body, two closers: the block is the dialect whose closer ends it."""
    d = _write(
        tmp_path,
        pa='pa: MY_OPEN _markup_body PA_CLOSE\nMY_OPEN: "<tc>"\nPA_CLOSE: "</tc-a>"\n',
        pb='pb: MY_OPEN _markup_body PB_CLOSE\nMY_OPEN: "<tc>"\nPB_CLOSE: "</tc-b>"\n',
    )
    call = '<invoke name="f"></invoke>'
    for dialects in (("pa", "pb"), ("pb", "pa")):
        r = run_all_ways(
            f"<tc>{call}</tc-b> <tc>{call}</tc-a>", dialects=dialects, grammar_dirs=(d,)
        )
        assert _seen(r) == (
            " ",
            [("f", "pb"), ("f", "pa")],
            [("pb", "complete"), ("pa", "complete")],
        )


def test_every_parser_state_knows_its_dialects() -> None:
    """In the built-in grammar each opener's state belongs to its dialect alone, and the
    states inside an invoke to the five markup dialects."""
    g = load_grammar()
    bit = {d: 1 << k for k, d in enumerate(g.dialects)}
    start = g.parser.table.states[g.parser.start_state]
    for e in g.entries:
        if e.synthetic is None:
            assert g.dialect_map.state_dialects[start[e.terminal][1]] == bit[e.dialect], e.terminal
    markup = bit["dsml"] | bit["dsml_v4"] | bit["dsml_v32"] | bit["dsml_v41"] | bit["xml"]
    after = {
        g.dialect_map.state_dialects[s]
        for s, row in g.parser.table.states.items()
        if any(a.name == "Shift" for t, (a, _) in row.items() if t == "NAME_ATTR")
    }
    assert after == {markup}


# ---------------------------------------------------------------- 4. a block needs a call
@pytest.mark.parametrize(
    "rule",
    [
        "nc: NC_OPEN nc_call* NC_CLOSE",
        "nc: NC_OPEN nc_call+ NC_CLOSE\n  | NC_OPEN NC_CLOSE",
        "nc: NC_OPEN nc_body NC_CLOSE\nnc_body: nc_call | NC_WS",
        "nc: NC_OPEN [nc_call] NC_CLOSE",
    ],
)
def test_a_block_that_can_hold_no_call_is_refused(tmp_path: Path, rule: str) -> None:
    """Such a block would take ``<nc></nc>`` (or a mention of it) from the prose as a
    complete block of no calls."""
    text = (
        f"{rule}\nnc_call: nc_name NC_END -> call\nnc_name: NC_NAME -> call_name\n"
        'NC_OPEN: "<nc>"\nNC_CLOSE: "</nc>"\nNC_END: ";"\nNC_WS: " "\n'
        "NC_NAME: /(?P<v>[a-z_]{1,64})(?=;)/\n"
    )
    message = _refused(_write(tmp_path, nc=text), ("nc",))
    assert f"{tmp_path / 'nc.lark'}:1: rule nc" in message
    assert "without any call" in message


def test_blocks_that_always_hold_a_call_load(tmp_path: Path) -> None:
    d = _write(
        tmp_path,
        nc=_dialect("nc", ";").replace("nc_call+", "nc_body")
        + 'nc_body: nc_call+ | NC_WS nc_call+\nNC_WS: " "\n',
    )
    assert parse("<tc> nc:f;</tc>", dialects=("nc",), grammar_dirs=(d,)).calls[0].name == "f"
    g = load_grammar((*DEFAULT_DIALECTS, "qwen3_coder"), (str(GRAMMARS),))
    assert g.dialects[-1] == "qwen3_coder"
    for name in DEFAULT_DIALECTS:
        assert load_grammar((name,)).dialects == (name,)


# ---------------------------------------------------------------------------- shared names
def test_the_built_in_grammar_defines_every_name_the_code_reads() -> None:
    """``_grammar/names`` is the one list of the names the code and the grammar share: the
    built-in grammar — every dialect of it — has every terminal and every contract rule in
    it (the reasoning tags, which no rule uses, in ``common.lark``), so renaming one there
    fails here."""
    g = load_grammar(all_dialects())
    rules = {str(r.alias or r.origin.name) for r in g.parser.lark.rules} if g.parser.lark else set()
    common = (Path(__file__).parents[2] / "grammar" / "common.lark").read_text(encoding="utf-8")
    for name in names.TERMINALS:
        assert name in g.terminals or f"\n{name}:" in common, name
    assert names.CONTRACT_RULES <= rules, names.CONTRACT_RULES - rules


def test_a_grammar_lacking_a_name_the_code_reads_with_others_is_refused(tmp_path: Path) -> None:
    """The loose-CDATA repair reads ``CDATA_OPEN``, ``CDATA_RUN`` and ``CDATA_CLOSE``
    together: a grammar with some of them, not all (here the run renamed), is a
    ``GrammarError`` naming the one it lacks; one with none has no such repair."""
    built_in = Path(__file__).parents[2] / "grammar"
    common = (built_in / "common.lark").read_text(encoding="utf-8")
    assert "CDATA_RUN" in common
    renamed = common.replace("CDATA_RUN", "CDATA_BODY_RUN")
    d = _write(tmp_path, common=renamed, xml=(built_in / "xml.lark").read_text(encoding="utf-8"))
    message = _refused(d, ("xml",))
    assert "CDATA_RUN" in message and "common.lark" in message, message


def test_deepseeks_special_tokens_are_defined_once(tmp_path: Path) -> None:
    """``grammar/_leaks.lark`` defines DeepSeek's special tokens (the sanitizer removes them);
    the writer's spelling of one (``spelling/deepseek_native.lark``) is checked against it."""
    from callsieve._grammar.spelling import spelling

    built_in = Path(__file__).parents[2] / "grammar" / "spelling" / "deepseek_native.lark"
    text = built_in.read_text(encoding="utf-8")
    assert 'USER: "<｜User｜>"' in text
    d = tmp_path / "spelling"
    d.mkdir()
    (d / "deepseek_native.lark").write_text(text.replace("<｜User｜>", "<｜Usr｜>"), "utf-8")
    with pytest.raises(GrammarError, match=r"USER .*special token USER of _leaks\.lark"):
        spelling("deepseek_native", (str(tmp_path),))


# ---------------------------------------------------------------- dialect isolation (issue 32)
def _opened(n: str, opener: str) -> str:
    """Dialect ``n``: ``OPENER n:NAME;</tc>``, its opener as given (a pattern or a string)."""
    return (
        f"{n}: {n.upper()}_OPEN {n}_call+ MY_CLOSE\n"
        f"{n}_call: {n}_name CALL_END -> call\n"
        f"{n}_name: NAME -> call_name\n"
        f'{n.upper()}_OPEN{opener}\nMY_CLOSE: "</tc>"\nCALL_END: ";"\n'
        f"NAME: /{n}:(?P<v>[a-z_]{{1,64}})(?=;)/\n"
    )


def test_the_more_specific_opener_wins_whatever_the_dialects_order(tmp_path: Path) -> None:
    """``wide`` opens at ``<[|｜]tc[_ ]begin[|｜]>``, ``narrow`` at ``<｜tc_begin｜>`` only: the
    text both match opens the more specific one's block, though ``wide`` comes first (Step-3's
    ``<｜tool_calls_begin｜>`` beside DeepSeek's noisy spelling)."""
    d = _write(
        tmp_path,
        wide=_opened("wide", ": /<[|｜]tc[_ ]begin[|｜]>/"),
        narrow=_opened("narrow", ': "<｜tc_begin｜>"'),
    )
    opts = {"dialects": ("wide", "narrow"), "grammar_dirs": [d]}
    r = run_all_ways("<｜tc_begin｜>narrow:f;</tc> <|tc begin|>wide:g;</tc>", **opts)
    assert [(c.name, c.dialect) for c in r.calls] == [("f", "narrow"), ("g", "wide")]


@pytest.mark.parametrize(
    ("wide", "narrow", "why"),
    [
        (": /<[t]c>/", ': "<tc>"', "neither is the more specific"),
        (".2: /<t[dc]>/", ': "<tc>"', "more specific one has the lower priority"),
    ],
)
def test_openers_nothing_tells_apart_are_refused_naming_both_files(
    tmp_path: Path, wide: str, narrow: str, why: str
) -> None:
    d = _write(tmp_path, wide=_opened("wide", wide), narrow=_opened("narrow", narrow))
    message = _refused(d, ("wide", "narrow"))
    assert "wide.lark:" in message and "narrow.lark:" in message and why in message


def test_openers_of_one_block_shape_are_not_isolated() -> None:
    """The default dialects' openers overlap (aliases), but open the same body: they load."""
    assert load_grammar(DEFAULT_DIALECTS).dialects == DEFAULT_DIALECTS

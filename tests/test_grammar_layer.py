"""The grammar layer (issue 11, item 6), each with scratch grammars in a temporary folder:
a block's dialect read from the rule that parsed it (not from the first dialect with its
opener), and a dialect whose block could hold no call refused at load. Every grammar problem stays a
``GrammarError`` naming the file, the name as written and, where Lark gives them, the line
and column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways, stream

from callsieve import DEFAULT_DIALECTS, GrammarError, ToolCalls, parse
from callsieve._grammar import load_grammar

GRAMMARS = Path(__file__).parent / "grammars"


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
    return (f"{n}: MY_OPEN {n}_call+ MY_CLOSE\n"
            f"{n}_call: {n}_name CALL_END -> call\n"
            f"{n}_name: NAME -> call_name\n"
            f'MY_OPEN: "{opener}"\nMY_CLOSE: "{closer}"\nCALL_END: "{end}"\n'
            f"NAME: /{n}:(?P<v>[a-z_]{{1,64}})(?=[{end}])/\n")


def _shares_pa(n: str, end: str) -> str:
    """Dialect ``n`` like ``_dialect``, with ``pa``'s opener and closer (``MY_OPEN``,
    ``MY_CLOSE``, defined in pa.lark) and names of its own for the rest."""
    return (f"{n}: MY_OPEN {n}_call+ MY_CLOSE\n"
            f"{n}_call: {n}_name {n.upper()}_END -> call\n"
            f"{n}_name: {n.upper()}_NAME -> call_name\n"
            f'{n.upper()}_END: "{end}"\n'
            f"{n.upper()}_NAME: /{n}:(?P<v>[a-z_]{{1,64}})(?=[{end}])/\n")


def _seen(r: Any) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    return (r.text, [(c.name, c.dialect) for c in r.calls],
            [(b.dialect, b.status) for b in r.blocks])


# ---------------------------------------------------------------- 2. the dialect of a block
def test_a_shared_opener_credits_the_dialect_that_parsed(tmp_path: Path) -> None:
    """``<tc>`` opens both dialects (and is the entry of the first listed). Blocks, calls
    emitted early, failed blocks and blocks whose opener was repaired all name the dialect
    whose rule read them."""
    d = _write(tmp_path, pa=_dialect("pa", ";"), pb=_shares_pa("pb", "!"))
    # the third block fails at `pa:q;`, which then begins a block without its opener, as
    # does `pb:m!` in the fourth
    text = "x <tc>pb:f!pb:h!</tc> y <tc>pa:g;</tc> z <tc>pb:k!pa:q;</tc> w pb:m!</tc>"
    for dialects in (("pa", "pb"), ("pb", "pa")):
        opts: dict[str, Any] = {"dialects": dialects, "grammar_dirs": (d,)}
        r = parse(text, **opts)
        assert [(b.dialect, b.status) for b in r.blocks] == [
            ("pb", "complete"), ("pa", "complete"), ("pb", "failed"), ("pa", "complete"),
            ("pb", "complete")]
        assert [(c.name, c.dialect) for c in r.calls] == [
            ("f", "pb"), ("h", "pb"), ("g", "pa"), ("q", "pa"), ("m", "pb")]
        for chunks in ([text], list(text)):
            events = [e for e in stream(chunks, early_emit="invoke", **opts)
                      if isinstance(e, ToolCalls)]
            assert [(c.name, c.dialect) for e in events for c in e.calls] == [
                ("f", "pb"), ("h", "pb"), ("g", "pa"), ("k", "pb"), ("q", "pa"), ("m", "pb")]
            assert all(c.dialect == e.block.dialect for e in events for c in e.calls)


def test_a_shared_opener_and_body_take_the_dialect_from_the_closer(tmp_path: Path) -> None:
    """The same opener and body, two closers: the block is the dialect whose closer ends it."""
    d = _write(tmp_path, pa='pa: MY_OPEN _markup_body PA_CLOSE\nMY_OPEN: "<tc>"\n'
                            'PA_CLOSE: "</tc-a>"\n',
               pb='pb: MY_OPEN _markup_body PB_CLOSE\nPB_CLOSE: "</tc-b>"\n')
    call = '<invoke name="f"></invoke>'
    for dialects in (("pa", "pb"), ("pb", "pa")):
        r = run_all_ways(f"<tc>{call}</tc-b> <tc>{call}</tc-a>", dialects=dialects,
                         grammar_dirs=(d,))
        assert _seen(r) == (" ", [("f", "pb"), ("f", "pa")],
                            [("pb", "complete"), ("pa", "complete")])


def test_every_parser_state_knows_its_dialects() -> None:
    """In the built-in grammar each opener's state belongs to its dialect alone, and the
    states inside an invoke to the four markup dialects."""
    g = load_grammar()
    bit = {d: 1 << k for k, d in enumerate(g.dialects)}
    start = g.table.states[g.start_state]
    for e in g.entries:
        if e.synthetic is None:
            assert g.state_dialects[start[e.terminal][1]] == bit[e.dialect], e.terminal
    markup = bit["dsml"] | bit["dsml_v4"] | bit["dsml_v32"] | bit["xml"]
    after = {g.state_dialects[s] for s, row in g.table.states.items()
             if any(a.name == "Shift" for t, (a, _) in row.items() if t == "NAME_ATTR")}
    assert after == {markup}


# ---------------------------------------------------------------- 4. a block needs a call
@pytest.mark.parametrize("rule", [
    "nc: NC_OPEN nc_call* NC_CLOSE",
    "nc: NC_OPEN nc_call+ NC_CLOSE\n  | NC_OPEN NC_CLOSE",
    "nc: NC_OPEN nc_body NC_CLOSE\nnc_body: nc_call | NC_WS",
    "nc: NC_OPEN [nc_call] NC_CLOSE",
])
def test_a_block_that_can_hold_no_call_is_refused(tmp_path: Path, rule: str) -> None:
    """Such a block would take ``<nc></nc>`` (or a mention of it) from the prose as a
    complete block of no calls."""
    text = (f"{rule}\nnc_call: nc_name NC_END -> call\nnc_name: NC_NAME -> call_name\n"
            'NC_OPEN: "<nc>"\nNC_CLOSE: "</nc>"\nNC_END: ";"\nNC_WS: " "\n'
            "NC_NAME: /(?P<v>[a-z_]{1,64})(?=;)/\n")
    message = _refused(_write(tmp_path, nc=text), ("nc",))
    assert f"{tmp_path / 'nc.lark'}:1: rule nc" in message
    assert "without any call" in message


def test_blocks_that_always_hold_a_call_load(tmp_path: Path) -> None:
    d = _write(tmp_path, nc=_dialect("nc", ";").replace("nc_call+", "nc_body") +
               "nc_body: nc_call+ | NC_WS nc_call+\nNC_WS: \" \"\n")
    assert parse("<tc> nc:f;</tc>", dialects=("nc",), grammar_dirs=(d,)).calls[0].name == "f"
    g = load_grammar((*DEFAULT_DIALECTS, "qwen3_coder"), (str(GRAMMARS),))
    assert g.dialects[-1] == "qwen3_coder"
    for name in DEFAULT_DIALECTS:
        assert load_grammar((name,)).dialects == (name,)

"""The grammar layer (issue 11, item 6), each with scratch grammars in a temporary folder:
a dialect whose block could hold no call refused at load. Every grammar problem stays a
``GrammarError`` naming the file, the name as written and, where Lark gives them, the line
and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from callsieve import DEFAULT_DIALECTS, GrammarError, parse
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

"""SPEC §8 Results: ``saw_tool_call_syntax`` and the fields of ``ParseResult`` and
``Block``.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

from helpers import (
    DSML,
    INV,
    NATIVE_V31,
    READ,
    XML,
    X,
    check,
    run_all_ways,
    table,
)

SAW_ROWS = [
    ("wrapper", X(INV("a")), True),
    ("dsml-wrapper", DSML, True),
    ("native", NATIVE_V31, True),
    ("missing-wrapper-shape", INV("a") + "</tool_calls>", True),
    ("failed-wrapper", X(INV("a", "<param>v</param>")), True),
    ("bare-invoke", "ok " + INV("a") + " after", False),
    ("bare-invoke-unfinished", 'see <invoke name="a">', False),
    ("prose", "Just some prose with a<b and <b>tags</b>.", False),
    ("empty", "", False),
]


@table(SAW_ROWS)
def test_s8_saw_tool_call_syntax(row: tuple[Any, ...]) -> None:
    text, saw = row
    r = run_all_ways(text)
    assert r.saw_tool_call_syntax is saw


def test_s8_result_fields() -> None:
    bad = X(INV("a", "<param>v</param>"))
    text = f"one {bad} two {XML} three"
    r = check(text, f"one {bad} two  three", READ)
    *failed, last = r.blocks
    assert failed and all(b.status == "failed" and b.diagnostics for b in failed)
    assert failed[0].span[0] == text.index(bad) and failed[0].dialect == "xml"
    for b in r.blocks:
        assert b.raw == text[b.span[0] : b.span[1]]
    assert (last.status, last.dialect) == ("complete", "xml")
    assert last.repairs == () and r.calls[0].repairs == () and last.diagnostics == ()
    assert last.span == (text.index(XML), text.index(XML) + len(XML))

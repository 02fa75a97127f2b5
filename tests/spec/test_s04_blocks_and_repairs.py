"""SPEC §4 Block structure and repairs: what makes a block, a mention or text; the
missing-opener and loose-CDATA repairs.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

from helpers import (
    INV,
    P,
    X,
    canon_calls,
    canon_value,
    check,
    run_all_ways,
    table,
)

import callsieve
from callsieve import (
    Text,
    ToolCalls,
)

STRUCTURE_ROWS = [
    (
        "zero-arg-self-closing",
        '<tool_calls><invoke name="get_time"/></tool_calls>',
        "",
        [("get_time", {})],
    ),
    (
        "zero-arg-self-closing-space",
        '<tool_calls><invoke name="t" /></tool_calls>',
        "",
        [("t", {})],
    ),
    ("zero-arg-empty-invoke", X(INV("t")), "", [("t", {})]),
    (
        "whitespace-around-invokes",
        "<tool_calls>\n \t\n" + INV("a") + "\n\n" + INV("b") + "\n </tool_calls>",
        "",
        [("a", {}), ("b", {})],
    ),
    (
        "several-params",
        X(INV("a", P("x", "1") + "\n" + P("y", "two"))),
        "",
        [("a", {"x": 1, "y": "two"})],
    ),
    # "Only whitespace may stand between the opener and the first invoke: other text there
    # means the opener was a prose mention, and the block fails at once"
    ("mention", "I will use <tool_calls> now.", "I will use <tool_calls> now.", []),
    (
        "mention-then-real",
        "Use <tool_calls> to call.\n" + X(INV("a")),
        "Use <tool_calls> to call.\n",
        [("a", {})],
    ),
    (
        "dsml-mention-then-real",
        (
            "The <|DSML|tool_calls> tag, then:\n<|DSML|tool_calls>"
            '<|DSML|invoke name="a"></|DSML|invoke></|DSML|tool_calls>'
        ),
        "The <|DSML|tool_calls> tag, then:\n",
        [("a", {})],
    ),
    # "scanning resumes right after its opening tag" (§7)
    ("double-opener", "<tool_calls>" + X('<invoke name="a"/>'), "<tool_calls>", [("a", {})]),
    # ... and what follows the failed opener is scanned again: here a missing-opener shape
    (
        "text-before-first-invoke",
        "<tool_calls>x" + INV("a") + "</tool_calls>",
        "<tool_calls>x",
        [("a", {})],
    ),
    (
        "text-before-first-invoke-no-closer",
        "<tool_calls>x" + INV("a") + " y",
        "<tool_calls>x" + INV("a") + " y",
        [],
    ),
    # "An invoke needs a non-empty name"; "A parameter needs a name."
    ("empty-name", X('<invoke name=""></invoke>'), X('<invoke name=""></invoke>'), []),
    ("no-name", X(INV("a")).replace(' name="a"', ""), X(INV("a")).replace(' name="a"', ""), []),
    (
        "param-without-name",
        X(INV("a", "<parameter>v</parameter>")),
        X(INV("a", "<parameter>v</parameter>")),
        [],
    ),
    # "A wrapper that closes but does not parse ... is released verbatim as text"
    (
        "param-tag",
        X(INV("a", '<param name="p">v</param>')) + " tail",
        X(INV("a", '<param name="p">v</param>')) + " tail",
        [],
    ),
    ("no-invoke", "<tool_calls></tool_calls>", "<tool_calls></tool_calls>", []),
    (
        "no-invoke-whitespace",
        "<tool_calls>\n \n</tool_calls>",
        "<tool_calls>\n \n</tool_calls>",
        [],
    ),
    (
        "unclosed-invoke",
        '<tool_calls><invoke name="a"></tool_calls>',
        '<tool_calls><invoke name="a"></tool_calls>',
        [],
    ),
    (
        "unclosed-block",
        'x <tool_calls><invoke name="a"><parameter name="p">v',
        'x <tool_calls><invoke name="a"><parameter name="p">v',
        [],
    ),
    (
        "unclosed-wrapper",
        "x " + X(INV("a"))[: -len("</tool_calls>")],
        "x " + X(INV("a"))[: -len("</tool_calls>")],
        [],
    ),
    (
        "failed-then-real",
        X(INV("a", "<param>v</param>")) + "\n" + X(INV("b", P("p", "1"))),
        X(INV("a", "<param>v</param>")) + "\n",
        [("b", {"p": 1})],
    ),
    (
        "failed-dsml-then-real",
        '<|DSML|tool_calls><|DSML|invoke><|DSML|parameter name="p">v</|DSML|parameter>'
        "</|DSML|invoke></|DSML|tool_calls> then " + X(INV("b")),
        (
            '<|DSML|tool_calls><|DSML|invoke><|DSML|parameter name="p">v</|DSML|parameter>'
            "</|DSML|invoke></|DSML|tool_calls> then "
        ),
        [("b", {})],
    ),
    (
        "unclosed-then-real-inside",
        "<tool_calls>\nsee " + X(INV("b")),
        "<tool_calls>\nsee ",
        [("b", {})],
    ),
    # "A bare invoke never followed by a closing wrapper is text."
    (
        "bare-invoke",
        'ok <invoke name="a"><parameter name="p">v</parameter></invoke> after',
        'ok <invoke name="a"><parameter name="p">v</parameter></invoke> after',
        [],
    ),
    (
        "bare-invoke-unfinished",
        'see <invoke name="terminal">not a real call',
        'see <invoke name="terminal">not a real call',
        [],
    ),
    ("bare-self-closing-invoke", 'use <invoke name="a"/> here', 'use <invoke name="a"/> here', []),
]


@table(STRUCTURE_ROWS)
def test_s4_structure(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    check(text, want_text, calls)


def test_s4_mention_fails_at_once_while_streaming() -> None:
    """ "the block fails at once (no waiting for a close that may never come)"."""
    text = "I will use <tool_calls> now"
    check(text, text, [])
    sieve = callsieve.Sieve()
    out = "".join(e.text for e in sieve.feed(text) if isinstance(e, Text))
    assert out == text


def test_s4_stray_text_between_invokes_is_ignored_and_reported() -> None:
    text = (
        '<tool_calls>\n<invoke name="a"/> I think\n<invoke name="b">'
        + P("p", "1")
        + "</invoke> and done\n</tool_calls>"
    )
    r = check("x " + text + " y", "x  y", [("a", {}), ("b", {"p": 1})])
    (block,) = r.blocks
    assert block.status == "complete"
    assert block.diagnostics, "stray text must be reported in the block's diagnostics"
    assert block.raw == text


def test_s4_failed_wrapper_is_recorded_and_released_verbatim() -> None:
    bad = X(INV("a", '<param name="p">v</param>'))
    text = "pre " + bad + " post " + X(INV("b"))
    r = check(text, "pre " + bad + " post ", [("b", {})])
    *failed, last = r.blocks
    assert failed and all(b.status == "failed" and b.diagnostics for b in failed)
    assert failed[0].span[0] == len("pre ")
    assert all(b.raw == text[b.span[0] : b.span[1]] for b in r.blocks)
    assert (last.status, last.raw) == ("complete", X(INV("b")))


MISSING_OPENER_ROWS = [
    (
        "xml",
        'ok\n<invoke name="a"><parameter name="p">v</parameter></invoke></tool_calls> after',
        "ok\n after",
        [("a", {"p": "v"})],
    ),
    (
        "xml-whitespace",
        '<invoke name="a"/>\n  <invoke name="b"></invoke>\n</tool_calls>',
        "",
        [("a", {}), ("b", {})],
    ),
    (
        "dsml",
        (
            '<|DSML|invoke name="a"></|DSML|invoke>\n<|DSML|invoke name="b"></|DSML|invoke>\n'
            "</|DSML|tool_calls>"
        ),
        "",
        [("a", {}), ("b", {})],
    ),
    (
        "v4",
        (
            '<｜DSML｜invoke name="a"><｜DSML｜parameter name="n" string="true">1'
            "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"
        ),
        "",
        [("a", {"n": "1"})],
    ),
    (
        "v32-closer",
        '<｜DSML｜invoke name="a"></｜DSML｜invoke></｜DSML｜function_calls>',
        "",
        [("a", {})],
    ),
    ("fullwidth-closer", '<invoke name="a"/>＜／tool_calls＞', "", [("a", {})]),
    ("alias-prefix", '<DSMLinvoke name="a"/></DSMLtool_calls>', "", [("a", {})]),
]


@table(MISSING_OPENER_ROWS)
def test_s4_missing_opener_repair(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    r = check(text, want_text, calls)
    assert all(c.repairs == ("missing_opener",) for c in r.calls), r.calls
    complete = [b for b in r.blocks if b.status == "complete"]
    assert len(complete) == 1 and complete[0].repairs == ("missing_opener",)
    assert r.saw_tool_call_syntax


def test_s4_repaired_block_keeps_its_raw() -> None:
    text = 'a <invoke name="x"></invoke></tool_calls> b'
    r = check(text, "a  b", [("x", {})])
    (block,) = [b for b in r.blocks if b.status == "complete"]
    assert block.raw == '<invoke name="x"></invoke></tool_calls>'
    assert text[block.span[0] : block.span[1]] == block.raw


LOOSE_CDATA_ROWS = [
    (
        "basic",
        X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>')),
        "",
        [("a", {"p": "abc"})],
    ),
    # "closed before the *last* parameter-closing tag that lets the rest of the block parse"
    (
        "last-closing-tag",
        X(INV("a", '<parameter name="p"><![CDATA[x</parameter>y</parameter>')),
        "",
        [("a", {"p": "x</parameter>y"})],
    ),
    (
        "second-param",
        X(INV("a", P("q", "1") + '<parameter name="p"><![CDATA[ab\ncd</parameter>')),
        "",
        [("a", {"q": 1, "p": "ab\ncd"})],
    ),
    (
        "dsml",
        (
            '<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">'
            "<![CDATA[v</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
        ),
        "",
        [("a", {"p": "v"})],
    ),
    # the block ends at its closing wrapper; what follows it is prose
    (
        "with-text-after",
        X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>')) + " and then some",
        " and then some",
        [("a", {"p": "abc"})],
    ),
    (
        "then-another-block",
        X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))
        + " text "
        + X('<invoke name="b"/>'),
        " text ",
        [("a", {"p": "abc"}), ("b", {})],
    ),
]


@table(LOOSE_CDATA_ROWS)
def test_s4_loose_cdata(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    r = check(text, want_text, calls)
    assert r.calls[0].repairs == ("loose_cdata",)
    complete = [b for b in r.blocks if b.status == "complete"]
    assert complete[0].repairs == ("loose_cdata",)
    assert complete[0].raw.endswith("tool_calls>")


LOOSE_CDATA_TEXT_ROWS = [
    ("no-closing-tag", 'x <tool_calls><invoke name="a"><parameter name="p"><![CDATA[abc'),
    (
        "no-wrapper-close",
        X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))[: -len("</tool_calls>")],
    ),
    (
        "closing-tags-do-not-fit",
        ('x <tool_calls><invoke name="a"><parameter name="p"><![CDATA[abc</invoke></tool_calls>'),
    ),
]


@table(LOOSE_CDATA_TEXT_ROWS)
def test_s4_loose_cdata_without_a_fitting_cut_is_text(row: tuple[Any, ...]) -> None:
    (text,) = row
    check(text, text, [])


def test_s4_loose_cdata_repair_happens_at_close() -> None:
    text = X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))
    check(text, "", [("a", {"p": "abc"})])
    sieve = callsieve.Sieve()
    assert not any(isinstance(e, ToolCalls) for e in sieve.feed(text))
    events = sieve.close()
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    assert canon_calls(calls) == [("a", canon_value({"p": "abc"}))]
    assert calls[0].repairs == ("loose_cdata",)


# A hostile-input finding (the loose-CDATA repair's trials, tests/unit/test_hostile_input.py).
def test_s4_failed_repair_trial_leaves_no_trace_in_the_next() -> None:
    # The last place fails after its invoke closed (no wrapper after it); the earlier one
    # completes. Trials fork one parser snapshot: a failed one must not leave its parameter
    # in the tree the next one builds (Lark extends a left-recursive list in place).
    text = (
        '<tool_calls><invoke name="a"><parameter name="q">1</parameter>'
        '<parameter name="p"><![CDATA[ab</parameter></invoke></tool_calls>'
        "yy</parameter></invoke>"
    )
    r = run_all_ways(text)
    assert [(c.name, c.input) for c in r.calls] == [("a", {"q": 1, "p": "ab"})]
    assert r.text == "yy</parameter></invoke>"

"""SPEC §7 Streaming: what is held back and when, when calls are emitted (``early_emit``),
``mode="off"``, ``max_block_chars``, ``id_factory``, and the hot paths' folds.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from helpers import (
    DSML,
    INV,
    NATIVE_V3,
    XML,
    P,
    X,
    calls_of,
    canon_value,
    check,
    chunk_at,
    drive,
    fed,
    table,
    text_of,
)

import callsieve
from callsieve import (
    Sieve,
    Text,
    ToolCalls,
    parse,
)

PLAIN_PROSE = [
    "hello wor",
    "a > b and c >= d, 100%",
    "日本語のテキスト ｜ ▁ 、 ！ ※ ␂",
    "use `x` and ``y`` here",
    "tail `",
    "tail ``",
    "~~~ not a fence",
    "```\ncode\n```\nafter",
    "```\ncode\n``",
    "line\n\n\n",
    "emoji 💥 and \u200b zero width",
]


@pytest.mark.parametrize("prose", PLAIN_PROSE)
def test_s7_text_without_a_tag_lead_is_never_held(prose: str) -> None:
    """ "Text is released as soon as it cannot be the start of a tool block" - text with no
    `<` (or `＜`, `〈`) cannot start one, so every feed releases all of it."""
    check(prose, prose, [])
    sieve = callsieve.Sieve()
    out = ""
    for i, ch in enumerate(prose):
        out += text_of(sieve.feed(ch))
        assert out == prose[: i + 1], f"held back {prose[len(out) : i + 1]!r}"
    _, [events] = fed([prose])
    assert text_of(events) == prose


HOLD_ROWS = [
    # (fed, what must already be out, may the rest be held)
    ("lone-lt", "x <", "x "),
    ("lt-letter", "x <b", "x "),
    ("lt-tag-closed", "x <b>", "x <b>"),
    ("lt-space", "x < y", "x < y"),
    ("lt-digit-run", "1<2<3", "1<2"),
    ("prefix-then-newline", "x <|DSML\nmore", "x <|DSML\nmore"),
    ("prefix-too-long", "x <" + "a" * 30, "x <" + "a" * 30),
    ("dsml-prefix-too-long", "x <|DSML|" + "q" * 40, "x <|DSML|" + "q" * 40),
    ("partial-dsml", "x <｜DSM", "x "),
    ("partial-wrapper", "x <|DSML|tool_cal", "x "),
    ("partial-native", "x <｜tool▁calls▁be", "x "),
    ("html-after-lt", "a <b>bold</b> c", "a <b>bold</b> c"),
    ("inside-fence", "```\nx <", "```\nx <"),
    ("inside-inline-code", "`x <tool_calls", "`x <tool_calls"),
]


@table(HOLD_ROWS)
def test_s7_hold_back_is_only_a_viable_tag_prefix(row: tuple[Any, ...]) -> None:
    text, must_be_out = row
    check(text, text, [])
    for chunks in ([text], list(text)):
        _, per_feed = fed(chunks)
        out = "".join(text_of(evs) for evs in per_feed)
        assert out.startswith(must_be_out) and text.startswith(out), (chunks, out)
        held = text[len(out) :]
        assert len(held) <= 64, f"held back {held!r}"
        assert "\n" not in held, f"held back a line break: {held!r}"


def test_s7_close_flushes_held_tail() -> None:
    check("x <", "x <", [])
    sieve, [events] = fed(["x <"])
    assert text_of(events) == "x "
    assert text_of(sieve.close()) == "<"


def test_s7_close_flushes_unfinished_block_as_text() -> None:
    text = 'x <tool_calls><invoke name="a"><parameter name="p">v'
    check(text, text, [])
    sieve, [events] = fed([text])
    assert text_of(events) == "x "
    closing = sieve.close()
    assert text_of(closing) == text[2:]
    assert not calls_of(closing)


EMIT_ROWS = [
    ("xml", X(INV("a", P("p", "1")))),
    (
        "dsml",
        (
            '<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">1'
            "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
        ),
    ),
    (
        "dsml_v4",
        (
            '<｜DSML｜tool_calls><｜DSML｜invoke name="a"><｜DSML｜parameter name="p">1'
            "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"
        ),
    ),
    (
        "dsml_v32",
        (
            '<｜DSML｜function_calls><｜DSML｜invoke name="a"><｜DSML｜parameter name="p">1'
            "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>"
        ),
    ),
    (
        "fullwidth-closer",
        (
            '<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">1'
            "</|DSML|parameter></|DSML|invoke>＜／|DSML|tool_calls＞"
        ),
    ),
    ("closer-with-space", X(INV("a", P("p", "1")))[:-1] + " >"),
    (
        "native",
        (
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{"p": 1}'
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
    ),
    ("missing-opener", INV("a", P("p", "1")) + "</tool_calls>"),
]


@table(EMIT_ROWS)
def test_s7_call_emitted_when_closing_tag_completes(row: tuple[Any, ...]) -> None:
    (block,) = row
    text = "pre " + block + " post"
    check(text, "pre  post", [("a", {"p": 1})])
    cut = len("pre ") + len(block) - 1
    for chunks in ([text[:cut], text[cut:]], [*text[:cut], text[cut:]]):
        sieve, per_feed = fed(chunks)
        before = [e for evs in per_feed[:-1] for e in evs]
        assert not calls_of(before), "a call was emitted before its closing tag completed"
        assert text_of(before) == "pre "
        last = per_feed[-1]
        assert calls_of(last) == [("a", canon_value({"p": 1}))]
        assert text_of(last) == " post", "text after the block must go out at once"
        assert sieve.close() == []


def test_s7_early_emit_invoke_emits_each_call_when_its_invoke_closes() -> None:
    first = '<invoke name="a"/>'
    second = INV("b", P("p", "1"))
    text = f"x <tool_calls>\n{first}\n{second}\n</tool_calls> y"
    want = [("a", {}), ("b", {"p": 1})]
    check(text, "x  y", want, early_emit="invoke")
    check(text, "x  y", want)
    i1 = text.index(first) + len(first)
    i2 = text.index(second) + len(second)
    _sieve, per_feed = fed(
        [text[: i1 - 1], text[i1 - 1 : i1], text[i1 : i2 - 1], text[i2 - 1 : i2], text[i2:]],
        early_emit="invoke",
    )
    assert [len(calls_of(evs)) for evs in per_feed] == [0, 1, 0, 1, 0]
    assert text_of(per_feed[-1]) == " y"
    _, per_feed_block = fed([text[:i1], text[i1:i2], text[i2:]])
    assert [len(calls_of(evs)) for evs in per_feed_block] == [0, 0, 2]


@pytest.mark.parametrize("cut", [None, 38, 39, 57])
def test_s7_early_emit_invoke_events_carry_the_diagnostics_of_their_stretch(cut: Any) -> None:
    """Each event's block holds the diagnostics that arose in the input it settles, so the
    events of one block add up to the same diagnostics however the input was chunked."""
    text = '<tool_calls><invoke name="e"></invoke>a<invoke name="g"/></tool_calls>'
    sieve = callsieve.Sieve(early_emit="invoke")
    chunks = [text] if cut is None else [text[:cut], text[cut:]]
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    blocks = [e.block for e in events if isinstance(e, ToolCalls)]
    assert [d for b in blocks for d in b.diagnostics] == ["stray text ignored at offset 38"]
    for b in blocks:  # ... each in the event whose stretch holds the stray text
        assert all(b.span[0] <= 38 < b.span[1] for _ in b.diagnostics)


def test_s7_early_emit_invoke_block_breaks_off_after_a_call() -> None:
    head = '<tool_calls><invoke name="a"/>'
    rest = '<invoke name="b"><parameter name="p">v'
    r = check("x " + head + rest, "x " + rest, [("a", {})], early_emit="invoke")
    partial = [b for b in r.blocks if b.status == "partial"]
    assert len(partial) == 1 and partial[0].raw == head
    # with the default early_emit="block" nothing is emitted: the block never closed
    check("x " + head + rest, "x " + head + rest, [])


def test_s7_mode_off_passes_everything_as_text() -> None:
    text = f"a {XML} b {DSML} c {NATIVE_V3} `x` ```\n"
    r = check(text, text, [], mode="off")
    assert r.blocks == ()
    sieve, per_feed = fed(list(text), mode="off")
    assert "".join(text_of(e) for e in per_feed) == text
    assert sieve.close() == []


BIG_BLOCKS = {
    "plain-body": X(INV("a", P("p", "x" * 300))),
    "cdata-body": X(INV("a", P("p", "<![CDATA[" + "y" * 300 + "]]>"))),
    "many-params": X(INV("a", "".join(P(f"p{i}", str(i)) for i in range(12)))),
    "dsml": (
        '<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">'
        + "z" * 300
        + "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
    ),
    "native": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>"
        + '{"p": "'
        + "w" * 300
        + '"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
}


@pytest.mark.parametrize("big", list(BIG_BLOCKS.values()), ids=list(BIG_BLOCKS))
def test_s7_max_block_chars_releases_an_oversized_block_as_text(big: str) -> None:
    """ "a block that grows past it is released as text with a diagnostic, never
    truncated"; a later block still parses."""
    small = X(INV("b", P("p", "1")))
    text = f"pre {big} mid {small} post"
    limit = 120
    r = check(text, f"pre {big} mid  post", [("b", {"p": 1})], max_block_chars=limit)
    failed = [b for b in r.blocks if b.status == "failed"]
    assert failed and all(b.diagnostics for b in failed)
    assert failed[0].span[0] == len("pre ")
    assert any(str(limit) in d or "max_block_chars" in d for d in failed[0].diagnostics)
    # at the limit the same block parses
    first = callsieve.parse(big).calls
    check(
        text,
        "pre  mid  post",
        [*[(c.name, c.input) for c in first], ("b", {"p": 1})],
        max_block_chars=len(big),
    )


@pytest.mark.parametrize(
    "body",
    ["x" * 5000, "<![CDATA[" + "y\n" * 2500 + "]]>", "<![CDATA[" + "x[i] = y[j]\n" * 450 + "]]>"],
)
@pytest.mark.parametrize("limit", [3000, 6000])
def test_s7_max_block_chars_holds_for_long_streamed_bodies(body: str, limit: int) -> None:
    """A body streamed in more small chunks than the sieve appends between two counts
    (``HOT_BUDGET``) is still measured against ``max_block_chars`` exactly: past it the
    block is text, below it the call; the same under every chunking (the third body has a
    ``]`` that may begin the CDATA stop at every few characters, so chunks keep leaving the
    run's hot path and coming back)."""
    from callsieve._scan.cursor import HOT_BUDGET

    assert len(body) > 2 * HOT_BUDGET
    big = X(INV("a", P("p", body)))
    text = f"pre {big} post"
    if len(big) > limit:
        r = check(text, text, [], max_block_chars=limit)
        assert [b.status for b in r.blocks] == ["failed"]
    else:
        value = body[9:-3] if body.startswith("<![CDATA[") else body
        check(text, "pre  post", [("a", {"p": value})], max_block_chars=limit)


@pytest.mark.parametrize("budget", [1, 4, 256])
@pytest.mark.parametrize("unit", ["a]", "]", "ab]]", "xy\n"])
def test_s7_a_streamed_body_past_max_block_chars_fails_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, budget: int, unit: str
) -> None:
    """However a streamed body's chunks end (one ending in ``]``, which may begin the CDATA
    stop, leaves the run's hot path, and so does the next), what the sieve takes is counted
    at least every ``HOT_BUDGET`` chunks: a block past ``max_block_chars`` is released as
    text within that many chunks of passing it, so the text it holds stays bounded."""
    import callsieve._scan.cursor

    monkeypatch.setattr(callsieve._scan.cursor, "HOT_BUDGET", budget)
    head = '<tool_calls><invoke name="a"><parameter name="p"><![CDATA['
    limit = len(head) + 300
    sieve = callsieve.Sieve(max_block_chars=limit)
    events = sieve.feed(head)
    fed = len(head)
    released_at = None
    for _ in range(4 * (limit + budget) // len(unit) + 10):
        new = sieve.feed(unit)
        events += new
        fed += len(unit)
        if any(isinstance(e, Text) and "<tool_calls>" in e.text for e in new):
            released_at = fed
            break
    assert released_at is not None, "the block was never released"
    assert released_at <= limit + (budget + 2) * len(unit)
    events += sieve.close()
    assert "".join(e.text for e in events if isinstance(e, Text)) == head + unit * (
        (fed - len(head)) // len(unit)
    )


def test_s7_id_factory_is_used_for_every_call() -> None:
    text = X(INV("a") + INV("b")) + X(INV("c"))
    check(text, "", [("a", {}), ("b", {}), ("c", {})])
    counter = itertools.count(1)
    r = callsieve.parse(text, id_factory=lambda: f"id{next(counter)}")
    assert [c.id for c in r.calls] == ["id1", "id2", "id3"]
    r2 = callsieve.parse(text)
    assert len({c.id for c in r2.calls}) == 3 and all(c.id for c in r2.calls)


@pytest.mark.parametrize("fence", ["", "\n```\n", "\n~~~~ py\n", "`"])
def test_s7_long_prose_keeps_offsets_and_fences_exact(fence: str) -> None:
    """Prose fed in more short chunks than the sieve logs between two folds
    (``HOT_BUDGET``): the block's span still counts every character before it, a fence or
    code span opened in that prose still quotes the block, and the log stays bounded."""
    from callsieve._scan.cursor import HOT_BUDGET

    block = X(INV("a", P("p", "1")))
    prose = "ab " * HOT_BUDGET * 3 + fence
    sieve = callsieve.Sieve()
    events = []
    for ch in prose:
        events += sieve.feed(ch)
        assert len(sieve._cur.log) <= HOT_BUDGET
    events += sieve.feed(block) + sieve.feed("\n") + sieve.close()
    calls = [c.name for e in events if isinstance(e, ToolCalls) for c in e.calls]
    if fence:
        assert (
            calls == []
            and "".join(e.text for e in events if isinstance(e, Text)) == prose + block + "\n"
        )
    else:
        assert calls == ["a"]
        assert [e.block.span for e in events if isinstance(e, ToolCalls)] == [
            (len(prose), len(prose) + len(block))
        ]


@pytest.mark.parametrize("budget", [1, 2, 3])
@pytest.mark.parametrize("indent", ["", " ", "  ", "   "])
def test_s7_hot_path_folds_keep_the_line_start(
    monkeypatch: pytest.MonkeyPatch, budget: int, indent: str
) -> None:
    """The prose hot path folds its log every ``HOT_BUDGET`` chunks: a fold that holds only
    the indentation of a fence line must not lose the line break before it (§6: a fence opens
    at the start of a line, up to three spaces in)."""
    import callsieve._scan.cursor

    monkeypatch.setattr(callsieve._scan.cursor, "HOT_BUDGET", budget)
    block = X(INV("a", P("p", "1")))
    # (a blank line inside: were the fence taken for an inline span, it would end there)
    fenced = f"a\n{indent}```py\n\n{block}\n{indent}```\n"
    check(fenced + f"b {block} c", fenced + "b  c", [("a", {"p": 1})])


@pytest.mark.parametrize("budget", [1, 2, 3, 256])
@pytest.mark.parametrize("fence", ["", "\n```\n"])
def test_s7_held_leads_that_die_keep_the_log_bounded_and_offsets_exact(
    monkeypatch: pytest.MonkeyPatch, budget: int, fence: str
) -> None:
    """A possible opener held across chunks that then dies goes back to the prose hot path
    through its log, as does the text before it: the log still never holds more than
    ``HOT_BUDGET`` chunks, and the offsets, the fence state and the block after are exact."""
    import callsieve._scan.cursor

    monkeypatch.setattr(callsieve._scan.cursor, "HOT_BUDGET", budget)
    block = X(INV("a", P("p", "1")))
    prose = "a<b value large, x <Str" + "ing> and <user@example.com> done. " * 5 + fence
    text = prose + block + "\n"
    for size in (1, 2, 3, 5):
        sieve = callsieve.Sieve()
        events = []
        for k in range(0, len(text), size):
            events += sieve.feed(text[k : k + size])
            assert len(sieve._cur.log) <= budget
        events += sieve.close()
        calls = [c.name for e in events if isinstance(e, ToolCalls) for c in e.calls]
        released = "".join(e.text for e in events if isinstance(e, Text))
        if fence:
            assert calls == [] and released == text
        else:
            assert calls == ["a"] and released == prose + "\n"
            assert [e.block.span for e in events if isinstance(e, ToolCalls)] == [
                (len(prose), len(prose) + len(block))
            ]


# A hostile-input finding (tests/unit/test_hostile_input.py): max_block_chars is checked
# before a repair can make the block longer, under every chunking.
def test_s7_max_block_chars_is_checked_before_the_repair_whatever_the_chunks() -> None:
    text = (
        '<tool_calls><invoke name="a"><parameter name="p"><![CDATA['
        + "x" * 50
        + "</parameter></invoke></tool_calls>"
    )
    assert parse(text, max_block_chars=112).calls == ()
    for cuts in ([60], [59, 60], [70, 100]):
        s = Sieve(max_block_chars=112)
        events = [e for piece in chunk_at(text, cuts) for e in s.feed(piece)] + s.close()
        assert drive(events) == (text, [])
    assert [c.name for c in parse(text, max_block_chars=142).calls] == ["a"]


# ---------------------------------------------------------------------------- §7 what a Sieve exposes
def test_a_sieve_exposes_its_blocks_and_whether_it_saw_tool_syntax() -> None:
    """SPEC §7: a streaming server can tell a reply that ended inside a block (released as
    text at close()) from an ordinary one, and log why."""
    doc = (
        'I use <tool_calls> a lot. <tool_calls><invoke name="f"/></tool_calls> then '
        '<tool_calls><invoke name="g"><parameter name="p">x'
    )
    for chunks in ([doc], list(doc)):
        sieve = Sieve()
        for c in chunks:
            sieve.feed(c)
        assert [b.status for b in sieve.blocks] == ["complete"]
        sieve.close()
        complete, ended = sieve.blocks
        assert (
            complete.status == "complete"
            and complete.raw == '<tool_calls><invoke name="f"/></tool_calls>'
        )
        assert ended.status == "failed" and ended.span[0] == doc.rindex("<tool_calls>")
        assert ended.diagnostics == ("the input ended inside the block",)
        assert sieve.saw_tool_call_syntax
    ordinary = Sieve()
    ordinary.feed("Just text, and `<tool_calls>` in code.")
    ordinary.close()
    assert ordinary.blocks == () and not ordinary.saw_tool_call_syntax


def test_a_sieve_keeps_the_latest_blocks_only() -> None:
    from callsieve._blocks.lifecycle import KEPT_BLOCKS

    sieve = Sieve()
    for k in range(KEPT_BLOCKS + 10):
        sieve.feed(f'<tool_calls><invoke name="f{k}"/></tool_calls>')
    sieve.close()
    assert len(sieve.blocks) == KEPT_BLOCKS
    assert sieve.blocks[-1].raw == f'<tool_calls><invoke name="f{KEPT_BLOCKS + 9}"/></tool_calls>'

"""SPEC §Invariants 1, 2, 3 and 5 as properties over generated documents.

Documents are concatenations of pieces: prose (unicode, stray angle brackets, HTML), look-alike
markup, fenced code and inline code holding tool blocks, valid blocks in every default dialect
(names, parameters and values generated), broken blocks, and DeepSeek native blocks. Every
document is split at points drawn by hypothesis and fed through ``Sieve``.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import assert_conserves, canon_calls, chunk_at, drive, stream
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import (
    FAMILIES,
    INLINE_CODE,
    LOOKALIKES,
    PROSE,
    VALID_SPEC,
    doc_and_chunks,
    family_block_spec,
    family_docs,
    soak_settings,
)

import callsieve
from callsieve import InputTypeError, SieveClosedError, Text, ToolCalls
from callsieve._grammar.compiled import load_grammar

SETTINGS = soak_settings(120)  # (CALLSIEVE_EXAMPLES: a longer soak)


def _whole(doc: str, **opts: Any) -> tuple[str, list[tuple[str, str]]]:
    r = callsieve.parse(doc, **opts)
    return r.text, canon_calls(r.calls)


def _covered(blocks: Any) -> list[tuple[int, int]]:
    """Spans of the blocks whose calls were emitted (complete, or partial under invoke), and
    of the frames (framing a dialect drops, SPEC §12)."""
    return [b.span for b in blocks if b.status in ("complete", "partial", "frame")]


# ---------------------------------------------------------------------------- the checks
def check_invariance(doc: str, chunks: list[str], **opts: Any) -> None:
    """§Inv 1: coalesced events of any chunking equal parse() (calls, order, text)."""
    want = _whole(doc, **opts)
    assert drive(stream(chunks, **opts)) == want
    assert drive(stream(list(doc), **opts)) == want


def check_conservation(doc: str, chunks: list[str], **opts: Any) -> None:
    """§Inv 2: released text and the raw of emitted blocks, in event order, are the input;
    parse().blocks' raw are input slices; parse().text is the input minus complete blocks."""
    assert_conserves(doc, stream(chunks, **opts), "stream")
    r = callsieve.parse(doc, **opts)
    pos = 0
    rebuilt = []
    for b in r.blocks:
        start, end = b.span
        assert 0 <= start <= end <= len(doc)
        assert b.raw == doc[start:end], b
        assert b.status in ("complete", "failed", "frame"), b
        if b.status != "failed":
            assert start >= pos, f"complete blocks overlap: {r.blocks}"
            rebuilt.append(doc[pos:start])
            pos = end
    rebuilt.append(doc[pos:])
    assert "".join(rebuilt) == r.text


def check_conservation_invoke(
    doc: str, chunks: list[str], early_emit: str = "invoke", **opts: Any
) -> None:
    """§Inv 2 under early_emit="invoke" (and "arguments", which emits calls as it does):
    text is the input minus complete/partial blocks."""
    r = callsieve.parse(doc, early_emit=early_emit, **opts)
    pos = 0
    rest = []
    for b in r.blocks:
        assert b.raw == doc[b.span[0] : b.span[1]], b
    for start, end in _covered(r.blocks):
        assert start >= pos, f"blocks overlap: {r.blocks}"
        rest.append(doc[pos:start])
        pos = end
    rest.append(doc[pos:])
    assert "".join(rest) == r.text
    events = stream(chunks, early_emit=early_emit, **opts)
    assert drive(events)[0] == r.text
    # Event by event: each ToolCalls' block is the slice of input that event settles, so the
    # Text events and those slices, in order, are the input.
    pieces = []
    for e in events:
        if isinstance(e, Text):
            pieces.append(e.text)
        elif isinstance(e, ToolCalls):
            assert e.block.raw == doc[e.block.span[0] : e.block.span[1]], e.block
            pieces.append(e.block.raw)
    assert "".join(pieces) == doc


def check_no_leak(doc: str, chunks: list[str], **opts: Any) -> None:
    """§Inv 3: at each ToolCalls event the text released so far is exactly the text before
    the block (nothing of the block went out, nothing before it is still held); no Text
    event overlaps a block that parsed."""
    covered = _covered(callsieve.parse(doc, **opts).blocks)

    def text_before(offset: int) -> int:
        return offset - sum(min(e, offset) - s for s, e in covered if s < offset)

    events = stream(chunks, **opts)
    released = 0
    for e in events:
        if isinstance(e, Text):
            released += len(e.text)
        elif isinstance(e, ToolCalls):
            start, end = e.block.span
            assert any(s <= start and end <= t for s, t in covered), (e.block, covered)
            assert released == text_before(start), (
                f"at the call of block {e.block.span}, {released} characters of text were "
                f"out, expected {text_before(start)}"
            )
    if opts.get("early_emit", "block") == "block":
        pos = 0
        text_spans: list[tuple[int, int]] = []
        for e in events:
            if isinstance(e, Text):
                text_spans.append((pos, pos + len(e.text)))
                pos += len(e.text)
            elif isinstance(e, ToolCalls):
                pos = e.block.span[1]
        for a, b in text_spans:
            for s, t in covered:
                assert b <= s or a >= t, f"Text at {(a, b)} overlaps block {(s, t)}"


# ---------------------------------------------------------------------------- fixed examples
# Documents checked on every run whatever hypothesis draws (shapes found by hand or by
# shrinking); kept apart so that a failure here does not stop the properties exploring.
LOOSE_CDATA_THEN_TEXT = (
    '<tool_calls><invoke name="a"><parameter name="p"><![CDATA[x</parameter>'
    "</invoke></tool_calls>Hello, world. "
)
EXAMPLES = {
    "loose-cdata-then-text": LOOSE_CDATA_THEN_TEXT,
    "loose-cdata-then-block": LOOSE_CDATA_THEN_TEXT + '<tool_calls><invoke name="b"/></tool_calls>',
    "mention-then-repair": 'I will use <tool_calls> now.\n<invoke name="a"/></tool_calls> `<x>` <',
    "fenced-then-native-opener": '```\n<tool_calls><invoke name="f"/></tool_calls>\n```\n'
    "<｜tool▁calls▁begin｜>",
    # A bare value then a zero-width character: cut after it, the value must not end early.
    "zero-width-after-bare-value": "<tool_calls><invoke name=h\u200d></invoke></tool_calls>",
    "zero-width-in-bare-param-name": '<tool_calls><invoke name="h"><parameter name=o\u200ds>'
    '</parameter></invoke><invoke name="b"></invoke></tool_calls>',
    # A call emitted early, then the input ends in a CDATA no closing tag repairs.
    "early-call-then-unrepairable-cdata": '<invoke name="b"><parameter name="t"><tool_calls>'
    '<invoke name="r"></invoke><invoke name="g">'
    '<parameter name="q"><![CDATA[>',
}
CHECKS = {
    "invariance": check_invariance,
    "invariance-invoke": lambda d, c: check_invariance(d, c, early_emit="invoke"),
    "conservation": check_conservation,
    "conservation-invoke": check_conservation_invoke,
    "no-leak": check_no_leak,
    "no-leak-invoke": lambda d, c: check_no_leak(d, c, early_emit="invoke"),
}


@pytest.mark.parametrize("check", list(CHECKS.values()), ids=list(CHECKS))
@pytest.mark.parametrize("doc", list(EXAMPLES.values()), ids=list(EXAMPLES))
def test_fixed_examples(doc: str, check: Any) -> None:
    check(doc, [doc])
    check(doc, list(doc))


# ---------------------------------------------------------------------------- 1. invariance
@SETTINGS
@given(doc_and_chunks())
def test_chunking_invariance(case: tuple[str, list[str]]) -> None:
    check_invariance(*case)


#: The modes that emit each call as its invoke closes ("arguments" streams it before, too).
PER_INVOKE = ("invoke", "arguments")


@pytest.mark.parametrize("early_emit", PER_INVOKE)
@SETTINGS
@given(doc_and_chunks())
def test_chunking_invariance_early_emit_invoke(
    early_emit: str, case: tuple[str, list[str]]
) -> None:
    check_invariance(*case, early_emit=early_emit)


@SETTINGS
@given(st.lists(VALID_SPEC, min_size=1, max_size=3), st.data())
def test_valid_blocks_parse_whatever_the_split(
    specs: list[tuple[str, list[str]]], data: Any
) -> None:
    """Generated valid blocks separated by prose all parse, one call per invoke."""
    doc = "Intro.\n" + "\nthen\n".join(block for block, _ in specs) + "\nDone."
    r = callsieve.parse(doc)
    assert [c.name for c in r.calls] == [n for _, names in specs for n in names], r
    assert r.text == "Intro.\n" + "\nthen\n" * (len(specs) - 1) + "\nDone."
    assert [b.status for b in r.blocks] == ["complete"] * len(specs)
    cuts = data.draw(st.lists(st.integers(1, len(doc) - 1), max_size=30))
    assert drive(stream(chunk_at(doc, cuts))) == (r.text, canon_calls(r.calls))


# ---------------------------------------------------------------------------- 2. conservation
@SETTINGS
@given(doc_and_chunks())
def test_conservation(case: tuple[str, list[str]]) -> None:
    check_conservation(*case)


@pytest.mark.parametrize("early_emit", PER_INVOKE)
@SETTINGS
@given(doc_and_chunks())
def test_conservation_early_emit_invoke(early_emit: str, case: tuple[str, list[str]]) -> None:
    check_conservation_invoke(*case, early_emit=early_emit)


# ---------------------------------------------------------------------------- 3. no leak
@SETTINGS
@given(doc_and_chunks())
def test_no_leak(case: tuple[str, list[str]]) -> None:
    check_no_leak(*case)


@pytest.mark.parametrize("early_emit", PER_INVOKE)
@SETTINGS
@given(doc_and_chunks())
def test_no_leak_early_emit_invoke(early_emit: str, case: tuple[str, list[str]]) -> None:
    check_no_leak(*case, early_emit=early_emit)


# ---------------------------------------------------------------------------- opt-in families
# SPEC §2, §19: the families without a closing tag or a `<` lead keep the invariants, alone,
# all together, and beside the defaults.
FAMILY_SETS = [(d,) for d in FAMILIES] + [FAMILIES, callsieve.DEFAULT_DIALECTS + FAMILIES]
FAMILY_SETTINGS = soak_settings(40)


@pytest.mark.parametrize("dialects", FAMILY_SETS, ids=["+".join(s) for s in FAMILY_SETS])
@FAMILY_SETTINGS
@given(st.data())
def test_family_invariants(dialects: tuple[str, ...], data: Any) -> None:
    doc, chunks = data.draw(doc_and_chunks(family_docs(dialects)))
    check_invariance(doc, chunks, dialects=dialects)
    check_invariance(doc, chunks, dialects=dialects, early_emit="invoke")
    check_conservation(doc, chunks, dialects=dialects)
    check_conservation_invoke(doc, chunks, dialects=dialects)
    check_no_leak(doc, chunks, dialects=dialects)
    check_no_leak(doc, chunks, dialects=dialects, early_emit="invoke")


@pytest.mark.parametrize("dialect", FAMILIES)
@FAMILY_SETTINGS
@given(st.data())
def test_family_blocks_parse_whatever_the_split(dialect: str, data: Any) -> None:
    """A generated valid block of a family between prose parses, one call per call written."""
    block, names = data.draw(family_block_spec(dialect))
    doc = "Intro.\n" + block + "\nDone."
    r = callsieve.parse(doc, dialects=(dialect,))
    assert [c.name for c in r.calls] == names, r
    assert r.text == "Intro.\n\nDone."
    cuts = data.draw(st.lists(st.integers(1, len(doc) - 1), max_size=30))
    assert drive(stream(chunk_at(doc, cuts), dialects=(dialect,))) == (r.text, canon_calls(r.calls))


# ---------------------------------------------------------------------------- §7 hold-back
SPECIALS_HOLD = [
    "<",
    "＜",
    "〈",
    "<|DSML|",
    "<｜DSML｜tool",
    "<tool_calls",
    "<｜tool▁calls▁",
    "<\u200b",
    "<<",
    "<DSML ",
    "`",
    "```\n",
    "~~~\n",
    "\n",
    " ",
    "a" * 30,
]
#: A generous bound on the longest tag shell: `<`, 8 zero-width characters, `<`, a 24-character
#: prefix, a local name, white space and a separator before `>`.
MAX_HELD = 128
PROSE_DOCS = st.lists(
    st.one_of(PROSE, LOOKALIKES, INLINE_CODE, st.sampled_from(SPECIALS_HOLD)), max_size=8
).map("".join)


HOLD_SETS = [callsieve.DEFAULT_DIALECTS, FAMILIES]
#: ... and the families' lead characters: `[` and `{` of their openers, `f` of `function.name:`
FAMILY_PROSE_DOCS = st.lists(
    st.one_of(
        PROSE,
        st.sampled_from(
            [
                "{",
                "[",
                '{"na',
                "[TOOL_",
                "[TOOL_CALLS",
                "[f",
                "[f(",
                "function.na",
                '{"tool_calls": ',
                " " * 40,
                "[1]",
                "{x}",
                "[a](b)",
                "fun",
                "<|python_",
                '{"type": "tool_',
            ]
        ),
    ),
    max_size=8,
).map("".join)


@pytest.mark.parametrize("dialects", HOLD_SETS, ids=["defaults", "families"])
@SETTINGS
@given(st.data())
def test_hold_back_is_only_a_bounded_tag_prefix(dialects: tuple[str, ...], data: Any) -> None:
    """SPEC §7: "the only text held back is a tail that is a viable prefix of a tag (bounded
    by the longest tag shell), or a block being captured". For documents where no block is
    ever captured, after every character fed the unreleased tail starts with a tag lead and
    is short."""
    doc = data.draw(PROSE_DOCS if dialects == HOLD_SETS[0] else FAMILY_PROSE_DOCS)
    # (nor reasoning: a reply that opens with `<Think>` is reasoning, not text, SPEC §15)
    whole = callsieve.parse(doc, dialects=dialects)
    assume(whole.blocks == () and not whole.reasoning)
    sieve = callsieve.Sieve(dialects=dialects)
    g = load_grammar(dialects)
    leads = g.openers.lead_chars
    # (the families' entries allow 64 white space characters twice, `{ "name" :`)
    bound = max(MAX_HELD, *(g.terminals[e.terminal].width for e in g.entries))
    out = ""
    for i, ch in enumerate(doc):
        out += "".join(e.text for e in sieve.feed(ch) if isinstance(e, Text))
        assert doc.startswith(out)
        held = doc[len(out) : i + 1]
        assert held == "" or held[0] in leads, f"held {held!r} after {doc[: i + 1]!r}"
        assert len(held) <= bound, f"held {len(held)} characters: {held!r}"
    out += "".join(e.text for e in sieve.close() if isinstance(e, Text))
    assert out == doc


# ---------------------------------------------------------------------------- 5. never raises
SPECIALS = [
    "<",
    ">",
    "＜",
    "＞",
    "〈",
    "〉",
    "／",
    "/",
    "|",
    "｜",
    "‖",
    "▁",
    "_",
    "`",
    "~",
    "]]>",
    "\x02",
    "␂",
    "！",
    "、",
    "※",
    "\n",
    " ",
    "\u200b",
    "\ufeff",
    '"',
    "“",
    "'",
    "=",
    "<![CDATA[",
    "tool_calls",
    "invoke",
    "parameter",
    "DSML",
    'name="f"',
    "tool▁",
    "calls",
    "begin",
    "end",
    "sep",
    "```",
    "{",
    "}",
    "&lt;",
    "&#x",
]
WILD_TEXT = st.lists(st.one_of(st.sampled_from(SPECIALS), st.text(max_size=3)), max_size=40).map(
    "".join
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc_and_chunks(st.one_of(st.text(), WILD_TEXT)))
def test_never_raises_on_any_str(case: tuple[str, list[str]]) -> None:
    doc, chunks = case
    want = _whole(doc)
    events = stream(chunks)
    assert drive(events) == want
    assert_conserves(doc, events, "wild")
    assert drive(stream(chunks, early_emit="invoke")) == _whole(doc, early_emit="invoke")


@settings(max_examples=40, deadline=None)
@given(WILD_TEXT, st.sampled_from(["feed", "close"]), st.booleans())
def test_use_after_close_raises(text: str, what: str, fed: bool) -> None:
    sieve = callsieve.Sieve()
    if fed:
        sieve.feed(text)
    sieve.close()
    with pytest.raises(SieveClosedError) as info:
        if what == "feed":
            sieve.feed(text)
        else:
            sieve.close()
    assert isinstance(info.value, callsieve.CallsieveError)


NON_STR = st.one_of(
    st.binary(),
    st.integers(),
    st.none(),
    st.floats(),
    st.booleans(),
    st.lists(st.text(max_size=2), max_size=2),
    st.builds(bytearray, st.binary()),
)


@settings(max_examples=40, deadline=None)
@given(NON_STR, WILD_TEXT)
def test_non_str_raises_type_error(value: Any, before: str) -> None:
    with pytest.raises(TypeError) as info:
        callsieve.parse(value)
    assert isinstance(info.value, InputTypeError)
    sieve = callsieve.Sieve()
    events = sieve.feed(before)
    with pytest.raises(TypeError) as info:
        sieve.feed(value)
    assert isinstance(info.value, InputTypeError)
    # the rejected chunk changed nothing: the sieve goes on as if it was never offered
    events += sieve.feed("x") + sieve.close()
    assert drive(events) == _whole(before + "x")

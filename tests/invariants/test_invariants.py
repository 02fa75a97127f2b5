"""SPEC §Invariants 1, 2, 3 and 5 as properties over generated documents.

Documents are concatenations of pieces: prose (unicode, stray angle brackets, HTML), look-alike
markup, fenced code and inline code holding tool blocks, valid blocks in every default dialect
(names, parameters and values generated), broken blocks, and DeepSeek native blocks. Every
document is split at points drawn by hypothesis and fed through ``Sieve``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from helpers import assert_conserves, canon_calls, chunk_at, drive, stream
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import callsieve
from callsieve import InputTypeError, SieveClosedError, Text, ToolCalls

#: CALLSIEVE_EXAMPLES raises the example count for a longer soak (default: quick enough for CI).
SETTINGS = settings(max_examples=int(os.environ.get("CALLSIEVE_EXAMPLES", "120")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------------------- pieces
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)

PROSE_SNIPPETS = [
    "Hello, world. ", "héllo wörld ", "你好，世界。", "emoji 💥 ok ", "if a<b and c>d ",
    "<b>x</b> ", "1 < 2 ", "x <", "<", "＜", "〈", ">", "a<b", "use `code` here ", "``", "`",
    "\n", "\n\n", "   ", "&amp; &lt; ", "]]>", "<![CDATA[", "｜", "▁", "\x02", "~~", "I will ",
]
PROSE_CHARS = st.characters(blacklist_categories=("Cs",))
PROSE = st.one_of(
    st.sampled_from(PROSE_SNIPPETS),
    st.text(PROSE_CHARS, max_size=12),
    st.lists(st.sampled_from(PROSE_SNIPPETS), min_size=1, max_size=4).map("".join),
)

LOOKALIKES = st.sampled_from([
    "<tool_calls_extra>", "</tool_calls_extra>", "<ToolCallsExtra>", "<tool-calls>",
    "</tool-calls>", "<invοke name=\"f\">", "</invοke>", "<｜DSM", "<｜DSML｜", "<|DSML|",
    "<|DSML|tool_call>", "<tool_calls", "<tool_callsX>", "<|tool▁calls", "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>", "<parameter name=\"p\">", "</parameter>", "</invoke>", "</tool_calls>",
    "I will use <tool_calls> now. ", "<invoke", "<DSML", "<<|DSML|", "<!CDATA[", "<!-- c -->",
])

# Values: (body, kind) where body is the text between the parameter tags.
PLAIN_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="<>&＜〈\r")
PLAIN = st.text(PLAIN_CHARS, max_size=10)
ENTITY_TEXT = st.lists(st.sampled_from(
    ["a", " ", "&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#65;", "&#x42;", "é", "字", "x y"]),
    min_size=1, max_size=5).map("".join)
CDATA_INNER = st.one_of(
    st.text(PROSE_CHARS, max_size=12),
    st.sampled_from(["<tool_calls><invoke name=\"x\"></invoke></tool_calls>", "```\ncode\n```",
                     "</parameter>", "<b>urgent</b>", "<a>1</a><b>2</b>", "a ＜b＞ 〈c〉",
                     "<item>1</item><item>2</item>", "~~~", "`x`", "<|DSML|invoke name=\"y\">"]),
).filter(lambda s: "]]>" not in s and not s.endswith("]]") and not s.endswith("]"))
CDATA = st.lists(CDATA_INNER, min_size=1, max_size=2).map(
    lambda parts: "".join(f"<![CDATA[{p}]]>" for p in parts))
JSON_SCALARS = st.one_of(
    st.integers(-10**6, 10**6), st.booleans(), st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(PLAIN_CHARS, max_size=6))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=6)
JSON_LITERAL = JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False))
ITEMS = st.lists(st.one_of(PLAIN, NAMES.map(lambda n: f"<{n}>1</{n}>")), min_size=1,
                 max_size=3).map(lambda xs: "".join(f"<item>{x}</item>" for x in xs))
OBJECT_XML = st.lists(st.tuples(NAMES, st.one_of(PLAIN, ITEMS)), min_size=1, max_size=3).map(
    lambda kvs: "".join(f"<{k}>{v}</{k}>" for k, v in kvs))
BODIES = st.one_of(PLAIN, ENTITY_TEXT, CDATA, JSON_LITERAL, ITEMS, OBJECT_XML,
                   st.just(""), st.just("   "))

# (open prefix, close prefix, wrapper local name)
MARKUP_DIALECTS = {
    "dsml": ("<|DSML|", "</|DSML|", "tool_calls"),
    "dsml_v4": ("<｜DSML｜", "</｜DSML｜", "tool_calls"),
    "dsml_v32": ("<｜DSML｜", "</｜DSML｜", "function_calls"),
    "xml": ("<", "</", "tool_calls"),
}
WS = st.sampled_from(["", "\n", "  ", "\n  "])


@st.composite
def markup_block_spec(draw: Any, dialect: str | None = None) -> tuple[str, list[str]]:
    """A valid markup block and the names of its calls, in order."""
    dialect = dialect or draw(st.sampled_from(sorted(MARKUP_DIALECTS)))
    lt, lts, wrapper = MARKUP_DIALECTS[dialect]
    invokes, names = [], []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(NAMES)
        names.append(name)
        if draw(st.integers(0, 5)) == 0:
            invokes.append(f'{lt}invoke name="{name}"/>')
            continue
        params = []
        for _ in range(draw(st.integers(0, 3))):
            pname = draw(NAMES)
            attr = ""
            if dialect in ("dsml_v4", "dsml_v32"):
                attr = draw(st.sampled_from(["", ' string="true"', ' string="false"']))
            body = draw(BODIES)
            params.append(f'{draw(WS)}{lt}parameter name="{pname}"{attr}>{body}'
                          f'{lts}parameter>')
        invokes.append(f'{lt}invoke name="{name}">{"".join(params)}{draw(WS)}{lts}invoke>')
    ws = draw(WS)
    return f"{lt}{wrapper}>{ws}{ws.join(invokes)}{draw(WS)}{lts}{wrapper}>", names


ARGS = st.dictionaries(NAMES, JSON_VALUES, max_size=3).map(
    lambda d: json.dumps(d, ensure_ascii=False))


@st.composite
def native_block_spec(draw: Any) -> tuple[str, list[str]]:
    """A valid DeepSeek native block (V3 and V3.1 call forms) and its call names."""
    calls, names = [], []
    for _ in range(draw(st.integers(1, 2))):
        name, args = draw(NAMES), draw(ARGS)
        names.append(name)
        if draw(st.booleans()):  # V3: `function`, the name on its own line, a json fence
            calls.append(f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```"
                         "<｜tool▁call▁end｜>")
        else:  # V3.1
            calls.append(f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>")
    sep = draw(st.sampled_from(["", "\n"]))
    return f"<｜tool▁calls▁begin｜>{sep.join(calls)}<｜tool▁calls▁end｜>", names


VALID_SPEC = st.one_of(markup_block_spec(), native_block_spec())
VALID_BLOCK = VALID_SPEC.map(lambda spec: spec[0])
native_block = native_block_spec().map(lambda spec: spec[0])


@st.composite
def broken_block(draw: Any) -> str:
    kind = draw(st.sampled_from(["unclosed", "param", "noname", "no_opener", "bare",
                                 "bare_unfinished", "mention", "stray", "loose_cdata"]))
    name = draw(NAMES)
    if kind == "unclosed":
        block = draw(VALID_BLOCK)
        return block[:draw(st.integers(1, len(block) - 1))]
    if kind == "param":
        return f'<tool_calls><invoke name="{name}"><param name="p">v</param></invoke></tool_calls>'
    if kind == "noname":
        return '<tool_calls><invoke><parameter name="p">v</parameter></invoke></tool_calls>'
    if kind == "no_opener":
        lt, lts, wrapper = MARKUP_DIALECTS[draw(st.sampled_from(sorted(MARKUP_DIALECTS)))]
        return (f'{lt}invoke name="{name}">{lt}parameter name="p">{draw(PLAIN)}{lts}parameter>'
                f'{lts}invoke>{draw(WS)}{lts}{wrapper}>')
    if kind == "bare":
        return f'<invoke name="{name}"><parameter name="p">v</parameter></invoke>'
    if kind == "bare_unfinished":
        return f'<invoke name="{name}">not a real call'
    if kind == "loose_cdata":  # a CDATA never closed (repaired only at the end of input)
        return (f'<tool_calls><invoke name="{name}"><parameter name="p"><![CDATA[{draw(PLAIN)}'
                "</parameter></invoke></tool_calls>")
    if kind == "mention":
        return "I will use <tool_calls> now."
    return (f'<tool_calls><invoke name="{name}"></invoke> stray {draw(PLAIN)} '
            f'<invoke name="g"/></tool_calls>')


def fenced(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(["```", "~~~", "````", "```xml", "~~~~ md"]), inner).map(
        lambda t: f"\n{t[0]}\n{t[1]}\n{t[0].split()[0].rstrip('xml')}\n")


NESTED_FENCE = VALID_BLOCK.map(lambda b: f"\n````md\n```xml\n{b}\n```\n{b}\n````\n")
INLINE_CODE = st.one_of(
    st.sampled_from(["`<tool_calls>`", "`<|DSML|tool_calls>`", "`</tool_calls>`",
                     "`<invoke name=\"f\">`", "``<tool_calls>``"]),
    VALID_BLOCK.map(lambda b: f"`{b}`"),
    VALID_BLOCK.map(lambda b: f"`` {b} ``"),
)

PIECES = st.one_of(
    PROSE, PROSE, LOOKALIKES, VALID_BLOCK, VALID_BLOCK, broken_block(), broken_block(),
    fenced(VALID_BLOCK), NESTED_FENCE, INLINE_CODE, native_block,
)
DOCS = st.lists(PIECES, min_size=1, max_size=6).map("".join)


@st.composite
def doc_and_chunks(draw: Any, docs: st.SearchStrategy[str] = DOCS) -> tuple[str, list[str]]:
    """A document and a split of it: arbitrary cut points, or LLM-token-sized chunks."""
    doc = draw(docs)
    n = len(doc)
    if n < 2:
        return doc, [doc] if doc else []
    if draw(st.booleans()):
        cuts = draw(st.lists(st.integers(1, n - 1), max_size=min(n - 1, 40)))
    else:
        sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=n))
        cuts, pos = [], 0
        for size in sizes:
            pos += size
            cuts.append(pos)
    chunks = chunk_at(doc, cuts)
    if draw(st.integers(0, 4)) == 0:  # empty chunks anywhere change nothing
        chunks = [p for c in chunks for p in (("", c) if draw(st.booleans()) else (c,))]
    return doc, chunks


def _whole(doc: str, **opts: Any) -> tuple[str, list[tuple[str, str]]]:
    r = callsieve.parse(doc, **opts)
    return r.text, canon_calls(r.calls)


def _covered(blocks: Any) -> list[tuple[int, int]]:
    """Spans of the blocks whose calls were emitted (complete, or partial under invoke)."""
    return [b.span for b in blocks if b.status in ("complete", "partial")]


# ---------------------------------------------------------------------------- the checks
def check_invariance(doc: str, chunks: list[str], **opts: Any) -> None:
    """§Inv 1: coalesced events of any chunking equal parse() (calls, order, text)."""
    want = _whole(doc, **opts)
    assert drive(stream(chunks, **opts)) == want
    assert drive(stream(list(doc), **opts)) == want


def check_conservation(doc: str, chunks: list[str]) -> None:
    """§Inv 2: released text and the raw of emitted blocks, in event order, are the input;
    parse().blocks' raw are input slices; parse().text is the input minus complete blocks."""
    assert_conserves(doc, stream(chunks), "stream")
    r = callsieve.parse(doc)
    pos = 0
    rebuilt = []
    for b in r.blocks:
        start, end = b.span
        assert 0 <= start <= end <= len(doc)
        assert b.raw == doc[start:end], b
        assert b.status in ("complete", "failed"), b
        if b.status == "complete":
            assert start >= pos, f"complete blocks overlap: {r.blocks}"
            rebuilt.append(doc[pos:start])
            pos = end
    rebuilt.append(doc[pos:])
    assert "".join(rebuilt) == r.text


def check_conservation_invoke(doc: str, chunks: list[str]) -> None:
    """§Inv 2 under early_emit="invoke": text is the input minus complete/partial blocks."""
    r = callsieve.parse(doc, early_emit="invoke")
    pos = 0
    rest = []
    for b in r.blocks:
        assert b.raw == doc[b.span[0]:b.span[1]], b
    for start, end in _covered(r.blocks):
        assert start >= pos, f"blocks overlap: {r.blocks}"
        rest.append(doc[pos:start])
        pos = end
    rest.append(doc[pos:])
    assert "".join(rest) == r.text
    events = stream(chunks, early_emit="invoke")
    assert drive(events)[0] == r.text
    # Event by event: each ToolCalls' block is the slice of input that event settles, so the
    # Text events and those slices, in order, are the input.
    pieces = []
    for e in events:
        if isinstance(e, Text):
            pieces.append(e.text)
        elif isinstance(e, ToolCalls):
            assert e.block.raw == doc[e.block.span[0]:e.block.span[1]], e.block
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
                f"out, expected {text_before(start)}")
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
LOOSE_CDATA_THEN_TEXT = ('<tool_calls><invoke name="a"><parameter name="p"><![CDATA[x</parameter>'
                         "</invoke></tool_calls>Hello, world. ")
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


@SETTINGS
@given(doc_and_chunks())
def test_chunking_invariance_early_emit_invoke(case: tuple[str, list[str]]) -> None:
    check_invariance(*case, early_emit="invoke")


@SETTINGS
@given(st.lists(VALID_SPEC, min_size=1, max_size=3), st.data())
def test_valid_blocks_parse_whatever_the_split(specs: list[tuple[str, list[str]]],
                                               data: Any) -> None:
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


@SETTINGS
@given(doc_and_chunks())
def test_conservation_early_emit_invoke(case: tuple[str, list[str]]) -> None:
    check_conservation_invoke(*case)


# ---------------------------------------------------------------------------- 3. no leak
@SETTINGS
@given(doc_and_chunks())
def test_no_leak(case: tuple[str, list[str]]) -> None:
    check_no_leak(*case)


@SETTINGS
@given(doc_and_chunks())
def test_no_leak_early_emit_invoke(case: tuple[str, list[str]]) -> None:
    check_no_leak(*case, early_emit="invoke")


# ---------------------------------------------------------------------------- §7 hold-back
SPECIALS_HOLD = ["<", "＜", "〈", "<|DSML|", "<｜DSML｜tool", "<tool_calls", "<｜tool▁calls▁",
                 "<\u200b", "<<", "<DSML ", "`", "```\n", "~~~\n", "\n", " ", "a" * 30]
#: A generous bound on the longest tag shell: `<`, 8 zero-width characters, `<`, a 24-character
#: prefix, a local name, white space and a separator before `>`.
MAX_HELD = 128
PROSE_DOCS = st.lists(st.one_of(PROSE, LOOKALIKES, INLINE_CODE, st.sampled_from(SPECIALS_HOLD)),
                      max_size=8).map("".join)


@SETTINGS
@given(PROSE_DOCS)
def test_hold_back_is_only_a_bounded_tag_prefix(doc: str) -> None:
    """SPEC §7: "the only text held back is a tail that is a viable prefix of a tag (bounded
    by the longest tag shell), or a block being captured". For documents where no block is
    ever captured, after every character fed the unreleased tail starts with a tag lead and
    is short."""
    assume(callsieve.parse(doc).blocks == ())
    sieve = callsieve.Sieve()
    out = ""
    for i, ch in enumerate(doc):
        out += "".join(e.text for e in sieve.feed(ch) if isinstance(e, Text))
        assert doc.startswith(out)
        held = doc[len(out):i + 1]
        assert held == "" or held[0] in "<＜〈", f"held {held!r} after {doc[:i + 1]!r}"
        assert len(held) <= MAX_HELD, f"held {len(held)} characters: {held!r}"
    out += "".join(e.text for e in sieve.close() if isinstance(e, Text))
    assert out == doc


# ---------------------------------------------------------------------------- 5. never raises
SPECIALS = ["<", ">", "＜", "＞", "〈", "〉", "／", "/", "|", "｜", "‖", "▁", "_", "`", "~", "]]>",
            "\x02", "␂", "！", "、", "※", "\n", " ", "\u200b", "\ufeff", "\"", "“", "'", "=",
            "<![CDATA[", "tool_calls", "invoke", "parameter", "DSML", "name=\"f\"", "tool▁",
            "calls", "begin", "end", "sep", "```", "{", "}", "&lt;", "&#x"]
WILD_TEXT = st.lists(st.one_of(st.sampled_from(SPECIALS), st.text(max_size=3)),
                     max_size=40).map("".join)


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


NON_STR = st.one_of(st.binary(), st.integers(), st.none(), st.floats(), st.booleans(),
                    st.lists(st.text(max_size=2), max_size=2), st.builds(bytearray, st.binary()))


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

"""Hostile input (SPEC §Invariants 1, 2, 4, 5): inputs that once made the engine exponential
or quadratic, or broke chunking invariance, each pinned by a regression test.

Cost is measured without clocks: the number of tokens fed to Lark's parser (every capture,
every repair trial) grows with the work done, so a quadratic or exponential re-reading shows
as a ratio between two sizes 8x apart; memory is measured by what a result or a sieve holds.
"""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import Iterator

import pytest
from helpers import drive, run_all_ways
from lark.parsers.lalr_parser_state import ParserState

from callsieve import Sieve, parse
from callsieve._scan.balanced import MAX_JSON_DEPTH
from callsieve._scan.cursor import HOT_BUDGET

INV = '<invoke name="f"><parameter name="p">v</parameter></invoke>\n'


@pytest.fixture
def tokens_fed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A counter of the tokens every parser (block, trial, probe) is fed."""
    count = [0]
    feed = ParserState.feed_token

    def counting(self: ParserState, token: object, is_end: bool = False) -> object:
        count[0] += 1
        return feed(self, token, is_end)

    monkeypatch.setattr(ParserState, "feed_token", counting)
    yield count


def cost(count: list[int], text: str, chunk: int | None = None) -> int:
    count[0] = 0
    if chunk is None:
        parse(text)
    else:
        s = Sieve()
        for i in range(0, len(text), chunk):
            s.feed(text[i : i + chunk])
        s.close()
    return count[0]


def assert_linear(count: list[int], small: str, large: str, chunk: int | None = None) -> None:
    """``large`` is ``small`` 8x over: the work may grow 8x (and a little), not 64x."""
    a, b = cost(count, small, chunk), cost(count, large, chunk)
    assert b <= 8 * a * 1.25 + 64, (a, b)


# ---------------------------------------------------------------- §4 loose CDATA, finding 1
def loose_units(k: int) -> str:
    unit = '<parameter name="p"><![CDATA[abc</parameter>'
    return '<tool_calls><invoke name="a">' + unit * k + "</invoke>"  # wrapper never closed


@pytest.mark.parametrize("chunk", [None, 7])
def test_inv4_loose_cdata_repair_is_not_exponential(
    tokens_fed: list[int], chunk: int | None
) -> None:
    # Each trial that met another unclosed CDATA used to start its own search: k=11 took
    # 8-20 s. One CDATA is closed (SPEC §4), so the work is linear in the block.
    assert_linear(tokens_fed, loose_units(8), loose_units(64), chunk)
    assert parse(loose_units(12)).calls == ()


# ---------------------------------------------------------------- §7 rescans, finding 2
@pytest.mark.parametrize("chunk", [None, 7, 4096])
@pytest.mark.parametrize(
    "shape",
    [
        "bare-invokes",
        "unclosed-wrapper",
        "invokes-then-text",
        "wrapper-invokes-then-bad-invoke",
        "unclosed-param-text",
    ],
)
def test_inv4_failed_block_is_not_read_again_by_each_entry_inside(
    tokens_fed: list[int], shape: str, chunk: int | None
) -> None:
    def doc(n: int) -> str:
        return {
            "bare-invokes": INV * n,
            "unclosed-wrapper": "<tool_calls>" + INV * n,
            # fails on stray text, mid-stream, with a closing wrapper after it
            "invokes-then-text": INV * n + "x</tool_calls>",
            # fails inside the last invoke, then closes
            "wrapper-invokes-then-bad-invoke": "<tool_calls>"
            + INV * n
            + '<invoke name="g">text</invoke></tool_calls>',
            # found by fuzz/atheris_sieve.py (131k chars: 27 s): the first parameter never
            # closes, so every later block is its text; the blocks inside share no call
            # opener with it, only the tokens after their first CDATA
            "unclosed-param-text": (
                '<tool_calls><invoke name="a"><parameter name="p">'
                "<![CDATA[a]]><![CDATA[b]]></param</p=rameter>eter>"
                "</invoke></tool_calls>"
            )
            * n,
        }[shape]

    assert_linear(tokens_fed, doc(40), doc(320), chunk)


def test_inv1_the_knowledge_changes_no_answer() -> None:
    # Blocks that fail, nested in blocks that fail, around ones that parse: the same text
    # and calls whole, per character and at random splits.
    text = (
        "<tool_calls>"
        + INV * 3
        + "<tool_calls>\n"
        + INV * 2
        + "</tool_calls> "
        + INV * 2
        + "x"
        + INV
        + "</tool_calls>"
        + INV * 2
    )
    r = run_all_ways(text)
    assert len(r.calls) == 6  # five in the first block, one repaired after the 'x'


def test_inv4_blocks_that_each_open_a_cdata_hold_linear_memory() -> None:
    # Each nested failed block used to be recorded with its text to the end of the input
    # (128 KiB of input: 142 MiB). A block known to fail stops where it learns so.
    text = '<tool_calls><invoke name="f"><parameter name="p"><![CDATA[xx' * 2000
    r = parse(text)
    assert r.text == text and r.calls == ()
    assert sum(len(b.raw) for b in r.blocks) <= 2 * len(text)
    assert all(text[b.span[0] : b.span[1]] == b.raw for b in r.blocks)


# ---------------------------------------------------------------- finding 3: one big chunk
@pytest.mark.parametrize(
    "block",
    [
        (
            '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|parameter name="p"><![CDATA[v]]>'
            "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>\n"
        ),
        (
            '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|param name="p">v</|DSML|param>'
            "</|DSML|invoke></|DSML|tool_calls>\n"
        ),
        "<tool_calls> x ",
    ],
)
def test_inv1_many_blocks_in_one_chunk_match_the_stream(block: str) -> None:
    # The buffer is walked with an offset (no copy of the rest after each block); the
    # answer is the one small chunks give (run_all_ways compares them) and the right one.
    text = block * 150
    r = run_all_ways(text)
    if "|parameter" in block:  # complete blocks: the calls, and the line breaks between them
        assert [(c.name, c.input) for c in r.calls] == [("f", {"p": "v"})] * 150
        assert r.text == "\n" * 150
    else:  # broken blocks and prose mentions: all text
        assert r.calls == () and r.text == text


# ---------------------------------------------------------------- finding 8: memory
def test_inv4_an_open_block_of_many_calls_holds_a_small_multiple_of_its_text() -> None:
    # 100k small invokes held about 1.9 KB each until the wrapper closed (a parse tree per
    # call); a block now holds each call's values and text, a few hundred bytes.
    text = "<tool_calls>" + INV * 20_000
    tracemalloc.start()
    try:
        s = Sieve()
        s.feed(text)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 12 * len(text), held / len(text)
    events = s.feed("</tool_calls>") + s.close()
    assert len(drive(events)[1]) == 20_000


@pytest.mark.parametrize(
    ("unit", "dialects"),
    [
        ('<|tool_call>call:f{a:<|"|>', ("gemma4",)),
        (']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>', ("minimax_m3",)),
    ],
)
def test_inv4_blocks_that_fail_past_the_next_one_s_start_hold_no_growing_memory(
    unit: str, dialects: tuple[str, ...]
) -> None:
    # Each block fails in the next one's text: what a failed block taught (its checkpoints)
    # lay past the next block's start and was kept, about 19 bytes a byte of input.
    text = unit * (200_000 // len(unit))
    s = Sieve(dialects=dialects)
    released = hashlib.sha256()  # (the text released, kept in constant memory)
    calls = 0

    def take(events: list[object]) -> None:
        nonlocal calls
        out, got = drive(events)
        released.update(out.encode())
        calls += len(got)

    take(s.feed(text[:1000]))
    tracemalloc.start()
    try:
        for i in range(1000, len(text), 7):
            take(s.feed(text[i : i + 7]))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    take(s.close())
    assert released.digest() == hashlib.sha256(text.encode()).digest() and calls == 0
    assert held < len(text) // 4, held


# ---------------------------------------------------------------- §5 values: deep nesting
def nested(n: int) -> str:
    return (
        '<tool_calls><invoke name="f"><parameter name="p">'
        + "<item>" * n
        + "1"
        + "</item>" * n
        + "</parameter></invoke></tool_calls>"
    )


def test_inv4_a_value_of_100k_nested_elements_is_not_built_as_a_tree() -> None:
    # ElementTree used to build all 100k elements before the decoder gave up (26x the input).
    text = nested(100_000)
    tracemalloc.start()
    try:
        r = parse(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(r.calls[0].input["p"], str)
    assert peak < 8 * len(text), peak / len(text)


# ---------------------------------------------------------------- the families without a closer
# (SPEC §2, §19: a `{` or `[` in prose begins a candidate; a balanced run reads JSON or a
# Python argument list; a failed block's text is scanned again for openers.) The work —
# tokens fed to the parser, and characters the balanced runs' readers read — grows linearly:
# 8x the input, 8x the work; or, where captures begin inside a failed block's run (a flood of
# `{"name": "`), each character is read by at most the captures that began within the
# 2 x MAX_JSON_DEPTH openers before it (a run nested deeper fails, and quotes flip at most
# every other opener), so the work per character stays under that bound at every size.
FAMILY_HOSTILE = {
    "brace-flood": ("llama3_json", "{"),
    "bracket-flood": ("pythonic", "["),
    "name-key-flood": ("llama3_json", '{"name": '),
    "name-key-in-strings": ("llama3_json", '{"name": "'),
    "tool-calls-flood": ("json", '{"tool_calls": ['),
    "list-first-flood": ("json", '[{"name": "a", "arguments": {'),
    "tool-use-flood": ("tool_use", '{"type": "tool_use", "x": "'),
    "mistral-flood": ("mistral", "[TOOL_CALLS]"),
    "mistral-open-list": ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {'),
    "mistral-v13-open": ("mistral", "[TOOL_CALLS]f[ARGS]{"),
    "python-open-flood": ("pythonic", "[f("),
    "python-quotes": ("pythonic", "[f(x='a', y=\""),
    "semicolons": ("llama3_json", '{"name": "a", "parameters": {}}; '),
    "kv-name-flood": ("text_kv", "function.name: f\n"),
    "kv-record-flood": ("text_kv", "function.name: f\nfunction.arguments: {\nk: v\n"),
}


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch, tokens_fed: list[int]) -> Iterator[list[int]]:
    """Tokens fed to every parser plus the characters every balanced run's reader reads."""
    from callsieve._scan.balanced import JsonRun

    read = JsonRun.read

    def counting(self: JsonRun, buf: str, p: int) -> int:
        end = read(self, buf, p)
        tokens_fed[0] += max(0, (end if end >= 0 else self.at) - p)
        return end

    monkeypatch.setattr(JsonRun, "read", counting)
    yield tokens_fed


def family_cost(count: list[int], dialect: str, text: str, chunk: int | None) -> int:
    count[0] = 0
    if chunk is None:
        parse(text, dialects=(dialect,))
    else:
        s = Sieve(dialects=(dialect,))
        for i in range(0, len(text), chunk):
            s.feed(text[i : i + chunk])
        s.close()
    return count[0]


@pytest.mark.parametrize("chunk", [None, 7])
@pytest.mark.parametrize("shape", list(FAMILY_HOSTILE))
def test_inv4_the_families_hostile_input_is_linear(
    work: list[int], shape: str, chunk: int | None
) -> None:
    dialect, unit = FAMILY_HOSTILE[shape]
    small, large = unit * 200, unit * 1600
    a = family_cost(work, dialect, small, chunk)
    b = family_cost(work, dialect, large, chunk)
    bound = 2 * MAX_JSON_DEPTH + 16
    assert b <= 8 * a * 1.25 + 64 or b <= bound * len(large) and a <= bound * len(small), (a, b)
    r = parse(large, dialects=(dialect,))
    assert r.text + "".join(b.raw for b in r.blocks if b.status == "complete") != ""
    # (conservation: the released text and the blocks that parsed are the input)
    assert len(r.text) + sum(len(b.raw) for b in r.blocks if b.status == "complete") == len(large)


@pytest.mark.parametrize("dialect", ["llama3_json", "json", "mistral", "pythonic", "tool_use"])
def test_inv4_a_huge_unclosed_value_is_held_to_max_block_chars_then_released(dialect: str) -> None:
    opener = {
        "llama3_json": '{"name": "f", "parameters": {"a": "',
        "json": '{"tool_calls": [{"name": "f", "arguments": {"a": "',
        "mistral": '[TOOL_CALLS]f[ARGS]{"a": "',
        "pythonic": "[f(a='",
        "tool_use": '{"type": "tool_use", "name": "f", "input": {"a": "',
    }[dialect]
    text = opener + "x" * 5000 + " and the reply goes on."
    s = Sieve(dialects=(dialect,), max_block_chars=1000)
    events: list[object] = []
    for i in range(0, len(text), 7):
        events += s.feed(text[i : i + 7])
        held = i + 7 - sum(len(getattr(e, "text", "")) for e in events)
        # (never much more than the limit: the run's hot half counts what it appends in bulk,
        # every HOT_BUDGET chunks)
        assert held <= 1000 + (HOT_BUDGET + 2) * 7, held
    events += s.close()
    assert drive(events) == (text, [])


@pytest.mark.parametrize("dialects", [("minicpm5", "json"), ("xml", "json")])
def test_inv4_entries_in_a_failed_block_with_a_far_cdata_close_do_not_copy_its_text(
    monkeypatch: pytest.MonkeyPatch, tokens_fed: list[int], dialects: tuple[str, ...]
) -> None:
    # Units that each open a CDATA, and one `]]>` at the end (json's `]` is a place a block
    # may end, so no capture fails at its opener): every capture's run stops at that far
    # `]]>`. Each used to copy the text up to it, quadratic in the input; a capture whose
    # run stops where a failed one's did, with its stack, fails at the run's start.
    from callsieve._scan.cursor import RunText

    add = RunText.add_piece

    def counting(self: RunText, piece: str) -> None:
        tokens_fed[0] += len(piece)
        add(self, piece)

    monkeypatch.setattr(RunText, "add_piece", counting)
    unit = {
        "minicpm5": '<function name="f"><param name="a"><![CDATA[x',
        "xml": '<tool_calls><invoke name="f"><parameter name="p"><![CDATA[xx',
    }[dialects[0]]

    def work(n: int) -> int:
        tokens_fed[0] = 0
        s = Sieve(dialects=dialects)
        text = unit * n + "]]>"
        for i in range(0, len(text), 7):
            s.feed(text[i : i + 7])
        assert drive(s.close())[1] == []
        return tokens_fed[0]

    a, b = work(100), work(800)
    assert b <= 8 * a * 1.25 + 64, (a, b)

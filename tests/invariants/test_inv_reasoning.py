"""SPEC §Invariants 1–3 and §7's hold-back, extended to reasoning (SPEC §15), as properties over
generated replies that mix reasoning (every tag spelling, nested and cut-short tags), prose,
fences and blocks, under every ``reasoning`` / ``calls_in_reasoning`` choice and early-emit
mode:

1. chunking invariance: any split gives parse()'s text, calls and reasoning;
2. conservation: released text, reasoning with its tags (``Reasoning.source``) and the raw of
   emitted blocks, in event order, rebuild the input;
3. no leak: no text or reasoning event carries part of a block whose calls were emitted;
and held text stays a bounded tag prefix; and a thought is never a call under "text".
"""

from __future__ import annotations

from typing import Any

from helpers import assert_conserves, canon_calls, chunk_at, drive, reasoning_of, stream
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    PROSE,
    REASONING_DOCS,
    REASONING_OPTIONS,
    THINK_CLOSES,
    THINK_OPENS,
    THOUGHT,
    doc_and_chunks,
    soak_settings,
)

import callsieve
from callsieve import DEFAULT_DIALECTS, Reasoning, Text, ToolCalls
from callsieve._grammar.compiled import load_grammar

SETTINGS = soak_settings(150)
#: The default dialects whose calls never end a thought (SPEC §15: ``dsml_v4``'s do).
KEEPS_THOUGHTS = tuple(
    d
    for d in DEFAULT_DIALECTS
    if not load_grammar(DEFAULT_DIALECTS).traits[d].flag("calls_end_thought")
)
CASES = doc_and_chunks(REASONING_DOCS)
EARLY = st.sampled_from(["block", "invoke", "arguments"])


def _whole(doc: str, **opts: Any) -> tuple[str, list[tuple[str, str]], str]:
    r = callsieve.parse(doc, **opts)
    return r.text, canon_calls(r.calls), r.reasoning


@SETTINGS
@given(CASES, REASONING_OPTIONS, EARLY)
def test_chunking_invariance_with_reasoning(
    case: tuple[str, list[str]], opts: dict[str, Any], early_emit: str
) -> None:
    doc, chunks = case
    want = _whole(doc, early_emit=early_emit, **opts)
    for split in (chunks, list(doc)):
        events = stream(split, early_emit=early_emit, **opts)
        assert (*drive(events), reasoning_of(events)) == want


@SETTINGS
@given(CASES, REASONING_OPTIONS)
def test_conservation_with_reasoning(case: tuple[str, list[str]], opts: dict[str, Any]) -> None:
    doc, chunks = case
    assert_conserves(doc, stream(chunks, **opts), "stream")
    for b in callsieve.parse(doc, **opts).blocks:
        assert b.raw == doc[b.span[0] : b.span[1]]
        assert b.reasoning in (None, "text", "call", "ended")


@SETTINGS
@given(CASES, REASONING_OPTIONS)
def test_no_leak_with_reasoning(case: tuple[str, list[str]], opts: dict[str, Any]) -> None:
    """No Text or Reasoning event overlaps the span of a block whose calls were emitted."""
    doc, chunks = case
    pos = 0
    spans: list[tuple[int, int]] = []
    released: list[tuple[int, int]] = []
    for e in stream(chunks, **opts):
        if isinstance(e, Text | Reasoning):
            n = len(e.text if isinstance(e, Text) else e.source)
            released.append((pos, pos + n))
            pos += n
        elif isinstance(e, ToolCalls):
            spans.append(e.block.span)
            pos = e.block.span[1]
    for a, b in released:
        for s, t in spans:
            assert b <= s or a >= t, f"released [{a}, {b}) overlaps block [{s}, {t}) in {doc!r}"


@SETTINGS
@given(
    st.sampled_from(["", " ", "\n"]),
    THOUGHT,
    st.one_of(THINK_CLOSES, st.just("</think>")),
    st.lists(PROSE, max_size=3).map("".join),
)
def test_a_thought_is_never_a_call_and_never_text(
    ws: str, thought: str, close: str, answer: str
) -> None:
    """Under the default, everything between a ``<think>`` at the start and the ``</think>``
    that ends it is reasoning — blocks, fences and all — and nothing in it is a call, in
    every dialect whose calls do not end a thought (SPEC §15: ``KEEPS_THOUGHTS``)."""
    assume(
        "think" not in answer.lower()
        and "think" not in thought[:-1].lower()
        and "</" not in thought[-2:]
    )
    doc = f"{ws}<think>{thought}</think>{answer}"
    r = callsieve.parse(doc, dialects=KEEPS_THOUGHTS)
    assert r.reasoning == thought
    assert r.calls == ()
    assert r.text == ws + callsieve.parse(answer, reasoning="off", dialects=KEEPS_THOUGHTS).text
    assert all(b.reasoning == "text" for b in r.blocks if b.span[1] <= len(ws) + 7 + len(thought))
    assert drive(stream(list(doc), dialects=KEEPS_THOUGHTS)) == (r.text, [])


@SETTINGS
@given(st.sampled_from(["", " ", "\n"]), THOUGHT, st.lists(PROSE, max_size=3).map("".join))
def test_in_the_defaults_a_thought_ends_only_at_a_block_that_declares_it(
    ws: str, thought: str, answer: str
) -> None:
    """With every default dialect, a thought's calls come only from a block whose dialect
    declares that its calls end a thought (``dsml_v4``): the first such block that parses
    ends the thought (``Block.reasoning == "ended"``), and all before it is reasoning."""
    assume("think" not in answer.lower() and "think" not in thought[:-1].lower())
    doc = f"{ws}<think>{thought}</think>{answer}"
    r = callsieve.parse(doc)
    inside = [b for b in r.blocks if b.span[0] < len(ws) + 7 + len(thought)]
    ended = [b for b in inside if b.reasoning == "ended"]
    assert all(b.dialect not in KEEPS_THOUGHTS for b in ended)
    if not ended:
        assert r.reasoning == thought and all(b.reasoning == "text" for b in inside)
        return
    first = ended[0]
    assert r.reasoning == doc[len(ws) + 7 : first.span[0]]
    assert all(b.reasoning == "text" for b in inside if b.span[1] <= first.span[0])
    assert r.calls and drive(stream(list(doc)))[1] == canon_calls(r.calls)


SPECIALS_HOLD = ["<", "＜", "<think", "</think", "</", "<thi", "\n", " ", "`", "a" * 20]
HOLD_DOCS = st.lists(
    st.one_of(PROSE, THINK_OPENS, THINK_CLOSES, st.sampled_from(SPECIALS_HOLD)), max_size=8
).map("".join)
MAX_HELD = 128


@SETTINGS
@given(HOLD_DOCS, st.sampled_from(["tags", "open"]))
def test_hold_back_at_a_reasoning_tag_is_bounded(doc: str, mode: str) -> None:
    """Around reasoning tags too, the only text held is a short tail beginning with a tag
    lead (reasoning and text alike go out as soon as they cannot be part of a tag)."""
    assume(callsieve.parse(doc, reasoning=mode).blocks == ())
    sieve = callsieve.Sieve(reasoning=mode)
    out = ""
    for i, ch in enumerate(doc):
        out += "".join(
            e.text if isinstance(e, Text) else e.source
            for e in sieve.feed(ch)
            if isinstance(e, Text | Reasoning)
        )
        held = doc[len(out) : i + 1]
        assert doc.startswith(out)
        assert held == "" or held[0] in "<＜〈", f"held {held!r} after {doc[: i + 1]!r}"
        assert len(held) <= MAX_HELD
    out += "".join(
        e.text if isinstance(e, Text) else e.source
        for e in sieve.close()
        if isinstance(e, Text | Reasoning)
    )
    assert out == doc


@SETTINGS
@given(REASONING_DOCS, st.data())
def test_reasoning_agrees_at_random_splits(doc: str, data: Any) -> None:
    cuts = data.draw(st.lists(st.integers(1, max(1, len(doc) - 1)), max_size=30))
    want = _whole(doc)
    events = stream(chunk_at(doc, cuts))
    assert (*drive(events), reasoning_of(events)) == want


@SETTINGS
@given(CASES, REASONING_OPTIONS)
def test_what_the_sieve_tells_of_reasoning_does_not_depend_on_the_split(
    case: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    """``reasoning_unclosed`` and where a ``</think>`` closed nothing (SPEC §15.1) are the
    whole text's, for any split; each stray close is a ``</think>`` released as text."""
    doc, chunks = case
    whole = callsieve.parse(doc, **opts)
    for split in (chunks, list(doc)):
        sieve = callsieve.Sieve(**opts)
        events = [e for c in split for e in sieve.feed(c)] + sieve.close()
        assert sieve.reasoning_unclosed == whole.reasoning_unclosed
        assert sieve.stray_reasoning_closes == whole.stray_reasoning_closes
    if opts.get("reasoning", "tags") != "tags":
        assert whole.stray_reasoning_closes == ()
    pos = 0
    texts: dict[int, str] = {}
    for e in events:
        n = len(e.text) if isinstance(e, Text) else len(e.source) if isinstance(e, Reasoning) else 0
        if isinstance(e, Text):
            texts[pos] = e.text
        pos = e.block.span[1] if isinstance(e, ToolCalls) else pos + n
    for at in whole.stray_reasoning_closes:
        assert at in texts and "think" in texts[at].lower()  # (a tag of its own: its event)

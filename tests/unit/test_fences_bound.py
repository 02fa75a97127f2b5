"""Strategy: the fence tracker's memory is bounded on hostile input (issue "Hostile input"),
and the nesting cap ``MAX_FENCE_DEPTH`` behaves the same whole and streamed.

What it checks: 1 MiB of ``"```x\\n"`` lines (each a fence line with an info string, so each
would open a nested fence) leaves the tracker at most ``MAX_FENCE_DEPTH`` deep, fed whole, in
5-character chunks through a ``Sieve``, and under tracemalloc (peak under 256 KiB);
the tracker's state after text around the cap is the same under every chunking; and what a
tool block after ``MAX_FENCE_DEPTH + k`` nested openers does, through ``parse()`` and every
chunking of ``run_all_ways``:
  - quoted inside the fences (past the cap too) it stays text;
  - after ``MAX_FENCE_DEPTH`` closers it is a call: the openers past the cap were content,
    so they need no closer;
  - after ``MAX_FENCE_DEPTH + k`` closers, the ``k`` extra bare fence lines stand in prose,
    where each opens (then the next closes) a fence: the block is a call for even ``k`` and
    text for odd ``k``.
What it costs: about 4 s, most of it the 1 MiB fed through a ``Sieve`` in 5-character
chunks under tracemalloc.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
from helpers import run_all_ways

import callsieve
from callsieve import Text
from callsieve._scan.fences import MAX_FENCE_DEPTH, FenceState, FenceTracker, tail_after

MIB = 1024 * 1024
FLOOD = "```x\n" * (MIB // 5)
BLOCK = '<|DSML|tool_calls>\n<|DSML|invoke name="f">\n</|DSML|invoke>\n</|DSML|tool_calls>'
LEADS = "<＜〈"


def feed_tracker(chunks: list[str]) -> FenceTracker:
    """Run a tracker over ``chunks`` the way the sieve's fold does (``consume`` per chunk,
    the line-start tail carried across)."""
    tracker = FenceTracker(LEADS)
    tail = "\n"
    for chunk in chunks:
        if chunk:
            tracker.consume(chunk, tail)
            tail = tail_after(tail, chunk, len(chunk))
    tracker.advance("", 0, True, tail)  # end of input: a pending run is decided
    return tracker


def snapshot(t: FenceTracker) -> tuple[object, ...]:
    return (
        t.state,
        t.span,
        tuple(t.stack),
        t.blank_pending,
        t.run_len,
        t.phase,
        t.line_n,
        t.line_char,
        t.line_run,
    )


# ---------------------------------------------------------------------------- memory
def test_flood_of_openers_is_capped_whole() -> None:
    tracker = feed_tracker([FLOOD])
    assert tracker.state is FenceState.FENCE
    assert tracker.depth == MAX_FENCE_DEPTH
    assert len(tracker.stack) == MAX_FENCE_DEPTH


def test_flood_through_a_sieve_keeps_memory_bounded() -> None:
    """5-character chunks (one line each) then a ``<`` so that the sieve folds its log into
    the tracker; everything is released at once, and the peak of memory allocated while feeding is
    small (without the cap: 12 MiB for the stack alone)."""
    sieve = callsieve.Sieve()
    out = 0
    tracemalloc.start()
    try:
        for i in range(0, len(FLOOD), 5):
            for e in sieve.feed(FLOOD[i : i + 5]):
                out += len(e.text) if isinstance(e, Text) else 0
        for e in sieve.feed("<"):
            out += len(e.text) if isinstance(e, Text) else 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out == len(FLOOD) + 1  # all released: inside a fence the "<" is text too
    assert sieve._cur.fences.depth == MAX_FENCE_DEPTH
    assert peak < 256 * 1024, f"peak {peak} bytes while feeding 1 MiB of fence openers"
    assert sieve.close() == []


def test_tracker_holds_no_text() -> None:
    """Every attribute is a counter, a flag, a state, a single character, the fixed lead
    pattern and the lead sets, or the capped stack of (character, run length)."""
    tracker = feed_tracker([FLOOD[:5000], "```" + "y" * 10_000, "\n~~~~", "~" * 10_000])
    for name in FenceTracker.__slots__:
        value = getattr(tracker, name)
        if isinstance(value, str) and name not in ("leads", "_tags"):
            assert len(value) <= 1, (name, value)
    assert all(isinstance(c, str) and len(c) == 1 and isinstance(n, int) for c, n in tracker.stack)
    assert tracker.depth <= MAX_FENCE_DEPTH
    assert tracker.run_len == 0  # the run of tildes was decided at the end


# ---------------------------------------------------------------------------- chunking
NEAR_CAP = [
    "```x\n" * (MAX_FENCE_DEPTH + 3) + "```\n" * 2,
    "```x\n" * (MAX_FENCE_DEPTH - 1) + "~~~~ md\n" + "```x\n" * 3 + "~~~~\n" + "```\n" * 5,
    "````md\n" + "```x\n" * (MAX_FENCE_DEPTH + 2) + "````\n" * 2 + "`a` ```",
    "```x\n" * MAX_FENCE_DEPTH + "   ```y\n    ```z\n" + "```  \n" * 3 + "``` x",
]


@pytest.mark.parametrize("text", NEAR_CAP, ids=range(len(NEAR_CAP)))
def test_cap_is_the_same_under_every_chunking(text: str) -> None:
    want = snapshot(feed_tracker([text]))
    assert len(want[2]) <= MAX_FENCE_DEPTH  # type: ignore[arg-type]
    assert snapshot(feed_tracker(list(text))) == want, "per character"
    rng = random.Random(len(text))
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 40)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert snapshot(feed_tracker(chunks)) == want, cuts


# ---------------------------------------------------------------------------- behaviour
def nested(openers: int, closers: int, inner: str = "") -> str:
    return "Intro.\n" + "```x\n" * openers + inner + "```\n" * closers + BLOCK + "\nDone."


@pytest.mark.parametrize("openers", [MAX_FENCE_DEPTH - 1, MAX_FENCE_DEPTH, MAX_FENCE_DEPTH + 5])
def test_block_quoted_at_any_depth_is_text(openers: int) -> None:
    doc = "Intro.\n" + "```x\n" * openers + BLOCK + "\n" + "```\n" * openers + "Done."
    r = run_all_ways(doc)
    assert r.calls == ()
    assert r.text == doc


@pytest.mark.parametrize("depth", [1, MAX_FENCE_DEPTH - 1, MAX_FENCE_DEPTH])
def test_balanced_within_the_cap_then_a_call(depth: int) -> None:
    r = run_all_ways(nested(depth, depth))
    assert [c.name for c in r.calls] == ["f"]


@pytest.mark.parametrize("k", [1, 3, 10])
def test_openers_past_the_cap_need_no_closer(k: int) -> None:
    """``MAX_FENCE_DEPTH + k`` openers, ``MAX_FENCE_DEPTH`` closers: every fence is closed
    (the ``k`` openers past the cap were content) and the block is a call."""
    r = run_all_ways(nested(MAX_FENCE_DEPTH + k, MAX_FENCE_DEPTH))
    assert [c.name for c in r.calls] == ["f"]
    assert (
        r.text
        == "Intro.\n" + "```x\n" * (MAX_FENCE_DEPTH + k) + "```\n" * MAX_FENCE_DEPTH + "\nDone."
    )


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_matching_closers_past_the_cap_stand_in_prose(k: int) -> None:
    """``MAX_FENCE_DEPTH + k`` openers and as many closers: the first ``MAX_FENCE_DEPTH``
    closers close every fence; each of the ``k`` left is a fence line in prose, opening a
    fence the next one closes. Even ``k``: the block is a call; odd: it is fenced text."""
    doc = nested(MAX_FENCE_DEPTH + k, MAX_FENCE_DEPTH + k)
    r = run_all_ways(doc)
    if k % 2 == 0:
        assert [c.name for c in r.calls] == ["f"]
    else:
        assert r.calls == ()
        assert r.text == doc

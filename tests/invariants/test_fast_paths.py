"""SPEC §Invariants 1 and 4: a fast path changes no answer. Each named fast path of the
engine is switched off, and the same documents, fed in the same chunks, must give the same
events and the same blocks with it and without it.

``_blocks.opening`` (a block that fails at once at the end of the input, with no capture
made) is switched off by making its test answer "may not fail" everywhere.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest
from helpers import chunk_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import callsieve
from callsieve._blocks import lifecycle, opening
from callsieve._blocks.lessons import _last_start
from callsieve._grammar.compiled import load_grammar
from callsieve._grammar.entry_tables import EntryTable
from callsieve._scan import balanced
from callsieve._stream import sieve as sieve_module

#: Pieces that open blocks whose first run is balanced (and some that close them), in the
#: families' shapes, with prose, reasoning tags and valid calls between them.
PIECES = (
    "[a(",
    "[a(b=1)]",
    "[a(x=')')",
    ")",
    "]",
    '{"name": "',
    '{"name": "f", "arguments": {}}',
    '{"name": "f", "parameters": {"a": [1, {"b": "}"}]}}',
    "}",
    '<tool_call>{"a": "',
    '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    "</tool_call>",
    '[TOOL_CALLS]f{"a": "',
    '[TOOL_CALLS][{"name": "f", "arguments": {',
    '[TOOL_CALLS]f[ARGS]{"a": 1}',
    '<start_function_call>call:f{a:{"b": "',
    'function.name: f\nfunction.arguments: {"a": "',
    '<|action_start|><|plugin|>{"a": "',
    '<TOOLCALL>[{"a": "',
    'functools[{"a": "',
    '<function=f>{"a": "',
    '>>>f\n{"a": "',
    "<think>",
    "</think>",
    "prose, ",
    "\n",
    '"',
    "{",
    "[",
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def repeated(
    draw: st.DrawFn, pieces: tuple[str, ...], most: int, times: int, cuts: int = 24
) -> tuple[str, list[str]]:
    """A document of up to ``most`` of ``pieces``, repeated up to ``times`` times, and its
    chunks at up to ``cuts`` random places."""
    chosen = draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=most))
    doc = "".join(chosen) * draw(st.integers(1, times))
    at = draw(st.lists(st.integers(1, max(1, len(doc) - 1)), max_size=cuts))
    return doc, chunk_at(doc, sorted(set(at)))


def documents() -> st.SearchStrategy[tuple[str, list[str]]]:
    return repeated(PIECES, 40, 6)


def _coalesced(events: list[Any]) -> list[Any]:
    """``events`` with each stretch of ``Text`` (and of ``Reasoning`` text with no tag)
    joined (SPEC §Invariants: the coalesced events are the answer; a block that fails at
    once releases its text into the text around it)."""
    out: list[Any] = []
    for e in events:
        last = out[-1] if out else None
        if isinstance(e, callsieve.Text) and isinstance(last, callsieve.Text):
            out[-1] = callsieve.Text(last.text + e.text)
        elif (
            isinstance(e, callsieve.Reasoning)
            and isinstance(last, callsieve.Reasoning)
            and e.raw is None
            and last.raw is None
        ):
            out[-1] = callsieve.Reasoning(last.text + e.text)
        else:
            out.append(e)
    return out


def _run(chunks: list[str], opts: dict[str, Any]) -> tuple[Any, ...]:
    """The events, the blocks kept, the counters and ``saw_tool_call_syntax`` of a stream."""
    ids = itertools.count()
    s = callsieve.Sieve(id_factory=lambda: f"call_{next(ids)}", metrics=True, **opts)
    events: list[Any] = []
    for c in chunks:
        events += s.feed(c)
    events += s.close()
    assert s.metrics is not None
    counts = {k: v for k, v in s.metrics.snapshot().items() if "seconds" not in k}
    return _coalesced(events), tuple(s.blocks), counts, s.saw_tool_call_syntax


def _parsed(doc: str, opts: dict[str, Any]) -> tuple[Any, ...]:
    ids = itertools.count()
    r = callsieve.parse(doc, id_factory=lambda: f"call_{next(ids)}", **opts)
    return r.text, r.calls, r.blocks


def _without(
    fast_path: str, answer: Callable[..., Any], run: Callable[..., Any], *args: Any
) -> Any:
    """``run(*args)`` with ``fast_path`` (a name in ``_blocks.lifecycle``) giving ``answer``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lifecycle, fast_path, answer)
        return run(*args)


def _never(*args: Any) -> None:
    """The fast path's test, answering "may not fail" everywhere: the path off."""


OPTION_SETS: list[dict[str, Any]] = [
    {"dialects": "all"},
    {"dialects": ("pythonic", "json", "hermes")},
    {"dialects": "all", "early_emit": "invoke"},
    {"dialects": "all", "early_emit": "arguments"},
    {"dialects": "all", "max_block_chars": 40},
    {"dialects": ("llama3_json", "mistral"), "reasoning": "tags"},
    {"dialects": "all", "reasoning": "open", "calls_in_reasoning": "text"},
]
OPTIONS = st.sampled_from(OPTION_SETS)


@SETTINGS
@given(documents(), OPTIONS)
def test_inv1_failing_at_once_changes_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    doc, chunks = doc_chunks
    for feed in (chunks, [doc], list(doc)):
        fast = _run(feed, opts)
        slow = _without("fails_at_once", _never, _run, feed, opts)
        assert fast == slow
    fast_parse = _parsed(doc, opts)
    slow_parse = _without("fails_at_once", _never, _parsed, doc, opts)
    assert fast_parse == slow_parse


def test_inv4_failing_at_once_is_taken_on_hostile_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fast path is not dead code: in ``[a(`` repeated, every block fails at once.
    taken: list[object] = []
    real = lifecycle.fails_at_once

    def spy(*args: Any) -> Any:
        quick = real(*args)
        taken.append(quick)
        return quick

    monkeypatch.setattr(lifecycle, "fails_at_once", spy)
    text = "[a(" * 200 + "]"
    # (streamed, the first block holds the text to the end: every entry is read at close)
    events = _run([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})[0]
    assert "".join(e.text for e in events) == text
    assert sum(q is not None for q in taken) >= 190


@st.composite
def ender_searches(draw: st.DrawFn) -> tuple[list[Any], str, int]:
    g = load_grammar(tuple(callsieve.dialects()))
    terms = draw(st.lists(st.sampled_from(g.ends.block_enders), min_size=1, max_size=6))
    text = draw(st.text(st.sampled_from('ab(){}[]<>/|\n ,:"_'), max_size=600))
    return [t.pattern for t in terms], text, draw(st.integers(0, len(text) + 1))


@SETTINGS
@given(ender_searches())
def test_inv4_the_last_ender_is_found_from_the_end(search: tuple[list[Any], str, int]) -> None:
    # ``Lessons.no_end_after`` searches backwards for the last match: the one a search from
    # every offset would find last.
    patterns, text, lo = search
    starts = [
        m.start() for p in patterns for i in range(lo, len(text) + 1) if (m := p.search(text, i))
    ]
    assert _last_start(patterns, text, lo) == max(starts, default=-1)


#: Pieces whose brackets and strings make balanced runs meet, leave and extend the walks of
#: earlier ones (``_blocks.opening._walked``).
BRACKETS = (
    "[a(",
    "[a(" * 3,
    "(",
    ")",
    ")" * 3,
    "[",
    "]",
    "{",
    "}",
    '"',
    "'",
    "\\",
    '{"name": "',
    "[a(b=')'",
    "[a(b=1)]",
    ")]",
    " ",
    "prose",
    '{"name": "f", "arguments": {}}',
    '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    "</tool_call>",
    '<tool_call>{"a": [',
    '<tool_call>{"a": [{"name": "f", "arguments": {}} }',
)


def bracket_documents() -> st.SearchStrategy[tuple[str, list[str]]]:
    return repeated(BRACKETS, 30, 40)


@SETTINGS
@given(bracket_documents(), st.sampled_from([{"dialects": "all"}, {"dialects": ("pythonic",)}]))
def test_inv1_walked_runs_change_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # A run's end found along the walks alone is where a ``JsonRun`` would find it.
    doc, chunks = doc_chunks
    for run, arg in ((_run, chunks), (_run, [doc]), (_parsed, doc)):
        fast = run(arg, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(opening, "_walked", _never)
            slow = run(arg, opts)
        assert fast == slow


def test_inv4_walked_runs_are_taken_on_hostile_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not dead code: in ``[a(`` repeated, almost every block's run ends along the walks.
    verdicts: list[object] = []
    real = opening._walked

    def spy(*args: Any) -> Any:
        verdicts.append(verdict := real(*args))
        return verdict

    monkeypatch.setattr(opening, "_walked", spy)
    text = "[a(" * 300 + "]"
    _run([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})
    assert sum(v is not None for v in verdicts) >= 250


#: Units whose opener leaves a bounded token or two before a balanced run (a name, a list's
#: ``[``, ``[ARGS]``, ``[CALL_ID]``), as the families write them and with white space.
LEAD_UNITS = (
    '[TOOL_CALLS]f{"a": "',
    '[TOOL_CALLS] f {"a": [',
    '[TOOL_CALLS]f[ARGS]{"a": "',
    '[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{"a": {',
    '[TOOL_CALLS] [{"name": "f", "arguments": {"a": "',
    '<TOOLCALL>[{"a": "',
    '<TOOLCALL> [ {"a": [',
    '<TOOLCALL>{"name": "',
)


@st.composite
def lead_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    units = draw(st.lists(st.sampled_from(LEAD_UNITS), min_size=1, max_size=3))
    tail = draw(st.sampled_from(("", "}", "]}", '"}]</TOOLCALL>', "prose")))
    doc = "".join(units) * draw(st.integers(1, 90)) + tail
    cuts = draw(st.lists(st.integers(1, max(1, len(doc) - 1)), max_size=40))
    return doc, chunk_at(doc, sorted(set(cuts)))


@SETTINGS
@given(lead_documents(), OPTIONS)
def test_inv1_failing_at_once_after_lead_tokens_changes_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # A block whose opener leaves bounded tokens before its run, in text read again, fails
    # at once where that run fails: the events, blocks and counters are those of a capture.
    doc, chunks = doc_chunks
    for run, arg in ((_run, chunks), (_quiet, chunks), (_run, list(doc)), (_parsed, doc)):
        fast = run(arg, opts)
        slow = _without("fails_at_once", _never, run, arg, opts)
        assert fast == slow


def test_inv4_failing_at_once_after_lead_tokens_is_taken_before_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not dead code: in ``[TOOL_CALLS]f{"a": "`` repeated, most blocks read again fail at
    # once while the text streams, after the name the opener leaves first.
    taken: list[bool] = []
    real = lifecycle.fails_at_once

    def spy(*args: Any) -> Any:
        quick = real(*args)
        opened = args[5]
        taken.append(quick is not None and not opened[2])
        return quick

    monkeypatch.setattr(lifecycle, "fails_at_once", spy)
    for unit in ('[TOOL_CALLS]f{"a": "', '<TOOLCALL>[{"a": "'):
        taken.clear()
        text = unit * 400
        events = _quiet([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})[0]
        assert "".join(e.text for e in events) == text
        assert sum(taken) >= 200


def _quiet(chunks: list[str], opts: dict[str, Any]) -> tuple[Any, ...]:
    """``_run`` with no counters: what a stream with nothing recording a failure's text gives."""
    ids = itertools.count()
    s = callsieve.Sieve(id_factory=lambda: f"call_{next(ids)}", **opts)
    events: list[Any] = []
    for c in chunks:
        events += s.feed(c)
    events += s.close()
    return _coalesced(events), tuple(s.blocks), s.saw_tool_call_syntax


def _runs_close(*args: Any) -> bool:
    """``_fails_after`` answering "may go on" everywhere: the path off."""
    return False


@SETTINGS
@given(bracket_documents(), OPTIONS)
def test_inv1_failing_after_the_first_run_changes_no_event(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # A block whose first run closes and whose parser state then takes nothing fails at
    # once in a stream that records no failure's text; the events are those of a capture.
    doc, chunks = doc_chunks
    for feed in (chunks, list(doc)):
        fast = _quiet(feed, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(opening, "_fails_after", _runs_close)
            mp.setattr(lifecycle, "fails_along", _no_stretch)
            slow = _quiet(feed, opts)
        assert fast == slow


def test_inv4_failing_after_the_first_run_is_taken_on_hostile_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not dead code: in ``[a(`` 30 deep and closed, repeated, half the blocks' runs close.
    # (``_takes_nothing`` answers for ``_fails_after`` and for the failed stretches.)
    answers: list[bool] = []
    real = opening._takes_nothing

    def spy(*args: Any) -> bool:
        answers.append(answer := real(*args))
        return answer

    monkeypatch.setattr(opening, "_takes_nothing", spy)
    text = ("[a(" * 30 + ")" * 30) * 20 + "]"
    _quiet([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})
    assert sum(answers) >= 200


def _no_stretch(g: Any, k: int, walks: Any, buf: str, base: int, p: int, along: Any) -> Any:
    """``fails_along`` passing over nothing: the path off."""
    return opening.Passed(p, -1)


#: Pieces for failed stretches (``_blocks.opening.fails_along``): openers of one entry and
#: of others, prose, code and reasoning tags between them, runs that close and go on.
STRETCHES = (
    *BRACKETS,
    "[a(" * 8,
    "[b([a(",
    ")" * 8,
    "`",
    "```\n",
    "~",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    '{"name": "f", "arguments": {"a": [',
    "a",
    "\n",
)


def stretch_documents() -> st.SearchStrategy[tuple[str, list[str]]]:
    return repeated(STRETCHES, 30, 40)


@SETTINGS
@given(stretch_documents(), OPTIONS)
def test_inv1_failed_stretches_change_no_event(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # The blocks after one that failed at once, passed over while each fails at once too,
    # give the events the sieve gives trying each in turn.
    doc, chunks = doc_chunks
    for feed in (chunks, list(doc)):
        fast = _quiet(feed, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(lifecycle, "fails_along", _no_stretch)
            slow = _quiet(feed, opts)
        assert fast == slow
        assert fast == _without("fails_at_once", _never, _quiet, feed, opts)


@pytest.mark.parametrize(
    "unit", ["[a(", "[a(" * 30 + ")" * 30, "[a(b, c=[1, (2)], d={'e': [", "[a(x=')')"]
)
def test_inv1_failed_stretches_change_no_event_on_hostile_text(unit: str) -> None:
    text = unit * (3000 // len(unit)) + "]"
    for size in (1, 3, 8):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        fast = _quiet(chunks, {"dialects": "all"})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(lifecycle, "fails_along", _no_stretch)
            slow = _quiet(chunks, {"dialects": "all"})
        assert fast == slow
        assert fast == _without("fails_at_once", _never, _quiet, chunks, {"dialects": "all"})


def test_inv4_failed_stretches_are_taken_on_hostile_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not dead code: in ``[a(`` 30 deep and closed, repeated, most blocks are passed over
    # in a stretch, not tried one by one.
    passed: list[int] = []
    real = opening.fails_along

    def spy(*args: Any) -> Any:
        start = args[5]
        out = real(*args)
        passed.append(args[3].count("[a(", start, out.stop) if out.last >= 0 else 0)
        return out

    monkeypatch.setattr(lifecycle, "fails_along", spy)
    text = ("[a(" * 30 + ")" * 30) * 20 + "]"
    _quiet([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})
    assert sum(passed) >= 400


@pytest.mark.parametrize(
    "unit", ["[a(" * 30 + ")" * 30, "[a(" * 3 + ")" * 2, "[a([1, {'b': (2,)}, ')'"]
)
def test_inv1_walked_runs_end_where_a_reader_ends(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Along the walks a stream kept, past a full walk's end (``WALK_STEPS``) along the next
    # one, each run in text read again ends, fails or goes on where a ``JsonRun`` of its
    # own, with no walks, finds it.
    from callsieve._scan.balanced import WALK_STEPS, JsonRun

    chained: list[object] = []
    real = opening._walk_past

    def spy(*args: Any) -> Any:
        full = len(args[4][0].pos) >= WALK_STEPS
        verdict = real(*args)
        if full and verdict is not None:
            chained.append(verdict)
        return verdict

    monkeypatch.setattr(opening, "_walk_past", spy)
    text = unit * (12_000 // len(unit))
    s = callsieve.Sieve(dialects="all")
    for i in range(0, len(text), 5):
        s.feed(text[i : i + 5])
    life = s._life
    k = life.g.openers.entry_index["PYTHONIC__PY_OPEN"]
    plan = life.g.opening(k)
    assert plan is not None and plan.run is not None
    walks = life.lessons.walks[plan.run.quotes]
    answered = 0
    for m in re.finditer(re.escape("[a("), text):
        p = m.end()
        if p >= walks.seen or text[p] not in "{[()]}":
            continue
        got = opening._walked(plan.run, walks, text, 0, p)
        if got is None:
            continue
        answered += 1
        run = JsonRun(plan.run)
        end = run.read(text, p)
        if end < 0:
            assert isinstance(got, str)
        elif run.done:
            assert got == end
        else:
            assert got == opening.GOES_ON
    assert answered >= len(text) // len(unit) // 2
    if len(unit) > 100:
        assert len(chained) >= 3


def _walks_kept(chunks: list[str], opts: dict[str, Any]) -> tuple[Any, ...]:
    """A stream's events and blocks, and the walks its balanced runs kept (``Walks``)."""
    ids = itertools.count()
    s = callsieve.Sieve(id_factory=lambda: f"call_{next(ids)}", **opts)
    events: list[Any] = []
    for c in chunks:
        events += s.feed(c)
    events += s.close()
    walks = {
        q: (w.end, w.seen, [(w_.pos.tolist(), bytes(w_.lvl)) for w_ in w.kept])
        for q, w in s._life.lessons.walks.items()
    }
    return _coalesced(events), tuple(s.blocks), walks


def _no_room(w: Any) -> int:
    """No step noted inline: ``JsonRun._note`` notes each one."""
    return 0


@SETTINGS
@given(bracket_documents(), st.sampled_from([{"dialects": "all"}, {"dialects": ("pythonic",)}]))
def test_inv1_noting_inline_changes_no_event_and_no_walk(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # A reader notes each bracket in its walk inline as ``_note`` would: same steps, same
    # end of the walks, same events.
    doc, chunks = doc_chunks
    for feed in (chunks, [doc]):
        fast = _walks_kept(feed, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(balanced, "_room", _no_room)
            slow = _walks_kept(feed, opts)
        assert fast == slow


@pytest.mark.parametrize("unit", ["[a(" * 30 + ")" * 30, "[a([1, {'b': (2,)}, ')'"])
def test_inv1_noting_inline_changes_no_walk_on_hostile_text(unit: str) -> None:
    text = unit * (6000 // len(unit)) + "]"
    for size in (1, 5):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        fast = _walks_kept(chunks, {"dialects": "all"})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(balanced, "_room", _no_room)
            slow = _walks_kept(chunks, {"dialects": "all"})
        assert fast == slow


def test_inv4_noting_inline_is_taken_on_hostile_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not dead code: in ``[a(`` 30 deep and closed, repeated, most brackets a reader notes
    # are noted inline, not by a call each.
    calls: list[int] = []
    real = balanced.JsonRun._note

    def spy(self: Any, at: int, depth: int) -> None:
        calls.append(at)
        real(self, at, depth)

    monkeypatch.setattr(balanced.JsonRun, "_note", spy)
    text = ("[a(" * 30 + ")" * 30) * 40 + "]"
    chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
    _walks_kept(chunks, {"dialects": "all"})
    inline = len(calls)
    calls.clear()
    monkeypatch.setattr(balanced, "_room", _no_room)
    _walks_kept(chunks, {"dialects": "all"})
    assert inline * 4 < len(calls)


def _unread_both_ways(chunks: list[str], opts: dict[str, Any]) -> None:
    """A deep run's probe (``DeepProbe``) on and off give the same events, blocks and walks."""
    fast = _walks_kept(chunks, opts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(balanced, "UNREAD_CLOSERS", False)
        slow = _walks_kept(chunks, opts)
    assert fast == slow


#: ``max_block_chars`` small enough that the deep runs of ``bracket_documents`` pass it.
SHORT_BLOCKS = st.sampled_from([{}, {"max_block_chars": 7}, {"max_block_chars": 40}])


@SETTINGS
@given(
    bracket_documents(),
    st.sampled_from([{"dialects": "all"}, {"dialects": ("pythonic",)}, *OPTION_SETS]),
    SHORT_BLOCKS,
)
def test_inv1_deep_runs_change_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any], short: dict[str, Any]
) -> None:
    # A chunk a deep run's probe lets be appended unread (its closers fewer than the run's
    # depth, its openers too few to nest it too deep, the block still short enough) gives
    # the events, the blocks and the walks the machine's read gives, whatever the limit.
    doc, chunks = doc_chunks
    opts = {**opts, **short}
    for feed in (chunks, list(doc)):
        _unread_both_ways(feed, opts)


@pytest.mark.parametrize(
    "unit",
    ["[a(" * 30 + ")" * 30, "[a(" * 3 + ")" * 2, "[a([1, {'b': (2,)}, ')'", "[a(" * 40 + "]"],
)
def test_inv1_deep_runs_change_no_event_on_hostile_text(unit: str) -> None:
    text = unit * (6000 // len(unit)) + "]"
    for size in (1, 3, 8):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        for limit in ({}, {"max_block_chars": 300}, {"max_block_chars": 40}):
            _unread_both_ways(chunks, {"dialects": "all", **limit})


def test_inv4_deep_runs_are_taken_on_hostile_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not dead code: in ``[a(`` 30 deep and closed, repeated, most chunks that hold the
    # closer are appended unread.
    answers: list[bool] = []
    real = balanced.DeepProbe.passes

    def spy(self: Any, buf: str, p: int) -> bool:
        answers.append(verdict := real(self, buf, p))
        return verdict

    monkeypatch.setattr(balanced.DeepProbe, "passes", spy)
    text = ("[a(" * 30 + ")" * 30) * 20 + "]"
    _walks_kept([text[i : i + 5] for i in range(0, len(text), 5)], {"dialects": "all"})
    assert answers.count(True) >= 80 and answers.count(True) > 2 * answers.count(False)


def test_inv1_a_token_cut_after_the_first_run_is_held_not_failed() -> None:
    # ``[a(b=1),`` then white space may still become the call list's ``]`` or the next
    # call: the capture holds it, so the fast path may not fail it; a ``)`` there it fails.
    g = load_grammar(("pythonic",))
    k = next(k for k, e in enumerate(g.entries) if e.synthetic is None)
    assert g.opening(k) is not None
    end = len("[a(b=1)")
    assert not opening._fails_after(g, (k, ()), "[a(b=1), ", end)
    assert not opening._fails_after(g, (k, ()), "[a(b=1) ", end)
    assert not opening._fails_after(g, (k, ()), "[a(b=1)]", end)
    assert opening._fails_after(g, (k, ()), "[a(b=1))", end)


#: Pieces whose blocks read bounded tokens, then a run that is not balanced, then a token
#: (``_blocks.opening._fails_at_checkpoint``): key lines, elements, tags cut in two.
LINES = (
    "function.name: f\n",
    "function.name: f",
    'function.name: "f g"\n',
    "function.arguments: {}\n",
    'function.arguments: {"a": 1}\n',
    "status: done\n",
    "k: v",
    "\n",
    "\r\n",
    "<",
    "</think>",
    "<think>",
    '<invoke name="f">',
    "<a>",
    "x",
    "</a>",
    "</invoke>",
    ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>',
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    '<function name="f"><param name="a">x',
    "<![CDATA[x",
    "]]>",
    "prose ",
)


def line_documents() -> st.SearchStrategy[tuple[str, list[str]]]:
    return repeated(LINES, 30, 30, cuts=40)


@SETTINGS
@given(line_documents(), OPTIONS)
def test_inv1_failing_at_the_first_checkpoint_changes_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # A block whose first checkpoint a failed capture reached fails there with no capture
    # made: the events, blocks and counters are those of a capture.
    doc, chunks = doc_chunks
    for run, arg in ((_run, chunks), (_quiet, chunks), (_run, list(doc)), (_parsed, doc)):
        fast = run(arg, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(opening, "_fails_at_checkpoint", _never)
            slow = run(arg, opts)
        assert fast == slow


def test_inv4_failing_at_the_first_checkpoint_is_taken_on_hostile_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not dead code: ``function.name: f`` lines, whose block fails at the last line, are
    # each read again from the next line's entry, which fails at its first checkpoint,
    # before the end of the input and at it.
    answers: list[object] = []
    real = opening._fails_at_checkpoint

    def spy(*args: Any) -> Any:
        answers.append(answer := real(*args))
        return answer

    monkeypatch.setattr(opening, "_fails_at_checkpoint", spy)
    lines = "function.name: f\n" * 200
    text = lines + "} and the prose goes on" + ", on" * 60 + "."
    events = _quiet([lines, text[len(lines) :]], {"dialects": "all"})[0]
    assert "".join(e.text for e in events) == text
    assert sum(a is not None for a in answers) >= 190
    # At the end of the input too: a ``}`` held as the tail of a cut tag fails the block there.
    answers.clear()
    events = _run([lines, "}"], {"dialects": "all"})[0]
    assert "".join(e.text for e in events) == lines + "}"
    assert sum(a is not None for a in answers) >= 190


#: Openers and tags of many families, with text that half makes them, for ``exact_at``.
TAGS = (
    *PIECES,
    "<tool_call>",
    "<|tool_call>",
    "<|python_tag|>",
    "＜tool_call＞",
    "<\u200btool_call>",
    "<｜tool▁calls▁begin｜>",
    "<function_calls>",
    "<invoke name=",
    "</think>",
    "</ think>",
    "[TOOL_CALLS]",
    "[ a(",
    '[{"name": "f"',
    '{"tool_calls": [',
    "<tool_calls:opensource>",
    "<|open|>tools<|sep|>",
    "<|START_ACTION|>",
    "<|start|>assistant to=functions.f",
    "<",
    "|",
    "a",
    " ",
)


@st.composite
def entry_texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(TAGS), min_size=1, max_size=12)))


def _same_match(whole: Any, cut: Any) -> None:
    """The cut alternation's match is the whole one's: none for none, else the same span,
    entry and named groups."""
    if whole is None or cut is None:
        assert whole is cut
        return
    assert (cut.span(), cut.lastgroup) == (whole.span(), whole.lastgroup)
    assert {k: cut.group(k) for k in cut.re.groupindex} == {
        k: whole.group(k) for k in cut.re.groupindex
    }


@SETTINGS
@given(entry_texts())
def test_inv4_entries_by_lead_match_as_the_whole_alternation(text: str) -> None:
    # ``EntryTable.exact_at``: at every position, the alternation cut to the entries that
    # may begin with its character matches as the whole one, in every context's table.
    g = load_grammar(tuple(callsieve.dialects()))
    for table in g.openers.entry_tables.values():
        for i, lead in enumerate(text):
            whole, cut = table.exact.match(text, i), table.exact_at(lead).match(text, i)
            _same_match(whole, cut)


def _whole_alternation(table: Any, at: Any) -> Any:
    """``exact_at`` (by lead) or ``exact_in`` (by state) answering the whole alternation
    everywhere: the path off."""
    return table.exact


@pytest.mark.parametrize("path", ["exact_at", "exact_in"])  # (entries by lead, by state)
@SETTINGS
@given(documents(), OPTIONS)
def test_inv1_entries_cut_by_lead_or_state_change_no_event_and_no_block(
    path: str, doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    doc, chunks = doc_chunks
    for run, arg in ((_run, chunks), (_run, list(doc)), (_parsed, doc)):
        fast = run(arg, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(EntryTable, path, _whole_alternation)
            slow = run(arg, opts)
        assert fast == slow


def test_inv4_entries_by_lead_cut_the_alternation() -> None:
    # Not dead code: under "all", a ``[`` leaves a few of the entries to try.
    g = load_grammar(tuple(callsieve.dialects()))
    table = g.openers.entry_tables["answer"]
    assert len(table.exact_at("[").pattern) < len(table.exact.pattern) / 4


@SETTINGS
@given(entry_texts())
def test_inv4_entries_by_state_match_as_the_whole_alternation(text: str) -> None:
    # ``EntryTable.exact_in``: where a walk from a position first accepts, the alternation
    # cut to the sources the automaton still has there matches as the whole one.
    g = load_grammar(tuple(callsieve.dialects()))
    for table in g.openers.entry_tables.values():
        auto = table.automaton
        for i in range(len(text)):
            state, _ = auto.walk(0, text, i, len(text))
            if state < 0 or not auto.accepting[state]:
                continue
            whole, cut = table.exact.match(text, i), table.exact_in(state).match(text, i)
            _same_match(whole, cut)


@pytest.mark.parametrize(
    "unit",
    [
        '<|tool_call>call:f{a:<|"|>',
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>',
        "<tool_call><function=f><parameter=a><tool_call>",
    ],
)
def test_inv1_entries_by_state_change_no_event_on_hostile_text(unit: str) -> None:
    # Every entry of these opens a capture: each is matched where the automaton accepts.
    text = unit * (3000 // len(unit))
    for size in (1, 3, 8):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        fast = _run(chunks, {"dialects": "all"})
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(EntryTable, "exact_in", _whole_alternation)
            assert _run(chunks, {"dialects": "all"}) == fast


def test_inv4_entries_by_state_cut_the_alternation() -> None:
    # Not dead code: under "all", a ``<`` leaves over half the entries (``exact_at`` keeps
    # the whole alternation), but where ``<|tool_call>`` first accepts, a few are left.
    g = load_grammar(tuple(callsieve.dialects()))
    table = g.openers.entry_tables["answer"]
    text = "<|tool_call>call:f{"
    state, _ = table.automaton.walk(0, text, 0, len(text))
    assert table.automaton.accepting[state]
    assert table.exact_at("<") is table.exact
    assert len(table.exact_in(state).pattern) < len(table.exact.pattern) / 4


def test_inv4_a_block_failing_at_once_has_no_text_of_its_own() -> None:
    # ``[a(`` repeated, read again in one buffer: each block fails at once, and its text
    # joins the text around it, so the buffer gives one ``Text``, not one per block.
    text = "[a(" * 300 + "]"
    s = callsieve.Sieve(dialects="all")
    events = s.feed(text) + s.close()
    assert "".join(e.text for e in events) == text
    assert len(events) < 10


def _by_reader(sieve: Any, chunk: Any) -> Any:
    """``SieveMachine.feed`` with no fast half: every chunk goes to the mode's reader."""
    return sieve._reader(sieve, chunk)


#: ``OPTIONS`` but ``max_block_chars``: RUN's fast half leaves up to ``HOT_BUDGET`` pieces
#: uncounted, so a block that outgrows the limit there may fail only at ``close()`` and be
#: kept in ``blocks``, where the reader would have failed it at once (the events agree).
HALF_OPTIONS = st.sampled_from(
    [{}, {"early_emit": "arguments"}, *(o for o in OPTION_SETS if "max_block_chars" not in o)]
)


@SETTINGS
@given(documents(), HALF_OPTIONS)
def test_inv1_the_fast_halves_change_no_event_and_no_block(
    doc_chunks: tuple[str, list[str]], opts: dict[str, Any]
) -> None:
    # ``feed``'s fast halves (``modes.Fast``) take a mode's common chunk instead of its reader;
    # the reader alone must give the same stream.
    doc, chunks = doc_chunks
    for feed in (chunks, list(doc)):
        fast = _run(feed, opts)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sieve_module.SieveMachine, "feed", _by_reader)
            slow = _run(feed, opts)
        assert fast == slow


def _taken(chunks: list[str], opts: dict[str, Any]) -> set[str]:
    """The fast halves that took a chunk of a stream: a chunk whose mode's reader was not
    called was taken by the mode's half (in RUN, the one that streams arguments if the
    chunk gave events)."""
    called: list[bool] = []

    def counting(reader: Callable[..., Any]) -> Callable[..., Any]:
        def read(sieve: Any, chunk: Any) -> Any:
            called.append(True)
            return reader(sieve, chunk)

        return read

    rows = {mode: (counting(row[0]), *row[1:]) for mode, row in sieve_module._ROWS.items()}
    taken: set[str] = set()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sieve_module, "_ROWS", rows)
        s = callsieve.Sieve(**opts)
        for c in chunks:
            mode = s._mode.name
            called.clear()
            out = s.feed(c)
            if not called:
                taken.add("ARG" if mode == "RUN" and out else mode)
        s.close()
    return taken


def test_inv4_each_fast_half_is_taken() -> None:
    # Not dead code: each fast half takes chunks of a stream that calls for it (PROSE's,
    # REASONING's, RUN's, and RUN's that streams arguments as they are).
    prose = "Some prose, then more of it. " * 20
    body = "def f(x):\n    return x * 2\n" * 20
    dsml = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n'
        f'<｜DSML｜parameter name="code" string="true">{body}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )
    doc = f"<think>{prose}</think>{prose}{dsml}{prose}"
    chunks = [doc[i : i + 4] for i in range(0, len(doc), 4)]
    assert _taken(chunks, {}) == {"PROSE", "REASONING", "RUN"}
    assert "ARG" in _taken(chunks, {"early_emit": "arguments"})

"""Strategy: a named fast path. A block whose opener leaves its parser one way on, a few
bounded tokens and then a balanced run, fails at once where that run fails. No capture is
made.

What it does. Prose may fail as a block every few characters (``[a(`` or ``{"name": "``
repeated). Each failed block's text is scanned again (SPEC §7), and every entry in it opens
a block. That block's run reads on along the walks of the runs before it
(``_scan.balanced``). The grammar says, per entry and token path, what the parser state
there takes (``CompiledGrammar.opening``). ``fails_at_once`` decides those tokens as the
capture's scanner would. It then reads the run as the capture's would: the same
``JsonRun``, the same walks, the same offset. If the run fails, or goes on to the end of
the input, so does the block. ``QuickFailure`` says what the capture would have said, and
where it would have stopped. It buys a Lark parser, its steps and the scan per entry;
benchmarks/README.md ("Fast paths") has the figures.
What it guarantees: the same events, blocks and counters as the capture's path. It is
taken only where the capture could emit nothing before failing: no argument stream, and
under ``early_emit`` only a block whose opening wrapper is missing. Before the end of the
input it is tried only right after the opener, in text read again (a failed block's). So a
valid block's run is never read twice. A run that ends makes the capture as before.
What it costs: nothing off this path; on it, one ``JsonRun`` and its read.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._grammar.compiled import CompiledGrammar, Opening
from .._scan.balanced import (
    _OPENS,
    _SPECIAL,
    _WHAT,
    _WS,
    MAX_JSON_DEPTH,
    WALK_STEPS,
    JsonRun,
    Walks,
    _way_out,
)
from .._scan.decide import decide
from .lessons import Lessons
from .messages import INPUT_ENDED, json_body_failed, too_long

__all__ = ["LEAD_TOKENS", "QuickFailure", "fails_at_once"]

#: The bounded tokens a block may read before its first run for this path to be tried
#: (``[TOOL_CALLS]`` then a name, ``<TOOLCALL>`` then ``[``: one or two in the families).
LEAD_TOKENS = 4


class QuickFailure(NamedTuple):
    """A block failed at its opener: the capture's ``failure``, where in the text it would
    have stopped reading (``stop``), and its ``dialect_now`` there."""

    failure: str
    stop: int
    dialect: str


def fails_at_once(
    g: CompiledGrammar,
    k: int,
    lessons: Lessons,
    buf: str,
    base: int,
    opened: tuple[int, int, bool],
    limit: int,
) -> QuickFailure | None:
    """Does the block opened at entry ``k``, whose opener is ``buf[i:p]`` (``buf[0]`` is at
    offset ``base``; ``opened`` is ``(i, p, final)``), fail in the first run the grammar
    makes it read? At the end of the input (``final``: ``buf`` runs to it), after at most
    ``LEAD_TOKENS`` bounded tokens, if the run fails or goes on to the end; before it, only
    right after the opener and in text a balanced run has read already (a failed block's,
    scanned again), if the run fails within ``buf``. None: it may not, or the grammar
    leaves more than one way on (then a capture reads the block)."""
    i, p, final = opened
    n = len(buf)
    plan = g.opening(k)
    if not final:
        if plan is None or plan.state is not None or plan.run is None:
            return None
        walks = lessons.walks.get(plan.run.quotes)
        if walks is None or base + p >= walks.seen:  # (new text: the capture reads it once)
            return None
    path: tuple[str, ...] = ()
    while plan is not None and p < n:
        if plan.state is not None:  # (a bounded token may come first, as ``Capture.scan``)
            term, value, _, cut, _ = decide(plan.state, buf, p, final)
            if term is not None:
                if len(path) >= LEAD_TOKENS or p + len(value) - i > limit:
                    return None
                path += (term.name,)
                p += len(value)
                plan = g.opening(k, path)
                continue
            if cut:
                return None
        return _run_fails(plan, lessons, buf, base, (i, p, final), limit)
    return None


def _run_fails(
    plan: Opening, lessons: Lessons, buf: str, base: int, at: tuple[int, int, bool], limit: int
) -> QuickFailure | None:
    """The block (its opener at ``buf[i]``) starts ``plan``'s run at ``buf[p]`` (``at`` is
    ``(i, p, final)``): does it fail there?"""
    i, p, final = at
    if plan.run is None:
        return None
    walks = lessons.walks.get(plan.run.quotes)
    if walks is not None and base + p < walks.seen:
        walked = _walked(plan.run, walks, buf, base, p)
        if walked is not None:
            return (
                None
                if not walked
                else QuickFailure(json_body_failed(base + p, walked), p, plan.dialect)
            )
    run = JsonRun(plan.run, lessons.walks, base + p)
    run.base = base
    s = run.read(buf, p)
    if s < 0:  # (the capture stops where the run began, as its ``_read_run`` does)
        return QuickFailure(json_body_failed(base + p, run.why), p, plan.dialect)
    if run.done or not final:
        return None
    # The run goes on to the end of the input: the block is over max_block_chars there, or
    # ends inside it (``_blocks.repair.finish``: a balanced run has no repair).
    n = len(buf)
    return QuickFailure(too_long(limit) if n - i > limit else INPUT_ENDED, n, plan.dialect)


def _walked(spec: Any, walks: Walks, buf: str, base: int, p: int) -> str | None:
    """Fast path ("walked runs"): the end of a balanced run of ``spec`` that starts at
    ``buf[p]``, in text its kind of readers has read (``buf[0]`` is at offset ``base``),
    found as ``JsonRun.read`` finds it, with no reader made. Its first bracket outside
    strings must end where a kept walk has a step. The walk then says where the run's
    depth first leaves 1..``MAX_JSON_DEPTH``; past the walk's end, the brackets are read
    and noted in it, as the reader notes them. ``""``: the run closes there; else why it
    fails. None: anything else (a string, no walk there, no end within ``buf``): read it
    with a ``JsonRun``."""
    n = len(buf)
    closer = spec.closer
    if not spec.opened:  # (as ``JsonRun._begin``: white space if allowed, then the bracket)
        if spec.lead_ws:
            p = _WS.match(buf, p).end()  # type: ignore[union-attr]  # (\s* always matches)
        if p >= n or buf[p] != _OPENS[closer]:
            return None
        p += 1
    special = _SPECIAL[spec.quotes]
    m = special.search(buf, p)
    if m is None or m.group() in spec.quotes or m.group() not in "{[(":
        return None
    at = base + m.end()
    found = walks.find(at, None) if at <= walks.end else None
    if found is None:
        return None
    w, k = found
    pos, lvl = w.pos, w.lvl
    shift = (2 - lvl[k]) & 255
    j = _way_out(lvl, k, shift)
    if j >= 0:
        if pos[j] > base + n:
            return None
        return _walk_ends(spec, walks, buf, (base, pos[j] - base), (lvl[j] + shift) & 255)
    if pos[-1] > base + n:
        return None
    p, depth = pos[-1] - base, (lvl[-1] + shift) & 255
    while True:  # (past the walk: each bracket one more step of it, as ``JsonRun._note``)
        m = special.search(buf, p)
        if m is None or m.group() in spec.quotes or len(pos) >= WALK_STEPS:
            return None
        p = m.end()
        depth += 1 if m.group() in "{[(" else -1
        pos.append(base + p)
        lvl.append((depth - shift) & 255)
        walks.end = max(walks.end, base + p)
        if depth == 0 or depth > MAX_JSON_DEPTH:
            return _walk_ends(spec, walks, buf, (base, p), depth)


def _walk_ends(spec: Any, walks: Walks, buf: str, at: tuple[int, int], depth: int) -> str:
    """The walked run's depth left 1..``MAX_JSON_DEPTH`` at the bracket just before
    ``buf[end]`` (``at`` is ``(base, end)``; ``buf[0]`` is at offset ``base``): as
    ``JsonRun._end``, ``""`` if it closes there, else why it fails."""
    base, end = at
    walks.seen = max(walks.seen, base + end)  # (as the reader's ``_read_to``)
    if depth > MAX_JSON_DEPTH:
        return f"nested deeper than {MAX_JSON_DEPTH}"
    c = buf[end - 1]
    return "" if c == spec.closer else f"a {c!r} closes the {_WHAT[spec.closer]}"

"""Strategy: named fast paths. A block whose opener leaves its parser one way on, a few
bounded tokens and then a balanced run, fails at once where that run fails. No capture is
made.

What it does. Prose may fail as a block every few characters (``[a(`` or ``{"name": "``
repeated). Each failed block's text is scanned again (SPEC §7), and every entry in it opens
a block. That block's run reads on along the walks of the runs before it
(``_scan.balanced``). The grammar says, per entry and token path, what the parser state
there takes (``CompiledGrammar.opening``). ``fails_at_once`` decides those tokens as the
capture's scanner would. It then reads the run as the capture's would: the same walks, the
same offset. If the run fails, or goes on to the end of the input, so does the block.
``QuickFailure`` says what the capture would have said, and where it would have stopped.
It buys a Lark parser, its steps and the scan per entry. Four more paths ride on it:
- *walked runs* (``_walked``): a run that goes on inside its value, at a bracket, in text
  read again, ends where a kept walk says, with no ``JsonRun`` made;
- *after the run* (``_fails_after``): where nothing records why a block failed, a run that
  closes fails the block too if the parser state after it takes nothing next. That state
  is derived once per grammar, entry and path, by feeding a parser (``_after_run``);
- *first checkpoint* (``_fails_at_checkpoint``): in a failed block's text, a block that
  reads a few bounded tokens, then a run that is not balanced, then a token at its stop,
  fails there if a failed capture noted that checkpoint with the same stack
  (``_blocks.lessons``). The stack is derived once per entry, path and token;
- *failed stretches* (``fails_along``): after a walked run failed its block where nothing
  records why, the next leads are read in one loop (``EntryFinder.pass_over``). Each block
  of the same entry that fails as that one did is passed over, with no call per block
  through the sieve. The same tests decide, so the same blocks fail.
benchmarks/README.md ("Fast paths") has the figures.
What it guarantees: the same events, blocks and counters as the capture's path. It is
taken only where the capture could emit nothing before failing: no argument stream, and
under ``early_emit`` only a block whose opening wrapper is missing. Before the end of the
input it is tried only in text read again (a failed block's): the run must begin where a
reader has read. So a valid block's run is never read twice. There, the bounded tokens
before the run are read only while they pay, per entry (``Lessons.asks_lead``). A run that ends makes the capture as before, but
for *after the run*. There a capture would first build the call the run ended; the call
is never emitted, and only the failure's text, which nothing records, could differ.
*First checkpoint* fails a block only where a failed capture read.
What it costs: nothing off this path; on it, a walk's look-up or one ``JsonRun`` and its
read; memory, one parser state per entry and path a grammar's blocks take this path at.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections.abc import Callable
from typing import Any, NamedTuple

from lark import Token
from lark.exceptions import LarkError

from .._grammar.compiled import CompiledGrammar, Opening, StateSpec
from .._grammar.lark_internals import reduce_by_hand
from .._grammar.names import STRAY_RUN
from .._scan.balanced import (
    _SPECIAL,
    _WHAT,
    MAX_JSON_DEPTH,
    WALK_STEPS,
    JsonRun,
    Walks,
    _way_out,
)
from .._scan.decide import decide
from .capture import MAX_PARSE_DEPTH
from .lessons import Lessons
from .messages import INPUT_ENDED, json_body_failed, read_before, too_long

__all__ = [
    "ALONG_AFTER",
    "LEAD_TOKENS",
    "Passed",
    "QuickFailure",
    "fails_along",
    "fails_at_once",
]

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
    quiet: bool = False,
    repairable: bool = True,
) -> QuickFailure | None:
    """Does the block opened at entry ``k``, whose opener is ``buf[i:p]`` (``buf[0]`` is at
    offset ``base``; ``opened`` is ``(i, p, final)``), fail in the first run the grammar
    makes it read? At the end of the input (``final``: ``buf`` runs to it), after at most
    ``LEAD_TOKENS`` bounded tokens, if the run fails or goes on to the end; before it, after
    those tokens too, if the run begins in text a balanced run has read already (a failed
    block's, scanned again) and fails within ``buf``. None: it may not, or the grammar
    leaves more than one way on (then a capture reads the block). ``quiet``: nothing
    records why or where a block failed (no ``parse()``, no ``close()``, no metrics): then
    a run that closes within ``buf`` fails the block too where the parser state after it
    takes nothing at the next character (``_fails_after``). ``repairable``: the capture
    would be one that may repair loose CDATA (not inside reasoning); in text a failed block
    read, a block whose first checkpoint a failed capture reached fails there
    (``_fails_at_checkpoint``)."""
    i, p, final = opened
    n = len(buf)
    plan = g.opening(k)
    if (
        plan is not None
        and plan.run is None
        and lessons.fails
        and base + p <= lessons.horizon
        and lessons.asks_first(k)
    ):
        quick = _fails_at_checkpoint(g, k, lessons, buf, base, opened, limit, repairable)
        lessons.asked_first(k, quick is not None)
        if quick is not None or not final:
            return quick
    if plan is None or p >= n:
        return None
    if plan.state is None:
        return _first_run(g, (k, ()), plan, lessons, buf, base, opened, limit, quiet)
    # (a bounded token may come first, as ``Capture.scan``)
    if not final and not (_read_again(lessons, base + p) and lessons.asks_lead(k)):
        return None  # (new text: the capture reads it once; or here its tokens never paid)
    led = _lead(g, k, plan, buf, opened, limit)
    quick = None
    if led is not None:
        at = (i, led.p, final)
        quick = _first_run(g, (k, led.path), led.plan, lessons, buf, base, at, limit, quiet)
    if not final:
        lessons.asked_lead(k, quick is not None)
    return quick


def _first_run(
    g: CompiledGrammar,
    key: tuple[int, tuple[str, ...]],
    plan: Opening,
    lessons: Lessons,
    buf: str,
    base: int,
    at: tuple[int, int, bool],
    limit: int,
    quiet: bool,
) -> QuickFailure | None:
    """``fails_at_once`` from the block's first run on: ``plan``'s, at ``buf[p]`` (``at``
    is ``(i, p, final)``), after the bounded tokens of ``key`` (entry, their names). Before
    the end of the input, only a run that begins where a reader of its kind has read."""
    _, p, final = at
    walks = None
    if not final:
        if plan.run is None:
            return None
        walks = lessons.walks.get(plan.run.quotes)
        if walks is None or base + p >= walks.seen:
            return None
    end = _run_fails(plan, lessons, buf, base, at, limit, quiet, walks)
    if not isinstance(end, int):
        return end  # (a QuickFailure, or None)
    if quiet and not final and _fails_after(g, key, buf, end):
        return QuickFailure(FAILS_AFTER_RUN, p, plan.dialect)
    return None


class Led(NamedTuple):
    """Where a block's bounded lead tokens leave it (``_lead``): the ``plan`` there, the
    tokens' names (``path``) and the index in ``buf`` they end at (``p``)."""

    plan: Opening
    path: tuple[str, ...]
    p: int


def _lead(
    g: CompiledGrammar,
    k: int,
    plan: Opening,
    buf: str,
    opened: tuple[int, int, bool],
    limit: int,
) -> Led | None:
    """The bounded tokens a block of entry ``k`` reads before its first run, decided as
    ``Capture.scan`` decides them (``opened`` is ``(i, p, final)``: the opener is
    ``buf[i:p]``). None: a token cut by the end of ``buf``, more than ``LEAD_TOKENS``, over
    ``limit``, a path ``g.opening`` refuses, or no text left after them."""
    i, p, final = opened
    n = len(buf)
    path: tuple[str, ...] = ()
    while plan.state is not None:
        term, value, _, cut, _ = decide(plan.state, buf, p, final)
        if term is None:
            return None if cut else Led(plan, path, p)
        if len(path) >= LEAD_TOKENS or p + len(value) - i > limit:
            return None
        path += (term.name,)
        p += len(value)
        after = g.opening(k, path)
        if after is None or p >= n:
            return None
        plan = after
    return Led(plan, path, p)


def _run_fails(
    plan: Opening,
    lessons: Lessons,
    buf: str,
    base: int,
    at: tuple[int, int, bool],
    limit: int,
    quiet: bool,
    walks: Walks | None = None,
) -> QuickFailure | int | None:
    """The block (its opener at ``buf[i]``) starts ``plan``'s run at ``buf[p]`` (``at`` is
    ``(i, p, final)``): does it fail there? An ``int``: the run closes, just before
    ``buf[end]``. ``quiet``: nothing records why (a walked run's failure is not written)."""
    i, p, final = at
    if plan.run is None:
        return None
    if walks is None:
        walks = lessons.walks.get(plan.run.quotes)
    if (  # (a run that goes on inside its value, at a bracket: ``_walked``)
        walks is not None and base + p < walks.seen and plan.run.opened and buf[p] in _BRACKETS
    ):
        walked = _walked(plan.run, walks, buf, base, p)
        if isinstance(walked, str):
            why = UNRECORDED if quiet else json_body_failed(base + p, walked)
            return QuickFailure(why, p, plan.dialect)
        if walked == GOES_ON:  # (as the ``JsonRun`` below finds it, with none made)
            return _to_the_end(plan, buf, i, limit) if final else None
        if walked is not None:
            return walked
    run = JsonRun(plan.run, lessons.walks, base + p)
    run.base = base
    s = run.read(buf, p)
    if s < 0:  # (the capture stops where the run began, as its ``_read_run`` does)
        return QuickFailure(json_body_failed(base + p, run.why), p, plan.dialect)
    if run.done:
        return s
    return _to_the_end(plan, buf, i, limit) if final else None


def _to_the_end(plan: Opening, buf: str, i: int, limit: int) -> QuickFailure:
    """The run of the block opened at ``buf[i]`` goes on to the end of the input: the block
    is over max_block_chars there, or ends inside it (``_blocks.repair.finish``: a balanced
    run has no repair)."""
    n = len(buf)
    return QuickFailure(too_long(limit) if n - i > limit else INPUT_ENDED, n, plan.dialect)


def _walked(
    spec: Any, walks: Walks, buf: str, base: int, p: int, near: list[Any] | None = None
) -> str | int | None:
    """Fast path ("walked runs"): the end of a balanced run of ``spec`` that starts inside
    its value at ``buf[p]`` (``opened``), in text its kind of readers has read (``buf[0]``
    is at offset ``base``). It is found as ``JsonRun.read`` finds it, with no reader made.
    Its first bracket outside strings must end where a kept walk has a step. The walk then
    says where the run's depth first leaves 1..``MAX_JSON_DEPTH``. Past the walk's end,
    the brackets are read and noted in it, as the reader notes them. An ``int``: the run
    closes just before ``buf[end]``, or ``GOES_ON`` past ``buf``; a ``str``: why it fails.
    None: anything else (a string first, no walk there): a ``JsonRun`` reads it. ``near``:
    the walk and step a run met last (``[walk, step]``, or ``[]``), looked at first and
    then set (``fails_along``: the next run in a stretch meets the same walk a few steps
    on)."""
    c = buf[p]  # (a bracket its strings' kind counts first: the run's first special one)
    if c not in "{[" and (c != "(" or len(spec.quotes) == 1):
        m = _SPECIAL[spec.quotes].search(buf, p)
        if m is None or (c := m.group()) in spec.quotes:
            return None
        if c not in "{[(":  # (a closer first: the run's depth is 0 there)
            return _walk_ends(spec, walks, buf, base, m.end(), 0)
        p = m.start()
    at = base + p + 1
    found = None
    if near:  # (one of the next ``NEAR_STEPS`` steps of the walk met last)
        w, k = near
        hi = min(k + 1 + NEAR_STEPS, len(w.pos))
        k = bisect_left(w.pos, at, k + 1, hi)
        found = (w, k) if k < hi and w.pos[k] == at else None
    if found is None:
        found = walks.find(at, None) if at <= walks.end else None
        if found is None:
            return None
    if near is not None:
        near[:] = found
    w, k = found
    lvl = w.lvl
    shift = (2 - lvl[k]) & 255
    j = _way_out(lvl, k, shift)
    if j < 0:
        return _walk_past(spec, walks, buf, base, (w, shift))
    end = w.pos[j] - base
    if end > len(buf):
        return _goes_on(walks, base + len(buf))
    return _walk_ends(spec, walks, buf, base, end, (lvl[j] + shift) & 255)


def _walk_past(
    spec: Any, walks: Walks, buf: str, base: int, walk: tuple[Any, int]
) -> str | int | None:
    """``_walked`` past the end of the walk it met (``walk``: the walk, and the run's
    depth less its levels), where the run's depth has not left 1..``MAX_JSON_DEPTH``:
    along the next walk, where the walk is full; else each bracket is read and noted in
    it, as ``JsonRun._note`` notes it."""
    w, shift = walk
    n = len(buf)
    special = _SPECIAL[spec.quotes]
    while True:
        pos, lvl = w.pos, w.lvl
        if pos[-1] > base + n:
            return _goes_on(walks, base + n)
        p, depth = pos[-1] - base, (lvl[-1] + shift) & 255
        if len(pos) < WALK_STEPS:
            break
        # A full walk: a later reader's walk goes on from the next bracket, where a
        # ``JsonRun`` would meet it (``_meet``). Without it, each run that ends past a full
        # walk would be read by a ``JsonRun`` of its own.
        m = special.search(buf, p)
        if m is None:
            return _goes_on(walks, base + n)
        if (c := m.group()) in spec.quotes:
            return None
        p = m.end()
        depth += 1 if c in "{[(" else -1
        if depth == 0 or depth > MAX_JSON_DEPTH:
            return _walk_ends(spec, walks, buf, base, p, depth)
        found = walks.find(base + p, w)
        if found is None:
            return None
        w, k = found
        shift = (depth - w.lvl[k]) & 255
        j = _way_out(w.lvl, k, shift)
        if j >= 0:
            end = w.pos[j] - base
            if end > n:
                return _goes_on(walks, base + n)
            return _walk_ends(spec, walks, buf, base, end, (w.lvl[j] + shift) & 255)
    quotes, room = spec.quotes, WALK_STEPS - len(pos)
    out = out_depth = 0  # (where this run's depth leaves 1..MAX_JSON_DEPTH, once found)
    m = None
    while room > 0:  # (each bracket one more step of the walk)
        m = special.search(buf, p)
        if m is None or (c := m.group()) in quotes:
            break
        p = m.end()
        depth += 1 if c in "{[(" else -1
        pos.append(base + p)
        lvl.append((depth - shift) & 255)
        room -= 1
        if not out and (depth == 0 or depth > MAX_JSON_DEPTH):
            out, out_depth = p, depth
            room = min(room, NOTED_AHEAD)
    walks.end = max(walks.end, pos[-1])
    if out:
        return _walk_ends(spec, walks, buf, base, out, out_depth)
    return _goes_on(walks, base + n) if m is None and room > 0 else None


#: Steps ``_walked`` looks along the walk met last (``near``) past the step it met. Any
#: walk's step there will do: a walk notes only brackets read outside strings, and two
#: readers there read on alike (``_scan.balanced``).
NEAR_STEPS = 8


#: Where ``_walked`` is tried: a run whose first character is a bracket, or a closer (a
#: JSON body whose first thing is a string never meets a walk: a ``JsonRun`` reads it).
_BRACKETS = "{[()]}"

#: ``_walked``'s answer for a run that goes on past the text it is given.
GOES_ON = -1


def _goes_on(walks: Walks, end: int) -> int:
    """The walked run goes on past the text, which ends at offset ``end``: as a reader that
    read it all (``JsonRun._read_to``), ``GOES_ON``."""
    walks.seen = max(walks.seen, end)
    return GOES_ON


#: Why a walked run fails where its depth goes past the limit (as ``JsonRun._end``).
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH}"


def _read_again(lessons: Lessons, at: int) -> bool:
    """Has a balanced run's reader of some kind read past offset ``at`` (text read again)?"""
    for walks in lessons.walks.values():  # (one or two: no generator)
        if at < walks.seen:
            return True
    return False


#: Brackets noted past a walked run's end (``_walked``): the runs of the next entries end
#: along the walk, found by ``_way_out`` with no step of the loop each.
NOTED_AHEAD = 64


def _walk_ends(spec: Any, walks: Walks, buf: str, base: int, end: int, depth: int) -> str | int:
    """The walked run's depth left 1..``MAX_JSON_DEPTH`` at the bracket just before
    ``buf[end]`` (``buf[0]`` is at offset ``base``): as ``JsonRun._end``, ``end`` if it
    closes there, else why it fails."""
    walks.seen = max(walks.seen, base + end)  # (as the reader's ``_read_to``)
    if depth > MAX_JSON_DEPTH:
        return TOO_DEEP
    c = buf[end - 1]
    return end if c == spec.closer else f"a {c!r} closes the {_WHAT[spec.closer]}"


class Passed(NamedTuple):
    """Where a pass over failing blocks stopped (``fails_along``)."""

    stop: int  # the first lead not passed over (the sieve goes on there)
    last: int  # where the last opener passed over begins (-1: none)


def fails_along(
    g: CompiledGrammar,
    k: int,
    walks_of: dict[str, Walks],
    buf: str,
    base: int,
    p: int,
    along: Callable[[str, int, Callable[[Any], bool]], Passed],
) -> Passed:
    """Fast path ("failed stretches"). A block of entry ``k``, its opener ending just before
    ``buf[p]``, failed at once in text read again, where nothing records why (``buf[0]``
    is at offset ``base``). The next leads often open the same entry's blocks, which fail
    too. ``along`` (the sieve's ``EntryFinder.pass_over``) passes over leads as the sieve
    would, while this test says the block fails at once. The test is the sieve's own:
    a block of entry ``k`` whose run ``_walked`` ends in failure, or closes where
    ``_fails_after`` fails it. The walks change as the sieve's tries would
    change them. Tried only after a run that began at a bracket: after a string, a
    ``JsonRun`` read the run, and reads the next ones too."""
    if p >= len(buf) or buf[p] not in _BRACKETS:
        return Passed(p, -1)
    plan = g.opening(k)
    if plan is None or plan.state is not None or plan.run is None or not plan.run.opened:
        return Passed(p, -1)
    spec = plan.run
    walks = walks_of.get(spec.quotes)
    if walks is None:
        return Passed(p, -1)
    group = g.entries[k].terminal
    after = _after_spec(g, (k, ()))
    n = len(buf)
    near: list[Any] = []

    def fails(m: Any) -> bool:
        q = m.end()
        if m.lastgroup != group or q >= n or base + q >= walks.seen or buf[q] not in _BRACKETS:
            return False  # (as ``_run_fails``)
        end = _walked(spec, walks, buf, base, q, near)
        if end is None or end == GOES_ON:
            return False
        return isinstance(end, str) or end < n and _takes_nothing(after, buf, end)

    return along(buf, p, fails)


def _fails_at_checkpoint(
    g: CompiledGrammar,
    k: int,
    lessons: Lessons,
    buf: str,
    base: int,
    opened: tuple[int, int, bool],
    limit: int,
    repairable: bool,
) -> QuickFailure | None:
    """Fast path ("first checkpoint"): the block opened at entry ``k`` (its opener
    ``buf[i:p]``, ``opened`` is ``(i, p, final)``) reads at most ``LEAD_TOKENS`` bounded tokens,
    then a run that is not balanced, then a token at the run's stop: its first checkpoint
    (``_blocks.lessons``). A failed capture reached that offset with the stack the block
    has there (derived once: ``_checkpoint``), so the block fails there, as ``Capture.scan``
    fails it, with no capture made. None: anything else (a token cut, no stop in ``buf``,
    a run whose stops the lessons note, stray text, a path ``g.opening`` refuses)."""
    if not _may_reach(g, k):
        return None
    i, p, final = opened
    n = len(buf)
    path: tuple[str, ...] = ()
    plan = g.opening(k)
    while True:
        if plan is None or plan.state is None or plan.run is not None or p >= n:
            return None
        term, value, _, cut, _ = decide(plan.state, buf, p, final)
        if term is None:
            if cut:
                return None
            break
        if len(path) >= LEAD_TOKENS or p + len(value) - i > limit:
            return None
        path += (term.name,)
        p += len(value)
        plan = g.opening(k, path)
    run = plan.state.run
    if run is None or run.balanced or run.name == STRAY_RUN or lessons.notes_stops(run):
        return None
    after = _checkpoint(g, k, path, None)
    if after is None:
        return None
    if final and not after.spec.end_ok and lessons.reaches_end(run, after.spec, base + p):
        return None  # (as ``Capture._read_run``: the end-of-input repair reads that run)
    s, tail = run.find_stop(buf, p, final)
    if tail or s >= n:
        return None
    term, value, _, _, _ = decide(after.spec, buf, s, final)
    if term is None or s + len(value) - i > limit:
        return None
    known = _checkpoint(g, k, path, term.name)
    if known is None:
        return None
    at = base + s
    why = lessons.doomed(at, known.stack, g.entries[k].synthetic is not None, repairable)
    return (
        None if why is None else QuickFailure(read_before(why, at), s + len(value), known.dialect)
    )


#: The paths ``_may_reach`` follows from an entry before it answers "maybe".
REACH_PATHS = 64


def _may_reach(g: CompiledGrammar, k: int) -> bool:
    """May a block of entry ``k`` reach a first checkpoint ``_fails_at_checkpoint`` takes:
    a run that is not balanced, no stray text, no fixed stop, after at most ``LEAD_TOKENS``
    bounded tokens ``g.opening`` allows? Derived once per grammar and entry from the paths
    of the parser states' bounded terminals; past ``REACH_PATHS`` paths, "maybe". (Without
    it, an entry that never takes that path pays its decisions at every failed block.)"""
    known = _CHECKPOINTS.of(g)
    key = ("reach", k)
    may = known.get(key)
    if may is None:
        may = known[key] = _reaches(g, k)
    return bool(may)


def _reaches(g: CompiledGrammar, k: int) -> bool:
    todo: list[tuple[str, ...]] = [()]
    tried = 0
    while todo:
        tried += 1
        if tried > REACH_PATHS:
            return True
        path = todo.pop()
        plan = g.opening(k, path)
        if plan is None or plan.state is None or plan.run is not None:
            continue
        run = plan.state.run
        if (
            run is not None
            and not run.balanced
            and run.name != STRAY_RUN
            and not Lessons.notes_stops(run)
        ):
            return True
        if len(path) < LEAD_TOKENS:
            todo += [(*path, term.name) for term in plan.state.bounded]
    return False


class Checkpoint(NamedTuple):
    """A capture's parser after the bounded tokens of a path, its run's placeholder and, if
    named, the token that ends the run: the state it reads the next token in (``spec``),
    its stack (a ``Lessons`` key) and its ``dialect_now``."""

    spec: StateSpec
    stack: tuple[int, ...]
    dialect: str


class PerGrammar:
    """What this module derives, one table per grammar (weakly keyed: a grammar dropped
    drops its table). The last grammar's table is one look-up away: a weak-keyed
    ``setdefault`` makes a weak reference per call, more than the rest of a failure at
    once costs there."""

    __slots__ = ("_last", "_tables")

    def __init__(self) -> None:
        self._tables: weakref.WeakKeyDictionary[CompiledGrammar, dict[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        # (a weak reference to the last grammar, its table): one attribute, read at once,
        # so two threads with two grammars never see one's reference with the other's table
        self._last: tuple[Any, dict[Any, Any]] = (_nothing, {})

    def of(self, g: CompiledGrammar) -> dict[Any, Any]:
        last = self._last
        if last[0]() is g:
            return last[1]
        table = self._tables.setdefault(g, {})
        self._last = (weakref.ref(g), table)
        return table


def _nothing() -> None:
    """A dead weak reference's answer: no grammar yet."""


#: Per grammar, per entry, path and token after the run: ``Checkpoint`` or None.
_CHECKPOINTS = PerGrammar()


def _checkpoint(
    g: CompiledGrammar, k: int, path: tuple[str, ...], name: str | None
) -> Checkpoint | None:
    """The ``Checkpoint`` of entry ``k`` after the bounded tokens ``path``, its state's run's
    placeholder and the token ``name`` (None: none yet). Derived once by feeding a parser
    what a capture feeds it. None where the parser refuses it, or the stack is deeper than
    a capture allows."""
    known = _CHECKPOINTS.of(g)
    key = (k, path, name)
    if key in known:
        found: Checkpoint | None = known[key]
        return found
    point = None
    try:
        entry = g.entries[k]
        ps = g.entered(entry)
        for token in path:
            ps.feed_token(Token(token, ""))
        run = g.states[ps.state_stack[-1]].run
        if run is not None:
            ps.feed_token(run.placeholder)
            if name is not None:
                ps.feed_token(Token(name, ""))
            stack = ps.state_stack
            if len(stack) <= MAX_PARSE_DEPTH:
                dialect = g.dialect_map.dialect_of(stack, entry.dialect)
                point = Checkpoint(g.states[stack[-1]], tuple(stack), dialect)
    except (LarkError, KeyError, TypeError, ValueError):
        point = None
    known[key] = point
    return point


#: The failure of a block ``_fails_after`` fails (never recorded: it is taken only where
#: nothing records why a block failed).
FAILS_AFTER_RUN = "the parser state after the first run takes nothing that follows it"
#: The failure of a walked run where nothing records why (not written out: unread).
UNRECORDED = "the JSON body fails"
#: The failures ``fails_along`` is tried after: a walked run's, or a closed run's (both
#: only where nothing records why). After any other, the next blocks fail otherwise.
ALONG_AFTER = (UNRECORDED, FAILS_AFTER_RUN)  # (a tuple: ``in`` meets them by identity, no hash)

#: Per grammar, per entry and lead path: the parser state a capture reads the next token
#: in once the first run closed (``_after_run``), or None.
_AFTER = PerGrammar()


def _fails_after(g: CompiledGrammar, key: tuple[int, tuple[str, ...]], buf: str, end: int) -> bool:
    """Fast path ("after the run"): the block of entry and path ``key`` whose first run
    closed just before ``buf[end]`` fails there, as ``Capture.scan`` fails it. The parser
    state after the run (``_after_run``) may not end the block, takes no bounded terminal
    at ``buf[end]`` (nor holds one cut by the end of ``buf``), and starts no run. A call
    the run ended may be built before; it changes only the failure's text."""
    return end < len(buf) and _takes_nothing(_after_spec(g, key), buf, end)


def _after_spec(g: CompiledGrammar, key: tuple[int, tuple[str, ...]]) -> StateSpec | None:
    """``_after_run``'s state for entry and path ``key``, derived once per grammar; None
    where it refuses, may end the block or starts a run (``_fails_after`` fails nothing)."""
    known = _AFTER.of(g)
    if key in known:
        spec: StateSpec | None = known[key]
    else:
        spec = known[key] = _after_run(g, *key)
    return None if spec is None or spec.end_ok or spec.run is not None else spec


def _takes_nothing(spec: StateSpec | None, buf: str, end: int) -> bool:
    """``_fails_after`` in the state ``spec`` (``_after_spec``), at ``buf[end]``."""
    if spec is None:
        return False
    if not spec.starting(buf[end]):  # (no bounded terminal starts there: ``decide`` says so)
        return True
    term, _, _, cut, _ = decide(spec, buf, end, False)
    return term is None and not cut


def _after_run(g: CompiledGrammar, k: int, path: tuple[str, ...]) -> StateSpec | None:
    """The parser state a capture of entry ``k`` that read the bounded tokens ``path`` and
    then its first run (a balanced one) reads the next token in: after the run's
    placeholder and, where ``Capture._read_run`` settles the run (a call or the block may
    end with it), the default reductions ``Capture._settle`` makes. Derived once by feeding a
    parser what a capture feeds it. None where the parser refuses that."""
    try:
        ps = g.entered(g.entries[k])
        for name in path:
            ps.feed_token(Token(name, ""))
        run = g.states[ps.state_stack[-1]].run
        if run is None or not run.balanced:
            return None
        ps.feed_token(run.placeholder)
        spec = g.states[ps.state_stack[-1]]
        if spec.default_rule is not None or spec.call_rule is not None or spec.end_ok:
            while spec.default_rule is not None:
                reduce_by_hand(ps, ps.state_stack, ps.value_stack, spec.default_rule)
                spec = g.states[ps.state_stack[-1]]
    except (LarkError, KeyError, TypeError, ValueError):
        return None
    return spec

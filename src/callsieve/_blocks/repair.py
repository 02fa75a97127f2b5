"""Strategy: the end of the input inside a block — the loose-CDATA repair (SPEC §4), or
failure.

What it does: a block whose last CDATA was never closed is re-read with that CDATA closed
before the last tag that lets the rest of the block parse. The CDATA's text holds no CDATA
close at all (its run found none), so a trial that opens another CDATA cannot close it
either: trials are scans that may not repair (one CDATA is closed, never a combination).
The places to try are where a terminal the parser accepts after the CDATA matches (from the
last backwards, at most ``MAX_CUTS``); each trial first only *probes* (no values, no calls
built), and the one that completes is read again for real. Trials note their checkpoints
like any capture (``_blocks.lessons``), so a trial that reaches the configuration of an earlier
failed one stops there; the places are searched once for the whole rest of the input.
What it guarantees: the same answer for every chunking (a trial reads the same text in the
same parser state whatever the chunks were); a repaired block is recorded as such.
What it costs: at most ``MAX_CUTS`` trials, each linear in what it reads and most stopping
at the first checkpoint a previous trial passed; the CDATA's text is copied once only when
the block began in an earlier chunk.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Tree
from lark.exceptions import LarkError

from .._grammar.names import CDATA_CLOSE, CDATA_OPEN, CDATA_RUN
from .._scan.cursor import RunText
from .capture import COMPLETE, VIABLE, BlockRecord, Capture, Checkpoints, HeldTail, Repair
from .messages import INPUT_ENDED

__all__ = ["LOOSE_CDATA", "MAX_CUTS", "finish", "scan_to_end"]

LOOSE_CDATA = "loose_cdata"
#: The places a repair tries, from the last backwards.
MAX_CUTS = 64


def scan_to_end(cap: Capture, buf: str, p: int, limit: int) -> tuple[int, int]:
    """``cap.scan`` of the rest of the input (``buf`` runs to its end), then, if the block
    is still open there, ``finish``: the capture reads, this module settles the end (so the
    capture never calls its repair, which forks captures)."""
    status, q = cap.scan(buf, p, True, limit)
    return finish(cap, buf, q, limit) if status == VIABLE else (status, q)


def finish(cap: Capture, buf: str, p: int, limit: int) -> tuple[int, int]:
    """The input ended inside ``cap``'s block. ``buf`` runs to the end of the input and
    the capture has read it up to ``p`` (the rest, if any, is its current run's, known to
    reach the end). ``(COMPLETE, where the block ended in buf)`` after a repair (with
    ``cap.repair.leftover`` set when that place is not in ``buf``), else ``(FAILED, p)``."""
    n = len(buf)
    if cap.raw_len + (n - p) > limit:
        return cap.too_long(limit), p
    run = cap.run
    if run is None or run.name != CDATA_RUN or cap.repair.snap is None or not cap.repair.may_repair:
        why = INPUT_ENDED
        if p < n:
            why += f" (its text from offset {cap.start + cap.raw_len} on is one run to the end)"
        return cap.fail(why), p
    snap_ps, snap_len, snap_calls, snap_diags = cap.repair.snap
    content = cap.start + snap_len  # the offset where the CDATA's text begins
    buf_base = cap.start + cap.raw_len - p  # the offset of buf[0]
    if content >= buf_base:
        text, base = buf, buf_base
    else:  # the CDATA began in an earlier chunk: one copy of the block
        text, base = cap.raw_text() + buf[p:], cap.start
    # Where the CDATA may be cut: where a terminal matches that its parser state accepts
    # after "]]>" (the one place that says so: argument streaming holds from the first such
    # text, ``_blocks.argstream.CdataGuard``). The capture stands inside the CDATA's run.
    after = cap.ctx.g.after_cdata(cap.ps.state_stack[-1])
    if after is None:
        return cap.fail("the input ended inside CDATA"), p
    cuts: set[int] = set()
    for term in after.bounded:
        if term.name != CDATA_OPEN:
            cuts.update(cap.ctx.lessons.last_starts(term, text, base, content, MAX_CUTS))
    for cut in sorted(cuts, reverse=True)[:MAX_CUTS]:
        trial = _trial(cap, snap_ps, snap_calls, snap_diags, cut, None)
        if trial is None:
            continue
        status, q = scan_to_end(trial, text, cut - base, limit)
        if status != COMPLETE:
            cap.repair.over_limit(trial.repair.limited)
            trial.learn()
            continue
        # It completes: read it again for real, with the CDATA's text and every call.
        head = (
            text[cap.start - base : content - base]
            if cap.start >= base
            else cap.raw_text()[:snap_len]
        )
        real = _trial(
            cap, snap_ps, snap_calls, snap_diags, cut, (head, text[content - base : cut - base])
        )
        if real is None:
            continue
        status, q = scan_to_end(real, text, cut - base, limit)
        if status != COMPLETE:  # a call that could not be built: the next place
            continue
        _adopt(cap, real)
        cap.record.repairs.append(LOOSE_CDATA)
        if text is buf:
            return COMPLETE, q
        cap.repair.read_on(text[q:])  # what follows the block, read from the copy
        return COMPLETE, n
    return cap.fail("the input ended inside CDATA and no closing tag lets it parse"), p


def _trial(
    cap: Capture, snap_ps: object, ncalls: int, ndiags: int, cut: int, real: tuple[str, str] | None
) -> Capture | None:
    """A fork of ``cap`` at its last CDATA opener with the CDATA closed at offset ``cut``
    (``real``: the block's text before the CDATA and the CDATA's text, for a trial that
    builds values; None: a probe). None if the parser takes no CDATA close there."""
    assert cap.run is not None
    raw = [] if real is None else [real[0], real[1]]
    # (trial.raw's first piece holds the calls its record keeps)
    record = cap.record.trial(ncalls, ndiags)
    trial = _fork(cap, snap_ps, raw, cut - cap.start, record, Repair(False, real is None))
    # Lark's tree builder extends a left-recursive list's children in place: each trial gets
    # its own lists, or one trial's parameters would show up in the next one's call.
    values = trial.ps.value_stack
    for k, v in enumerate(values):
        if isinstance(v, Tree):
            values[k] = Tree(v.data, list(v.children))
    try:
        trial.ps.feed_token(cap.run.placeholder if real is None else Token(CDATA_RUN, real[1]))
        trial.ps.feed_token(Token(CDATA_CLOSE, ""))
    except LarkError:
        return None
    trial.spec = cap.ctx.g.states[trial.ps.position]
    return trial


def _fork(
    cap: Capture, snap_ps: Any, raw: list[str], raw_len: int, record: BlockRecord, repair: Repair
) -> Capture:
    """A capture that goes on from the parser snapshot ``snap_ps`` with ``raw`` (of
    ``raw_len`` characters) read: a trial of ``cap``'s repair, with its own ``record`` and
    ``repair`` state. (The repair is the capture's end-of-input half: it alone, besides ``Capture``,
    sets a capture's fields.) Cloned by parts: the entry's facts are shared; the parser, the
    text, the run, the record and the checkpoints are the trial's own."""
    twin = object.__new__(Capture)
    # What the trial shares with the capture: what it reads and the entry it began at.
    twin.ctx = cap.ctx
    twin.start = cap.start
    twin.dialect = cap.dialect
    twin.opener_len = cap.opener_len
    twin.strict = cap.strict
    twin.last_value = cap.last_value
    twin.failure = cap.failure
    twin.spec = cap.spec
    twin.ran = False
    # Its own parts.
    twin.ps = cap.ctx.g.parser.fork_parser(snap_ps)
    twin.raw = raw
    twin.raw_len = raw_len
    twin.run = None
    twin.run_text = RunText()  # (empty: the trial's CDATA is closed, its run is over)
    twin.record = record
    twin.checks = Checkpoints()
    twin.repair = repair
    twin.held = HeldTail()
    twin.args = None  # (a trial streams nothing: the end of the input settles its calls)
    return twin


def _adopt(cap: Capture, other: Capture) -> None:
    """``cap`` becomes ``other`` (a trial of it that completed), keeping its argument
    stream (which settles the calls the trial read, ``BlockLife``)."""
    args = cap.args
    for name in Capture.__slots__:
        setattr(cap, name, getattr(other, name))
    cap.args = args

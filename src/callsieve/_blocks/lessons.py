"""Strategy: remember what the failed captures of one stream found out, so that a later
capture bound to fail the same way stops at once instead of reading the same text again
(SPEC §Invariants 4: linear cost, whatever fails where).

What it does. A failed block is released as text and scanned again from just after its
opener (SPEC §7), so every entry inside it starts a capture of its own; without this
module each of those would read on to where the first one failed, which is quadratic in
the failed block's length (and, at the end of the input, in the input's). Four facts are
kept (and a fifth, the brackets balanced runs read, is ``_scan.balanced``'s walks, which
``Lessons`` holds for the stream):

- **Checkpoints.** A capture notes, at every token that ends a run and at every call opener
  (a terminal that can also start a block whose opening wrapper is missing), the absolute
  offset where the token began and its parser's state stack after it: any long stretch of
  a block passes such tokens, and a block that begins inside another begins at an entry,
  so the two meet one soon after their token streams agree. An LR parser's future is a
  function of its stack and the text ahead, and the scanner's tokens of its state and the
  text, so a later capture that reaches a noted (offset, stack) fails as the noted one
  did, and there. Only failures that cannot depend on where a capture began are noted:
  never one over ``max_block_chars`` (a later capture is shorter), and a failure only a
  missing-wrapper capture has (stray text) applies only to such captures; a failure
  reached without the loose-CDATA repair (a repair's trial) applies only to such scans.
- **Where a run stops.** A run whose stop is a fixed text (CDATA's ``]]>``) that was
  searched from offset ``a`` and stopped at ``z`` stops at ``z`` from any offset in
  ``[a, z]`` too: the text holds no stop between. A later capture's run there (every
  capture inside a failed block that holds an unclosed CDATA reaches it) does not search the
  same text again.
- **Runs that reach the end** (at ``close()`` only): a run of one terminal in one parser
  state that went on to the end of the input from offset ``y`` goes on to the end from
  any later offset too, in that state (its stop, or a stop the state takes as content,
  is nowhere after ``y``). A capture there does not take the rest of the input again.
- **Where a terminal matches** (at ``close()`` only): the offsets the loose-CDATA repair
  tries are searched once for the whole rest of the input, then looked up.
- **Where a block may last end** (at ``close()`` only): a capture after the last match of
  any terminal after which a block may end (the grammar's ``block_enders``) cannot
  complete; one that would emit nothing before failing fails at its opener.

What it guarantees: the events are those of reading everything again, as each fact is
true of the text; only a failed block's reported ``span``/``raw`` is shorter (it ends where
its capture stopped reading), with a diagnostic that says why.
What it costs: per checkpoint, one tuple and one dictionary look-up (two once a block has
failed); memory, 16 bytes per checkpoint of the block being read, and one entry per
checkpoint of the failed blocks whose text the scan has not yet passed (``forget``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from typing import Any

from .._grammar.prefix import literal_text
from .._scan.balanced import Walks

__all__ = ["ANY_CAPTURE", "REPAIRABLE", "Lessons"]

#: Flags of a noted checkpoint: the failure holds for a capture with its opening wrapper
#: too (else only for one whose wrapper is missing), and for a scan that may still repair
#: loose CDATA (else only for a repair's trial, which may not).
ANY_CAPTURE = 1
REPAIRABLE = 2
_STACKS_KEPT = 4096  # distinct stacks shared before the table starts afresh
#: Answers "no" an entry's first checkpoint gives before it is asked no more (``asks_first``).
FIRST_MISSES = 16


class Lessons:
    """The facts one sieve's captures share. Sans-IO state of one stream, never shared."""

    __slots__ = (
        "ends",
        "fails",
        "horizon",
        "matches",
        "run_end",
        "stops",
        "walks",
        "_stacks",
        "_firsts",
        "_leads",
        "_noted",
    )

    def __init__(self) -> None:
        #: (offset, state stack) -> (flags, reason)
        self.fails: dict[tuple[int, tuple[int, ...]], tuple[int, str]] = {}
        self.horizon = -1  # the largest offset in ``fails``
        self._noted: deque[tuple[int, tuple[int, ...]]] = deque()  # its keys, as noted
        self._stacks: dict[tuple[int, ...], tuple[int, ...]] = {}  # one copy of each stack
        #: (run terminal, parser state) -> the smallest offset it ran to the end from
        self.run_end: dict[tuple[Any, Any], int] = {}
        #: run terminal (a fixed stop) -> (an offset searched from, the stop found from there)
        self.stops: dict[str, tuple[int, int]] = {}
        #: terminal -> (lowest offset searched from, offsets where it matches from there)
        self.matches: dict[Any, tuple[int, list[int]]] = {}
        #: (offset searched from, the last offset from there where a block may end, or -1)
        self.ends: tuple[int, int] | None = None
        #: what the balanced runs' readers read, by their kind of strings (``_scan.balanced``)
        self.walks: dict[str, Walks] = {}
        #: entry -> 1 once a block of it failed at its first checkpoint with no capture
        #: made (``_blocks.opening``), else minus the times that was asked in vain
        self._firsts: dict[int, int] = {}
        #: the same for its bounded tokens before its first run, read before the end of the
        #: input (``asks_lead``)
        self._leads: dict[int, int] = {}

    # ------------------------------------------------------------------ checkpoints
    def stack_key(self, stack: list[int]) -> tuple[int, ...]:
        """The one shared tuple for a state stack (checkpoints share a few dozen stacks)."""
        t = tuple(stack)
        stacks = self._stacks
        if len(stacks) >= _STACKS_KEPT and t not in stacks:
            stacks.clear()  # (only the memory of equal stacks is shared, never a meaning)
        return stacks.setdefault(t, t)

    def doomed(self, at: int, stack: tuple[int, ...], strict: bool, may_repair: bool) -> str | None:
        """Why a capture at offset ``at`` with ``stack`` fails, if a failed one was there."""
        hit = self.fails.get((at, stack))
        if hit is None:
            return None
        flags, reason = hit
        if not strict and not flags & ANY_CAPTURE:
            return None
        if may_repair and not flags & REPAIRABLE:
            return None
        return reason

    def learn(
        self, offsets: Sequence[int], stacks: Sequence[tuple[int, ...]], flags: int, reason: str
    ) -> None:
        """Note that a capture that read tokens at ``offsets``, with ``stacks`` after them,
        failed for ``reason``."""
        fails = self.fails
        for key in zip(offsets, stacks):
            old = fails.get(key)
            if old is None:
                self._noted.append(key)
            fails[key] = (flags | (old[0] if old is not None else 0), reason)
        if offsets:
            self.horizon = max(self.horizon, offsets[-1])

    def asks_first(self, k: int) -> bool:
        """Is it worth asking whether a block of entry ``k`` fails at its first checkpoint
        (``_blocks.opening``)? Not after ``FIRST_MISSES`` answers "no" and none "yes" in this
        stream: an answer costs a few scanner decisions, and some entries' blocks read on
        into new text at every failure. Either way the events are the same."""
        return _worth_asking(self._firsts, k)

    def asked_first(self, k: int, failed: bool) -> None:
        """The answer for a block of entry ``k`` (``asks_first``)."""
        _count_answer(self._firsts, k, failed)

    def asks_lead(self, k: int) -> bool:
        """Is it worth reading the bounded tokens a block of entry ``k`` opens with, before
        the end of the input, to fail it at once in its first run (``_blocks.opening``)? As
        ``asks_first``: not after ``FIRST_MISSES`` answers "no" and none "yes". Some
        entries' runs begin past the text read again at every failure."""
        return _worth_asking(self._leads, k)

    def asked_lead(self, k: int, failed: bool) -> None:
        """The answer for a block of entry ``k`` (``asks_lead``)."""
        _count_answer(self._leads, k, failed)

    def forget(self, offset: int) -> None:
        """A capture starts at ``offset``: checkpoints before it can no longer be reached.
        Past them all, all are forgotten; else those noted first, while they lie before it
        (a failed capture's checkpoints may all lie past the next capture's start, so
        without this ``fails`` would grow with hostile input, two entries a block)."""
        fails = self.fails
        if not fails:
            return
        noted = self._noted
        if offset > self.horizon:
            fails.clear()
            noted.clear()
            self._stacks.clear()
            return
        while noted and noted[0][0] < offset:
            fails.pop(noted.popleft(), None)

    # ------------------------------------------------------------------ where runs stop
    def stop_from(self, run: Any, offset: int) -> int:
        """Where a run of ``run`` searched from ``offset`` stops, if a search from an offset
        at or before it found a stop at or after it (else -1)."""
        known = self.stops.get(run.name)
        if known is None or not known[0] <= offset <= known[1]:
            return -1
        return known[1]

    @staticmethod
    def notes_stops(run: Any) -> bool:
        """Are where runs of ``run`` stop noted (``stopped``: its stop is a fixed text)?"""
        return _fixed_stop(run.stop_source)

    def stopped(self, run: Any, offset: int, stop: int) -> None:
        """A run of ``run`` searched from ``offset`` stopped at ``stop``: noted if its stop is
        a fixed text (a pattern's stop may look around it, so where it matches may depend on
        more than the text after the search's start)."""
        if _fixed_stop(run.stop_source):
            known = self.stops.get(run.name)
            if known is None or not known[0] <= offset <= known[1]:
                self.stops[run.name] = (offset, stop)

    # ------------------------------------------------------------------ end of input
    def reaches_end(self, run: Any, spec: Any, offset: int) -> bool:
        """Does a run of ``run`` in state ``spec`` from ``offset`` go on to the end?"""
        y = self.run_end.get((run, spec))
        return y is not None and y <= offset

    def ran_to_end(self, run: Any, spec: Any, offset: int) -> None:
        key = (run, spec)
        y = self.run_end.get(key)
        if y is None or offset < y:
            self.run_end[key] = offset

    def no_end_after(self, enders: tuple[Any, ...], text: str, base: int, offset: int) -> bool:
        """At the end of the input: does no terminal after which a block may end (the
        grammar's ``block_enders``) match after ``offset``? Then no capture from there can
        complete. The rest of the input is searched once."""
        if self.ends is None or offset < self.ends[0]:
            last = _last_start([term.pattern for term in enders], text, offset - base)
            self.ends = (offset, base + last if last >= 0 else -1)
        return self.ends[1] <= offset

    def last_starts(self, term: Any, text: str, base: int, lo: int, most: int) -> list[int]:
        """The last ``most`` offsets from ``lo`` on where ``term`` matches ``text`` (whose
        first character is at offset ``base``), in order. The rest of the input is searched
        once: a later question about a later offset is a look-up."""
        known = self.matches.get(term)
        if known is None:
            offsets = [
                base + i for i in _starts(term.pattern, text, lo - base, len(text), len(text))
            ]
            self.matches[term] = (lo, offsets)
        else:
            low, offsets = known
            if lo < low:  # a stretch not searched yet, just before the searched one
                hi = low - base
                more = _starts(
                    term.pattern, text, lo - base, hi, min(len(text), hi + term.reach + 1)
                )
                offsets = [base + i for i in more] + offsets
                self.matches[term] = (lo, offsets)
        return offsets[max(bisect_left(offsets, lo), len(offsets) - most) :]


_FIXED: dict[str, bool] = {}


def _fixed_stop(source: str | None) -> bool:
    """Is a run's stop (its pattern's source) a fixed text? (Memoised: a few runs a grammar.)"""
    if source is None:
        return False
    fixed = _FIXED.get(source)
    if fixed is None:
        fixed = _FIXED[source] = literal_text(source) is not None
    return fixed


#: The first stretch ``_last_start`` searches, at the end of the text (it doubles).
_LAST_WINDOW = 256


def _last_start(patterns: Sequence[re.Pattern[str]], text: str, lo: int) -> int:
    """The last offset from ``lo`` on where one of ``patterns`` matches ``text`` (a search
    from there finds it), or -1. Fast path: stretches searched backwards from the end, each
    twice the last, every pattern in each, so the cost is the distance from the last match
    to the end, not the number of matches (under ``dialects="all"`` a name terminal matches
    every few characters)."""
    hi = len(text) + 1  # (no match starts at or after ``hi``)
    width = _LAST_WINDOW
    while hi > lo:
        a = max(lo, hi - width)
        last = -1
        for pattern in patterns:
            m = pattern.search(text, max(a, last + 1))
            while m is not None and m.start() < hi:
                last = m.start()
                m = pattern.search(text, last + 1)
        if last >= 0:
            return last
        hi = a
        width *= 2
    return -1


def _starts(pattern: Any, text: str, lo: int, hi: int, endpos: int) -> list[int]:
    """The start of every match of ``pattern`` in ``text`` in ``[lo, hi)`` (overlapping
    ones too: the answer does not depend on where the search began), reading no further
    than ``endpos``."""
    out: list[int] = []
    m = pattern.search(text, lo, endpos)
    while m is not None and m.start() < hi:
        out.append(m.start())
        m = pattern.search(text, m.start() + 1, endpos)
    return out


def _worth_asking(answers: dict[int, int], k: int) -> bool:
    """Not after ``FIRST_MISSES`` answers "no" and none "yes" for entry ``k``."""
    return answers.get(k, 0) > -FIRST_MISSES


def _count_answer(answers: dict[int, int], k: int, failed: bool) -> None:
    """One answer for entry ``k``: 1 once one said "yes" (it stays), else minus the "no"s."""
    seen = answers.get(k, 0)
    if seen <= 0:
        answers[k] = 1 if failed else seen - 1

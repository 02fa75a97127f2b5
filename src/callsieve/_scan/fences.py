"""Strategy: track Markdown code (SPEC §6) over released prose, so that a tool block quoted
in a fence or an inline code span stays text.

What it does: ``advance(buf, pos, final, tail)`` walks prose from ``pos`` and returns the
index of the first character that may start a tag *outside code*, or ``len(buf)``. It never
holds text back: a backtick/tilde run or a fence line cut by a chunk boundary is carried as
pending state (how long the run is so far, what the line held so far) and decided when the
next characters arrive.
States: LIVE prose; CODE (inline span opened by a run of N backticks, closed by a run of
exactly N, or ended by a blank line); FENCE (a stack: a fence line with an info string
inside a fence opens a nested one, a bare fence line of the top's character at least as
long closes it). A fence opens on a run of at least three backticks or tildes at the start
of a line (up to three spaces of indentation); the rest of that line is its info string.
Nesting is capped at ``MAX_FENCE_DEPTH`` open fences: with that many open, a fence line with
an info string is content of the innermost fence (it pushes nothing, and no later line pops
for it), while a bare fence line still closes the innermost fence as at any depth.
What it guarantees: decisions depend on the text only, never on where chunks split (the cap
is tested when the first non-blank character after a fence line's run arrives, however the
line was cut).
Memory is bounded whatever the input: the stack holds at most ``MAX_FENCE_DEPTH`` pairs
(character, run length); everything else is counters and single characters; no text is
kept (the caller passes the last four characters before each buffer as ``tail``).
What it costs: LIVE prose is one regex search per buffer; code one search per backtick run
or line; fences one ``find`` per line plus the first few characters of each line; the
line-start check looks back at most four characters.
"""

from __future__ import annotations

import enum
import re
from typing import Any

__all__ = ["MAX_FENCE_DEPTH", "FenceState", "FenceTracker", "lead_search", "tail_after"]

#: At most this many fences are open at once. Markdown in model output nests two or three
#: deep (a ````md fence quoting a ```xml one); 64 is far past any real document, yet keeps
#: the stack a few kilobytes at most: without a cap, 1 MiB of "```x\n" lines would open
#: about 200,000 fences (12 MiB). Past the cap a would-be opener is content (see
#: ``FenceTracker``).
MAX_FENCE_DEPTH = 64


class FenceState(enum.Enum):
    LIVE = "live"
    CODE = "code"
    FENCE = "fence"


# The members as plain module globals, read several times per chunk on the scanning paths
# (benchmarks/README.md, "Fast paths", "enum members as globals").
_LIVE, _CODE, _FENCE = FenceState.LIVE, FenceState.CODE, FenceState.FENCE

_CODE_LEAD = re.compile(r"[`\n]")

# Phases of the line being read inside a fence.
_MID_LINE = 0  # nothing to decide until the next line break
_INDENT = 1  # at most three spaces so far
_RUN = 2  # a run of fence characters
_AFTER = 3  # the run, then only blanks


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _lead_pattern(leads: str) -> re.Pattern[str]:
    """The class of ``leads``, one compiled pattern per set (shared: the contexts that
    switch a tracker's leads find the same one)."""
    found = _PATTERNS.get(leads)
    if found is None:
        found = _PATTERNS[leads] = re.compile("[" + re.escape(leads) + "]")
    return found


def lead_search(tag_leads: str, code: bool) -> Any:
    """The search a tracker given ``tag_leads`` (``use_leads``) stops LIVE prose with."""
    return _lead_pattern(tag_leads + ("`~" if code else "")).search


class FenceTracker:
    __slots__ = (
        "state",
        "span",
        "stack",
        "blank_pending",
        "leads",
        "_live_lead",
        "_tags",
        "run_char",
        "run_len",
        "run_ls",
        "phase",
        "line_n",
        "line_char",
        "line_run",
    )

    def __init__(self, tag_leads: str, code: bool = True) -> None:
        """``code=False``: a tracker that sees no code at all (it stops at tag leads only and
        stays LIVE), for text read without Markdown — reasoning (SPEC §15)."""
        self.state = _LIVE
        self.span = 0  # backtick count of the open inline span
        self.stack: list[tuple[str, int]] = []  # open fences, innermost last, capped
        self.blank_pending = False  # CODE: a line break, then only blanks so far
        self.leads = tag_leads + ("`~" if code else "")  # what LIVE prose stops at
        self._live_lead = _lead_pattern(self.leads)
        self._tags = tag_leads
        self.run_char = ""  # LIVE/CODE: a run cut by the end of the buffer ...
        self.run_len = 0  # ... its length so far ...
        self.run_ls = False  # ... and whether it started a line
        self.phase = _MID_LINE  # FENCE: the current line
        self.line_n = 0
        self.line_char = ""
        self.line_run = 0

    @property
    def depth(self) -> int:
        """How many fences are open (0 outside fences; never more than MAX_FENCE_DEPTH)."""
        return len(self.stack)

    def use_leads(self, tag_leads: str) -> None:
        """Stop at ``tag_leads`` from now on, in place of the tag leads it stopped at (the
        reply's start, where anchored entries lead with more: ``lead_search``)."""
        if tag_leads != self._tags:
            code = self.leads != self._tags  # (a tracker that sees code stops at "`~" too)
            self._tags = tag_leads
            self.leads = tag_leads + ("`~" if code else "")
            self._live_lead = _lead_pattern(self.leads)

    @property
    def live_lead(self) -> re.Pattern[str]:
        """What LIVE prose is searched for: tag lead characters, backticks, tildes."""
        return self._live_lead

    @staticmethod
    def _line_start(buf: str, i: int, tail: str) -> bool:
        """Only up to three spaces stand between the last line break (or the start of the
        text, for which ``tail`` holds a line break) and ``buf[i]``."""
        pre = buf[i - 4 : i] if i >= 4 else (tail[-4:] + buf[:i])[-4:]
        stripped = pre.rstrip(" ")
        return len(pre) - len(stripped) <= 3 and stripped.endswith("\n")

    def _run_done(self, char: str, length: int, line_start: bool) -> None:
        """A backtick/tilde run of ``length`` ended (LIVE or CODE)."""
        self.run_len = 0
        if self.state is _CODE:
            if char == "`" and length == self.span:
                self.state = _LIVE
            return
        if length >= 3 and line_start:
            self.stack.append((char, length))
            self.state = _FENCE
            self.phase = _MID_LINE  # the rest of this line is the info string
        elif char == "`":
            self.state = _CODE
            self.span = length
            self.blank_pending = False

    def advance(self, buf: str, pos: int, final: bool, tail: str) -> int:
        """Index of the next possible tag lead outside code, or ``len(buf)``.
        ``tail``: the last (up to four) characters before ``buf``. In prose (LIVE) a lead
        that is no backtick or tilde is found here; each other step returns where to go on
        (``len(buf)``: nothing more to decide in this buffer): a backtick or tilde run
        (``_lead_run``, or ``_run_goes_on`` for one the previous buffer cut), code
        (``_in_code``), a fence's lines (``_fence_line``)."""
        n = len(buf)
        while pos < n:
            if self.run_len:  # a run cut by the previous buffer goes on here?
                pos = self._run_goes_on(buf, pos, final)
            elif self.state is _LIVE:
                m = self._live_lead.search(buf, pos)
                if m is None:
                    return n
                i = m.start()
                c = buf[i]
                if c != "`" and c != "~":
                    return i
                pos = self._lead_run(buf, i, c, final, self._line_start(buf, i, tail))
            elif self.state is _CODE:
                pos = self._in_code(buf, pos, final)
            else:
                pos = self._fence_line(buf, pos)
        return n

    def _lead_run(self, buf: str, i: int, c: str, final: bool, line_start: bool) -> int:
        """A run of ``c`` (backtick or tilde) from ``buf[i]``: done (``_run_done``), or, cut
        by the end of the buffer, pending (``run_len``)."""
        n = len(buf)
        j = i + 1
        while j < n and buf[j] == c:
            j += 1
        if j == n and not final:
            self.run_char, self.run_len, self.run_ls = c, j - i, line_start
            return n
        self._run_done(c, j - i, line_start)
        return j

    def _run_goes_on(self, buf: str, pos: int, final: bool) -> int:
        """The pending run, cut by the previous buffer, goes on from ``buf[pos]``."""
        n = len(buf)
        c = self.run_char
        j = pos
        while j < n and buf[j] == c:
            j += 1
        self.run_len += j - pos
        if j == n and not final:
            return n
        self._run_done(c, self.run_len, self.run_ls)
        return j

    def _in_code(self, buf: str, pos: int, final: bool) -> int:
        """Inside a code span: a blank line ends an unclosed one; a backtick run may close
        it (``_lead_run``)."""
        n = len(buf)
        if self.blank_pending:
            p = pos
            while p < n and buf[p] in " \t":
                p += 1
            if p == n:
                return n
            self.blank_pending = False
            if buf[p] == "\n":  # a blank line ends an unclosed span
                self.state = _LIVE
                return p + 1
            pos = p
        m = _CODE_LEAD.search(buf, pos)
        if m is None:
            return n
        i = m.start()
        if buf[i] == "\n":
            self.blank_pending = True
            return i + 1
        return self._lead_run(buf, i, "`", final, False)

    def consume(self, text: str, tail: str) -> None:
        """``advance`` over all of ``text``, prose in which the sieve found every tag lead
        dead (its hot path logs such prose and hands it over in one piece). LIVE prose
        without a backtick or a tilde, with no run pending, would change nothing: the
        sieve's fold tests that first and does not call this then."""
        n = len(text)
        pos = self.advance(text, 0, False, tail)
        while pos < n:  # a tag lead outside code, known dead: prose, go on after it
            pos = self.advance(text, pos + 1, False, tail)

    def _fence_line(self, buf: str, pos: int) -> int:
        """Read fence content from ``pos``: skip to line starts, look at each line's first
        characters for a fence line. Returns where to go on (``len(buf)`` when done)."""
        n = len(buf)
        phase = self.phase
        if phase == _MID_LINE:
            nl = buf.find("\n", pos)
            if nl < 0:
                return n
            self.phase, self.line_n = _INDENT, 0
            return nl + 1
        if phase == _INDENT:
            while pos < n and buf[pos] == " " and self.line_n < 3:
                pos += 1
                self.line_n += 1
            if pos == n:
                return n
            c = buf[pos]
            if c == "`" or c == "~":
                self.phase, self.line_char, self.line_run = _RUN, c, 0
            else:
                self.phase = _MID_LINE
            return pos
        if phase == _RUN:
            c = self.line_char
            j = pos
            while j < n and buf[j] == c:
                j += 1
            self.line_run += j - pos
            if j < n:
                self.phase = _AFTER
            return j
        return self._after_fence_run(buf, pos)

    def _after_fence_run(self, buf: str, pos: int) -> int:
        """A line's backtick or tilde run read, then only blanks so far: a bare fence line
        closes the innermost fence (if it is long enough), one with an info string opens a
        nested fence."""
        n = len(buf)
        while pos < n and buf[pos] in " \t\r":
            pos += 1
        if pos == n:
            return n
        if buf[pos] == "\n":  # a bare fence line
            top_char, top_len = self.stack[-1]
            if self.line_char == top_char and self.line_run >= top_len:
                self.stack.pop()
                if not self.stack:
                    self.state = _LIVE
                    self.phase = _MID_LINE
                    return pos + 1
            self.phase, self.line_n = _INDENT, 0
            return pos + 1
        # A fence line with an info string opens a nested fence, unless MAX_FENCE_DEPTH
        # are open: then it is content of the innermost one.
        if self.line_run >= 3 and len(self.stack) < MAX_FENCE_DEPTH:
            self.stack.append((self.line_char, self.line_run))
        self.phase = _MID_LINE
        return pos


def tail_after(tail: str, buf: str, upto: int) -> str:
    """The last (up to four) characters once ``buf[:upto]`` has followed ``tail`` (``tail``
    may be longer than four: only its end counts)."""
    if upto >= 4:
        return buf[upto - 4 : upto]
    return (tail[-4:] + buf[:upto])[-4:] if upto else tail

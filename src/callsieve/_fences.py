"""Strategy: track Markdown code (SPEC §6) over released prose, so that a tool block quoted
in a fence or an inline code span stays text.

What it does: ``advance(buf, pos, final)`` walks prose from ``pos`` and stops at the first
character that may start a tag *outside code* (returns ``(i, True)``), or at the end
(``(len(buf), False)``), or at a position from which the rest must wait for more input
(``(i, False)``): a backtick/tilde run that touches the end of the buffer (its length
decides), or a line inside a fence that might still be the closing fence.
States: LIVE prose; CODE (inline span opened by a run of N backticks, closed by a run of
exactly N, or ended by a blank line); FENCE (a stack: a fence line with an info string
inside a fence opens a nested one, a bare fence line of the top's character at least as
long closes it). A fence opens on a run of at least three backticks or tildes at the start
of a line (up to three spaces of indentation).
What it guarantees: decisions depend on the text only, never on where chunks split.
What it costs: LIVE prose is one regex search per buffer; code and fences one search per
line or backtick run; line-start checks look back at most four characters.
"""

from __future__ import annotations

import enum
import re

__all__ = ["FenceState", "FenceTracker", "tail_after"]


class FenceState(enum.Enum):
    LIVE = "live"
    CODE = "code"
    FENCE = "fence"


_CODE_LEAD = re.compile(r"[`\n]")


class FenceTracker:
    __slots__ = ("_live_lead", "blank_pending", "span", "stack", "state", "tail")

    def __init__(self, tag_leads: str) -> None:
        self.state = FenceState.LIVE
        self.span = 0  # backtick count of the open inline span
        self.stack: list[tuple[str, int]] = []  # open fences, innermost last
        self.blank_pending = False  # CODE: a newline then only blanks up to the buffer end
        self._live_lead = re.compile("[" + re.escape(tag_leads) + "`~]")

    @property
    def live_lead(self) -> re.Pattern[str]:
        """What LIVE prose is searched for: tag lead characters, backticks, tildes."""
        return self._live_lead

    @staticmethod
    def _line_start(buf: str, i: int, tail: str) -> bool:
        """Only up to three spaces stand between the last line break (or the start of the
        text, for which ``tail`` holds a line break) and ``buf[i]``."""
        pre = buf[i - 4:i] if i >= 4 else (tail + buf[:i])[-4:]
        stripped = pre.rstrip(" ")
        return len(pre) - len(stripped) <= 3 and stripped.endswith("\n")

    # ------------------------------------------------------------------ the walk
    def advance(self, buf: str, pos: int, final: bool, tail: str) -> tuple[int, bool]:
        """``tail``: the last (up to four) characters before ``buf``."""
        n = len(buf)
        fence_check_here = True
        while True:
            state = self.state
            if state is FenceState.LIVE:
                m = self._live_lead.search(buf, pos)
                if m is None:
                    return n, False
                i = m.start()
                c = buf[i]
                if c != "`" and c != "~":
                    return i, True
                j = i + 1
                while j < n and buf[j] == c:
                    j += 1
                if j == n and not final:
                    return i, False
                if j - i >= 3 and self._line_start(buf, i, tail):
                    self.stack.append((c, j - i))
                    self.state = FenceState.FENCE
                    fence_check_here = False  # the rest of this line is the info string
                elif c == "`":
                    self.state = FenceState.CODE
                    self.span = j - i
                    self.blank_pending = False
                pos = j
            elif state is FenceState.CODE:
                if self.blank_pending:
                    p = pos
                    while p < n and buf[p] in " \t":
                        p += 1
                    if p == n:
                        return n, False
                    self.blank_pending = False
                    if buf[p] == "\n":
                        self.state = FenceState.LIVE
                        pos = p + 1
                        continue
                    pos = p
                m = _CODE_LEAD.search(buf, pos)
                if m is None:
                    return n, False
                i = m.start()
                if buf[i] == "\n":
                    self.blank_pending = True
                    pos = i + 1
                    continue
                j = i + 1
                while j < n and buf[j] == "`":
                    j += 1
                if j == n and not final:
                    return i, False
                if j - i == self.span:
                    self.state = FenceState.LIVE
                pos = j
            else:
                if fence_check_here and pos < n and (buf[pos - 1] if pos else tail[-1:]) == "\n":
                    ls = pos
                else:
                    nl = buf.find("\n", pos)
                    if nl < 0:
                        return n, False
                    ls = nl + 1
                fence_check_here = False
                r = self._fence_line(buf, ls, final)
                if r < 0:
                    return ls, False  # cannot decide this line yet: hold it
                pos = r

    def _fence_line(self, buf: str, ls: int, final: bool) -> int:
        """Examine the line starting at ``ls`` inside a fence. Returns where to go on, or -1
        when the line may still be a fence line and the buffer ends first."""
        n = len(buf)
        p = ls
        while p < n and p - ls < 3 and buf[p] == " ":
            p += 1
        if p == n:
            return -1 if not final else n
        c = buf[p]
        if c != "`" and c != "~":
            return p
        j = p + 1
        while j < n and buf[j] == c:
            j += 1
        run = j - p
        k = j
        while k < n and buf[k] in " \t\r":
            k += 1
        if k == n and not final:
            return -1
        top_char, top_len = self.stack[-1]
        if k == n or buf[k] == "\n":  # a bare fence line
            if c == top_char and run >= top_len:
                self.stack.pop()
                if not self.stack:
                    self.state = FenceState.LIVE
            return k
        if run >= 3:  # a fence line with an info string opens a nested fence
            self.stack.append((c, run))
        return k


def tail_after(tail: str, buf: str, upto: int) -> str:
    """The last (up to four) characters once ``buf[:upto]`` has followed ``tail``."""
    if upto >= 4:
        return buf[upto - 4:upto]
    return (tail + buf[:upto])[-4:] if upto else tail

"""Strategy: the leaked-output sanitizer (SPEC §13) — ``sanitize_leaked_output(text)`` and the
streaming ``LeakFilter`` — the last line of defence: what looks like protocol never reaches
the user, even when it got past the sieve.

What it does: two stages, each fed text as it comes. The first removes empty ```` ```json ````
fences (``LEAK_EMPTY_FENCE``), holding back a tail that may still become one. The second walks
the rest with a Markdown fence tracker (``_scan.fences``: code spans and fenced code are left as
they are) that stops at each character a leak can start with, and decides there:
- a *tag removed where it stands*: ``<think>`` (when a ``</think>`` follows; without one the
  rest of the text is a dangling think and goes too), ``</think>``, a DeepSeek special token,
  an agent shell tag, and inside a shell its ``<result>`` tags (``_leaks.lark``);
- a *leaked wrapper block*: a default dialect's opener followed, after white space, by a tag,
  up to the first terminal that ends a block; an opener followed by prose is a mention: text;
- *leaked JSON*: a ``[{"`` or ``{"`` whose value ends (``_sanitizer.leak_json.JsonScan``) and is a
  wire-format call array or a tool result (``is_leak``): removed; other JSON is text;
- a tail that may still become any of these (its prefix closure): held back; anything else
  is text.
``LeakFilter.feed(chunk) -> str`` returns what is decided, ``close() -> str`` the rest.
``sanitize_leaked_output(text)`` is one filter fed the whole text.
What it guarantees: the output is the same for every chunking (each decision reads only the
text from its position on, and a position is decided once no later text can change it).
Linear on any input: a tag or tail held is bounded by the longest pattern; an open construct
(an unclosed ``<think>``, a wrapper not yet closed, a JSON value not yet ended) is held as a
list of chunks, and each chunk is searched once — for the awaited closing tag (from its
width before the chunk) or by the JSON scan — and the text is read again once when the
construct is settled; where the next closing tag is is remembered, so ``<think>`` a hundred
thousand times costs one search. Closing tags are searched for in the raw text, code or not;
a leaked JSON value is at most ``MAX_CHARS`` long and a leak nested in JSON that is not one
stays.
What it costs: without leaks, the fence tracker's one search per text and one slice per
chunk; the held text of an open construct until it is settled.
"""

from __future__ import annotations

import json
import re

from .._base.events import Event, Text
from .._scan.fences import FenceTracker, tail_after
from .leak_json import DONE, MORE, JsonScan, is_leak
from .leak_patterns import LeakPatterns, leak_patterns

__all__ = ["EventFilter", "LeakFilter", "sanitize_leaked_output"]

_TEXT, _DROP, _DEAD, _HOLD, _WAIT = range(5)
_WS = re.compile(r"\s*")


def sanitize_leaked_output(text: str) -> str:
    """``text`` without what SPEC §13 lists (see the module docstring)."""
    f = LeakFilter()
    return f.feed(text) + f.close()


class LeakFilter:
    """The sanitizer as a stream (see the module docstring)."""

    __slots__ = (
        "_p",
        "_fences",
        "_fence_held",
        "_buf",
        "_off",
        "_tail",
        "_pieces",
        "_wait",
        "_wait_tail",
        "_shells",
        "_memo",
        "_dead",
    )

    def __init__(self) -> None:
        self._p: LeakPatterns = leak_patterns()
        self._fences = FenceTracker(self._p.leads)
        self._fence_held = ""  # stage 1: a tail that may become an empty fence
        self._buf = ""  # stage 2: the undecided text, from a lead on
        self._off = 0  # ... its offset in stage 2's text
        self._tail = "\n"  # ... and the characters before it (the start is a line start)
        self._pieces: list[str] = []  # an open construct's later text, not yet joined
        self._wait: re.Pattern[str] | JsonScan | None = None  # what settles it
        self._wait_tail = ""  # the last characters held (a closing tag may straddle a chunk)
        self._shells = 0  # agent shells open
        # Where the next closing tag is (start, end; -1: none up to ``end``), by pattern.
        self._memo: dict[re.Pattern[str], tuple[int, int]] = {}
        self._dead = 0  # leads before this offset are inside JSON released as text

    def feed(self, chunk: str) -> str:
        """The text this chunk decides."""
        return self._stage2(self._stage1(chunk, False), False)

    def close(self) -> str:
        """The rest (a dangling ``<think>`` and what follows it removed)."""
        return self._stage2(self._stage1("", True), True)

    # ------------------------------------------------------------------ stage 1
    def _stage1(self, chunk: str, final: bool) -> str:
        p = self._p
        buf = self._fence_held + chunk if self._fence_held else chunk
        if "`" not in buf:
            self._fence_held = ""
            return buf
        out: list[str] = []
        pos = 0
        for m in p.empty_fence.finditer(buf):
            out.append(buf[pos : m.start()])
            pos = m.end()
        keep = len(buf)
        if not final:
            k = buf.find("`", max(pos, len(buf) - p.fence_width))
            while 0 <= k < keep:
                if p.fence_viable.match(buf, k):
                    keep = k
                    break
                k = buf.find("`", k + 1)
        out.append(buf[pos:keep])
        self._fence_held = buf[keep:]
        return "".join(out)

    # ------------------------------------------------------------------ stage 2
    def _stage2(self, text: str, final: bool) -> str:
        wait = self._wait
        if wait is not None and not final and not self._settles(wait, text):
            self._pieces.append(text)
            self._wait_tail = (self._wait_tail + text)[-self._p.close_width :]
            return ""
        if self._pieces:
            self._buf += "".join(self._pieces)
            self._pieces = []
        self._buf += text
        self._wait = None
        return self._run(final) if self._buf else ""

    def _settles(self, wait: re.Pattern[str] | JsonScan, text: str) -> bool:
        if isinstance(wait, JsonScan):
            return wait.feed(text)[0] != MORE
        return wait.search(self._wait_tail + text) is not None

    def _run(self, final: bool) -> str:
        buf = self._buf
        out: list[str] = []
        pos = start = 0
        keep = len(buf)
        while True:
            i = self._fences.advance(buf, pos, final, self._tail)
            if i >= len(buf):
                break
            verdict, end = self._at(buf, i, final)
            if verdict == _TEXT:
                pos = i + 1
            elif verdict == _DEAD:
                self._dead = self._off + end
                pos = i + 1
            elif verdict == _DROP:
                out.append(buf[start:i])
                start = pos = end
            else:  # hold from here, or wait for what settles it
                keep = i
                break
        out.append(buf[start:keep])
        self._tail = tail_after(self._tail, buf, keep)
        self._off += keep
        self._buf = buf[keep:]
        if self._wait is not None:
            self._wait_tail = self._buf[-self._p.close_width :]
        return "".join(out)

    def _find(self, pat: re.Pattern[str], buf: str, i: int) -> int:
        """The end of the first match of ``pat`` at or after ``buf[i]`` (-1: none in ``buf``),
        remembered (absolute offsets: ``(start, end)``, or ``(-1, searched to)``), so a later
        question from a later place reads only text not read yet."""
        off = self._off
        at, to = self._memo.get(pat, (-1, -1))
        if at >= off + i:
            return to - off
        begin = i
        if at < 0 and to >= 0:  # none up to ``to``: only a match reaching past it is new
            if to >= off + len(buf):
                return -1
            begin = max(i, to - off - self._p.close_width)
        m = pat.search(buf, begin)
        if m is None:
            self._memo[pat] = (-1, off + len(buf))
            return -1
        self._memo[pat] = (off + m.start(), off + m.end())
        return m.end()

    def _at(self, buf: str, i: int, final: bool) -> tuple[int, int]:
        """The verdict at a lead ``buf[i]`` (outside code): ``(verdict, end)``."""
        if self._off + i < self._dead:
            return _TEXT, 0
        p = self._p
        m = p.openers.match(buf, i)
        if m is not None:
            j = _WS.match(buf, m.end()).end()  # type: ignore[union-attr]  # (always matches)
            if j >= len(buf):
                return (_TEXT, 0) if final else (_HOLD, 0)
            if buf[j] in p.opener_leads:
                end = self._find(p.enders, buf, m.end())
                if end >= 0:
                    return _DROP, end
                if not final:
                    self._wait = p.enders
                    return _WAIT, 0
            return _TEXT, 0
        m = p.tokens.match(buf, i)
        if m is not None:
            return self._token(m, buf, final)
        m = p.json_open.match(buf, i)
        if m is not None:
            scan = JsonScan()
            status, end = scan.feed(buf, i)
            if status == MORE:
                if final:
                    return _DEAD, len(buf)
                self._wait = scan
                return _WAIT, 0
            if status == DONE:
                try:
                    value = json.loads(buf[i:end])
                except ValueError:
                    return _DEAD, end
                return (_DROP if is_leak(value, p) else _DEAD), end
            return _DEAD, end
        if not final and len(buf) - i <= p.held_width and p.viable.match(buf, i):
            return _HOLD, 0
        return _TEXT, 0

    def _token(self, m: re.Match[str], buf: str, final: bool) -> tuple[int, int]:
        kind, end = m.lastgroup, m.end()
        if kind == "think_open":
            if self._find(self._p.think_close, buf, end) >= 0:
                return _DROP, end
            if final:
                return _DROP, len(buf)  # a dangling think: the rest goes with it
            self._wait = self._p.think_close
            return _WAIT, 0
        if kind == "shell_open":
            self._shells += 1
        elif kind == "shell_close":
            self._shells = max(0, self._shells - 1)
        elif kind in ("result_open", "result_close") and not self._shells:
            return _TEXT, 0
        return _DROP, end


class EventFilter:
    """``sanitize=True``: a sieve's events with each ``Text`` passed through a ``LeakFilter``.
    Before any other event, and at the end, the filter is flushed (its held text settled)
    and a new one begins, so text on either side of a call is filtered apart."""

    __slots__ = ("leaks",)

    def __init__(self) -> None:
        self.leaks = LeakFilter()

    def __call__(self, events: list[Event], final: bool) -> list[Event]:
        out: list[Event] = []
        for e in events:
            if e.__class__ is Text:
                text = self.leaks.feed(e.text)
                if text:
                    out.append(Text(text))
                continue
            self._flush(out)
            out.append(e)
        if final:
            self._flush(out)
        return out

    def _flush(self, out: list[Event]) -> None:
        text = self.leaks.close()
        self.leaks = LeakFilter()
        if text:
            out.append(Text(text))

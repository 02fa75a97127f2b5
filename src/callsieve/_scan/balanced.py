"""Strategy: read one balanced run — a JSON object streamed as a body (``*_JSON_RUN``,
grammar/README.md) — incrementally, to the exact character where the object ends.

What it does: a ``JsonRun`` is made by a capture when such a run starts, and takes the
shared ``TerminalSpec``'s place as the capture's run. Its reader keeps four things: where it
is (before the ``{``, in the value outside strings, in a string, in a string just after a
backslash, past the end), the depth of braces and brackets, whether it failed and why.
``read(buf, p)`` carries that state over ``buf[p:]`` and says where the object ends (the
index just after its closing ``}``), that it goes on, or that it failed: something other
than white space before the ``{`` (or any white space, for the form without ``\\s*``), a
``]`` that would close the object, or nesting deeper than ``MAX_JSON_DEPTH``. Everything
else is left to ``json.loads`` when the call is assembled (``call_json``): the reader only
finds the end, counting braces and brackets alike outside strings.
Text that the sieve's run fast path appended to the run itself (a chunk without ``}``: it
cannot hold the end) is handed over with ``took`` and read then, once.
To the sieve, the run says what it can without reading: before the ``{`` and past the end
every chunk may matter (``stop_char`` None: the sieve asks ``may_stop``, which says yes, and
``find_stop`` says "here": the capture decides); inside the value only a ``}`` can end it
(``stop_char`` ``}``; ``find_stop`` points after the first one, or holds it when it ends the
text, so that the capture sees what follows it).
What it guarantees: the same end, the same failure, for any chunking; each character is read
once; the state is a few integers whatever the input (no stack: depth is a count).
What it costs: outside strings one regex search per brace, bracket or quote; a string is
skipped with one regex match (escapes included), so a megabyte of ``{`` or of backslashes
is read in linear time with a few C calls per chunk.
"""

from __future__ import annotations

import re

from .._grammar.specs import TerminalSpec

__all__ = ["MAX_JSON_DEPTH", "JsonRun"]

#: Braces and brackets nested deeper than this fail the block (real arguments nest a few
#: levels; the bound keeps ``json.loads`` far from its recursion limit on any input).
MAX_JSON_DEPTH = 64

_BEFORE, _VALUE, _STRING, _ESCAPE, _DONE, _FAILED = range(6)
_WS = re.compile(r"\s*")
_SPECIAL = re.compile(r'["{}\[\]]')
_STRING_BODY = re.compile(r'[^"\\]*(?:\\[\s\S][^"\\]*)*')
#: The spec's fields a run copies (the others it sets itself: it reads its own stop).
_SPEC_SLOTS = tuple(
    n for n in TerminalSpec.__slots__ if n not in ("stop_char", "find_stop", "may_stop")
)


class JsonRun(TerminalSpec):
    """One run of a balanced terminal: its spec's fields, and the reader's state."""

    __slots__ = ("mode", "depth", "why", "at")

    def __init__(self, spec: TerminalSpec) -> None:  # (no super().__init__: a copy)
        for name in _SPEC_SLOTS:
            setattr(self, name, getattr(spec, name))
        self.mode = _BEFORE
        self.depth = 0
        self.why = ""
        self.at = 0  # where in the ``buf`` it was reading it failed
        self.stop_char: str | None = None
        self.find_stop = self._find_stop
        self.may_stop = _always

    # ------------------------------------------------------------------ the sieve's view
    def _find_stop(self, buf: str, p: int, final: bool) -> tuple[int, bool]:
        """Where the run may stop (the sieve's question; it reads nothing): inside the value,
        just after the first ``}`` (a ``}`` that ends ``buf`` is a tail: what follows it
        decides); elsewhere, right here."""
        if self.stop_char is None:  # (before the ``{``, past the end, failed)
            return p, False
        i = buf.find("}", p)
        if i < 0:
            return len(buf), False
        if i + 1 == len(buf) and not final:
            return i, True
        return i + 1, False

    # ------------------------------------------------------------------ the reader
    @property
    def done(self) -> bool:
        """The object has ended (the run is complete)."""
        return self.mode == _DONE

    def took(self, pieces: list[str], n: int) -> None:
        """The last ``n`` characters of ``pieces`` were appended to the run unread: read
        them (they hold no ``}`` but maybe at their very end, so the object can end only
        there)."""
        if n <= 0:
            return
        k = len(pieces)
        have = 0
        while have < n and k > 0:
            k -= 1
            have += len(pieces[k])
        first = pieces[k]
        self.read(first, have - n if have > n else 0)
        for piece in pieces[k + 1 :]:
            self.read(piece, 0)

    def read(self, buf: str, p: int) -> int:
        """Read ``buf[p:]``: the index just after the object's closing ``}`` if it ends
        there (the rest is not read), ``len(buf)`` if it goes on, -1 if it failed (``why``
        says how, ``at`` where). Past the end, ``p``; after a failure, -1 (``at``: ``p``)."""
        n = len(buf)
        mode = self.mode
        depth = self.depth
        while p < n:
            if mode == _STRING:
                m = _STRING_BODY.match(buf, p)  # (it always matches, maybe nothing)
                p = m.end() if m is not None else p
                if p >= n:
                    break
                # the string's end, or a backslash that ends the buffer
                mode = _VALUE if buf[p] == '"' else _ESCAPE
                p += 1
            elif mode == _VALUE:
                m = _SPECIAL.search(buf, p)
                if m is None:
                    p = n
                    break
                p = m.end()
                c = m.group()
                if c == '"':
                    mode = _STRING
                elif c in "{[":  # (``_SPECIAL`` matches one character)
                    depth += 1
                    if depth > MAX_JSON_DEPTH:
                        return self._fail(f"JSON nested deeper than {MAX_JSON_DEPTH}", p)
                elif depth > 1:
                    depth -= 1
                elif c == "]":
                    return self._fail("a ']' closes the JSON object", p)
                else:
                    self.mode, self.depth, self.stop_char = _DONE, 0, None
                    return p
            elif mode == _ESCAPE:
                mode = _STRING
                p += 1
            elif mode == _BEFORE:
                p = self._begin(buf, p)
                if p < 0:
                    return -1
                mode, depth = self.mode, self.depth
            elif mode == _DONE:
                return p
            else:
                self.at = p
                return -1
        self.mode = mode
        self.depth = depth
        return n

    def _begin(self, buf: str, p: int) -> int:
        """Before the object: white space (where the run allows it), then its ``{``, from
        which the object is read (``mode`` and ``depth`` set). Where reading goes on —
        ``len(buf)`` after white space only — or -1."""
        if self.lead_ws:
            m = _WS.match(buf, p)
            p = m.end() if m is not None else p
            if p >= len(buf):
                return p
        if buf[p] != "{":
            return self._fail(f"a JSON body must begin with '{{', not {buf[p]!r}", p)
        self.mode, self.depth, self.stop_char = _VALUE, 1, "}"
        return p + 1

    def _fail(self, why: str, at: int) -> int:
        self.mode = _FAILED
        self.why = why
        self.at = at
        self.stop_char = None
        return -1


def _always(chunk: str) -> bool:
    return True

"""Strategy: read one balanced run — a JSON object or list streamed as a body, the rest of one
whose bracket the token before read, or the rest of a Python argument list (grammar/README.md,
"Terminals") — incrementally, to the exact character where it ends.

What it does: a ``JsonRun`` is made by a capture when such a run starts, and takes the
shared ``TerminalSpec``'s place as the capture's run. The spec says its shape: the bracket
that closes it (``closer``: ``}``, ``]`` or ``)``), whether it begins inside (``opened``: the
rest of a value, read from depth 1) or at its opening bracket (white space first if
``lead_ws``), and its strings (``quotes``: ``"`` for JSON, ``"'`` for Python). Its reader keeps
four things: where it is (before the opening bracket, in the value outside strings, in a
string, in a string just after a backslash, past the end), the depth of brackets, which quote
opened the string it is in, whether it failed and why.
``read(buf, p)`` carries that state over ``buf[p:]`` and says where the run ends (the index
just after its closing bracket), that it goes on, or that it failed: something other than
white space before the opening bracket (or any white space, for a form without ``\\s*``), a
closing bracket of another kind where its own would close it (a ``]`` closing an object), or
nesting deeper than ``MAX_JSON_DEPTH``. Everything else is left to the contract node that
reads the text (``call_json``, ``call_kwargs``): the reader only finds the end, counting the
brackets alike outside strings.
Text that the sieve's run fast path appended to the run itself (a chunk without the closer: it
cannot hold the end) is handed over with ``took`` and read then, once.
To the sieve, the run says what it can without reading: before the opening bracket and past
the end every chunk may matter (``stop_char`` None: the sieve asks ``may_stop``, which says
yes, and ``find_stop`` says "here": the capture decides); inside the value only the closer can
end it (``stop_char`` the closer; ``find_stop`` points after the first one, or holds it when it
ends the text, so that the capture sees what follows it).
What it guarantees: the same end, the same failure, for any chunking; each character is read
once; the state is a few integers whatever the input (no stack: depth is a count).
What it costs: outside strings one regex search per bracket or quote; a string is skipped with
one regex match (escapes included), so a megabyte of ``{`` or of backslashes is read in linear
time with a few C calls per chunk.
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
#: What a reader stops at outside strings, by its strings' quotes: JSON's, and Python's (whose
#: argument lists count parentheses too).
_SPECIAL = {'"': re.compile(r'["{}\[\]]'), "\"'": re.compile(r"[\"'{}\[\]()]")}
#: A string's body up to its closing quote or a backslash that ends the text, by its quote.
_STRING_BODY = {q: re.compile(rf"[^{q}\\]*(?:\\[\s\S][^{q}\\]*)*") for q in "\"'"}
_OPENS = {"}": "{", "]": "[", ")": "("}
_WHAT = {"}": "JSON object", "]": "JSON list", ")": "argument list"}
#: The spec's fields a run copies (the others it sets itself: it reads its own stop).
_SPEC_SLOTS = tuple(
    n for n in TerminalSpec.__slots__ if n not in ("stop_char", "find_stop", "may_stop")
)


class JsonRun(TerminalSpec):
    """One run of a balanced terminal: its spec's fields, and the reader's state."""

    __slots__ = ("mode", "depth", "why", "at", "quote", "_special", "_strings")

    def __init__(self, spec: TerminalSpec) -> None:  # (no super().__init__: a copy)
        for name in _SPEC_SLOTS:
            setattr(self, name, getattr(spec, name))
        self.why = ""
        self.at = 0  # where in the ``buf`` it was reading it failed
        self.quote = '"'  # the quote of the string the reader is in
        self._special = _SPECIAL[self.quotes]
        self._strings = _STRING_BODY
        self.stop_char: str | None
        if self.opened:  # (the rest of a value: its opening bracket is read)
            self.mode, self.depth, self.stop_char = _VALUE, 1, self.closer
        else:
            self.mode, self.depth, self.stop_char = _BEFORE, 0, None
        self.find_stop = self._find_stop
        self.may_stop = _always

    # ------------------------------------------------------------------ the sieve's view
    def _find_stop(self, buf: str, p: int, final: bool) -> tuple[int, bool]:
        """Where the run may stop (the sieve's question; it reads nothing): inside the value,
        just after the first closer (one that ends ``buf`` is a tail: what follows it
        decides); elsewhere, right here."""
        closer = self.stop_char
        if closer is None:  # (before the opening bracket, past the end, failed)
            return p, False
        i = buf.find(closer, p)
        if i < 0:
            return len(buf), False
        if i + 1 == len(buf) and not final:
            return i, True
        return i + 1, False

    # ------------------------------------------------------------------ the reader
    @property
    def done(self) -> bool:
        """The value has ended (the run is complete)."""
        return self.mode == _DONE

    def took(self, pieces: list[str], n: int) -> None:
        """The last ``n`` characters of ``pieces`` were appended to the run unread: read
        them (they hold no closer but maybe at their very end, so the value can end only
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
        """Read ``buf[p:]``: the index just after the run's closing bracket if it ends there
        (the rest is not read), ``len(buf)`` if it goes on, -1 if it failed (``why`` says
        how, ``at`` where). Past the end, ``p``; after a failure, -1 (``at``: ``p``)."""
        n = len(buf)
        mode = self.mode
        depth = self.depth
        while p < n:
            if mode == _STRING:
                m = self._strings[self.quote].match(buf, p)  # (it always matches)
                p = m.end() if m is not None else p
                if p >= n:
                    break
                # the string's end, or a backslash that ends the buffer
                mode = _VALUE if buf[p] == self.quote else _ESCAPE
                p += 1
            elif mode == _VALUE:
                m = self._special.search(buf, p)
                if m is None:
                    p = n
                    break
                p = m.end()
                c = m.group()
                if c in "\"'":
                    mode = _STRING
                    self.quote = c
                elif c in "{[(":  # (the special characters' search matches one character)
                    depth += 1
                    if depth > MAX_JSON_DEPTH:
                        return self._fail(f"nested deeper than {MAX_JSON_DEPTH}", p)
                elif depth > 1:
                    depth -= 1
                elif c != self.closer:
                    return self._fail(f"a {c!r} closes the {_WHAT[self.closer]}", p)
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
        """Before the value: white space (where the run allows it), then its opening bracket,
        from which it is read (``mode`` and ``depth`` set). Where reading goes on —
        ``len(buf)`` after white space only — or -1."""
        if self.lead_ws:
            m = _WS.match(buf, p)
            p = m.end() if m is not None else p
            if p >= len(buf):
                return p
        opener = _OPENS[self.closer]
        if buf[p] != opener:
            return self._fail(f"a JSON body must begin with {opener!r}, not {buf[p]!r}", p)
        self.mode, self.depth, self.stop_char = _VALUE, 1, self.closer
        return p + 1

    def _fail(self, why: str, at: int) -> int:
        self.mode = _FAILED
        self.why = why
        self.at = at
        self.stop_char = None
        return -1


def _always(chunk: str) -> bool:
    return True

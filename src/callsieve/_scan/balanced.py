"""Strategy: read one balanced run — a JSON object or list streamed as a body, the rest of one
whose bracket the token before read, or the rest of a Python argument list (grammar/README.md,
"Terminals") — incrementally, to the exact character where it ends.

What it does: a ``JsonRun`` is made by a capture when such a run starts, and takes the
shared ``BalancedSpec``'s place as the capture's run. The spec says its shape: the bracket
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
Text read again. A failed block is scanned again from just after its opener (SPEC §7), so a
run of a later capture may begin inside text a run of an earlier one read: in prose made of
``{"name": "`` every ``{"name":`` is an entry, and each one's body would be read again up to
the nesting limit, 64 brackets a capture. A run that begins where a reader of its kind has read
(``Walks.seen``) notes the brackets it reads outside strings, its *walk* (where each ends, and
the depth after it), and at each one looks for a walk with a step that ends there. Two readers
both outside strings just after the same bracket read the rest alike (what a character does
depends on the string the reader is in, never on the depth) with depths a constant apart, so
the reader goes at once to the first step of that walk where its own depth would be 0 or over
the limit (``_way_out``), or to the walk's end, where it notes on; a run whose depth there ends
it ends (or fails) as if it had read the brackets. Two walks of the same text may be out of
phase (one in a string where the other is not): each is a walk of its own.
A deep run. A run of text read again stops the sieve's fast half at every chunk with its
closer, but in ``[a(`` nested 30 deep most such chunks cannot end it. Its ``DeepProbe`` keeps
bounds on its depth over the text appended since its last read: a chunk with the closer that
keeps the depth within 1..``MAX_JSON_DEPTH`` and the block within ``max_block_chars`` is
appended unread too. Every other chunk the machine reads, as with no probe, so the same
chunks end or fail the run, at the same offsets.
What it guarantees: the same end, the same failure, for any chunking, with or without walks;
each character of new text is read once, and one read again costs a look-up per bracket up to
where it meets a walk; the state is a few integers whatever the input (no stack: depth is a
count), and the walks are bounded (``WALKS_KEPT`` per kind of strings, ``WALK_STEPS`` steps
each, 9 bytes a step).
What it costs: one regex match per bracket. It reads the whole strings before the bracket
too, escapes included (``_SKIP``). A string the text cuts takes one match more. So a megabyte
of ``{`` or of backslashes is read in linear time with a few C calls per chunk. New text
notes nothing (a run of valid calls pays one comparison per run). A bracket of new text in
text read again is noted with two appends, inline. Text read again pays a
bisection per walk at a bracket where a walk may have a step, until it meets one. Where no
walk has a step, none is looked for before the next step of any (``Walks.meet``). Along a
walk, it pays two byte searches and a bisection. A deep run's probe counts the brackets of
the text since the last read at each chunk with the closer: a join and four or six counts.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from .._grammar.specs import BalancedSpec

__all__ = ["MAX_JSON_DEPTH", "DeepProbe", "JsonRun", "Walks"]

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


def _skipping(quotes: str) -> re.Pattern[str]:
    """Outside strings, the text up to the next bracket or the next string that does not
    close within the text: other characters, and whole strings of ``quotes``. One match
    reads them all: a fast path (benchmarks/README.md, "Fast paths", "strings at once")."""
    other = "[^" + re.escape(quotes) + r"{}\[\]" + ("()" if "'" in quotes else "") + "]*"
    strings = "|".join(f"{q}[^{q}\\\\]*(?:\\\\[\\s\\S][^{q}\\\\]*)*{q}" for q in quotes)
    return re.compile(f"{other}(?:(?:{strings}){other})*")


_SKIP = {q: _skipping(q) for q in _SPECIAL}
_OPENS = {"}": "{", "]": "[", ")": "("}
#: The closers and the openers a reader counts, by its strings' quotes (``DeepProbe``).
_COUNTED = {'"': ("}]", "{["), "\"'": ("}])", "{[(")}
_QUOTES = {q: re.compile(f"[{q}]").search for q in _COUNTED}
_WHAT = {"}": "JSON object", "]": "JSON list", ")": "argument list"}
#: The spec's fields a run copies: those the capture and the sieve read of a run (any other is
#: read from the spec, ``__getattr__``; the run sets its own stop: ``stop_char``, ``find_stop``,
#: ``may_stop``). Copying only these is a fast path (benchmarks/README.md, "Fast paths",
#: "run slots").
#: A walk's bound append (``JsonRun._inline``).
_Append = Callable[[int], Any]
_SPEC_SLOTS = ("name", "soft", "lead_ws", "closer", "opened", "quotes")
#: Steps a walk holds (a new one goes on from there); walks kept per kind of strings; the
#: steps a walk has when it is kept (a reader reads a few brackets again as fast as it would
#: look them up).
WALK_STEPS = 4096
WALKS_KEPT = 8
KEEP_FROM = 4


class Walk:
    """Brackets one phase of readers read outside strings, in order from a place on: where
    each ends (``pos``, the offset just after it) and the depth after it, less a constant of
    the reader that noted it, mod 256 (``lvl``)."""

    __slots__ = ("pos", "lvl")

    def __init__(self) -> None:
        self.pos = array("q")
        self.lvl = bytearray()


class Walks:
    """The walks of one stream's balanced runs of one kind of strings (JSON's, Python's):
    what the reader of a later capture meets where it reads what an earlier one read."""

    __slots__ = ("kept", "end", "seen")

    def __init__(self) -> None:
        self.kept: list[Walk] = []
        self.end = -1  # no walk kept goes past this offset
        self.seen = 0  # no reader has read past this one

    def keep(self, w: Walk) -> None:
        """``w`` is kept, in place of the first kept if there are many."""
        kept = self.kept
        if len(kept) >= WALKS_KEPT:
            del kept[0]
        kept.append(w)

    def find(self, at: int, but: Walk | None) -> tuple[Walk, int] | None:
        """A walk other than ``but`` with a step that ends at offset ``at``, and its index.
        A walk that ends before ``at`` is dropped: the captures that read later begin later
        still (a repair's trial that begins before would only read again)."""
        kept = self.kept
        for k in range(len(kept) - 1, -1, -1):
            w = kept[k]
            if w.pos[-1] < at:
                if w is not but:
                    del kept[k]
                continue
            i = _step_at(w, at)
            if i >= 0:
                return w, i
        return None

    def meet(self, at: int, but: Walk | None) -> tuple[Walk, int] | int:
        """``find``, and where no walk has a step at ``at``, the first offset after it where
        a walk other than ``but`` has one (-1: none). Until there a reader notes its
        brackets with no look-up: the walks change only as it notes them in its own."""
        kept = self.kept
        nxt = -1
        for k in range(len(kept) - 1, -1, -1):
            w = kept[k]
            pos = w.pos
            if pos[-1] < at:
                if w is not but:
                    del kept[k]
                continue
            i = bisect_left(pos, at)
            if pos[i] == at:
                return w, i
            if w is not but and (nxt < 0 or pos[i] < nxt):
                nxt = pos[i]
        return nxt


def _step_at(w: Walk, at: int) -> int:
    """The index of ``w``'s step that ends at offset ``at``, or -1."""
    pos = w.pos
    if not pos or at < pos[0] or at > pos[-1]:
        return -1
    i = bisect_left(pos, at)
    return i if pos[i] == at else -1


def _way_out(lvl: bytearray, i: int, shift: int) -> int:
    """The first step after ``i`` where a reader whose depths are the levels plus ``shift``
    is at depth 0 or over the limit, or -1. (The levels are known mod 256, but a step
    changes the depth by one: the reader's first step out of 1..``MAX_JSON_DEPTH`` is at
    one of the two levels, and none before it is.)"""
    zero = lvl.find(-shift & 255, i + 1)
    deep = lvl.find((MAX_JSON_DEPTH + 1 - shift) & 255, i + 1)
    return deep if zero < 0 else zero if deep < 0 else min(zero, deep)


class JsonRun(BalancedSpec):
    """One run of a balanced terminal: its spec's fields, and the reader's state."""

    __slots__ = (
        "mode",
        "depth",
        "why",
        "at",
        "quote",
        "base",
        "walks",
        "walking",
        "walk",
        "shift",
        "until",
        "ahead",
        "probe",
        "_skip",
        "_strings",
        "_spec",
    )

    def __init__(
        self, spec: BalancedSpec, walks: dict[str, Walks] | None = None, start: int = 0
    ) -> None:
        # (``_SPEC_SLOTS``, one store each: no super().__init__, a copy)
        self.name, self.soft, self.lead_ws = spec.name, spec.soft, spec.lead_ws
        self.closer, self.opened, self.quotes = spec.closer, spec.opened, spec.quotes
        self._spec = spec
        self.base = 0  # the offset of the text ``read`` is given (its reader sets it)
        # The walks of this kind of strings (``_meet``); whether this run, which begins at
        # offset ``start``, notes and meets them (it begins where a reader has read: text
        # read again); the walk it notes its brackets in or follows, its depth less that
        # walk's levels, and up to where the walks kept go.
        q = self.quotes
        self.walks = Walks() if walks is None else walks.get(q) or walks.setdefault(q, Walks())
        self.walking = start < self.walks.seen
        self.walk: Walk | None = None
        self.shift = 0
        self.until = self.walks.end
        self.ahead = 0  # nor before this offset (``Walks.meet``)
        self.why = ""
        self.at = 0  # where in the ``buf`` it was reading it failed
        self.quote = '"'  # the quote of the string the reader is in
        self._skip = _SKIP[q]
        self._strings = _STRING_BODY
        self.stop_char: str | None
        self.find_stop = self._find_stop
        self.may_stop = _always
        # A run that reads text read again: once the sieve arms it inside the value, its
        # probe says which chunks with the closer it may append unread (``DeepProbe``).
        self.probe: DeepProbe | None = None
        if self.opened:  # (the rest of a value: its opening bracket is read)
            self.mode, self.depth, self.stop_char = _VALUE, 1, self.closer
        else:
            self.mode, self.depth, self.stop_char = _BEFORE, 0, None

    def __getattr__(self, name: str) -> Any:
        """A field the run does not copy: its spec's."""
        if name == "_spec":  # (not set yet: no spec to ask)
            raise AttributeError(name)
        return getattr(self._spec, name)

    # ------------------------------------------------------------------ the sieve's view
    def _find_stop(self, buf: str, p: int, final: bool) -> tuple[int, bool]:
        """Where the run may stop (the sieve's question; it reads nothing): inside the value,
        just after the first closer (one that ends ``buf`` is a tail: what follows it
        decides); elsewhere, right here. A run with a probe, where ``buf`` holds the closer:
        its end if it ``passes`` (appended unread), else -1 (the machine reads it)."""
        closer = self.stop_char
        if closer is None:  # (before the opening bracket, past the end, failed)
            return p, False
        i = buf.find(closer, p)
        if i < 0:
            return len(buf), False
        if self.probe is not None:
            return (len(buf), False) if self.probe.passes(buf, p) else (-1, False)
        if i + 1 == len(buf) and not final:
            return i, True
        return i + 1, False

    # ------------------------------------------------------------------ the reader
    @property
    def done(self) -> bool:
        """The value has ended (the run is complete)."""
        return self.mode == _DONE

    def took(self, pieces: list[str], n: int, at: int = 0) -> None:
        """The last ``n`` characters of ``pieces`` were appended to the run unread, the first
        of them at offset ``at``: read them (they hold no closer but maybe at their very end,
        so the value can end only there)."""
        if n <= 0:
            return
        k = len(pieces)
        have = 0
        while have < n and k > 0:
            k -= 1
            have += len(pieces[k])
        first = pieces[k]
        skip = have - n if have > n else 0
        self.base = at - skip
        self.read(first, skip)
        at += len(first) - skip
        for piece in pieces[k + 1 :]:
            self.base = at
            self.read(piece, 0)
            at += len(piece)

    def read(self, buf: str, p: int) -> int:
        """Read ``buf[p:]`` (``buf[0]`` at offset ``base``): the index just after the run's
        closing bracket if it ends there (the rest is not read), ``len(buf)`` if it goes on,
        -1 if it failed (``why`` says how, ``at`` where). Past the end, ``p``; after a
        failure, -1 (``at``: ``p``)."""
        n = len(buf)
        mode = self.mode
        depth = self.depth
        base = self.base
        walking = self.walking
        until, ahead = self.until, self.ahead
        # Noting, inline (a fast path: benchmarks/README.md, "Fast paths", "noted inline"):
        # the walk's bound appends and the steps it has room for, once it is kept (``_note``
        # does the rest); the last offset noted, for ``Walks.end`` when the read returns.
        room, to_pos, to_lvl, shift = _NO_ROOM
        skip, quotes = self._skip.match, self.quotes  # (looked up once a read)
        last = 0
        while p < n:
            if mode == _STRING:
                m = self._strings[self.quote].match(buf, p)  # (it always matches)
                p = m.end() if m is not None else p
                if p >= n:
                    break
                # the string's end, or a backslash that ends the buffer
                mode = _VALUE if buf[p] == self.quote else _ESCAPE
                p += 1
                continue
            if mode == _VALUE:
                m = skip(buf, p)  # (it always matches)
                p = m.end() if m is not None else p
                if p >= n:
                    break
                c = buf[p]  # (a bracket, or the quote of a string that does not close)
                p += 1
                if c in quotes:
                    mode = _STRING
                    self.quote = c
                    continue
                depth += 1 if c in "{[(" else -1  # (the search matches one character)
            elif mode == _ESCAPE:
                mode = _STRING
                p += 1
                continue
            elif mode == _BEFORE:
                p = self._begin(buf, p)
                if p < 0:
                    return -1
                mode, depth = self.mode, self.depth
                if mode == _BEFORE:
                    continue
            else:  # (past the end, or failed)
                return self._past(p)
            # A bracket outside strings: in text read again, noted in the walk, or, where an
            # earlier reader in the same phase was, a jump over what it read (``_meet``).
            if walking:
                at = base + p
                if (at > until or at < ahead) and room:
                    to_pos(at)
                    to_lvl((depth - shift) & 255)
                    room -= 1
                    last = at
                elif at > until or at < ahead:
                    self._note(at, depth)
                    room, to_pos, to_lvl, shift = self._inline()
                else:
                    p, depth = self._meet(buf, p, depth)
                    until, ahead = self.until, self.ahead
                    room = 0  # (its walk, or its shift, may be another now)
            if depth == 0 or depth > MAX_JSON_DEPTH:
                return self._end(buf, p, depth, last)
        self.mode = mode
        self.depth = depth
        self._read_to(n, last)
        return n

    def _past(self, p: int) -> int:
        """``read`` past the end (``p``), or after a failure (-1; ``at``: ``p``)."""
        if self.mode == _DONE:
            return p
        self.at = p
        return -1

    def _read_to(self, p: int, last: int = 0) -> None:
        """The reader has read the text up to ``p`` in the text it is given, and noted
        inline up to offset ``last`` (``Walks.end``). Its probe, if any, counts from there."""
        walks = self.walks
        walks.seen = max(walks.seen, self.base + p)
        walks.end = max(walks.end, last)
        if self.probe is not None:
            self.probe.went_on(self.depth, self.mode == _VALUE, self.base + p)

    def _end(self, buf: str, p: int, depth: int, last: int = 0) -> int:
        """The bracket before ``buf[p]`` closes the value (depth 0) or nests too deep (the
        last step noted inline at offset ``last``)."""
        self.walks.end = max(self.walks.end, last)
        if depth > MAX_JSON_DEPTH:
            return self._fail(f"nested deeper than {MAX_JSON_DEPTH}", p)
        c = buf[p - 1]
        if c != self.closer:
            return self._fail(f"a {c!r} closes the {_WHAT[self.closer]}", p)
        self.mode, self.depth, self.stop_char = _DONE, 0, None
        self.may_stop = _always
        self._read_to(p)
        return p

    # ------------------------------------------------------------------ the walks
    def _note(self, at: int, depth: int) -> None:
        """A bracket no earlier reader in this phase read (it ends at offset ``at``): one more
        step of this reader's walk."""
        w = self.walk
        if w is None or len(w.pos) >= WALK_STEPS:
            w = self.walk = Walk()
        pos = w.pos
        pos.append(at)
        w.lvl.append((depth - self.shift) & 255)
        if len(pos) >= KEEP_FROM:
            walks = self.walks
            if len(pos) == KEEP_FROM:
                walks.keep(w)
            walks.end = max(walks.end, at)

    def _inline(self) -> tuple[int, _Append, _Append, int]:
        """After ``_note``: the steps ``read`` may note inline in the walk (those it has room
        for, once it is kept; 0: ``_note`` notes the next one), its two bound appends, and
        the shift of its levels."""
        w = self.walk
        room = _room(w)
        if not room or w is None:
            return _NO_ROOM
        return room, w.pos.append, w.lvl.append, self.shift

    def _meet(self, buf: str, p: int, depth: int) -> tuple[int, int]:
        """A bracket that ends at ``buf[p]``, where earlier readers were: if one was there in
        the same phase (outside strings, after this bracket), its walk is this reader's from
        here on, at the depth this reader has, so read on at once to the first bracket where
        this reader's depth would be 0 or over the limit, or to the walk's end, or to the last
        of its brackets in ``buf``: ``(p, depth)`` there. Else the bracket is noted."""
        at = self.base + p
        w = self.walk
        i = -1 if w is None else _step_at(w, at)
        if w is None or i < 0:
            found = self.walks.meet(at, w)
            if isinstance(found, int):  # (no walk there, nor before ``found``: no look-up)
                if found < 0:
                    self.until = at
                else:
                    self.ahead = found
                self._note(at, depth)
                return p, depth
            w, i = found
            self.walk = w
        lvl = w.lvl
        shift = self.shift = (depth - lvl[i]) & 255
        if depth == 0 or depth > MAX_JSON_DEPTH:
            return p, depth
        j = _way_out(lvl, i, shift)
        last = bisect_right(w.pos, self.base + len(buf)) - 1  # (the last step in ``buf``)
        if j < 0 or j > last:
            j = last
        if j <= i:
            return p, depth
        return w.pos[j] - self.base, (lvl[j] + shift) & 255

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

    def arm(self, pieces: list[str] | None, end: int, room: int) -> None:
        """The sieve arms the run's fast half after a read up to offset ``end``. The half
        appends the chunks it takes to ``pieces`` (the capture's ``RunText``; None: an
        argument stream reads them, and the machine reads each chunk with the closer). The
        block may grow by ``room`` characters before it is longer than ``max_block_chars``.
        A run of text read again, inside its value, gets its probe then (``DeepProbe``)."""
        if not self.walking or self.stop_char is None:
            return
        probe = self.probe
        if probe is None:
            probe = self.probe = DeepProbe(self.closer, self.quotes)
            self.may_stop = probe.may_stop
        probe.went_on(self.depth, self.mode == _VALUE, end)
        probe.arm(pieces, room)

    def _fail(self, why: str, at: int) -> int:
        self._read_to(at)
        self.mode = _FAILED
        self.why = why
        self.at = at
        self.stop_char = None
        self.may_stop = _always
        return -1


class DeepProbe:
    """A fast path (benchmarks/README.md, "Fast paths", "deep runs"): the stop probe of a
    run that reads text read again, inside its value, for a chunk with the closer. Since
    its last read (``went_on``), the sieve appended chunks without the closer unread, as
    it does with no probe. The probe keeps bounds on the run's depth over that text: a
    bracket moves the depth by one at most, so text with ``c`` closers and ``o`` openers
    keeps it within ``c`` below and ``o`` above; outside strings, with no quote since,
    the depth after it is known (``plain``). If the chunk keeps the depth within
    1..``MAX_JSON_DEPTH`` (the run can neither end nor fail) and the block within
    ``max_block_chars`` (``bound``), it is appended unread too, where the machine would
    read it (``passes``). Any other chunk is read, as with no probe: the same chunks fail,
    at the same offsets, and the budget is spent alike (``SieveMachine._read_run``)."""

    __slots__ = (
        "closer",
        "closers",
        "openers",
        "quoted",
        "low",
        "high",
        "plain",
        "end",
        "bound",
        "pieces",
        "seen",
    )

    def __init__(self, closer: str, quotes: str) -> None:
        self.closer = closer
        self.closers, self.openers = _COUNTED[quotes]
        self.quoted = _QUOTES[quotes]
        self.low = self.high = 0  # (the depth's bounds; none until a read: ``went_on``)
        self.plain = False
        # The offset the text counted ends at, the one the block may not pass; the run's
        # pieces (the capture's) and how many of them the probe counted.
        self.end = self.bound = 0
        self.pieces: list[str] | None = None
        self.seen = 0

    def went_on(self, depth: int, plain: bool, end: int) -> None:
        """A read left the run at ``depth`` (``plain``: outside strings), its text read up
        to offset ``end`` (all its pieces): count from here."""
        self.low = self.high = depth
        self.plain = plain
        self.end = end
        if self.pieces is not None:
            self.seen = len(self.pieces)

    def arm(self, pieces: list[str] | None, room: int) -> None:
        """``JsonRun.arm``, after a read."""
        self.pieces = pieces
        self.bound = self.end + room
        if pieces is not None:
            self.seen = len(pieces)

    def may_stop(self, chunk: str) -> bool:
        """The fast half's question for a chunk with the closer: False, it passes."""
        return not self.passes(chunk, 0)

    def passes(self, buf: str, p: int) -> bool:
        """May ``buf[p:]`` be appended unread (it is then counted, and appended next), or
        must the machine read it? (It holds the closer: at depth 1 it may end the run.)"""
        pieces = self.pieces
        if pieces is None or self.low < 2 or not UNREAD_CLOSERS:
            return False
        seen = self.seen
        text = "".join(pieces[seen:]) + buf[p:] if len(pieces) > seen else buf[p:]
        end = self.end + len(text)
        if end > self.bound:
            return False
        down = sum(map(text.count, self.closers))
        up = sum(map(text.count, self.openers))
        if self.low - down < 1 or self.high + up > MAX_JSON_DEPTH:
            return False
        if self.plain and self.quoted(text) is None:
            self.low = self.high = self.low + up - down
        else:  # (in a string, a bracket may not count)
            self.low, self.high, self.plain = self.low - down, self.high + up, False
        self.end = end
        self.seen = len(pieces) + 1
        return True


#: A chunk with the closer that cannot end the run is appended unread (``DeepProbe``; the
#: fast path off: False, the machine reads each, as with no probe).
UNREAD_CLOSERS = True


def _always(chunk: str) -> bool:
    return True


def _room(w: Walk | None) -> int:
    """The steps ``JsonRun.read`` may note in ``w`` inline: those it has room for, once it is
    kept (0: ``_note`` notes the next one)."""
    return WALK_STEPS - len(w.pos) if w is not None and len(w.pos) >= KEEP_FROM else 0


def _ignore(item: int) -> None:
    """No walk to note in yet (``JsonRun.read``'s appends before it has one)."""


#: ``JsonRun._inline`` where there is no room.
_NO_ROOM: tuple[int, _Append, _Append, int] = (0, _ignore, _ignore, 0)

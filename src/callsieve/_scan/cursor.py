"""Strategy: the one owner of the stream's position — what is counted, what is held, and
the three deferred logs of the hot paths — for ``Sieve``.

What it does: ``total`` is the offset just past the text fed so far, less what the logs
hold (text not counted yet); ``held`` is the undecided tail at the end of that text;
``tail`` is the few characters before the text the machine reads next (for the fence
tracker's line-start test). The sieve's hot paths do not count: the prose hot path
appends each chunk to ``log`` through a *budget* (a list of ``HOT_BUDGET`` bound
``log.append``s: popping one is the bound, calling it the record), and ``fold`` later
counts the log and runs the fence tracker and the tail over it in one piece. The run hot
path appends to the capture's own run text (``RunText``, through the budget the capture
hands out), which the capture counts into its length; ``ran`` brings ``total`` up to that
length. ``grown`` holds what only grows the held text (a held candidate, a cut tag read
on); ``take`` counts it.
What it guarantees: nothing else writes the offsets, the held text, the tail or the logs
(the fields are read outside, never assigned; the hot paths only call the bound appends
the cursor hands out); after ``flush`` and ``ran``, ``total - len(held)`` is the
absolute offset of ``held[0]``.
What it costs: a budget costs a pop and a call per hot chunk; a fold or a catch-up is one
join per budget, and a log holds at most ``HOT_BUDGET`` chunks.
"""

from __future__ import annotations

from collections.abc import Callable

from .fences import FenceState, FenceTracker, tail_after

__all__ = ["HOT_BUDGET", "Cursor", "RunText"]

HOT_BUDGET = 256  # chunks a hot path may take between two folds (it holds their references)
_LIVE = FenceState.LIVE


class RunText:
    """The text of a capture's current run, in pieces, and its one writer. The capture adds
    each stretch it reads (``add_piece``, counted as it reads it) and starts every run empty
    (``new_run``, which notes where it began: ``start``); the sieve's run hot path appends the chunks it takes through the
    ``budget`` (bound appends: a pop and a call per chunk), which ``count`` counts, in bulk.
    Each capture has its own (a repair's trial too). Read as ``pieces``."""

    __slots__ = ("pieces", "run_live", "start", "_mark")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.start = 0  # the offset the current run began at
        #: The hot path's budget: bound appends, at most ``HOT_BUDGET`` chunks uncounted.
        self.run_live: list[Callable[[str], None]] = []
        self._mark = 0  # pieces[:_mark] are counted; the hot path appended the others

    def add_piece(self, piece: str) -> None:
        self.pieces.append(piece)
        self._mark = len(self.pieces)

    def new_run(self, start: int = 0) -> None:
        """Begin a run at offset ``start``, or end one (empty)."""
        self.start = start
        self.pieces.clear()
        self._mark = 0

    def budget(self) -> list[Callable[[str], None]]:
        """The hot path's budget, topped up if it is spent (``count`` first: its caller's)."""
        live = self.run_live
        if not live:
            live.extend((self.pieces.append,) * HOT_BUDGET)
        return live

    def count(self) -> int:
        """How many characters the hot path appended since the last count. They are
        joined into one piece: a join costs less than a ``len`` call per piece, and the run
        then keeps one string per budget instead of one per chunk."""
        pieces = self.pieces
        k = self._mark
        if len(pieces) <= k:
            return 0
        if len(pieces) > k + 1:
            pieces[k:] = ["".join(pieces[k:])]
        self._mark = k + 1
        return len(pieces[k])


class Cursor:
    """The stream's position (see the module docstring). The fields are read by the sieve
    and written only here; the buffers change only through these methods and the bound
    appends handed out (``grow``, the budgets)."""

    __slots__ = (
        "total",
        "held",
        "grown",
        "grow",
        "tail",
        "fences",
        "log",
        "prose_live",
        "_refill",
        "_length0",
        "_held0",
    )

    def __init__(self, fences: FenceTracker) -> None:
        self.total = 0
        self.held = ""
        # Text that only grows the held text (a candidate or a cut tag read on): appended
        # through ``grow``, one C call, and joined to ``held`` and counted by ``held_now``.
        # A held candidate is all here (``held`` is "" then), so when it dies the sieve
        # drops it (``drop_grown``) and logs its text, or holds a later lead of it instead
        # (``regrow``): text no one counted, moved from one uncounted log to another.
        self.grown: list[str] = []
        self.grow = self.grown.append
        self.tail = "\n"  # "\n": a line start
        self.fences = fences
        self.log: list[str] = []
        self._refill = (self.log.append,) * HOT_BUDGET
        self.prose_live: list[Callable[[str], None]] = list(self._refill)
        # A run streaming (``begin_run``): the capture's length and the held text's when
        # ``total`` was last in step with them.
        self._length0 = self._held0 = 0

    # ------------------------------------------------------------------ prose
    def prose_budget(self) -> list[Callable[[str], None]]:
        """The prose hot path's budget, topped up (the log folded first) if it is spent."""
        live = self.prose_live
        if not live:
            if self.log:
                self.fold()
            live.extend(self._refill)
        return live

    def fold(self) -> None:
        """Count the logged prose, and bring the fence tracker and the tail over it (no tag
        lead in it could start a tag)."""
        log = self.log
        text = "".join(log)  # (one piece: the piece itself)
        log.clear()
        self.total += len(text)
        fences = self.fences
        # LIVE prose without a backtick or a tilde leaves the fence tracker as it is.
        if fences.state is not _LIVE or fences.run_len or "`" in text or "~" in text:
            fences.consume(text, self.tail)
        self.tail = text if text[-1] > " " else tail_after(self.tail, text, len(text))

    def hold_candidate(self, text: str) -> None:
        """The machine holds a possible opener, ``text`` (counted already): like every held
        candidate, it is kept in ``grown``, uncounted (see ``grown``)."""
        self.total -= len(text)
        self.grown.append(text)

    def held_now(self) -> str:
        """The held text, with what ``grow`` appended joined to it and counted."""
        grown = self.grown
        if grown:
            text = grown[0] if len(grown) == 1 else "".join(grown)
            grown.clear()
            self.total += len(text)
            self.held += text
        return self.held

    def flush(self) -> None:
        """Count everything the hot paths left uncounted but the run's pieces (``ran``):
        the prose log and the held text's growth."""
        if self.log:
            self.fold()
        if self.grown:
            self.held_now()

    def drop_grown(self) -> None:
        """The held candidate died: its text (in ``grown``, uncounted) is the caller's to log
        as prose, uncounted as it was."""
        self.grown.clear()

    def regrow(self, text: str) -> None:
        """The held candidate is now ``text`` (a later lead of the one that died), uncounted;
        the caller logs what came before it."""
        self.grown.clear()
        self.grown.append(text)

    def use_fences(self, fences: FenceTracker) -> None:
        """The fence tracker the logged prose is run through from now on (reasoning's sees
        no code, SPEC §15)."""
        self.fences = fences

    def hold(self, text: str) -> None:
        """The machine holds ``text``, the end of the buffer it read (counted already)."""
        self.held = text

    def take(self, chunk: str) -> tuple[str, int]:
        """The machine reads the held text and ``chunk``: ``(buf, resume)`` — the buffer
        and how much of it was seen before (the held text). ``buf`` ends at ``total``
        (the prose log is folded first: ``flush``)."""
        held = self.held
        n = len(chunk)
        grown = self.grown
        if grown:  # (the held text's growth and the chunk, joined and counted at once)
            grown.append(chunk)
            chunk = "".join(grown)
            grown.clear()
        self.total += len(chunk)
        if held:
            self.held = ""
            return held + chunk, len(held) + len(chunk) - n
        return chunk, len(chunk) - n

    def take_joined(self, text: str, n: int) -> tuple[str, int]:
        """``take`` for a caller that has joined the held text, its growth and a chunk of
        ``n`` characters into ``text`` already (CUT_TAG, to ask whether the tag is done)."""
        self.grown.clear()
        self.total += len(text) - len(self.held)
        self.held = ""
        return text, len(text) - n

    def passed(self, buf: str, upto: int) -> None:
        """The machine has read ``buf[:upto]`` (the tail follows it)."""
        self.tail = tail_after(self.tail, buf, upto)

    # ------------------------------------------------------------------ runs
    def begin_run(self, length: int) -> None:
        """A capture's run streams on from here (the capture's hot path appends to it:
        ``RunText``); ``length``: the capture's length now."""
        self._length0 = length
        self._held0 = len(self.held)

    def hold_run(self, text: str) -> None:
        """The run's reader holds ``text``, a tail that may begin the run's stop (not
        counted: ``ran`` counts it)."""
        self.held = text

    def ran(self, length: int) -> None:
        """The capture whose run streams has grown to ``length`` (its count of what the hot
        path appended, ``RunText.count``): ``total`` comes up to it and the held text."""
        held = len(self.held)
        self.total += length - self._length0 + held - self._held0
        self._length0 = length
        self._held0 = held

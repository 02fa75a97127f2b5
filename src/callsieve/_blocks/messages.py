"""Strategy: the failure message a capture records when its parser state meets something it
does not accept — and the same message read back, for ``callsieve parse --explain``.

What it does: ``unexpected(cap, what, at, found)`` is the message of a capture that met
something its parser state does not accept: where (the offset in the whole input), the
terminals the state accepts there (its LALR row, and its run), and the text found (at most
``FOUND_CHARS`` characters). ``read_failure(message, text)`` reads such a message back into
``offset``, ``expected`` and ``found`` (the view in ``_facade.explain``), so the message's
shape is written in this one module.
What it guarantees: the capture's hot paths are untouched — this runs once per failure.
What it costs: one table row read per parser state that fails (kept on its ``StateSpec``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .._grammar.lark_internals import state_row

if TYPE_CHECKING:
    from .capture import Capture

__all__ = [
    "FOUND_CHARS",
    "INPUT_ENDED",
    "expected_terminals",
    "json_body_failed",
    "read_before",
    "read_failure",
    "too_long",
    "unexpected",
]

#: How much of the text found where a block failed its message quotes.
FOUND_CHARS = 24
_EXPECTED = "; expected one of: "
_FOUND = "; found "
_AT = re.compile(r"at offset (\d+)")
#: The failure of a block still open where the input ends (``_blocks.repair.finish``).
INPUT_ENDED = "the input ended inside the block"


def too_long(limit: int) -> str:
    """The failure of a block longer than ``max_block_chars``."""
    return f"block longer than max_block_chars ({limit})"


def read_before(why: str, at: int) -> str:
    """A capture stopped where a failed one was (``_blocks.lessons``): its failure, from ``at``."""
    return f"{why} (as a block read before found, from offset {at})"


def json_body_failed(offset: int, why: str) -> str:
    """The failure of a balanced run (a JSON body) that began at ``offset``: ``why``."""
    return f"the JSON body from offset {offset} fails: {why}"


def expected_terminals(cap: Capture) -> str:
    """The terminals the capture's parser state accepts (its LALR row), and its run's, as
    the message lists them; worked out at the state's first failure, then kept on its
    ``StateSpec`` (hostile input fails a block every few characters)."""
    state = cap.ps.state_stack[-1]
    spec = cap.ctx.g.states[state]
    if spec.expected is None:
        row = state_row(cap.ps, state)
        names = [str(n) for n in row if str(n).upper() == str(n)]  # (terminals, not rules)
        run = spec.run
        if run is not None and run.name not in names:
            names.append(run.name)
        spec.expected = ", ".join(sorted(names))
    return spec.expected


def unexpected(cap: Capture, what: str, at: int, found: str) -> str:
    """The failure message of ``cap`` at absolute offset ``at``."""
    return (
        f"unexpected {what} at offset {at}{_EXPECTED}{expected_terminals(cap)}"
        f"{_FOUND}{found[:FOUND_CHARS]!r}"
    )


def read_failure(message: str, text: str) -> dict[str, Any]:
    """A failure message read back: the message, and where it says: the offset, the
    expected terminals and the text found there (from ``text``, the whole input)."""
    out: dict[str, Any] = {"message": message}
    m = _AT.search(message)
    if m is not None:
        offset = int(m.group(1))
        out["offset"] = offset
        out["found"] = text[offset : offset + FOUND_CHARS]
    if _EXPECTED in message:
        listed = message.split(_EXPECTED, 1)[1].split(_FOUND, 1)[0]
        out["expected"] = listed.split(", ")
    return out

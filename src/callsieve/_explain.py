"""Strategy: say why a block did not become a call — the failure message a capture records,
and the ``callsieve parse --explain`` view of a result.

What it does: ``unexpected(cap, what, at, found)`` is the message of a capture that met
something its parser state does not accept: where (the offset in the whole input), the
terminals the state accepts there (its LALR row, and its run), and the text found (at most
``FOUND_CHARS`` characters). ``explain_json(result)`` is the view ``--explain`` prints: each
block with its span, dialect, status, repairs, diagnostics, the calls it gave and the
policy's decisions on its calls, and for a failed block ``failure``: ``offset``,
``expected``, ``found`` and the message, read back from that message.
What it guarantees: the capture's hot paths are untouched — this runs once per failure; the
view is derived from what ``parse()`` returns (plus the input text, to show what was found).
What it costs: one table row read per failure; the view is linear in the result.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._capture import Capture
    from ._results import ParseResult

__all__ = ["FOUND_CHARS", "explain_json", "unexpected"]

#: How much of the text found where a block failed its message quotes.
FOUND_CHARS = 24
#: How much of a block's text the view shows.
SHOWN_CHARS = 80
_EXPECTED = "; expected one of: "
_FOUND = "; found "
_AT = re.compile(r"at offset (\d+)")


def expected_terminals(cap: Capture) -> str:
    """The terminals the capture's parser state accepts (its LALR row), and its run's, as
    the message lists them; worked out at the state's first failure, then kept on its
    ``StateSpec`` (hostile input fails a block every few characters)."""
    state = cap.ps.state_stack[-1]
    spec = cap.g.states[state]
    if spec.expected is None:
        row = cap.ps.parse_conf.parse_table.states[state]
        names = [str(n) for n in row if str(n).upper() == str(n)]  # (terminals, not rules)
        run = spec.run
        if run is not None and run.name not in names:
            names.append(run.name)
        spec.expected = ", ".join(sorted(names))
    return spec.expected


def unexpected(cap: Capture, what: str, at: int, found: str) -> str:
    """The failure message of ``cap`` at absolute offset ``at``."""
    return (f"unexpected {what} at offset {at}{_EXPECTED}{expected_terminals(cap)}"
            f"{_FOUND}{found[:FOUND_CHARS]!r}")


def _failure(message: str, text: str) -> dict[str, Any]:
    """A failure message read back: offset, expected terminals, the text found there."""
    out: dict[str, Any] = {"message": message}
    m = _AT.search(message)
    if m is not None:
        offset = int(m.group(1))
        out["offset"] = offset
        out["found"] = text[offset:offset + FOUND_CHARS]
    if _EXPECTED in message:
        listed = message.split(_EXPECTED, 1)[1].split(_FOUND, 1)[0]
        out["expected"] = listed.split(", ")
    return out


def explain_json(result: ParseResult, text: str) -> dict[str, Any]:
    """What ``callsieve parse --explain`` prints (see the module docstring)."""
    blocks = []
    for b in result.blocks:
        start, end = b.span
        record: dict[str, Any] = {
            "span": [start, end], "dialect": b.dialect, "status": b.status,
            "text": b.raw if len(b.raw) <= SHOWN_CHARS else b.raw[:SHOWN_CHARS] + "…",
            "repairs": list(b.repairs), "diagnostics": list(b.diagnostics),
            "policy": [{"call": r.name, "rejected": r.reason, "action": r.action,
                        "span": list(r.span)}
                       for r in result.rejections if start <= r.span[0] < end],
        }
        if b.status == "failed" and b.diagnostics:
            record["failure"] = _failure(b.diagnostics[-1], text)
        blocks.append(record)
    calls = [{"name": c.name, "input": c.input, "dialect": c.dialect,
              "repairs": list(c.repairs), "coercions": list(c.coercions)}
             for c in result.calls]
    return {"blocks": blocks, "calls": calls,
            "rejected_tool_names": list(result.rejected_tool_names)}

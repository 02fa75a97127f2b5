"""Strategy: the ``callsieve parse --explain`` view of a result — why each block did or did
not become a call.

What it does: ``explain_json(result, text)`` is the view ``--explain`` prints: each block
with its span, dialect, status, repairs, diagnostics, the calls it gave and the policy's
decisions on its calls, and for a failed block ``failure``: ``offset``, ``expected``,
``found`` and the message, read back from that message (``_blocks.messages``, which writes
it); then ``reasoning``: whether the input ended inside it (``unclosed``) and each
``</think>`` that closed nothing under ``reasoning="tags"`` (``stray_closes``: its offset
and the text found there — the sign of a chat template that wrote ``<think>`` itself).
What it guarantees: the view is derived from what ``parse()`` returns (plus the input text,
to show what was found).
What it costs: linear in the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._blocks.messages import FOUND_CHARS, read_failure

if TYPE_CHECKING:
    from .results import ParseResult

__all__ = ["explain_json"]

#: How much of a block's text the view shows.
SHOWN_CHARS = 80


def explain_json(result: ParseResult, text: str) -> dict[str, Any]:
    """What ``callsieve parse --explain`` prints (see the module docstring)."""
    blocks = []
    for b in result.blocks:
        start, end = b.span
        record: dict[str, Any] = {
            "span": [start, end],
            "dialect": b.dialect,
            "status": b.status,
            "text": b.raw if len(b.raw) <= SHOWN_CHARS else b.raw[:SHOWN_CHARS] + "…",
            "repairs": list(b.repairs),
            "diagnostics": list(b.diagnostics),
            "policy": [
                {"call": r.name, "rejected": r.reason, "action": r.action, "span": list(r.span)}
                for r in result.rejections
                if start <= r.span[0] < end
            ],
        }
        if b.status == "failed" and b.diagnostics:
            record["failure"] = read_failure(b.diagnostics[-1], text)
        blocks.append(record)
    calls = [
        {
            "name": c.name,
            "input": c.input,
            "dialect": c.dialect,
            "repairs": list(c.repairs),
            "coercions": list(c.coercions),
        }
        for c in result.calls
    ]
    return {
        "blocks": blocks,
        "calls": calls,
        "rejected_tool_names": list(result.rejected_tool_names),
        "reasoning": {
            "unclosed": result.reasoning_unclosed,
            "stray_closes": [
                {"offset": at, "found": text[at : at + FOUND_CHARS]}
                for at in result.stray_reasoning_closes
            ],
        },
    }

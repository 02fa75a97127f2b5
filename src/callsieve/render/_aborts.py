"""Strategy: what every renderer does alike when a call it began to send aborts (SPEC §17) —
the ``on_abort`` choice, read once when a renderer is built, one wording of why, and how a
cut-off reply's finish reason reads — so the four APIs say the same thing their own way.

What it does: ``on_abort="error"`` (the default): a call that started and then aborts
(``CallAborted``: its block failed, the reply was cut off inside it, the policy rejected it,
or it is sent again from its start) ends the reply with the API's own error signal, so the
client's SDK raises instead of holding a partial call; ``"continue"`` keeps the reply going
as before this choice existed (the wire keeps what it sent; docs/rendering.md shows both).
``why(abort, name)`` is the error's ``code`` (``tool_call_failed``, ``tool_call_cut_off``,
``tool_call_rejected``, ``tool_call_resent``) and message. A reply is *cut off* when a call
aborts because the input ended inside it, or, for a whole result, when its last block is
one the end of the input left unfinished (``cut_off(blocks)``); its finish reason then says
so (``finish_after_cut``): OpenAI's natural reasons (``None``, ``"stop"``,
``"tool_calls"``) become ``"length"``, which each renderer writes its API's way; any other
reason the caller gives is kept.
What it costs: nothing per event; a few string operations per abort.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .._base.errors import ConfigurationError
from .._base.events import Block, CallAborted

__all__ = ["ON_ABORT", "Why", "cut_off", "ends_reply", "finish_after_cut", "why"]

#: What a renderer does when a call it began to send aborts.
ON_ABORT = ("error", "continue")
_NATURAL = (None, "stop", "tool_calls")  # the model ended on its own (OpenAI's names)
# What the sieve's diagnostic says when the input ended inside a block (``_capture``,
# ``_repair``; ``_metrics`` reads the same words).
_ENDED = "input ended"
_RESENT_WHY = {
    "repeated_name": "a parameter name repeats",
    "text_before_cdata": "plain text came before CDATA in one value",
    "loose_cdata": "the loose-CDATA repair closed a value at the end of the input",
    "repeated_key": "a key repeats in its JSON arguments",
    "renamed": "a later part of the call gave its name or id",
    "rewritten": "its arguments differ from what streamed",
}


class Why(NamedTuple):
    """An abort as the error says it: ``code``, ``message``, and whether the reply was cut
    off (``cut``)."""

    code: str
    message: str
    cut: bool


def ends_reply(on_abort: str) -> bool:
    """Whether ``on_abort`` (checked: one of ``ON_ABORT``) ends the reply at an abort."""
    if on_abort not in ON_ABORT:
        raise ConfigurationError(
            f"on_abort must be one of {ON_ABORT!r}, got {on_abort!r}", expected=ON_ABORT
        )
    return on_abort == "error"


def why(abort: CallAborted, name: str) -> Why:
    """The error for ``abort`` (a reply event: ``index`` is the call's number in the reply)
    of the call ``name``."""
    call = f"the tool call {name!r} (call {abort.index} of the reply)"
    reason = abort.reason
    if reason == "cut_off":
        return Why(
            "tool_call_cut_off", f"the reply was cut off inside {call}: it is not a call", True
        )
    if reason == "rejected":
        return Why(
            "tool_call_rejected",
            f"{call} was rejected by the tool policy after it began to stream: it is not a call",
            False,
        )
    if abort.resent:
        detail = _RESENT_WHY.get(reason, reason)
        return Why(
            "tool_call_resent",
            f"{call} was sent again from its start ({detail}): what streamed of it is "
            "void, and the reply ends here",
            False,
        )
    return Why(
        "tool_call_failed",
        f"{call} broke off after it began to stream (its block did not parse): it is not a call",
        False,
    )


def finish_after_cut(finish_reason: str | None) -> str | None:
    """The finish reason of a reply that was cut off: ``"length"`` for a natural one, else
    the caller's."""
    return "length" if finish_reason in _NATURAL else finish_reason


def cut_off(blocks: Iterable[Block]) -> bool:
    """Whether the reply ended inside a tool-call block: the model was writing a call when its
    text stopped. ``blocks`` is ``ParseResult.blocks`` or ``Sieve.blocks`` (which keeps a
    block the end of the input left unfinished, released as text by ``close()``): the last
    one did not complete, its last diagnostic says the input ended inside it, and it was not
    read as reasoning text (SPEC §15: its calls were never calls)."""
    last: Block | None = None
    for last in blocks:
        pass
    return (
        last is not None
        and last.status != "complete"
        and last.reasoning != "text"
        and bool(last.diagnostics)
        and _ENDED in last.diagnostics[-1]
    )

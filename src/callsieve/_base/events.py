"""Strategy: the value classes the sieve hands out — events, calls, blocks.

What it guarantees: every class is small, immutable by convention, slotted, compares by value
and has a readable repr; collections are tuples, never lists. What it costs: these objects
are created on the per-chunk path (one ``Text`` per chunk of prose), so they are plain
slotted classes with a hand-written ``__init__`` (about half the cost of a frozen dataclass
on this machine) and no validation.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "ABORT_REASONS",
    "RESENT",
    "ArgumentsDelta",
    "Block",
    "CallAborted",
    "CallFinished",
    "CallStarted",
    "Event",
    "Reasoning",
    "Text",
    "ToolCall",
    "ToolCalls",
]


class _Value:
    """Equality, hashing and repr from ``__slots__``; subclasses only list their fields."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, repr(self._fields())))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__name__}({inner})"


class ToolCall(_Value):
    """One structured call: ``name`` and ``input`` (a dict), plus where it came from:
    ``repairs`` (the block's, SPEC §4) and ``coercions`` (each value the tool's schema had
    changed, ``"<path>: string -> <type>"``, ``_config.policy``)."""

    __slots__ = ("name", "input", "id", "dialect", "repairs", "coercions")

    def __init__(
        self,
        name: str,
        input: dict[str, Any],
        id: str = "",
        dialect: str = "",
        repairs: tuple[str, ...] = (),
        coercions: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.input = input
        self.id = id
        self.dialect = dialect
        self.repairs = repairs
        self.coercions = coercions

    @property
    def arguments(self) -> str:
        """``input`` as the compact JSON text OpenAI-style clients expect."""
        return json.dumps(self.input, ensure_ascii=False, separators=(",", ":"))


class Block(_Value):
    """A captured tool-call block.

    ``span`` is ``(start, end)`` in offsets of the whole input; ``raw`` is exactly
    ``input[start:end]``. ``status`` is ``"complete"`` (the block closed and produced
    calls), ``"failed"`` (released as text) or ``"partial"``, which marks part of a block
    under ``early_emit="invoke"``: in ``ParseResult.blocks``, a block whose first calls went
    out before it broke off; on a ``ToolCalls`` event, the stretch up to a call emitted while
    the block was still open (the event that closes the block is ``"complete"``).
    ``reasoning`` is None for a block in the answer; for one inside reasoning (SPEC §15), the
    ``calls_in_reasoning`` choice it was read under: ``"text"`` (it went out as reasoning
    text, its calls were not emitted) or ``"call"`` (its calls were); or ``"ended"``: its
    dialect's models open calls in a thought they never close, so its opener ended the
    thought and its calls were emitted.
    """

    __slots__ = ("span", "dialect", "status", "repairs", "diagnostics", "raw", "reasoning")

    def __init__(
        self,
        span: tuple[int, int],
        dialect: str,
        status: str,
        repairs: tuple[str, ...] = (),
        diagnostics: tuple[str, ...] = (),
        raw: str = "",
        reasoning: str | None = None,
    ) -> None:
        self.span = span
        self.dialect = dialect
        self.status = status
        self.repairs = repairs
        self.diagnostics = diagnostics
        self.raw = raw
        self.reasoning = reasoning


class Text(_Value):
    """Text for the user, released as soon as it cannot be part of a tool block."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Reasoning(_Value):
    """The model's reasoning (SPEC §15), released as soon as it cannot be part of a tag.

    ``text`` is the reasoning; ``raw`` the input the event stands for when that is not
    ``text`` itself: the ``<think>`` and ``</think>`` tags come as events of their own with
    empty ``text`` and the tag in ``raw`` (so a server sees where reasoning starts and ends,
    and the events still hold every character of the input). ``source`` is either way the
    input it stands for.
    """

    __slots__ = ("text", "raw")

    def __init__(self, text: str, raw: str | None = None) -> None:
        self.text = text
        self.raw = raw

    @property
    def source(self) -> str:
        """The input this event stands for (``raw``, else ``text``)."""
        return self.text if self.raw is None else self.raw


class ToolCalls(_Value):
    """Calls parsed from one block (with ``early_emit="invoke"``: from one invoke)."""

    __slots__ = ("calls", "block")

    def __init__(self, calls: tuple[ToolCall, ...], block: Block) -> None:
        self.calls = calls
        self.block = block


class CallStarted(_Value):
    """Argument streaming: a call's name is known."""

    __slots__ = ("index", "id", "name")

    def __init__(self, index: int, id: str, name: str) -> None:
        self.index = index
        self.id = id
        self.name = name


class ArgumentsDelta(_Value):
    """Argument streaming: the next fragment of the call's arguments JSON."""

    __slots__ = ("index", "delta")

    def __init__(self, index: int, delta: str) -> None:
        self.index = index
        self.delta = delta


class CallFinished(_Value):
    """Argument streaming: the call is complete."""

    __slots__ = ("index", "call")

    def __init__(self, index: int, call: ToolCall) -> None:
        self.index = index
        self.call = call


#: Why a started call aborted (``CallAborted.reason``): its block ``"failed"``; the input
#: ended inside it (``"cut_off"``, at ``close()``); the policy ``"rejected"`` it; or it is sent
#: again, whole, under the next index (``RESENT``), because what streamed is not the start of
#: its arguments: a parameter name that repeats, plain text before CDATA in one body, a
#: CDATA the loose-CDATA repair closed, a key that repeats in a JSON body, a name or id a
#: later node gave, or any other difference (``"rewritten"``; docs/streaming.md, "When a
#: call is sent again").
ABORT_REASONS = (
    "failed",
    "cut_off",
    "rejected",
    "repeated_name",
    "text_before_cdata",
    "loose_cdata",
    "repeated_key",
    "renamed",
    "rewritten",
)
RESENT = frozenset(ABORT_REASONS[3:])


class CallAborted(_Value):
    """Argument streaming: a started call turned out not to be one; ``reason`` says why (one
    of ``ABORT_REASONS``; ``resent``: the call follows again, whole, under the next index)."""

    __slots__ = ("index", "reason")

    def __init__(self, index: int, reason: str = "failed") -> None:
        self.index = index
        self.reason = reason

    @property
    def resent(self) -> bool:
        """The call is sent again, whole, under the next index (``RESENT``)."""
        return self.reason in RESENT


Event = Text | Reasoning | ToolCalls | CallStarted | ArgumentsDelta | CallFinished | CallAborted

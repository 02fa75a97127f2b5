"""Strategy: the value classes the sieve hands out — events, calls, blocks.

What it guarantees: every class is small, slotted and immutable (a field is a read-only
name over a private slot: assigning or deleting it raises ``AttributeError``), compares by
value and has a readable repr; collections are tuples, never lists. Equal values hash equal. ``ToolCall``, and the events that carry
one (``ToolCalls``, ``CallFinished``), are unhashable by design: a call's ``input`` is a
``dict``. Statuses and reasons are ``Literal`` types (``BlockStatus``, ``AbortReason``).
What it costs: these objects are created on the per-chunk path (one ``Text`` per chunk of
prose), so they are plain slotted classes with a hand-written ``__init__`` (about half the
cost of a frozen dataclass) and no validation.
"""

from __future__ import annotations

import json
import operator
from typing import Any, Literal, TypeVar, get_args

__all__ = [
    "ABORT_REASONS",
    "BLOCK_STATUSES",
    "RESENT",
    "AbortReason",
    "ArgumentsDelta",
    "Block",
    "BlockStatus",
    "CallAborted",
    "CallFinished",
    "CallStarted",
    "Event",
    "Reasoning",
    "Text",
    "ToolCall",
    "ToolCalls",
    "value",
]

#: What became of a captured block (``Block.status``; see ``Block``).
BlockStatus = Literal["complete", "partial", "failed", "frame"]
BLOCK_STATUSES: tuple[BlockStatus, ...] = get_args(BlockStatus)


class _Value:
    """Equality, hashing and repr from ``__slots__``; subclasses list their fields there as
    private slots (``_text``), which ``value`` turns into read-only public names (``text``)."""

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
        return hash((self.__class__, self._fields()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name[1:]}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__name__}({inner})"


_C = TypeVar("_C", bound=type)


def value(cls: _C) -> _C:
    """Give each private slot of ``cls`` (``_text``) a read-only public name (``text``): a
    property over the slot, so reading costs one C call, building costs nothing more, and
    assigning or deleting the public name raises ``AttributeError``."""
    slots: tuple[str, ...] = cls.__dict__["__slots__"]
    for slot in slots:
        setattr(cls, slot[1:], property(operator.attrgetter(slot), doc=f"The value's {slot[1:]}."))
    return cls


@value
class ToolCall(_Value):
    """One structured call: ``name`` and ``input`` (a dict), plus where it came from:
    ``repairs`` (the block's, SPEC §4) and ``coercions`` (each value the tool's schema had
    changed, ``"<path>: string -> <type>"``, ``_config.policy``)."""

    __slots__ = ("_name", "_input", "_id", "_dialect", "_repairs", "_coercions")
    name: str
    input: dict[str, Any]
    id: str
    dialect: str
    repairs: tuple[str, ...]
    coercions: tuple[str, ...]
    __hash__ = None  # type: ignore[assignment]  # (``input`` is a dict: unhashable by design)

    def __init__(
        self,
        name: str,
        input: dict[str, Any],
        id: str = "",
        dialect: str = "",
        repairs: tuple[str, ...] = (),
        coercions: tuple[str, ...] = (),
    ) -> None:
        self._name = name
        self._input = input
        self._id = id
        self._dialect = dialect
        self._repairs = repairs
        self._coercions = coercions

    @property
    def arguments(self) -> str:
        """``input`` as the compact JSON text OpenAI-style clients expect."""
        return json.dumps(self.input, ensure_ascii=False, separators=(",", ":"))


@value
class Block(_Value):
    """A captured tool-call block.

    ``span`` is ``(start, end)`` in offsets of the whole input; ``raw`` is exactly
    ``input[start:end]``. ``status`` is ``"complete"`` (the block closed and produced
    calls), ``"failed"`` (released as text) or ``"partial"``, which marks part of a block
    under ``early_emit="invoke"``: in ``ParseResult.blocks``, a block whose first calls went
    out before it broke off; on a ``ToolCalls`` event, the stretch up to a call emitted while
    the block was still open (the event that closes the block is ``"complete"``); or
    ``"frame"``: framing a dialect drops from the text (a recipient line, a response wrapper,
    SPEC §12), which holds no call and goes out as a ``ToolCalls`` event with none.
    ``reasoning`` is None for a block in the answer; for one inside reasoning (SPEC §15), the
    ``calls_in_reasoning`` choice it was read under: ``"text"`` (it went out as reasoning
    text, its calls were not emitted) or ``"call"`` (its calls were).
    """

    __slots__ = ("_span", "_dialect", "_status", "_repairs", "_diagnostics", "_raw", "_reasoning")
    span: tuple[int, int]
    dialect: str
    status: BlockStatus
    repairs: tuple[str, ...]
    diagnostics: tuple[str, ...]
    raw: str
    reasoning: str | None

    def __init__(
        self,
        span: tuple[int, int],
        dialect: str,
        status: BlockStatus,
        repairs: tuple[str, ...] = (),
        diagnostics: tuple[str, ...] = (),
        raw: str = "",
        reasoning: str | None = None,
    ) -> None:
        self._span = span
        self._dialect = dialect
        self._status = status
        self._repairs = repairs
        self._diagnostics = diagnostics
        self._raw = raw
        self._reasoning = reasoning


@value
class Text(_Value):
    """Text for the user, released as soon as it cannot be part of a tool block."""

    __slots__ = ("_text",)
    text: str

    def __init__(self, text: str) -> None:
        self._text = text


@value
class Reasoning(_Value):
    """The model's reasoning (SPEC §15), released as soon as it cannot be part of a tag.

    ``text`` is the reasoning; ``raw`` the input the event stands for when that is not
    ``text`` itself: the ``<think>`` and ``</think>`` tags come as events of their own with
    empty ``text`` and the tag in ``raw`` (so a server sees where reasoning starts and ends,
    and the events still hold every character of the input). ``source`` is either way the
    input it stands for.
    """

    __slots__ = ("_text", "_raw")
    text: str
    raw: str | None

    def __init__(self, text: str, raw: str | None = None) -> None:
        self._text = text
        self._raw = raw

    @property
    def source(self) -> str:
        """The input this event stands for (``raw``, else ``text``)."""
        return self.text if self.raw is None else self.raw


@value
class ToolCalls(_Value):
    """Calls parsed from one block (with ``early_emit="invoke"``: from one invoke)."""

    __slots__ = ("_calls", "_block")
    calls: tuple[ToolCall, ...]
    block: Block
    __hash__ = None  # type: ignore[assignment]  # (its calls are unhashable, ``ToolCall``)

    def __init__(self, calls: tuple[ToolCall, ...], block: Block) -> None:
        self._calls = calls
        self._block = block


@value
class CallStarted(_Value):
    """Argument streaming: a call's name is known."""

    __slots__ = ("_index", "_id", "_name")
    index: int
    id: str
    name: str

    def __init__(self, index: int, id: str, name: str) -> None:
        self._index = index
        self._id = id
        self._name = name


@value
class ArgumentsDelta(_Value):
    """Argument streaming: the next fragment of the call's arguments JSON."""

    __slots__ = ("_index", "_delta")
    index: int
    delta: str

    def __init__(self, index: int, delta: str) -> None:
        self._index = index
        self._delta = delta


@value
class CallFinished(_Value):
    """Argument streaming: the call is complete."""

    __slots__ = ("_index", "_call")
    index: int
    call: ToolCall
    __hash__ = None  # type: ignore[assignment]  # (its call is unhashable, ``ToolCall``)

    def __init__(self, index: int, call: ToolCall) -> None:
        self._index = index
        self._call = call


#: Why a started call aborted (``CallAborted.reason``): its block ``"failed"``; the input
#: ended inside it (``"cut_off"``, at ``close()``); the policy ``"rejected"`` it; or it is sent
#: again, whole, under the next index (``RESENT``), because what streamed is not the start of
#: its arguments: a parameter name that repeats, plain text before CDATA in one body, a
#: CDATA the loose-CDATA repair closed, a key that repeats in a JSON body, a name or id a
#: later node gave, or any other difference (``"rewritten"``; docs/streaming.md, "When a
#: call is sent again").
AbortReason = Literal[
    "failed",
    "cut_off",
    "rejected",
    "repeated_name",
    "text_before_cdata",
    "loose_cdata",
    "repeated_key",
    "renamed",
    "rewritten",
]
ABORT_REASONS: tuple[AbortReason, ...] = get_args(AbortReason)
RESENT: frozenset[AbortReason] = frozenset(
    (
        "repeated_name",
        "text_before_cdata",
        "loose_cdata",
        "repeated_key",
        "renamed",
        "rewritten",
    )
)


@value
class CallAborted(_Value):
    """Argument streaming: a started call turned out not to be one; ``reason`` says why (one
    of ``ABORT_REASONS``; ``resent``: the call follows again, whole, under the next index)."""

    __slots__ = ("_index", "_reason")
    index: int
    reason: AbortReason

    def __init__(self, index: int, reason: AbortReason = "failed") -> None:
        self._index = index
        self._reason = reason

    @property
    def resent(self) -> bool:
        """The call is sent again, whole, under the next index (``RESENT``)."""
        return self.reason in RESENT


Event = Text | Reasoning | ToolCalls | CallStarted | ArgumentsDelta | CallFinished | CallAborted

"""Strategy: ``parse()`` — the streaming engine run over one chunk (SPEC §8).

What it guarantees: ``parse(text)`` and any chunking of ``text`` through ``Sieve`` give the
same calls and text, because this is literally ``Sieve.feed(text) + Sieve.close()``.
What it costs: the same as streaming the text as one chunk, plus the result tuples.
"""

from __future__ import annotations

from typing import Any

from .._base.errors import InputTypeError
from .._base.events import Block, Reasoning, Text, ToolCall, ToolCalls, value
from .._config.policy import Rejection
from .sieve import Sieve

__all__ = ["ParseResult", "parse"]


@value
class ParseResult:
    """What ``parse()`` found: the user's ``text``, the ``calls``, the model's ``reasoning``
    (SPEC §15, its pieces joined, without the tags; ``reasoning_unclosed``: the input ended
    inside it; ``stray_reasoning_closes``: where a ``</think>`` closed nothing, under
    ``reasoning="tags"``), every ``block`` captured (complete,
    partial or failed), the §8/§9 flags, and ``parts``: the reply in order, each a ``str``
    (text, adjacent text joined), a ``Reasoning`` (adjacent reasoning joined, its ``text``
    only) or a ``ToolCall`` — what a renderer needs to put reasoning, text and calls back in
    the order the model wrote them. Immutable: assigning a field raises ``AttributeError``."""

    __slots__ = (
        "_blocks",
        "_calls",
        "_parts",
        "_reasoning",
        "_rejected_by_policy",
        "_rejected_tool_names",
        "_rejections",
        "_saw_tool_call_syntax",
        "_text",
        "_reasoning_unclosed",
        "_stray_reasoning_closes",
    )
    text: str
    calls: tuple[ToolCall, ...]
    blocks: tuple[Block, ...]
    saw_tool_call_syntax: bool
    rejected_by_policy: bool
    rejected_tool_names: tuple[str, ...]
    rejections: tuple[Rejection, ...]
    reasoning: str
    reasoning_unclosed: bool
    stray_reasoning_closes: tuple[int, ...]
    parts: tuple[str | Reasoning | ToolCall, ...]

    def __init__(
        self,
        text: str,
        calls: tuple[ToolCall, ...],
        blocks: tuple[Block, ...],
        saw_tool_call_syntax: bool,
        rejected_by_policy: bool = False,
        rejected_tool_names: tuple[str, ...] = (),
        parts: tuple[str | Reasoning | ToolCall, ...] | None = None,
        reasoning: str = "",
        rejections: tuple[Rejection, ...] = (),
        reasoning_unclosed: bool = False,
        stray_reasoning_closes: tuple[int, ...] = (),
    ) -> None:
        self._text = text
        self._calls = calls
        self._blocks = blocks
        self._saw_tool_call_syntax = saw_tool_call_syntax
        self._rejected_by_policy = rejected_by_policy
        self._rejected_tool_names = rejected_tool_names
        #: Each call the policy rejected (SPEC §9): name, reason, span, raw, action, call.
        self._rejections = rejections
        self._reasoning = reasoning
        #: The input ended inside reasoning: the model was still thinking (SPEC §15).
        self._reasoning_unclosed = reasoning_unclosed
        #: Offsets of each ``</think>`` with no ``<think>`` open (``reasoning="tags"``).
        self._stray_reasoning_closes = stray_reasoning_closes
        self._parts = parts if parts is not None else ((text,) if text else ()) + calls

    def __repr__(self) -> str:
        thought = f"reasoning={self.reasoning!r}, " if self.reasoning else ""
        return (
            f"ParseResult({thought}text={self.text!r}, calls={self.calls!r}, "
            f"blocks={len(self.blocks)}, saw_tool_call_syntax={self.saw_tool_call_syntax})"
        )


def parse(text: str, *, tools: Any = None, **options: Any) -> ParseResult:
    """Parse whole text. Options are those of ``Sieve``."""
    if not isinstance(text, str):
        raise InputTypeError(f"parse() takes str, not {type(text).__name__}")
    sieve = Sieve(tools, **options)
    events, blocks = sieve.parse_whole(text)
    out: list[str] = []
    thought: list[str] = []
    calls: list[ToolCall] = []
    parts: list[str | Reasoning | ToolCall] = []
    run: list[str] = []  # text or reasoning since the last part of the other kind
    in_text = True  # (what ``run`` holds)

    def end_run() -> None:
        if run:
            joined = "".join(run)
            if joined:
                parts.append(joined if in_text else Reasoning(joined))
            run.clear()

    for e in events:
        if isinstance(e, Text | Reasoning):
            if not e.text:
                continue
            if isinstance(e, Text) != in_text:
                end_run()
                in_text = not in_text
            (out if in_text else thought).append(e.text)
            run.append(e.text)
        elif isinstance(e, ToolCalls) and e.calls:
            end_run()
            calls.extend(e.calls)
            parts.extend(e.calls)
    end_run()
    return ParseResult(
        "".join(out),
        tuple(calls),
        blocks,
        sieve.saw_tool_call_syntax,
        sieve.rejected_by_policy,
        sieve.rejected_tool_names,
        parts=tuple(parts),
        reasoning="".join(thought),
        rejections=sieve.rejections,
        reasoning_unclosed=sieve.reasoning_unclosed,
        stray_reasoning_closes=sieve.stray_reasoning_closes,
    )

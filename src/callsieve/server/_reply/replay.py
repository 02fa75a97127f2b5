"""Strategy: replay mode's model — a saved reply streamed in fixed-size pieces, for demos,
tests and load runs.

What it does: ``ReplaySource(text, chunk_size, delay_ms)`` is a ``Source`` (``upstream``'s
shape): ``pieces()`` yields the text ``chunk_size`` characters at a time, waiting
``delay_ms`` between pieces (with no delay it still hands the event loop over after each
piece, so one long reply never stalls the others); ``finish_reason`` is ``"stop"`` and
``usage`` is ``None`` (no tokens were counted); ``calls()`` is empty (a replay has no
calls of its own besides its text).
What it guarantees: the pieces join to the text; cancelling the request stops the replay at
the next piece.
What it costs: one slice per piece.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ... import ToolCall
from .upstream import Piece

__all__ = ["ReplaySource"]


class ReplaySource:
    def __init__(self, text: str, chunk_size: int, delay_ms: float) -> None:
        self._text = text
        self._size = chunk_size
        self._delay = delay_ms / 1000.0
        self.finish_reason: str | None = "stop"
        self.usage: dict[str, int] | None = None

    async def pieces(self) -> AsyncIterator[Piece]:
        text, size, delay = self._text, self._size, self._delay
        for i in range(0, len(text), size):
            yield Piece(text[i : i + size])
            await asyncio.sleep(delay)

    def calls(self) -> list[ToolCall]:
        return []

    async def aclose(self) -> None:
        return None

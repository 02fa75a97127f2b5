"""Strategy: the public ``Sieve`` — the stream's machine (``_stream.sieve``) as users make it;
``Sieve(..., sanitize=True)`` is a ``SanitizingSieve``, the same machine with its released
text passed through the leaked-output sanitizer (SPEC §13, ``_sanitizer``).

What it does: ``Sieve.__new__`` makes a ``SanitizingSieve`` when ``sanitize=True`` is asked
for; its ``feed`` and ``close`` hand the machine's events to an ``EventFilter`` (``parse()``
runs them too, so a parsed result's text is sanitized the same way). The choice is made
here, above the stream, so the machine never imports the sanitizer.
What it guarantees: ``Sieve.feed`` and its hot halves are the machine's, untouched, and a
sieve without ``sanitize`` pays nothing; the filtered text is the same for every chunking.
What it costs: the filter's cost per ``Text`` event (one fence-tracker search without leaks).
"""

from __future__ import annotations

from typing import Any

from .._base.events import Event
from .._sanitizer.leaks import EventFilter
from .._stream.sieve import SieveMachine

__all__ = ["SanitizingSieve", "Sieve"]


class Sieve(SieveMachine):
    """Pulls tool calls out of a stream of model text.

    ``Sieve(tools=None, *, early_emit="block", mode="on", max_block_chars=8 MiB,
    dialects=None, grammar_dirs=(), id_factory=new_call_id)``: ``dialects`` names the
    dialects to enable, or is ``"all"``; None is ``DEFAULT_DIALECTS``, and with
    ``grammar_dirs`` the dialects of those folders too.

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Sieve:  # noqa: PYI034 - may be a subclass
        if cls is Sieve and kwargs.get("sanitize") is True:
            return super().__new__(SanitizingSieve)
        return super().__new__(cls)


class SanitizingSieve(Sieve):
    """A ``Sieve`` whose text events are sanitized (see the module docstring)."""

    __slots__ = ("_filter",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._filter = EventFilter()

    def feed(self, chunk: str) -> list[Event]:
        return self._filter(super().feed(chunk), False)

    def close(self) -> list[Event]:
        return self._filter(super().close(), True)

"""Strategy: ``Sieve(..., sanitize=True)`` — the same sieve, its released text passed through
the leaked-output sanitizer (SPEC §13, ``_leaks``).

What it does: ``Sieve.__new__`` makes a ``SanitizingSieve`` when ``sanitize=True`` is asked
for; its ``feed`` and ``close`` hand the events of ``Sieve``'s own to an ``EventFilter``
(``parse()`` runs them too, so a parsed result's text is sanitized the same way).
What it guarantees: ``Sieve.feed`` and its hot halves are untouched, and a sieve without
``sanitize`` pays nothing; the filtered text is the same for every chunking.
What it costs: the filter's cost per ``Text`` event (one fence-tracker search without leaks).
"""

from __future__ import annotations

from typing import Any

from ._events import Event
from ._leaks import EventFilter
from ._sieve import Sieve

__all__ = ["SanitizingSieve"]


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

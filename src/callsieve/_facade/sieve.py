"""Strategy: the public ``Sieve`` — the stream's machine (``_stream.sieve``) as users make it;
``Sieve(..., sanitize=True)`` is a ``SanitizingSieve``, the same machine with its released
text passed through the leaked-output sanitizer (SPEC §13, ``_sanitizer``).

What it does: ``Sieve.__new__`` makes the class's sanitizing twin when ``sanitize=True`` is
asked for (``SanitizingSieve`` for ``Sieve``; for a user's subclass, a subclass of it, so it
keeps its methods); the twin's ``feed`` and ``close`` hand the events to an ``EventFilter``
(``parse()`` runs them too, so a parsed result's text is sanitized the same way). The choice is made
here, above the stream, so the machine never imports the sanitizer.
What it guarantees: ``Sieve.feed`` and its hot halves are the machine's, untouched, and a
sieve without ``sanitize`` pays nothing; the filtered text is the same for every chunking.
What it costs: the filter's cost per ``Text`` event (one fence-tracker search without leaks).
"""

from __future__ import annotations

import threading
from typing import Any

from .._base.events import Event
from .._sanitizer.leaks import EventFilter
from .._stream.sieve import SieveMachine

__all__ = ["SanitizingSieve", "Sieve"]


class Sieve(SieveMachine):
    """Pulls tool calls out of a stream of model text.

    ``Sieve(tools=None, *, early_emit="block", mode="on", max_block_chars=8 MiB,
    dialects=None, grammar_dirs=(), id_factory=new_call_id, reasoning="tags",
    calls_in_reasoning="text", policy=None, on_reject="drop", sanitize=False,
    metrics=None)``: every option is in README "Options" (``_config.options.OPTIONS``).
    ``dialects`` names the dialects to enable, or is ``"all"``; None is
    ``DEFAULT_DIALECTS``, and with ``grammar_dirs`` the dialects of those folders too.

    ``state`` (``SieveState``) is PROSE between blocks, CAPTURE while a block is read, and
    CLOSED after ``close()``. The modes (``Mode``) and what moves the sieve between them
    are in docs/architecture.md.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Sieve:  # noqa: PYI034 - may be a subclass
        if kwargs.get("sanitize") is True and not issubclass(cls, _Sanitizes):
            return super().__new__(_sanitizing(cls))
        return super().__new__(cls)


class _Sanitizes:
    """The sanitizing half of a ``Sieve`` class's twin (``_sanitizing``): its text events go
    through the leaked-output filter. No slots of its own, so it joins any ``Sieve`` class."""

    __slots__ = ()
    _filter: EventFilter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._filter = EventFilter()  # type: ignore[misc]  # (the twin's slot)

    def feed(self, chunk: str) -> list[Event]:
        return self._filter(super().feed(chunk), False)  # type: ignore[misc]

    def close(self) -> list[Event]:
        return self._filter(super().close(), True)  # type: ignore[misc]


#: Each ``Sieve`` class's sanitizing twin, made once.
_TWINS: dict[type[Sieve], type[Sieve]] = {}
_TWINS_LOCK = threading.Lock()


def _sanitizing(cls: type[Sieve]) -> type[Sieve]:
    """What ``cls(sanitize=True)`` makes: a subclass of ``cls`` whose text events are
    sanitized, so a user's subclass keeps its own methods and every option."""
    twin = _TWINS.get(cls)
    if twin is None:
        with _TWINS_LOCK:
            twin = _TWINS.get(cls)
            if twin is None:
                name = "SanitizingSieve" if cls is Sieve else f"Sanitizing{cls.__name__}"
                made = type(name, (_Sanitizes, cls), {"__slots__": ("_filter",)})
                made.__module__ = __name__ if cls is Sieve else cls.__module__
                twin = _TWINS[cls] = made
    return twin


#: ``Sieve(..., sanitize=True)``'s class (see the module docstring).
SanitizingSieve = _sanitizing(Sieve)

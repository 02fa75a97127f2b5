"""Strategy: counters of what the sieve did (SPEC §14), per sieve and for the whole process,
read as a plain dict — at the places a block ends, never per character.

What it does: a ``Metrics`` holds integer counters, some by label: ``blocks_seen``,
``blocks_parsed`` (by dialect, the ``parse_source``), ``blocks_failed`` (by reason: one of
``FAILURE_REASONS``; and ``failed_by_dialect``, by the dialect the block's parse was in), ``blocks_repaired`` and ``repairs`` (by repair kind), ``calls``
(handed out; ``calls_by_dialect``: by their block's dialect), ``rejected`` (by reason: ``unknown_tool``, ``schema``), ``coercions``,
``chars_in`` and ``chars_released`` (text released to the user), ``holdback_max`` (the
most characters held back at once: a tag prefix or a block being captured),
``calls_aborted`` (argument streaming: calls that started and then aborted, by
``CallAborted.reason``), ``stray_reasoning_closes`` (under ``reasoning="tags"``, a
``</think>`` read as text because no ``<think>`` was open: the signature of a chat template
that wrote the ``<think>`` itself), ``reasoning_unclosed`` (replies that ended inside
reasoning) and ``reasoning_ended_by_calls`` (thoughts never closed that a block of calls
ended, in a dialect that declares ``calls_end_thought``, SPEC §15). A sieve made
with ``metrics=True`` (or with a ``Metrics`` to count into) counts into it; when it is
closed its counts are added to the process-wide aggregate, ``aggregate_metrics()``, which
calls its subscribers (the Prometheus exporter, ``callsieve.prometheus``) with what was
added. ``snapshot()`` returns the counters and the derived ``rates``:
``success`` = parsed / seen, ``malformed`` = failed / seen, ``repair`` = repaired / parsed
(0.0 when the denominator is 0).
What it guarantees: every update and every snapshot takes the object's lock, so sieves in
several threads may share one ``Metrics``, and the aggregate is exact under threads. The
aggregate is the library's one mutable global besides its caches: documented as such, it only
ever grows (``reset()`` is for tests and for a process that exports elsewhere).
A sieve without metrics pays one ``is None`` test per block end and per machine run.
What it costs: a lock and a few dict updates per block; the character counts are taken once,
at ``close()`` (``chars_in``, ``chars_released``); ``holdback_max`` is sampled each time the
machine runs (every chunk the hot paths do not take), which sees every tag prefix and block
held, at the size it had when that chunk arrived.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = [
    "COUNTERS",
    "FAILURE_REASONS",
    "LABELLED",
    "Metrics",
    "aggregate_metrics",
    "close_counts",
    "failure_reason",
]

#: The plain counters, and the counters kept by label (SPEC §14).
COUNTERS = (
    "blocks_seen",
    "blocks_repaired",
    "calls",
    "coercions",
    "chars_in",
    "chars_released",
    "stray_reasoning_closes",
    "reasoning_unclosed",
    "reasoning_ended_by_calls",
)
LABELLED = (
    "blocks_parsed",
    "blocks_failed",
    "repairs",
    "rejected",
    "calls_aborted",
    "calls_by_dialect",
    "failed_by_dialect",
)
#: What a failure message is counted as (a small fixed set: a label value per reason).
FAILURE_REASONS = (
    "too_long",
    "unclosed",
    "bad_json",
    "call_not_built",
    "missing_wrapper",
    "unexpected_token",
    "other",
)
_REASON_WORDS = (
    ("max_block_chars", "too_long"),
    ("input ended", "unclosed"),
    ("could close the block", "unclosed"),
    ("JSON", "bad_json"),
    ("not built", "call_not_built"),
    ("without its wrapper", "missing_wrapper"),
    ("unexpected", "unexpected_token"),
)

Snapshot = dict[str, Any]


def failure_reason(message: str) -> str:
    """The ``FAILURE_REASONS`` member a block's failure message counts as (read from its
    first part: what was expected and found there may name anything)."""
    message = message.split(";", 1)[0]
    for word, reason in _REASON_WORDS:
        if word in message:
            return reason
    return "other"


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


class Metrics:
    """Counters (see the module docstring); safe to share between threads."""

    __slots__ = ("_lock", "_plain", "_labelled", "_holdback", "_subscribers")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plain: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self._labelled: dict[str, dict[str, int]] = {k: {} for k in LABELLED}
        self._holdback = 0
        self._subscribers: list[Callable[[Snapshot], None]] = []

    # ------------------------------------------------------------------ counting
    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._plain[name] += n

    def count_label(self, family: str, label: str, n: int = 1) -> None:
        with self._lock:
            per = self._labelled[family]
            per[label] = per.get(label, 0) + n

    def block_parsed(self, dialect: str, repairs: tuple[str, ...], calls: int) -> None:
        """A block ended as calls (or, under a policy, as its accepted calls)."""
        with self._lock:
            plain = self._plain
            plain["blocks_seen"] += 1
            plain["calls"] += calls
            per = self._labelled["blocks_parsed"]
            per[dialect] = per.get(dialect, 0) + 1
            if repairs:
                plain["blocks_repaired"] += 1
                kinds = self._labelled["repairs"]
                for kind in repairs:
                    kinds[kind] = kinds.get(kind, 0) + 1

    def calls_out(self, dialect: str, n: int) -> None:
        """``n`` calls of a block of ``dialect`` were handed out."""
        with self._lock:
            self._plain["calls"] += n
            per = self._labelled["calls_by_dialect"]
            per[dialect] = per.get(dialect, 0) + n

    def block_failed(self, message: str, dialect: str = "") -> None:
        """A block released as text; ``dialect``: the one its parse was in when it failed."""
        with self._lock:
            self._plain["blocks_seen"] += 1
            per = self._labelled["blocks_failed"]
            reason = failure_reason(message)
            per[reason] = per.get(reason, 0) + 1
            if dialect:
                by = self._labelled["failed_by_dialect"]
                by[dialect] = by.get(dialect, 0) + 1

    def held(self, n: int) -> None:
        """``n`` characters are held back right now."""
        if n > self._holdback:
            with self._lock:
                self._holdback = max(self._holdback, n)

    # ------------------------------------------------------------------ reading
    def snapshot(self) -> Snapshot:
        """The counters and the derived rates, as a plain dict (a copy)."""
        with self._lock:
            out: Snapshot = dict(self._plain)
            for family, per in self._labelled.items():
                out[family] = dict(per)
            out["holdback_max"] = self._holdback
        parsed = sum(out["blocks_parsed"].values())
        failed = sum(out["blocks_failed"].values())
        seen = out["blocks_seen"]
        out["rates"] = {
            "success": _rate(parsed, seen),
            "malformed": _rate(failed, seen),
            "repair": _rate(out["blocks_repaired"], parsed),
        }
        return out

    def merge(self, counts: Snapshot) -> None:
        """Add a ``snapshot()`` of other metrics (its rates are ignored; ``holdback_max`` is
        a maximum), then tell the subscribers what was added."""
        with self._lock:
            for name in COUNTERS:
                self._plain[name] += counts.get(name, 0)
            for family in LABELLED:
                per = self._labelled[family]
                for label, n in counts.get(family, {}).items():
                    per[label] = per.get(label, 0) + n
            self._holdback = max(self._holdback, counts.get("holdback_max", 0))
            subscribers = list(self._subscribers)
        for notify in subscribers:
            notify(counts)

    def subscribe(self, notify: Callable[[Snapshot], None]) -> None:
        """Call ``notify(counts)`` with what each ``merge`` adds (the exporter's hook)."""
        with self._lock:
            self._subscribers.append(notify)

    def unsubscribe(self, notify: Callable[[Snapshot], None]) -> None:
        with self._lock:
            if notify in self._subscribers:
                self._subscribers.remove(notify)

    def reset(self) -> None:
        """All counters back to zero (subscribers stay)."""
        with self._lock:
            self._plain = dict.fromkeys(COUNTERS, 0)
            self._labelled = {k: {} for k in LABELLED}
            self._holdback = 0

    def __repr__(self) -> str:
        return f"Metrics({self.snapshot()!r})"


#: The process-wide aggregate (a documented global, like the grammar caches).
_AGGREGATE = Metrics()


def close_counts(metrics: Metrics, into: Metrics | None, total: int, consumed: int) -> None:
    """A sieve's ``close()``: the characters in (``total``) and released (all but the
    ``consumed`` that calls took) counted, then its counts added to the ``metrics=`` object
    given (``into``) and to the process-wide aggregate."""
    metrics.count("chars_in", total)
    metrics.count("chars_released", total - consumed)
    counts = metrics.snapshot()
    if into is not None and into is not _AGGREGATE:
        into.merge(counts)
    _AGGREGATE.merge(counts)


def aggregate_metrics() -> Metrics:
    """The process-wide ``Metrics``: every closed sieve that counted adds its counts here."""
    return _AGGREGATE

"""Strategy: the optional Prometheus exporter of callsieve's counters (SPEC §14), on
``prometheus_client`` (``pip install 'callsieve[prometheus]'``); the core never imports it.

What it does: ``PrometheusExporter(registry=None, namespace="callsieve", source=None)`` makes
one ``prometheus_client`` metric per counter of ``callsieve.Metrics`` —
``callsieve_blocks_seen_total``, ``callsieve_blocks_parsed_total{dialect}``,
``callsieve_blocks_failed_total{reason}``, ``callsieve_blocks_repaired_total``,
``callsieve_repairs_total{kind}``, ``callsieve_calls_total``,
``callsieve_calls_by_dialect_total{dialect}``, ``callsieve_failed_by_dialect_total{dialect}``,
``callsieve_rejected_total{reason}``, ``callsieve_coercions_total``,
``callsieve_chars_in_total``, ``callsieve_chars_released_total``,
``callsieve_calls_aborted_total{reason}``, ``callsieve_stray_reasoning_closes_total``,
``callsieve_reasoning_unclosed_total``, ``callsieve_reasoning_ended_by_calls_total`` and the gauge
``callsieve_holdback_max_chars`` — and subscribes to ``source`` (the process-wide
``aggregate_metrics()`` unless told otherwise): each closed sieve's counts are added to them
as it closes. ``close()`` unsubscribes (the metrics stay registered).
What it guarantees: the values are ``prometheus_client``'s own counters and gauge, so the
library's multiprocess mode works as it documents (set ``PROMETHEUS_MULTIPROC_DIR`` before
``prometheus_client`` is imported, scrape with a ``MultiProcessCollector``): every worker
process counts into its own files and a scrape sums them (the gauge is a ``max`` over live
processes). Sieves closed before the exporter existed are not counted by it (the aggregate
has them: ``aggregate_metrics().snapshot()``).
What it costs: a few counter increments per closed sieve; nothing per chunk or block.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge

from ._config.metrics import COUNTERS, Metrics, Snapshot, aggregate_metrics

__all__ = ["PrometheusExporter"]

_HELP = {
    "blocks_seen": "Tool-call blocks the sieve captured (parsed or failed)",
    "blocks_repaired": "Blocks that parsed after a repair",
    "calls": "Tool calls handed out",
    "coercions": "Argument values coerced to their schema type",
    "chars_in": "Characters of model output read",
    "chars_released": "Characters released to the user as text",
    "blocks_parsed": "Blocks that parsed, by dialect",
    "blocks_failed": "Blocks released as text, by reason",
    "repairs": "Repairs made, by kind",
    "rejected": "Calls the tool policy rejected, by reason",
    "calls_aborted": "Calls that began to stream and then aborted, by reason",
    "stray_reasoning_closes": "A </think> with no <think> open (reasoning='tags')",
    "reasoning_unclosed": "Replies that ended inside reasoning",
    "reasoning_ended_by_calls": "Thoughts never closed that a block of calls ended",
    "calls_by_dialect": "Tool calls handed out, by the dialect of their block",
    "failed_by_dialect": "Blocks released as text, by the dialect their parse was in",
}
_LABEL = {
    "blocks_parsed": "dialect",
    "blocks_failed": "reason",
    "repairs": "kind",
    "rejected": "reason",
    "calls_aborted": "reason",
    "calls_by_dialect": "dialect",
    "failed_by_dialect": "dialect",
}


class PrometheusExporter:
    """``prometheus_client`` metrics fed by a ``Metrics`` source (see the module docstring)."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        namespace: str = "callsieve",
        source: Metrics | None = None,
    ) -> None:
        registry = REGISTRY if registry is None else registry
        self.source = aggregate_metrics() if source is None else source
        self.counters: dict[str, Any] = {}
        for name in (*COUNTERS, *_LABEL):
            labels = (_LABEL[name],) if name in _LABEL else ()
            self.counters[name] = Counter(
                name, _HELP[name], labels, namespace=namespace, registry=registry
            )
        self.holdback = Gauge(
            "holdback_max_chars",
            "Most characters held back at once",
            namespace=namespace,
            registry=registry,
            multiprocess_mode="max",
        )
        self._held = 0
        self.source.subscribe(self.add)

    def add(self, counts: Snapshot) -> None:
        """Add one sieve's counts (``Metrics.snapshot()``)."""
        for name in COUNTERS:
            n = counts.get(name, 0)
            if n:
                self.counters[name].inc(n)
        for name in _LABEL:
            for label, n in counts.get(name, {}).items():
                if n:
                    self.counters[name].labels(label).inc(n)
        held = counts.get("holdback_max", 0)
        if held > self._held:
            self._held = held
            self.holdback.set(held)

    def close(self) -> None:
        """Stop counting (the metrics stay registered with their values)."""
        self.source.unsubscribe(self.add)

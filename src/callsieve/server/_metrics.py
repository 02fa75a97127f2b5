"""Strategy: the gateway's own counters on ``GET /metrics`` when the Prometheus client is
installed (``callsieve[prometheus]``), and nothing — not even the route — when it is not;
with several worker processes, one scrape of any of them sums all of them.

What it does: ``Metrics()`` imports ``prometheus_client`` if it can and makes a registry of
its own with ``callsieve_gateway_requests_total{api, status, outcome}`` — ``outcome`` one of
``ok``, ``client_error`` (a 4xx of ours), ``upstream_error`` (the upstream failed before the
reply began), ``stream_aborted`` (a stream ended by an error event), ``cancelled`` (the
client went away), ``shutdown`` (ended by the drain), ``server_error`` (a bug: 500) — and
the library's SPEC §14 counters (``callsieve.prometheus.PrometheusExporter``: blocks,
dialects, repairs, calls, rejections, characters — every sieve of the process, counted as it
closes); every request's sieve then counts (``metrics=True`` in ``sieve_defaults``, unless
the ``[sieve]`` settings say otherwise). ``answered(api, status, outcome)`` counts one
request when its outcome is known (a stream at its end, not when its headers go out);
``render()`` is the text exposition: with ``PROMETHEUS_MULTIPROC_DIR`` set (``serve`` sets
it for ``--workers N``), a ``MultiProcessCollector`` over every worker's files, else this
registry. ``close()`` (at the app's shutdown) unsubscribes the exporter.
What it guarantees: a missing ``prometheus_client`` is never an error (``enabled`` is
``False``); each app has its own registry, so several apps in one process do not clash.
What it costs: one labelled counter increment per request.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__all__ = ["OUTCOMES", "Metrics"]

OUTCOMES = (
    "ok",
    "client_error",
    "upstream_error",
    "stream_aborted",
    "cancelled",
    "shutdown",
    "server_error",
)


class Metrics:
    def __init__(self) -> None:
        try:
            prom: Any = importlib.import_module("prometheus_client")
        except ImportError:
            prom = None
        self.enabled = prom is not None
        self._prom = prom
        #: Sieve options the app sets unless the settings do: count what /metrics shows.
        self.sieve_defaults: dict[str, Any] = {"metrics": True} if self.enabled else {}
        if prom is not None:
            self._registry = prom.CollectorRegistry()
            self._requests = prom.Counter(
                "callsieve_gateway_requests",
                "Requests answered by the gateway, by outcome",
                ["api", "status", "outcome"],
                registry=self._registry,
            )
            exporter = importlib.import_module("callsieve.prometheus")
            self._exporter = exporter.PrometheusExporter(registry=self._registry)

    def answered(self, api: str, status: int, outcome: str) -> None:
        if self.enabled:
            self._requests.labels(api=api, status=str(status), outcome=outcome).inc()

    def close(self) -> None:
        if self.enabled:
            self._exporter.close()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        prom = self._prom
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = prom.CollectorRegistry()
            importlib.import_module("prometheus_client.multiprocess").MultiProcessCollector(
                registry
            )
            return prom.generate_latest(registry), prom.CONTENT_TYPE_LATEST
        return prom.generate_latest(self._registry), prom.CONTENT_TYPE_LATEST

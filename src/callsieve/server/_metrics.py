"""Strategy: the gateway's own counters on ``GET /metrics`` when the Prometheus client is
installed (``callsieve[prometheus]``), and nothing — not even the route — when it is not.

What it does: ``Metrics()`` imports ``prometheus_client`` if it can and makes a registry of
its own with ``callsieve_gateway_requests_total{api, status}`` and the library's SPEC §14
counters (``callsieve.prometheus.PrometheusExporter``: blocks, dialects, repairs, calls,
rejections, characters — every sieve of the process, counted as it closes);
every request's sieve then counts (``metrics=True`` in ``sieve_defaults``, unless the
``[sieve]`` settings say otherwise); ``answered(api, status)`` counts one answer; ``endpoint`` serves the registry in the text
exposition format; ``close()`` (at the app's shutdown) unsubscribes the exporter.
What it guarantees: a missing ``prometheus_client`` is never an error (``enabled`` is
``False``); each app has its own registry, so several apps in one process do not clash.
What it costs: one labelled counter increment per request.
"""

from __future__ import annotations

import importlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["Metrics"]


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
                "callsieve_gateway_requests", "Requests answered by the gateway",
                ["api", "status"], registry=self._registry)
            exporter = importlib.import_module("callsieve.prometheus")
            self._exporter = exporter.PrometheusExporter(registry=self._registry)

    def answered(self, api: str, status: int) -> None:
        if self.enabled:
            self._requests.labels(api=api, status=str(status)).inc()

    def close(self) -> None:
        if self.enabled:
            self._exporter.close()

    async def endpoint(self, request: Request) -> Response:
        return Response(self._prom.generate_latest(self._registry),
                        media_type=self._prom.CONTENT_TYPE_LATEST)

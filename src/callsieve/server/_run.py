"""Strategy: run the gateway with Uvicorn — in one process, or in ``workers`` processes that
share the listening sockets — and exit 0 after a graceful shutdown.

What it does: ``serve(config)`` binds the main socket (and the ``metrics_port`` one) here,
then runs Uvicorn on them with the app built by ``AppFactory`` (a picklable factory, so a
worker process builds its own app from the same ``ServerConfig``), its access log off (the
gateway logs one line per request itself, ``_http.log_answer``) and its graceful-shutdown
timeout a little longer than ``shutdown_grace`` (the drain, ``_drain``, ends what is left
first). With ``workers`` > 1 it runs Uvicorn's ``Multiprocess`` supervisor (SIGTERM to the
parent is passed to every worker, each drains) and, when ``prometheus_client`` is installed,
points ``PROMETHEUS_MULTIPROC_DIR`` at a fresh directory (unless it is set), so that a scrape
of any worker sums all of them; the directory is removed at exit. The gateway keeps no
state between requests, so replicas behind a load balancer need nothing shared.
What it guarantees: SIGTERM and SIGINT end the process with status 0 once the drain is done
(Uvicorn re-raises the signal it caught after its shutdown; the handler it then finds is a
no-op of ours).
What it costs: nothing per request.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shutil
import signal
import socket
import tempfile
from dataclasses import dataclass
from typing import Any

from ._config import LOOPBACK_NAMES, ServerConfig, is_loopback

__all__ = ["AppFactory", "bind", "serve"]


@dataclass(frozen=True)
class AppFactory:
    """Builds the app from the settings (in each worker process)."""

    config: ServerConfig

    def __call__(self) -> Any:
        from ._app import create_app

        return create_app(self.config)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.set_inheritable(True)
    return sock


def serve(config: ServerConfig) -> None:
    """Run the gateway until SIGTERM or SIGINT (then drain, and return)."""
    import uvicorn

    if not is_loopback(config.host) and set(config.allowed_hosts) <= set(LOOPBACK_NAMES):
        logging.getLogger("callsieve.server").warning(
            "listening on %s, but only loopback Host names are allowed: remote clients are "
            "refused until --allowed-host names the host they call",
            config.host,
        )
    sockets = [bind(config.host, config.port)]
    if config.metrics_port:
        sockets.append(bind(config.host, config.metrics_port))
    uv = uvicorn.Config(
        AppFactory(config),
        factory=True,
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=int(config.shutdown_grace) + 5,
        workers=config.workers,
        lifespan="on",
    )
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGTERM, signal.SIGINT)}
    made = None
    try:
        if config.workers > 1:
            from uvicorn.supervisors import Multiprocess

            made = _multiprocess_dir()
            Multiprocess(uv, sockets=sockets).run()
        else:
            uvicorn.Server(uv).run(sockets=sockets)
    finally:
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
        for sock in sockets:
            sock.close()
        if made is not None:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(made, ignore_errors=True)


def _ignore(sig: int, frame: Any) -> None:
    """What Uvicorn finds when it re-raises the signal it handled: nothing more to do."""


def _multiprocess_dir() -> str | None:
    if (
        os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        or importlib.util.find_spec("prometheus_client") is None
    ):
        return None
    made = tempfile.mkdtemp(prefix="callsieve-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = made
    return made

"""Strategy: run the gateway with Uvicorn — in one process, or in ``workers`` processes that
share the listening sockets — and exit 0 after a graceful shutdown.

What it does: ``serve(config)`` binds the main socket (and the ``metrics_port`` one) here,
as TCP sockets (``IPPROTO_TCP``, so asyncio sets ``TCP_NODELAY`` on each accepted
connection; ``_conn`` sets it too), raises the process's file limit to what
``max_connections`` and the upstream pool need (or warns that it cannot), then runs Uvicorn
on them (``uvicorn_config``: the app built by ``AppFactory``, a picklable factory, so a
worker process builds its own app from the same ``ServerConfig``; ``_conn.ConnectionGuard``
as its HTTP protocol; ``keepalive_timeout`` as its keep-alive; its access log off, since
the gateway logs one line per request itself, ``_wire``, on ``callsieve.server`` at INFO; its
graceful-shutdown timeout a little longer than ``shutdown_grace``: the drain, ``_drain``,
ends what is left first). With ``workers`` > 1 it runs Uvicorn's ``Multiprocess`` supervisor
(SIGTERM to the parent is passed to every worker, each drains; the parent closes its own
copies of the listening sockets first, so that once the workers close theirs a new
connection is refused at once, not left in the kernel's queue until the parent exits) and,
when ``prometheus_client`` is installed,
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
import resource
import shutil
import signal
import socket
import tempfile
from dataclasses import dataclass
from typing import Any

from ._config import LOOPBACK_NAMES, ServerConfig, is_loopback

__all__ = ["AppFactory", "bind", "serve", "uvicorn_config"]

log = logging.getLogger("callsieve.server")
#: File descriptors a worker needs besides its client and upstream connections.
_SPARE_FILES = 64


@dataclass(frozen=True)
class AppFactory:
    """Builds the app from the settings (in each worker process)."""

    config: ServerConfig

    def __call__(self) -> Any:
        from ._app import create_app

        return create_app(self.config)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.set_inheritable(True)
    return sock


def uvicorn_config(config: ServerConfig, app: Any, **options: Any) -> Any:
    """Uvicorn's settings for the gateway: ``app`` (or an ``AppFactory`` with
    ``factory=True``) behind ``ConnectionGuard``, with the keep-alive of ``config``."""
    import uvicorn

    from ._conn import ConnectionGuard

    return uvicorn.Config(
        app,
        http=ConnectionGuard,
        # asyncio's own loop, even where uvloop is installed: the guard wraps asyncio's
        # protocol calls (``server/_conn.py``), and under uvloop a stream cut inside a call
        # never answered (tests/server/test_gateway_aborts.py hung).
        loop="asyncio",
        ws="none",
        timeout_keep_alive=config.keepalive_timeout,  # type: ignore[arg-type]
        access_log=False,
        **options,
    )


def _log_config() -> dict[str, Any]:
    """Uvicorn's logging, and the gateway's own lines (``callsieve.server``) beside them."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    logging_config = copy.deepcopy(LOGGING_CONFIG)
    logging_config["loggers"]["callsieve"] = {
        "handlers": ["default"],
        "level": "INFO",
        "propagate": False,
    }
    return logging_config


def _raise_file_limit(config: ServerConfig) -> None:
    """Make room for ``max_connections`` and the upstream pool in each worker."""
    need = config.max_connections + config.upstream_pool + _SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        soft = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < need:
        log.warning(
            "max_connections %d and %d upstream connections need %d open files per worker; "
            "the limit is %d (ulimit -n): lower max_connections or raise the limit",
            config.max_connections,
            config.upstream_pool,
            need,
            soft,
        )


def serve(config: ServerConfig) -> None:
    """Run the gateway until SIGTERM or SIGINT (then drain, and return)."""
    import uvicorn

    if not is_loopback(config.host) and set(config.allowed_hosts) <= set(LOOPBACK_NAMES):
        log.warning(
            "listening on %s, but only loopback Host names are allowed: remote clients are "
            "refused until --allowed-host names the host they call",
            config.host,
        )
    sockets = [bind(config.host, config.port)]
    if config.metrics_port:
        sockets.append(bind(config.host, config.metrics_port))
    _raise_file_limit(config)
    uv = uvicorn_config(
        config,
        AppFactory(config),
        factory=True,
        log_level="info",
        log_config=_log_config(),
        timeout_graceful_shutdown=int(config.shutdown_grace) + 5,
        workers=config.workers,
        lifespan="on",
    )
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGTERM, signal.SIGINT)}
    made = None
    try:
        if config.workers > 1:
            made = _multiprocess_dir()
            _supervisor()(uv, sockets=sockets).run()
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


def _supervisor() -> Any:
    """Uvicorn's ``Multiprocess``, closing the parent's listening sockets before it stops
    the workers (the parent only keeps them to start new workers)."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def terminate_all(self) -> None:
            for sock in self.sockets:
                sock.close()
            super().terminate_all()

    return Supervisor


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

"""Strategy: the ``callsieve serve`` command's arguments and settings, kept in the core so
``callsieve --help`` lists it, while the server itself (``callsieve.server``, the optional
``server`` extra) is imported only when the command runs.

What it does: ``add_serve(sub, positive_int, chunk_size)`` adds the ``serve`` subcommand to
the CLI's argparse: the model (``--upstream URL`` or ``--transcript FILE``), upstream and
replay settings, ``--host``/``--port``, ``--max-body-bytes``, who may call (``--api-key``,
repeatable; ``--allow-unauthenticated``; ``--allowed-host`` and ``--cors-origin``, repeatable),
how it runs (``--workers``, ``--shutdown-grace``, ``--metrics-port``), the client
connections' limits (``--header-timeout``, ``--body-timeout``, ``--keepalive-timeout``,
``--send-timeout``, ``--max-connections``, ``--upstream-max-connections``), the upstream's deadlines
(``--connect-timeout``, ``--first-byte-timeout``, ``--idle-timeout``, ``--total-timeout``),
``--on-abort`` (the renderers' choice when a streamed call aborts), ``--config FILE`` (TOML;
its ``[models]`` table has no flags), ``--model-dir DIR`` (or ``[server] model_dir``: the
dialect a model's folder names, ``with_model_dir``), and the sieve's options (``--early-emit``,
``--dialects``, and ``--sieve-option NAME=JSON`` for any other option the installed callsieve
has). ``serve_settings(args, load_toml)`` merges the config file and the flags (a flag wins;
sieve options merge key by key); ``run_serve(args)`` imports the server, builds its
``ServerConfig`` and runs it.
What it guarantees: a missing ``server`` extra, a bad flag value or a bad setting is a
``ConfigurationError`` (the CLI prints one line and exits 2) before anything listens.
What it costs: nothing unless ``serve`` runs.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import shutil
import sys
from collections.abc import Callable
from typing import Any

from ._base.errors import ConfigurationError
from ._config import options as _options
from ._grammar.files import resolve_dialects
from ._model_dir import dialect_for_model_dir

__all__ = ["SERVER_MISSING", "add_serve", "run_serve", "serve_settings", "with_model_dir"]

#: What ``serve`` says when the ``server`` extra is not installed.
SERVER_MISSING = (
    "callsieve serve needs the server extra (Starlette, Uvicorn, httpx): "
    "pip install 'callsieve[server]'"
)
_FLAGS = (
    "upstream",
    "upstream_model",
    "dialect",
    "transcript",
    "chunk_size",
    "delay_ms",
    "host",
    "port",
    "max_body_bytes",
    "allow_unauthenticated",
    "workers",
    "shutdown_grace",
    "metrics_port",
    "connect_timeout",
    "first_byte_timeout",
    "idle_timeout",
    "total_timeout",
    "on_abort",
    "header_timeout",
    "body_timeout",
    "keepalive_timeout",
    "send_timeout",
    "max_connections",
    "upstream_max_connections",
)
#: Repeatable flags, added to the config file's lists.
_LISTS = ("api_keys", "allowed_hosts", "cors_origins")


def add_serve(sub: Any, positive_int: Callable[[str], int], chunk_size: int) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the OpenAI-, Anthropic- and Gemini-compatible gateway",
        description="Serve /v1/chat/completions, /v1/responses, /v1/messages and Gemini's "
        "/v1beta/models/M:generateContent and :streamGenerateContent (also under /v1/) "
        "with tool calls parsed from a model's text: from an upstream OpenAI-compatible "
        "server, or replayed from a file (docs/gateway.md).",
    )
    source = serve.add_argument_group("model (exactly one)")
    source.add_argument(
        "--upstream",
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8001/v1",
    )
    source.add_argument(
        "--transcript", metavar="FILE", help="replay this file as the reply to every request"
    )
    serve.add_argument("--upstream-model", metavar="NAME", help="model name sent upstream")
    serve.add_argument(
        "--dialect",
        metavar="D",
        help="tool-call format taught to the upstream model (default dsml)",
    )
    serve.add_argument(
        "--model-dir",
        metavar="DIR",
        help="a model's folder: its tokenizer_config.json's response_template, else the "
        "dialect its chat template's markers name (docs/model-metadata.md)",
    )
    serve.add_argument(
        "--chunk-size",
        metavar="N",
        type=positive_int,
        help=f"replay: characters per chunk (default {chunk_size})",
    )
    serve.add_argument(
        "--delay-ms",
        metavar="D",
        type=float,
        help="replay: milliseconds between chunks (default 0)",
    )
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8000)")
    serve.add_argument(
        "--max-body-bytes",
        metavar="N",
        type=positive_int,
        help="largest request body accepted (default 4 MiB)",
    )
    serve.add_argument("--config", metavar="FILE", help="TOML settings (docs/gateway.md)")
    who = serve.add_argument_group("who may call")
    who.add_argument(
        "--api-key",
        metavar="KEY",
        dest="api_keys",
        action="append",
        help="a key clients must send (repeatable; also CALLSIEVE_API_KEYS)",
    )
    who.add_argument(
        "--allow-unauthenticated",
        action="store_const",
        const=True,
        help="listen on a non-loopback address without keys (a proxy checks)",
    )
    who.add_argument(
        "--allowed-host",
        metavar="NAME",
        dest="allowed_hosts",
        action="append",
        help="a Host name clients may use (repeatable; default: the loopback names)",
    )
    who.add_argument(
        "--cors-origin",
        metavar="ORIGIN",
        dest="cors_origins",
        action="append",
        help="a web origin allowed to call (repeatable; default: none)",
    )
    run = serve.add_argument_group("running")
    run.add_argument(
        "--workers", metavar="N", type=positive_int, help="worker processes (default 1)"
    )
    run.add_argument(
        "--shutdown-grace",
        metavar="S",
        type=float,
        help="seconds in-flight requests get after SIGTERM (default 25)",
    )
    run.add_argument(
        "--metrics-port",
        metavar="PORT",
        type=int,
        help="serve /metrics on this port only, without keys",
    )
    for name, default in (("connect", 10), ("first-byte", 120), ("idle", 60), ("total", 1800)):
        run.add_argument(
            f"--{name}-timeout",
            metavar="S",
            type=float,
            help=f"upstream {name.replace('-', ' ')} timeout (default {default} s)",
        )
    conn = serve.add_argument_group("client connections (per worker; docs/gateway.md)")
    for name, default, what in (
        ("header", 30, "from a connection's start or last response to a whole request head"),
        ("body", 30, "a request body may stall between two reads"),
        ("keepalive", 5, "an idle connection stays open after a response"),
        ("send", 60, "one write to a client that does not read may wait"),
    ):
        conn.add_argument(
            f"--{name}-timeout",
            metavar="S",
            type=float,
            help=f"seconds {what} (default {default})",
        )
    conn.add_argument(
        "--max-connections",
        metavar="N",
        type=positive_int,
        help="open connections per worker; past it a 503 (default 512)",
    )
    conn.add_argument(
        "--upstream-max-connections",
        metavar="N",
        type=positive_int,
        help="upstream connections per worker; past it a 503 (default: --max-connections)",
    )
    serve.add_argument(
        "--on-abort",
        metavar="WHAT",
        help="when a call that began to stream aborts: error (end the reply with the API's "
        "error, the default) or continue",
    )
    serve.add_argument(
        "--early-emit", choices=_options.EARLY_EMIT, help="the sieve's early_emit (default block)"
    )
    serve.add_argument("--dialects", metavar="D,D", help="the sieve's dialects, comma-separated")
    serve.add_argument(
        "--sieve-option",
        metavar="NAME=JSON",
        action="append",
        default=[],
        help="any other sieve option, its value as JSON (repeatable), "
        "e.g. --sieve-option 'mode=\"off\"'",
    )


def serve_settings(
    args: argparse.Namespace, load_toml: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The ``ServerConfig.build`` settings: the config file's, overridden by the flags."""
    settings = load_toml(args.config) if args.config else {}
    for name in _FLAGS:
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    for name in _LISTS:
        if getattr(args, name):
            settings[name] = [*settings.get(name, ()), *getattr(args, name)]
    sieve = dict(settings.get("sieve", {}))
    if args.early_emit is not None:
        sieve["early_emit"] = args.early_emit
    if args.dialects is not None:
        sieve["dialects"] = [d.strip() for d in args.dialects.split(",") if d.strip()]
    for item in args.sieve_option:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise ConfigurationError(f"--sieve-option: expected NAME=JSON, got {item!r}")
        try:
            sieve[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            raise ConfigurationError(
                f"--sieve-option {name}: not a JSON value: {value!r}"
            ) from None
    settings["sieve"] = sieve
    folder = settings.pop("model_dir", None)  # ([server] model_dir; the flag wins)
    if args.model_dir is not None:
        folder = args.model_dir
    if folder is not None and not isinstance(folder, str):
        raise ConfigurationError(f"[server] model_dir: expected a folder's path, got {folder!r}")
    if folder is not None:
        settings = with_model_dir(settings, folder)
    return settings


def with_model_dir(settings: dict[str, Any], folder: str) -> dict[str, Any]:
    """The settings with what the model's folder says (``_config.model_dir``): its
    dialects read, and taught when no ``dialect`` is set; a ``response_template``'s grammar
    folder added; its reasoning setting unless the sieve has one."""
    sieve = dict(settings["sieve"])
    dirs = tuple(str(d) for d in sieve.get("grammar_dirs", ()))
    found = dialect_for_model_dir(folder, grammar_dirs=dirs)
    if found.grammar_dirs:
        atexit.register(shutil.rmtree, found.grammar_dirs[0], True)
        sieve["grammar_dirs"] = [*dirs, *found.grammar_dirs]
    given = sieve.get("dialects")
    named = list(resolve_dialects(tuple(given) if isinstance(given, list) else given, dirs))
    sieve["dialects"] = [*named, *(d for d in found.dialects if d not in named)]
    if found.reasoning == "open":
        sieve.setdefault("reasoning", "open")
    taught = settings.get("dialect")
    if taught is None and found.source == "chat_template":
        taught = settings["dialect"] = found.dialect
    print(f"callsieve serve: --model-dir {folder}: {found.why}", file=sys.stderr)
    if taught is None:
        print(
            "callsieve serve: a response_template has no spelling to teach: the prompt "
            "teaches the default dialect (set --dialect to choose)",
            file=sys.stderr,
        )
    return {**settings, "sieve": sieve}


def run_serve(args: argparse.Namespace) -> None:
    try:
        server = importlib.import_module("callsieve.server")
    except ImportError:
        raise ConfigurationError(SERVER_MISSING) from None
    server.serve(server.ServerConfig.build(**serve_settings(args, server.load_toml)))

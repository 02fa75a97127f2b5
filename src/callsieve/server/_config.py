"""Strategy: the gateway's settings in one checked value, from the command line, the
environment and an optional TOML file, so a bad setting stops the server before it listens.

What it does: ``ServerConfig`` holds the mode (``upstream`` URL with its model name, prompt
dialect, API key, timeouts and size limits; or a ``transcript`` replayed in ``chunk_size``
pieces every ``delay_ms``), who may call (``api_keys``, ``allowed_hosts``, ``cors_origins``,
``allow_unauthenticated``), how it runs (``host``, ``port``, ``workers``, ``shutdown_grace``,
``keepalive_interval``, ``metrics_port``), the request limits (``max_body_bytes``,
``max_json_depth``), the client connections' limits (``header_timeout``, ``body_timeout``,
``keepalive_timeout``, ``send_timeout``, ``max_connections``; ``upstream_max_connections``
for the upstream pool, ``upstream_pool``), the model name the gateway reports, ``on_abort`` (the renderers'
choice when a call that began to stream aborts: ``"error"``, the default, or
``"continue"``), ``sieve``: keyword options for every request's ``Sieve`` (checked by
``SieveOptions``, so a new sieve option needs no change here), and ``models``: what the
operator says of each model (``_models``: its thinking, its template, its server).
``load_toml(path)`` reads a config file (tables ``[server]``, ``[upstream]``, ``[replay]``,
``[sieve]``, ``[models]``; docs/gateway.md) into keyword arguments; ``ServerConfig.build``
checks everything, adds the prompt ``dialect`` given to the dialects the sieve reads
(``read_too``: the model is read in the format it is taught, in both modes), finds whether the sieve's grammar has reasoning tags
(``reasoning_tags``), reads the keys from the environment (``CALLSIEVE_API_KEYS`` for
clients, ``CALLSIEVE_UPSTREAM_API_KEY`` for the upstream) and reads the transcript;
``profile(model)`` is a model's ``[models]`` entry.
What it guarantees: every refusal is a ``ConfigurationError`` naming the setting: not exactly
one of upstream and transcript, a prompt ``dialect`` that cannot be written, an unknown key or
table, a value of the wrong type, a malformed ``[models]`` entry, a bad ``on_abort``, a sieve
option ``SieveOptions`` refuses (or one set per request: ``tools``, ``id_factory``), a
transcript that cannot be read as UTF-8 — and a bind to an address other than loopback
without client keys, unless ``allow_unauthenticated`` says so. ``secrets`` lists every
configured key, for redaction (``_errors.Redactor``).
What it costs: reading the files once at start-up.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from dataclasses import dataclass, field, fields
from typing import Any

from .. import ConfigurationError
from ..prompt import DEFAULT_PROMPT_DIALECT, format_results
from ..render import ON_ABORT
from ._models import ModelProfile, profile_for, read_models

__all__ = [
    "API_KEYS_ENV",
    "API_KEY_ENV",
    "DEFAULT_PORT",
    "LOOPBACK_NAMES",
    "ServerConfig",
    "is_loopback",
    "load_toml",
]

DEFAULT_PORT = 8000
#: The environment variable the upstream's API key is read from (sent as a bearer token).
API_KEY_ENV = "CALLSIEVE_UPSTREAM_API_KEY"
#: The environment variable the clients' API keys are read from (comma or space separated).
API_KEYS_ENV = "CALLSIEVE_API_KEYS"
#: The ``Host`` names allowed by default: the loopback ones.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_PER_REQUEST = ("tools", "id_factory")
_SAMPLE_TOOL = {"name": "sample", "parameters": {"type": "object", "properties": {}}}
_TABLES = {
    "server": (
        "host",
        "port",
        "max_body_bytes",
        "max_json_depth",
        "model",
        "api_keys",
        "allow_unauthenticated",
        "allowed_hosts",
        "cors_origins",
        "workers",
        "shutdown_grace",
        "keepalive_interval",
        "metrics_port",
        "on_abort",
        "header_timeout",
        "body_timeout",
        "keepalive_timeout",
        "send_timeout",
        "max_connections",
        "model_dir",
    ),
    "upstream": (
        "url",
        "model",
        "dialect",
        "connect_timeout",
        "first_byte_timeout",
        "idle_timeout",
        "total_timeout",
        "max_line_bytes",
        "max_event_bytes",
        "max_reply_bytes",
        "max_connections",
    ),
    "replay": ("transcript", "chunk_size", "delay_ms"),
}
_RENAMED = {
    ("upstream", "url"): "upstream",
    ("upstream", "model"): "upstream_model",
    ("upstream", "max_connections"): "upstream_max_connections",
}
_INTS = {
    "chunk_size": 1,
    "port": 0,
    "max_body_bytes": 1,
    "max_json_depth": 1,
    "workers": 1,
    "max_line_bytes": 64,
    "max_event_bytes": 64,
    "max_reply_bytes": 64,
    "metrics_port": 0,
    "max_connections": 1,
    "upstream_max_connections": 1,
}
_NUMBERS = (
    "connect_timeout",
    "first_byte_timeout",
    "idle_timeout",
    "total_timeout",
    "delay_ms",
    "shutdown_grace",
    "keepalive_interval",
    "header_timeout",
    "body_timeout",
    "keepalive_timeout",
    "send_timeout",
)
#: The client connection's deadlines: above 0 (0 would close every connection at once).
_CONNECTION_TIMEOUTS = ("header_timeout", "body_timeout", "keepalive_timeout", "send_timeout")
_STRINGS = ("upstream", "upstream_model", "dialect", "transcript", "host", "model", "on_abort")
#: Tables that are not settings of their own: each is read whole by its reader.
_WHOLE = ("sieve", "models")
_LISTS = ("api_keys", "allowed_hosts", "cors_origins")
MiB = 1024 * 1024


@dataclass(frozen=True)
class ServerConfig:
    upstream: str | None = None
    upstream_model: str | None = None
    dialect: str = DEFAULT_PROMPT_DIALECT
    connect_timeout: float = 10.0
    #: Seconds from sending a streamed request to the upstream's first data event (a whole
    #: request's reply comes when the model is done: only ``total_timeout`` bounds it).
    first_byte_timeout: float = 120.0
    #: Seconds between two data events (SSE comments do not count), or two reads of a whole
    #: reply's body.
    idle_timeout: float = 60.0
    #: Seconds for the whole upstream reply.
    total_timeout: float = 1800.0
    max_line_bytes: int = 4 * MiB
    max_event_bytes: int = 4 * MiB
    max_reply_bytes: int = 64 * MiB
    api_key: str | None = field(default=None, repr=False)
    transcript: str | None = None
    transcript_text: str = field(default="", repr=False)
    chunk_size: int = 4
    delay_ms: float = 0.0
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_body_bytes: int = 4 * MiB
    max_json_depth: int = 128
    model: str | None = None
    api_keys: tuple[str, ...] = field(default=(), repr=False)
    allow_unauthenticated: bool = False
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    workers: int = 1
    shutdown_grace: float = 25.0
    keepalive_interval: float = 15.0
    metrics_port: int | None = None
    #: Seconds from a connection's start, or its last response, to a whole request head.
    header_timeout: float = 30.0
    #: Seconds the request body may stall between two reads.
    body_timeout: float = 30.0
    #: Seconds an idle connection is kept open after a response (Uvicorn's keep-alive).
    keepalive_timeout: float = 5.0
    #: Seconds one write to a client that does not read may wait.
    send_timeout: float = 60.0
    #: Open connections per worker; past it, a 503 (``_conn``).
    max_connections: int = 512
    #: Upstream connections per worker (``None``: as many as ``max_connections``).
    upstream_max_connections: int | None = None
    #: What the renderers do when a call that began to stream aborts (``callsieve.render``).
    on_abort: str = "error"
    sieve: dict[str, Any] = field(default_factory=dict)
    #: The ``[models]`` entries, in the file's order (``_models``).
    models: tuple[ModelProfile, ...] = ()
    #: Whether the sieve's grammar has reasoning tags (``reasoning="open"`` builds): found
    #: by ``build``, not set.
    reasoning_tags: bool = True

    @property
    def model_name(self) -> str:
        """The model ``/v1/models`` lists."""
        return self.model or self.upstream_model or "callsieve"

    def profile(self, model: str) -> ModelProfile | None:
        """The ``[models]`` entry of ``model`` (the name sent upstream), if any."""
        return profile_for(self.models, model) if self.models else None

    @property
    def upstream_pool(self) -> int:
        """Upstream connections per worker."""
        return self.upstream_max_connections or self.max_connections

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every configured key (the upstream's and the clients'), never to be shown."""
        return tuple(k for k in (self.api_key, *self.api_keys) if k)

    @classmethod
    def build(cls, **values: Any) -> ServerConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigurationError(f"unknown setting: {', '.join(unknown)}")
        values = {k: v for k, v in values.items() if v is not None}
        _check_types(values)
        for name in _CONNECTION_TIMEOUTS:
            if name in values and not values[name] > 0:
                raise ConfigurationError(f"{name} must be a number above 0, not {values[name]!r}")
        if ("upstream" in values) == ("transcript" in values):
            raise ConfigurationError(
                "give exactly one of --upstream URL (a model server) "
                "and --transcript FILE (replay a saved reply)"
            )
        if "dialect" in values:  # (the sieve reads what the model is taught, in every mode)
            sieve = values.get("sieve", {})
            dirs = sieve.get("grammar_dirs", ()) if isinstance(sieve, dict) else ()
            check_dialect(values["dialect"], dirs)
            values["sieve"] = read_too(values["dialect"], sieve)
        values["sieve"] = _sieve(values.get("sieve", {}))
        values["reasoning_tags"] = _has_reasoning_tags(values["sieve"])
        if "models" in values and not _profiles(values["models"]):
            values["models"] = read_models(values["models"])
        if values.get("on_abort", "error") not in ON_ABORT:
            raise ConfigurationError(
                f"on_abort must be one of {', '.join(ON_ABORT)}, not {values['on_abort']!r}"
            )
        if "transcript" in values:
            values["transcript_text"] = _read(values["transcript"])
        if "upstream" in values:
            values["upstream"] = values["upstream"].rstrip("/")
            if not values["upstream"].startswith(("http://", "https://")):
                raise ConfigurationError(
                    f"upstream must be an http:// or https:// URL, not {values['upstream']!r}"
                )
            values.setdefault("api_key", os.environ.get(API_KEY_ENV) or None)
        keys = [*values.get("api_keys", ()), *_split(os.environ.get(API_KEYS_ENV, ""))]
        values["api_keys"] = tuple(dict.fromkeys(keys))
        host = values.get("host", "127.0.0.1")
        if (
            not values["api_keys"]
            and not values.get("allow_unauthenticated")
            and not is_loopback(host)
        ):
            raise ConfigurationError(
                f"host {host!r} is not a loopback address and no client API key is set: "
                f"anyone who reaches it could spend the upstream; give --api-key KEY (or "
                f"{API_KEYS_ENV}), or --allow-unauthenticated if a proxy in front checks"
            )
        values.setdefault("allowed_hosts", _default_hosts(host))
        return cls(**values)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or a name) is on this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _default_hosts(host: str) -> tuple[str, ...]:
    """Loopback names, and the bind address itself when it is one address (not 0.0.0.0)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return (
            (*LOOPBACK_NAMES, host.lower())
            if host.lower() not in LOOPBACK_NAMES
            else LOOPBACK_NAMES
        )
    if address.is_unspecified or address.is_loopback:
        return LOOPBACK_NAMES
    return (*LOOPBACK_NAMES, str(address))


def _split(text: str) -> list[str]:
    return [k for k in re.split(r"[\s,]+", text) if k]


def _check_types(values: dict[str, Any]) -> None:
    for name, minimum in _INTS.items():
        if name in values:
            values[name] = _int(name, values[name], minimum=minimum)
    for name in _NUMBERS:
        if name in values:
            values[name] = _number(name, values[name])
    for name in _STRINGS:
        if name in values and not isinstance(values[name], str):
            raise ConfigurationError(f"{name} must be a string, not {values[name]!r}")
    for name in _LISTS:
        if name in values:
            value = values[name]
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ConfigurationError(f"{name} must be a list of non-empty strings")
            values[name] = tuple(value)
    if "allow_unauthenticated" in values and not isinstance(values["allow_unauthenticated"], bool):
        raise ConfigurationError("allow_unauthenticated must be true or false")


def load_toml(path: str) -> dict[str, Any]:
    """A config file as ``ServerConfig.build`` keyword arguments."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - CI runs 3.11+; the server extra installs tomli on 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigurationError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML ({exc})") from None
    out: dict[str, Any] = {}
    for table, body in data.items():
        if table in _WHOLE:
            out[table] = body
            continue
        keys = _TABLES.get(table)
        if keys is None or not isinstance(body, dict):
            raise ConfigurationError(
                f"{path}: unknown table [{table}]; the tables are {', '.join([*_TABLES, *_WHOLE])}"
            )
        for key, value in body.items():
            if key not in keys:
                raise ConfigurationError(
                    f"{path}: [{table}] has no setting {key!r}; it has {', '.join(keys)}"
                )
            out[_RENAMED.get((table, key)) or key] = value
    return out


def _profiles(value: Any) -> bool:
    """Whether ``value`` is already read (``ModelProfile``s, as ``build`` is given them in
    code)."""
    return isinstance(value, tuple) and all(isinstance(p, ModelProfile) for p in value)


def check_dialect(dialect: str, grammar_dirs: Any = ()) -> None:
    """Refuse a prompt dialect that cannot be written (it names no spelling file, built in
    or in ``grammar_dirs``)."""
    try:
        format_results([""], dialect=dialect, grammar_dirs=_strings(grammar_dirs))
    except ConfigurationError as exc:
        raise ConfigurationError(f"dialect: {exc}") from None


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


def read_too(dialect: str, options: Any) -> Any:
    """The sieve's options with ``dialect`` among the dialects it reads: added to the
    ``dialects`` named, or to those it reads by default (``grammar_dirs``' too)."""
    if not isinstance(options, dict):
        return options  # (``_sieve`` refuses it)
    named = options.get("dialects")
    if named == "all":
        return options
    if named is None:
        from .._grammar.files import resolve_dialects

        named = resolve_dialects(None, _strings(options.get("grammar_dirs", ())))
    if isinstance(named, str):
        named = [named]
    if not isinstance(named, (list, tuple)) or dialect in named:
        return options
    return {**options, "dialects": [*named, dialect]}


def _sieve(options: Any) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise ConfigurationError("sieve options must be a table of option = value")
    fixed = [k for k in _PER_REQUEST if k in options]
    if fixed:
        raise ConfigurationError(
            f"sieve option {fixed[0]!r} is set per request, not in the server's settings"
        )
    from .. import Sieve

    try:  # checked as a request with tools builds it (a policy needs tools to judge by)
        Sieve(tools=[_SAMPLE_TOOL], **options).close()
    except TypeError as exc:  # UnknownOptionError is a TypeError and a CallsieveError
        raise ConfigurationError(f"sieve: {exc}") from None
    except ConfigurationError as exc:
        raise ConfigurationError(f"sieve: {exc}") from None
    return dict(options)


def _has_reasoning_tags(options: dict[str, Any]) -> bool:
    """Whether a reply can be read as starting inside a thought (``reasoning="open"``): the
    grammar has reasoning tags (SPEC §15)."""
    from .. import Sieve

    try:
        Sieve(tools=[_SAMPLE_TOOL], **{**options, "reasoning": "open"}).close()
    except ConfigurationError:
        return False
    return True


def _int(name: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer of at least {minimum}, not {value!r}")
    return value


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigurationError(f"{name} must be a number of at least 0, not {value!r}")
    return float(value)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigurationError(f"{path}: {exc.strerror or exc}") from None

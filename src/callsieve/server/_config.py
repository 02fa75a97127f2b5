"""Strategy: the gateway's settings in one checked value, from the command line and an
optional TOML file, so a bad setting stops the server before it listens.

What it does: ``ServerConfig`` holds the mode (``upstream`` URL with its model name, prompt
dialect, API key and timeouts; or a ``transcript`` replayed in ``chunk_size`` pieces every
``delay_ms``), ``host`` and ``port``, the request body limit, the model name the gateway
reports, and ``sieve``: keyword options for every request's ``Sieve`` (``early_emit``,
``dialects``, ``mode`` and any option the installed callsieve has — reasoning, policy,
sanitizing — checked by ``SieveOptions``, so a new sieve option needs no change here).
``load_toml(path)`` reads a config file (tables ``[server]``, ``[upstream]``, ``[replay]``,
``[sieve]``; docs/gateway.md) into keyword arguments; ``ServerConfig.build(**values)`` checks
everything and reads the transcript.
What it guarantees: every refusal is a ``ConfigurationError`` naming the setting: not exactly
one of upstream and transcript, a prompt ``dialect`` that cannot be written, an unknown key or table, a value of the wrong type, a sieve
option ``SieveOptions`` refuses (or one set per request: ``tools``, ``id_factory``), a
transcript that cannot be read as UTF-8.
What it costs: reading the files once at start-up.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields
from typing import Any

from .._base.errors import ConfigurationError
from .._config.options import SieveOptions
from ..prompt import DEFAULT_PROMPT_DIALECT, format_results

__all__ = ["API_KEY_ENV", "DEFAULT_PORT", "ServerConfig", "load_toml"]

DEFAULT_PORT = 8000
#: The environment variable the upstream's API key is read from (sent as a bearer token).
API_KEY_ENV = "CALLSIEVE_UPSTREAM_API_KEY"
_PER_REQUEST = ("tools", "id_factory")
_SAMPLE_TOOL = {"name": "sample", "parameters": {"type": "object", "properties": {}}}
_TABLES = {
    "server": {"host": "host", "port": "port", "max_body_bytes": "max_body_bytes",
               "model": "model"},
    "upstream": {"url": "upstream", "model": "upstream_model", "dialect": "dialect",
                 "connect_timeout": "connect_timeout", "read_timeout": "read_timeout"},
    "replay": {"transcript": "transcript", "chunk_size": "chunk_size", "delay_ms": "delay_ms"},
}


@dataclass(frozen=True)
class ServerConfig:
    upstream: str | None = None
    upstream_model: str | None = None
    dialect: str = DEFAULT_PROMPT_DIALECT
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    api_key: str | None = field(default=None, repr=False)
    transcript: str | None = None
    transcript_text: str = field(default="", repr=False)
    chunk_size: int = 4
    delay_ms: float = 0.0
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_body_bytes: int = 4 * 1024 * 1024
    model: str | None = None
    sieve: dict[str, Any] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        """The model ``/v1/models`` lists."""
        return self.model or self.upstream_model or "callsieve"

    @classmethod
    def build(cls, **values: Any) -> ServerConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigurationError(f"unknown setting: {', '.join(unknown)}")
        values = {k: v for k, v in values.items() if v is not None}
        for name in ("chunk_size", "port", "max_body_bytes"):
            if name in values:
                values[name] = _int(name, values[name], minimum=0 if name == "port" else 1)
        for name in ("connect_timeout", "read_timeout", "delay_ms"):
            if name in values:
                values[name] = _number(name, values[name])
        for name in ("upstream", "upstream_model", "dialect", "transcript", "host", "model"):
            if name in values and not isinstance(values[name], str):
                raise ConfigurationError(f"{name} must be a string, not {values[name]!r}")
        if ("upstream" in values) == ("transcript" in values):
            raise ConfigurationError("give exactly one of --upstream URL (a model server) "
                                     "and --transcript FILE (replay a saved reply)")
        values["sieve"] = _sieve(values.get("sieve", {}))
        if "transcript" in values:
            values["transcript_text"] = _read(values["transcript"])
        if "upstream" in values:
            values["upstream"] = values["upstream"].rstrip("/")
            if not values["upstream"].startswith(("http://", "https://")):
                raise ConfigurationError(f"upstream must be an http:// or https:// URL, not "
                                         f"{values['upstream']!r}")
            values.setdefault("api_key", os.environ.get(API_KEY_ENV) or None)
            check_dialect(values.get("dialect", DEFAULT_PROMPT_DIALECT))
        return cls(**values)


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
        if table == "sieve" and isinstance(body, dict):
            out["sieve"] = body
            continue
        keys = _TABLES.get(table)
        if keys is None or not isinstance(body, dict):
            raise ConfigurationError(f"{path}: unknown table [{table}]; the tables are "
                                     f"{', '.join([*_TABLES, 'sieve'])}")
        for key, value in body.items():
            if key not in keys:
                raise ConfigurationError(f"{path}: [{table}] has no setting {key!r}; it has "
                                         f"{', '.join(keys)}")
            out[keys[key]] = value
    return out


def check_dialect(dialect: str) -> None:
    """Refuse a prompt dialect that cannot be written (it names no spelling file)."""
    try:
        format_results([""], dialect=dialect)
    except ConfigurationError as exc:
        raise ConfigurationError(f"dialect: {exc}") from None


def _sieve(options: Any) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise ConfigurationError("sieve options must be a table of option = value")
    fixed = [k for k in _PER_REQUEST if k in options]
    if fixed:
        raise ConfigurationError(f"sieve option {fixed[0]!r} is set per request, not in the "
                                 "server's settings")
    try:  # checked as a request with tools builds it (a policy needs tools to judge by)
        SieveOptions(tools=[_SAMPLE_TOOL], **options)
    except TypeError as exc:  # UnknownOptionError is a TypeError and a CallsieveError
        raise ConfigurationError(f"sieve: {exc}") from None
    except ConfigurationError as exc:
        raise ConfigurationError(f"sieve: {exc}") from None
    return dict(options)


def _int(name: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name} must be an integer of at least {minimum}, not "
                                 f"{value!r}")
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

"""Strategy: one frozen value object for the options of ``Sieve`` and ``parse``, validated in
one place (README "Options", SPEC §7, §9, §12).

What it does: ``SieveOptions(tools=None, *, early_emit=..., mode=..., max_block_chars=...,
dialects=..., grammar_dirs=..., id_factory=..., reasoning=..., calls_in_reasoning=...,
policy=..., on_reject=..., sanitize=..., metrics=..., **unknown)`` takes the keyword arguments
exactly as ``Sieve`` does, checks every one and keeps them normalised: ``tools`` as a tuple of
plain dicts (an SDK object's ``model_dump()`` taken once) and ``tool_specs`` as the tool
reader (``_config.tools``) reads them, ``schemas`` by tool name, ``dialects`` and
``grammar_dirs`` as tuples of ``str``
(a repeated dialect kept once), ``max_block_chars`` as an ``int``, ``metrics`` as a
``Metrics`` or None, and ``rules``: the ``Policy`` (``_config.policy``) of ``policy``, ``on_reject``
and the schemas, None when there is neither a policy nor a schema to coerce by. ``Sieve``,
``parse`` and the command line all build one, so they accept and refuse the same values.
What it guarantees: every refusal is a ``ConfigurationError`` (a ``ValueError``) raised at
construction, naming the option (and the index, for an element) and what was expected; an
unknown option name is an ``UnknownOptionError`` (also a ``TypeError``) that lists the known
ones. Whether a dialect has a grammar file, or a grammar directory exists, is
``load_grammar``'s to say; the file system is read here only to expand ``dialects="all"`` and,
with ``grammar_dirs`` and no ``dialects``, to add the dialects of those folders to the
defaults (``_grammar.files.resolve_dialects``).
The one check that cannot be made at construction: what ``id_factory`` returns. Its
callability and that it takes no arguments are checked here; ``make_call_id(factory)`` is what
the sieve calls for each call id, and turns a non-``str`` result or an exception from the
factory into a ``ConfigurationError`` chained to the cause — raised from ``feed()``/``close()``
at the first call id, since that is when the factory first runs.
What it costs: linear in the number of tool definitions, once per ``Sieve``; nothing after
construction except ``make_call_id``'s ``isinstance`` per call. Frozen at the top level only:
a definition that already is a plain dict is kept as given (never changed; one holding other
mappings is copied), and the schemas are read from it once, at construction.
"""

from __future__ import annotations

import difflib
import inspect
import operator
import os
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, SupportsIndex

from .._base.errors import ConfigurationError, UnknownOptionError
from .._grammar.compiled import DEFAULT_DIALECTS
from .._grammar.files import ALL, resolve_dialects
from .metrics import Metrics
from .policy import ON_REJECT, POLICIES, Policy
from .tools import ToolSpec, read_tools, schemas_of

__all__ = [
    "CALLS_IN_REASONING",
    "DEFAULT_MAX_BLOCK_CHARS",
    "EARLY_EMIT",
    "MODES",
    "OPTIONS",
    "REASONING",
    "SieveOptions",
    "make_call_id",
    "new_call_id",
]

EARLY_EMIT = ("block", "invoke", "arguments")
MODES = ("on", "off")
#: SPEC §15: where reasoning is (``"tags"``: between ``<think>`` tags; ``"open"``: from the
#: start of the reply to the first ``</think>``; ``"off"``: nowhere, the tags are text) ...
REASONING = ("tags", "open", "off")
#: ... and what a tool block inside it is: reasoning text, or a call as anywhere else.
CALLS_IN_REASONING = ("text", "call")
DEFAULT_MAX_BLOCK_CHARS = 8 * 1024 * 1024
OPTIONS = (
    "tools",
    "early_emit",
    "mode",
    "max_block_chars",
    "dialects",
    "grammar_dirs",
    "id_factory",
    "reasoning",
    "calls_in_reasoning",
    "policy",
    "on_reject",
    "sanitize",
    "metrics",
)


def new_call_id() -> str:
    """An OpenAI-style call id: ``call_`` and 24 random hex digits."""
    return "call_" + secrets.token_hex(12)


def make_call_id(
    factory: Callable[[], object],
    option: str = "id_factory",
    pattern: re.Pattern[str] | None = None,
) -> str:
    """One id from ``factory`` (the option ``option``: the sieve's ``id_factory``, or a
    renderer's id factories), checked against ``pattern`` if given (an id the API
    constrains); a non-``str`` result, one ``pattern`` does not match, or an exception the
    factory raises becomes a ``ConfigurationError`` (chained to the exception). The one
    validator of ids, the sieve's and the renderers' (``render._options.make_id``)."""
    try:
        value = factory()
    except Exception as exc:
        raise ConfigurationError(f"{option} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(value, str):
        raise ConfigurationError(f"{option} must return a str, got {type(value).__name__}")
    if pattern is not None and pattern.fullmatch(value) is None:
        raise ConfigurationError(
            f"{option} returned {value!r}, which the API does not accept "
            f"as an id (it must match {pattern.pattern})"
        )
    return value


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


@dataclass(frozen=True, slots=True, init=False)
class SieveOptions:
    """The validated options of one ``Sieve`` (see the module docstring)."""

    tools: tuple[dict[str, Any], ...] = field(hash=False)
    #: The definitions read (``_config.tools``): one ``ToolSpec`` per definition.
    tool_specs: tuple[ToolSpec, ...] = field(hash=False, repr=False)
    #: Each tool's parameters schema, by name (``schemas_of``).
    schemas: dict[str, dict[str, Any]] = field(hash=False, repr=False)
    early_emit: str
    mode: str
    max_block_chars: int
    dialects: tuple[str, ...]
    grammar_dirs: tuple[str, ...]
    id_factory: Callable[[], str]
    reasoning: str
    calls_in_reasoning: str
    policy: str | None
    on_reject: str
    sanitize: bool
    metrics: Metrics | None = field(hash=False, compare=False)
    #: What a call may become (``_config.policy``): None when there is neither a schema nor a policy.
    rules: Policy | None = field(hash=False, compare=False, repr=False)

    def __init__(
        self,
        tools: Iterable[Any] | None = None,
        *,
        early_emit: str = "block",
        mode: str = "on",
        max_block_chars: int = DEFAULT_MAX_BLOCK_CHARS,
        dialects: Iterable[str] | str | None = None,
        grammar_dirs: Iterable[str | os.PathLike[str]] = (),
        id_factory: Callable[[], str] = new_call_id,
        reasoning: str = "tags",
        calls_in_reasoning: str = "text",
        policy: str | None = None,
        on_reject: str = "drop",
        sanitize: bool = False,
        metrics: bool | Metrics | None = None,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise UnknownOptionError(_unknown_message(unknown), expected=OPTIONS)
        specs = read_tools(tools)
        schemas = schemas_of(specs)
        dirs = _grammar_dirs(grammar_dirs)
        values = {
            "tools": tuple(t.definition for t in specs),
            "tool_specs": specs,
            "schemas": schemas,
            "early_emit": _choice("early_emit", early_emit, EARLY_EMIT),
            "mode": _choice("mode", mode, MODES),
            "max_block_chars": _max_block_chars(max_block_chars),
            "dialects": _dialects(dialects, dirs),
            "grammar_dirs": dirs,
            "id_factory": _id_factory(id_factory),
            "reasoning": _choice("reasoning", reasoning, REASONING),
            "calls_in_reasoning": _choice(
                "calls_in_reasoning", calls_in_reasoning, CALLS_IN_REASONING
            ),
            "policy": None if policy is None else _choice("policy", policy, POLICIES),
            "on_reject": _choice("on_reject", on_reject, ON_REJECT),
            "sanitize": _flag("sanitize", sanitize),
            "metrics": _metrics(metrics),
        }
        values["rules"] = _rules(policy, on_reject, specs, schemas)
        for name, value in values.items():
            object.__setattr__(self, name, value)


# ---------------------------------------------------------------------- scalar options
def _unknown_message(unknown: Mapping[str, Any]) -> str:
    names = sorted(unknown)
    hints = [
        f"{n!r} (did you mean {close[0]!r}?)" if close else repr(n)
        for n in names
        for close in [difflib.get_close_matches(n, OPTIONS, n=1)]
    ]
    return (
        f"unknown option{'s' if len(names) > 1 else ''}: {', '.join(hints)}; "
        f"the options are {', '.join(OPTIONS)}"
    )


def _choice(option: str, value: object, allowed: tuple[str, ...]) -> str:
    if isinstance(value, str) and value in allowed:
        return value
    raise ConfigurationError(f"{option} must be one of {allowed}, not {value!r}", expected=allowed)


def _rules(
    policy: str | None,
    on_reject: str,
    tools: tuple[ToolSpec, ...],
    schemas: dict[str, dict[str, Any]],
) -> Policy | None:
    """The ``Policy`` of these options (values already checked): None without a policy and
    without a schema to coerce by."""
    if policy is not None and not tools:
        raise ConfigurationError(f"policy={policy!r} needs tools=[...]: the tools calls may name")
    if policy is None and not any(schemas.values()):
        return None
    return Policy(policy, on_reject, schemas)


def _flag(option: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigurationError(f"{option} must be True or False, not {_kind(value)}")


def _metrics(value: object) -> Metrics | None:
    """``metrics=True``: a new ``Metrics``; an instance: that one (shared by sieves whose
    counts it adds up); None or False: none (no cost)."""
    if value is None or value is False:
        return None
    if value is True:
        return Metrics()
    if isinstance(value, Metrics):
        return value
    raise ConfigurationError(
        f"metrics must be True, False, None or a callsieve.Metrics, not {_kind(value)}"
    )


def _max_block_chars(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        raise ConfigurationError(
            "max_block_chars must be an int of at least 1 (a number of "
            f"characters), not {_kind(value)}"
        )
    n = operator.index(value)
    if n < 1:
        raise ConfigurationError(f"max_block_chars must be an int of at least 1, not {n}")
    return int(n)


def _id_factory(value: object) -> Callable[[], str]:
    if not callable(value):
        raise ConfigurationError(
            "id_factory must be a callable taking no arguments and "
            f"returning a str, not {_kind(value)}"
        )
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):  # some builtins have no signature: trust them
        signature = None
    if signature is not None:
        try:
            signature.bind()
        except TypeError:
            raise ConfigurationError(
                f"id_factory must be callable with no arguments; {value!r} takes {signature}"
            ) from None
    return value  # what it returns is make_call_id's to check


# ---------------------------------------------------------------------- sequences
def _sequence(option: str, value: object, example: str) -> tuple[Any, ...]:
    """The items of an iterable option that must not be a str, bytes or a single path."""
    expected = f"{option} must be a sequence of {example}"
    if isinstance(value, (str, bytes, bytearray)):
        raise ConfigurationError(f"{expected}, not a {type(value).__name__}")
    if isinstance(value, os.PathLike):
        raise ConfigurationError(
            f"{expected}, not a single {type(value).__name__}: wrap it in a tuple"
        )
    try:
        items = iter(value)  # type: ignore[call-overload]  # refused just below if not
    except TypeError:
        raise ConfigurationError(f"{expected}, not {_kind(value)}") from None
    return tuple(items)


def _dialects(value: object, dirs: tuple[str, ...]) -> tuple[str, ...]:
    """The dialects to enable: as named (a repeated one once); ``"all"``: every one there is;
    not named: the defaults, and with ``grammar_dirs`` the dialects of those folders too
    (``_grammar.files.resolve_dialects``: the only options that look at the folders)."""
    if value is None or value == ALL or value == [ALL] or value == (ALL,):
        return resolve_dialects(None if value is None else ALL, dirs)
    items = _sequence("dialects", value, "dialect names such as ('dsml', 'xml'), or 'all'")
    for i, name in enumerate(items):
        if not isinstance(name, str):
            raise ConfigurationError(
                f"dialects[{i}] must be a dialect name (str), not {_kind(name)}"
            )
    if not items:
        raise ConfigurationError(
            "dialects must name at least one dialect", expected=DEFAULT_DIALECTS
        )
    return tuple(dict.fromkeys(items))  # a repeated dialect is enabled once


def _grammar_dirs(value: object) -> tuple[str, ...]:
    items = _sequence("grammar_dirs", value, "directories such as ('my_grammars',)")
    out: list[str] = []
    for i, item in enumerate(items):
        path = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise ConfigurationError(
                f"grammar_dirs[{i}] must be a directory path (str or "
                f"os.PathLike of str), not {_kind(item)}"
            )
        out.append(path)
    return tuple(out)

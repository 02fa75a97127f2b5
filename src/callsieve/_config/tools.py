"""Strategy: read tool definitions — in the shapes the APIs send them — once, into
``ToolSpec`` values that everything else takes what it needs from: the options keep the
definitions (``SieveOptions.tools``), the policy and the assembler the schemas
(``schemas_of``), the prompt side names, descriptions and schemas.

What it does: ``read_tools(value)`` reads a list of definitions: OpenAI-style
``{"type": "function", "function": {"name", "description", "parameters"}}``, flat
``{"name", "parameters"}`` and Anthropic-style ``{"name", "description", "input_schema"}``
dicts, or objects with ``model_dump()`` (an SDK's types, dumped once, ``exclude_none``).
Each gives a ``ToolSpec``: its name, its description (``""`` if none), its parameters'
schema (``parameters``, else ``input_schema``; none, or ``None``, is ``{}``) and the
definition as a plain dict. ``schemas_of(specs)`` maps each name to its schema (a later
definition of a name wins).
What it guarantees: anything else is an error of the class the caller names
(``ConfigurationError`` for ``Sieve``'s options, ``FormatError`` for the prompt side)
saying where (``tools[1]['function']``) and what would have been accepted. A definition that
already is a plain dict is kept as given, never changed; one holding other mappings is
copied (so ``definition`` is plain data all the way to its schemas).
What it costs: linear in the number of definitions, once per ``Sieve`` or prompt.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from .._base.errors import CallsieveError, ConfigurationError

__all__ = ["SHAPES", "ToolSpec", "read_tools", "schemas_of"]

#: The shapes a definition may have (said by every refusal).
SHAPES = (
    '{"type": "function", "function": {"name", "description", "parameters"}}',
    '{"name", "description", "input_schema"}',
    '{"name", "parameters"}',
    "an object with model_dump() giving one of these",
)
_SCHEMA_KEYS = ("parameters", "input_schema")


class ToolSpec(NamedTuple):
    """One tool definition, read (see the module docstring)."""

    name: str
    description: str
    #: The parameters' JSON Schema (``{}`` if the definition has none).
    schema: dict[str, Any]
    #: The definition as a plain dict: the one given, if it already was one.
    definition: dict[str, Any]


def read_tools(
    value: object, error: type[CallsieveError] = ConfigurationError
) -> tuple[ToolSpec, ...]:
    """Every definition in ``value`` (None: none), read; a refusal is an ``error``."""
    if value is None:
        return ()
    expected = "tools must be None or a list of tool definitions"
    if isinstance(value, Mapping) or callable(getattr(value, "model_dump", None)):
        raise error(
            f"{expected}, not a single {type(value).__name__}: wrap one "
            "definition in a list, tools=[...]",
            expected=SHAPES,
        )
    if isinstance(value, (str, bytes, bytearray)):
        raise error(f"{expected}, not a {type(value).__name__}", expected=SHAPES)
    try:
        items = iter(value)  # type: ignore[call-overload]  # refused just below if not
    except TypeError:
        raise error(f"{expected}, not {_kind(value)}", expected=SHAPES) from None
    return tuple(_read_tool(f"tools[{i}]", item, error) for i, item in enumerate(items))


def schemas_of(tools: Iterable[ToolSpec]) -> dict[str, dict[str, Any]]:
    """``{tool name: parameters schema}`` (a later tool of the same name wins)."""
    return {t.name: t.schema for t in tools}


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _read_tool(where: str, item: object, error: type[CallsieveError]) -> ToolSpec:
    """One definition, or an ``error``."""
    if not isinstance(item, Mapping):
        dump = getattr(item, "model_dump", None)
        if not callable(dump):
            raise error(
                f"{where}: expected a dict (a tool definition) or an object with "
                f"model_dump(), not {_kind(item)}",
                expected=SHAPES,
            )
        item = _dumped(where, item, dump, error)
    fn = item.get("function")
    spec, at = item, where
    if fn is not None:  # OpenAI chat style
        at = f"{where}['function']"
        if not isinstance(fn, Mapping):
            raise error(
                f"{at}: expected a dict with a 'name' and 'parameters', not {_kind(fn)}",
                expected=SHAPES,
            )
        spec = fn
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        got = f"'name' is {name!r}" if "name" in spec else f"keys {sorted(map(str, spec))}"
        raise error(
            f"{at}: a tool definition needs a 'name' (non-empty str); got {got}",
            expected=SHAPES,
        )
    description = spec.get("description")
    if description is not None and not isinstance(description, str):
        raise error(
            f"{at}['description'] (tool {name!r}) must be a str, not {_kind(description)}",
            expected=SHAPES,
        )
    plain = _with(spec, None, None)
    schema: dict[str, Any] | None = None
    for key in _SCHEMA_KEYS:
        given = spec.get(key)
        if given is None:
            continue
        if not isinstance(given, Mapping):
            raise error(
                f"{at}['{key}'] (tool {name!r}) must be a dict (a JSON "
                f"Schema object), not {_kind(given)}",
                expected=SHAPES,
            )
        plain = _with(plain, key, _with(given, None, None))
        if schema is None:
            schema = plain[key]
    definition = plain if fn is None else _with(item, "function", plain)
    return ToolSpec(name, description or "", {} if schema is None else schema, definition)


def _with(mapping: Mapping[Any, Any], key: str | None, value: object) -> dict[Any, Any]:
    """``mapping`` as a dict with ``mapping[key]`` being ``value`` (no key: as it is): the
    mapping itself if it already is such a dict, else a copy."""
    if isinstance(mapping, dict) and (key is None or mapping.get(key) is value):
        return mapping
    out = dict(mapping)
    if key is not None:
        out[key] = value
    return out


def _dumped(
    where: str, obj: object, dump: Callable[..., object], error: type[CallsieveError]
) -> Mapping[Any, Any]:
    """``obj.model_dump(exclude_none=True)`` (or ``model_dump()`` if it takes no such
    argument), which must be a mapping."""
    kind = type(obj).__name__
    try:
        params = inspect.signature(dump).parameters.values()
        takes = any(p.name == "exclude_none" or p.kind is p.VAR_KEYWORD for p in params)
    except (TypeError, ValueError):
        takes = False
    try:
        data = dump(exclude_none=True) if takes else dump()
    except Exception as exc:
        raise error(
            f"{where}: {kind}.model_dump() raised {type(exc).__name__}: {exc}", expected=SHAPES
        ) from exc
    if not isinstance(data, Mapping):
        raise error(
            f"{where}: {kind}.model_dump() returned {_kind(data)}, expected a dict",
            expected=SHAPES,
        )
    return data

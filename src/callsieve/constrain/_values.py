"""Strategy: the language of a string value under its JSON Schema — what an exported grammar
lets a string parameter's raw body, or a JSON string's content, be.

What it does: ``string_constraints(schema, where)`` reads a string schema's ``enum`` /
``const`` (a finite set of values, kept only where the other keywords allow them), its
``pattern`` (``_regex``), its ``format`` (``date``, ``time``, ``date-time``, ``uuid``:
the formats llama.cpp's converter knows, written here as patterns) and its
``minLength``/``maxLength`` (any characters, so many times). The result is a list of
languages that must all hold, and the values when the set is finite. ``is_string_typed``
is the core's own test (``callsieve._values``): a parameter whose schema type is
``string`` (or ``string`` and ``null``) is read back as a string whatever its body.
What it guarantees: the languages are exact for the keywords read; any other keyword of a
string schema has been refused before (``_schema.check``).
What it costs: one regular-expression parse per pattern.
"""

from __future__ import annotations

import re
from typing import Any

from .._base.errors import ConfigurationError
from .._base.values import _is_string_type
from ._ir import ANY, Node, Rep
from ._regex import regex_node

__all__ = ["FORMAT_PATTERNS", "is_string_typed", "string_constraints", "string_schemas"]

#: RFC 3339 full-date, exactly: years 0001-9999, each month's days, 29 February in leap
#: years (last two digits divisible by 4 and not 00, or a century divisible by 400).
_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (
    rf"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    rf"|{_LEAP}-02-29)"
)
_TIME = (
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]{1,9})?"
    r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
FORMAT_PATTERNS = {
    "date": f"^{_DATE}$",
    "time": f"^{_TIME}$",
    "date-time": f"^{_DATE}[Tt]{_TIME}$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
}


def is_string_typed(schema: Any) -> bool:
    """Does the core read this parameter back as a string whatever its body (SPEC §5)?"""
    return isinstance(schema, dict) and _is_string_type(schema.get("type"))


def string_schemas(schema: Any) -> list[dict[str, Any]]:
    """The parts of ``schema`` that admit strings, each a schema of its own (the schema
    itself, each ``anyOf``/``oneOf`` branch that admits strings, recursively); ``[{}]`` for
    a schema that admits any value."""
    if schema is True or schema == {}:
        return [{}]
    if not isinstance(schema, dict):
        return []
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return [s for b in branches for s in string_schemas(b)]
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if kinds is not None and "string" not in kinds:
        return []
    if kinds is None and any(
        k in schema for k in ("properties", "items", "minimum", "maximum", "$ref", "allOf")
    ):
        return []
    return [schema]


def string_constraints(schema: dict[str, Any], where: str) -> tuple[list[Node], list[str] | None]:
    """(languages that must all hold, the finite set of values or None) for a string."""
    langs: list[Node] = []
    if "pattern" in schema:
        langs.append(regex_node(str(schema["pattern"]), f"{where}.pattern"))
    fmt = schema.get("format")
    if fmt is not None:
        if fmt not in FORMAT_PATTERNS:
            raise ConfigurationError(
                f"{where}: format {fmt!r} cannot be enforced on a raw string",
                expected=tuple(FORMAT_PATTERNS),
            )
        langs.append(regex_node(FORMAT_PATTERNS[fmt], f"{where}.format"))
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    if lo or hi is not None:
        if (
            not isinstance(lo, int)
            or not (hi is None or isinstance(hi, int))
            or (hi is not None and hi < lo)
        ):
            raise ConfigurationError(
                f"{where}: minLength/maxLength must be integers, min <= max",
                expected=("0 <= minLength <= maxLength",),
            )
        langs.append(Rep(ANY, lo, hi))
    values = _finite(schema, where)
    if values is not None:
        values = [v for v in values if _fits(v, schema)]
        if not values:
            raise ConfigurationError(
                f"{where}: no enum/const value satisfies the schema",
                expected=("a value that fits",),
            )
    return langs, values


def _finite(schema: dict[str, Any], where: str) -> list[str] | None:
    if "const" in schema:
        found = [schema["const"]]
    elif "enum" in schema:
        found = schema["enum"]
        if not isinstance(found, list):
            raise ConfigurationError(f"{where}: enum must be a list", expected=("a list",))
    else:
        return None
    return [v for v in found if isinstance(v, str)]


def _fits(value: str, schema: dict[str, Any]) -> bool:
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    if len(value) < lo or (hi is not None and len(value) > hi):
        return False
    for source in (schema.get("pattern"), FORMAT_PATTERNS.get(str(schema.get("format")))):
        if isinstance(source, str) and re.search(source, value) is None:
            return False
    return True

"""Calls drawn from tools' JSON Schemas (SPEC §18's properties), and the tool set the
constrained-decoding tests export.

``arguments(schema, strings, nested)`` draws argument objects a schema allows (the keywords
the exporter supports), their strings drawn from ``strings`` and those inside arrays and
objects from ``nested`` (a pattern, format or enum draws from itself), properties in the schema's order, optional ones present or not, no others;
a parameter the parser reads back as a string whatever its body (type ``string`` or
``["string", "null"]``) is drawn as a string or, where ``nulls``, null (a raw family
cannot write it: docs/constrained-decoding.md), and a string with a length bound holds
none of the characters ``kept_out``. ``breaking(schema)`` draws arguments that
break it: a value of the wrong type, a number out of range, a required property left out,
an enum value not listed, an undeclared property.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

#: The tools the tests export: strings (enum, pattern, format, length), integers with
#: bounds, numbers, booleans, nullable values, arrays, nested objects, ``anyOf``, a tool
#: with no parameters and one whose parameter admits a string or an integer.
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": {
                "type": "object",
                "required": ["city"],
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                    "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "required": ["query"],
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 40},
                    "filters": {
                        "type": "object",
                        "properties": {
                            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                            "exact": {"type": "boolean"},
                            "score": {"type": ["number", "null"]},
                        },
                        "required": ["exact"],
                    },
                    "limit": {"type": "integer", "minimum": 0},
                },
            },
        },
    },
    {
        "name": "note",
        "input_schema": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "due": {"type": "string", "format": "date"},
                "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                "ref": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "owner": {"type": ["string", "null"]},
            },
        },
    },
    {"name": "now", "parameters": {"type": "object", "properties": {}}},
]
SCHEMAS = {
    (t.get("function") or t)["name"]: (
        (t.get("function") or t).get("parameters") or (t.get("function") or t).get("input_schema")
    )
    for t in TOOLS
}

_FORMATS = {"date": st.dates().map(lambda d: d.isoformat())}


def _kinds(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def _string(schema: dict[str, Any], strings: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True)
    if "format" in schema:
        return _FORMATS[schema["format"]]
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    return strings.filter(lambda s: len(s) >= lo and (hi is None or len(s) <= hi))


def values(
    schema: Any,
    strings: st.SearchStrategy[str],
    nested: st.SearchStrategy[str],
    nulls: bool = True,
) -> st.SearchStrategy[Any]:
    """Values ``schema`` allows (see the module docstring): its strings from ``strings``,
    those inside its arrays and objects from ``nested``; ``nulls``: null where a
    string-typed schema admits it."""
    if "anyOf" in schema:
        return st.one_of(*(values(b, strings, nested, nulls) for b in schema["anyOf"]))
    kinds = _kinds(schema)
    if kinds and set(kinds) <= {"string", "null"} and "string" in kinds:
        # (a parameter line reads as a string whatever its body: null is the JSON body's)
        string = _string(schema, strings)
        return st.one_of(string, st.none()) if nulls and "null" in kinds else string
    if len(kinds) > 1:
        return st.one_of(*(values({**schema, "type": k}, strings, nested, nulls) for k in kinds))
    kind = kinds[0] if kinds else "object"
    if kind == "string":
        return _string(schema, strings)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**12)), schema.get("maximum", 10**12))
    if kind == "number":
        # (as the exports bound them: written out, no exponent: docs/constrained-decoding.md)
        return (
            st.floats(-1e15, 1e15)
            .filter(lambda f: f == 0 or abs(f) >= 1e-4)
            .map(lambda f: 0.0 if f == 0 else f)
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(
            values(schema.get("items", {"type": "string"}), nested, nested, nulls),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 3),
        )
    return arguments(schema, nested, nested, nulls)


@st.composite
def arguments(
    draw: Any,
    schema: dict[str, Any],
    strings: st.SearchStrategy[str],
    nested: st.SearchStrategy[str],
    nulls: bool = True,
) -> Any:
    """Argument objects ``schema`` allows (strings as ``values`` draws them)."""
    required = set(schema.get("required", []))
    out = {}
    for key, sub in (schema.get("properties") or {}).items():
        if key in required or draw(st.booleans()):
            out[key] = draw(values(sub, strings, nested, nulls))
    return out


def _breakers(sub: dict[str, Any]) -> list[Any]:
    """Values that break a property's schema (none for one that takes them all)."""
    kinds = _kinds(sub)
    if "enum" in sub:
        return ["not listed"]
    if "pattern" in sub or "format" in sub:
        return ["zz"]
    if kinds == ["integer"]:
        out: list[Any] = ["12", 1.5]
        out += [sub["maximum"] + 1] if "maximum" in sub else []
        out += [sub["minimum"] - 1] if "minimum" in sub else []
        return out
    if kinds == ["boolean"]:
        return ["yes", 1]
    if kinds == ["string"]:
        out = [5, True]
        out += ["x" * (sub["maxLength"] + 1)] if "maxLength" in sub else []
        out += [""] if sub.get("minLength") else []
        return out
    return []


@st.composite
def breaking(draw: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that break ``schema``: a value it forbids, a required property left out, or
    one it does not declare."""
    args = dict(draw(arguments(schema, st.just("x"), st.just("x"))))
    props = schema.get("properties") or {}
    ways = [("extra", None)]
    ways += [("missing", None)] if schema.get("required") else []
    ways += [(k, v) for k, sub in props.items() for v in _breakers(sub)]
    way, value = draw(st.sampled_from(ways))
    if way == "extra":
        args["not_a_parameter"] = 1
    elif way == "missing":
        del args[schema["required"][0]]
    else:
        args[way] = value
    return args

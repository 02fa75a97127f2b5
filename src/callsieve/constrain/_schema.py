"""Strategy: read a tool's JSON Schema for an export — check that its keywords are ones the
target consumer enforces, and, for ``%json`` (llguidance) and structural tags (xgrammar),
rewrite it so that no string it allows can end the block it stands in.

What it does: ``check(schema, target, where)`` walks every subschema and refuses (a
``ConfigurationError`` naming the path) a keyword the target does not enforce: for
``"lark"`` what llguidance's JSON Schema compiler implements, for ``"gbnf"`` the subset
llama.cpp's converter supports (docs/constrained-decoding.md lists both); annotations
(``description``, ``title``, ``default``, …) are ignored. ``Safety`` says what the JSON text
must not hold in its context (characters where a body run stops, a sequence like ``]]>``);
``safe_schema(schema, safety)`` returns a copy in which every value position carries a
``pattern`` that keeps those out of string values (``allOf``-ed with a pattern already
there), every "any value" position (``{}``, ``true``, an array without ``items``, an object
without ``properties``) is spelled out so nested strings are covered too, extra object keys
must match a safe key pattern, and enum/const values whose JSON holds the forbidden text
are dropped. An object with ``properties`` and no ``additionalProperties`` takes no other
keys (the strict reading constrained decoding engines default to), and a number without
bounds gets ``NUMBER_BOUND`` (the parser reads ``1e999`` as no JSON value).
What it guarantees: a schema that passes ``check`` compiles in the target; under
``safe_schema`` no accepted JSON text holds the forbidden characters or sequence.
What it costs: one walk over the schema.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from .._base.errors import ConfigurationError
from ._ir import ANY, NOTHING, Chars
from ._strings import avoid, regex_text, split_units
from ._values import FORMAT_PATTERNS

__all__ = [
    "ANNOTATIONS",
    "FORMATS",
    "KEYWORDS",
    "NO_SAFETY",
    "NUMBER_BOUND",
    "Safety",
    "check",
    "resolve",
    "safe_schema",
    "slots",
    "sub_schemas",
]

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$anchor",
        "contentMediaType",
        "contentEncoding",
        "strict",
        "nullable_note",
    }
)
_COMMON = {
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
}
KEYWORDS = {
    "lark": frozenset(
        _COMMON
        | {"patternProperties", "minProperties", "maxProperties", "multipleOf", "x-guidance"}
    ),
    "gbnf": frozenset(_COMMON),
}
#: String formats the targets enforce (llguidance's list; ours for GBNF and raw strings).
FORMATS = {
    "lark": frozenset(
        {
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
            "uri",
        }
    ),
    "gbnf": frozenset({"date-time", "time", "date", "uuid"}),
}
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SINGLE = (
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)


@dataclass(frozen=True)
class Safety:
    """What JSON text in a context must not hold raw: ``chars``, and the sequence ``seq``."""

    chars: Chars = NOTHING
    seq: str = ""

    def allows(self, text: str) -> bool:
        return not any(c in self.chars for c in text) and (not self.seq or self.seq not in text)

    def __bool__(self) -> bool:
        return bool(self.chars) or bool(self.seq)

    def value_pattern(self) -> str:
        """A pattern every safe string value matches in full (anchored)."""
        return _value_pattern(self)


@functools.lru_cache(maxsize=64)
def _value_pattern(safety: Safety) -> str:
    allowed = ANY - safety.chars
    if not safety.seq:
        return "^" + regex_text(allowed) + "*$"
    return "^" + regex_text(avoid(split_units(allowed, safety.seq, []), safety.seq)) + "$"


NO_SAFETY = Safety()


def slots(schema: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(path suffix, container, key)`` of every subschema directly inside ``schema``:
    ``container[key]`` is the subschema (so it can be replaced in place)."""
    out: list[tuple[str, Any, Any]] = []
    for key in _MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            out += [(f".{key}.{k}", value, k) for k in value]
    for key in _LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            out += [(f".{key}[{i}]", value, i) for i in range(len(value))]
    for key in _SINGLE:
        value = schema.get(key)
        if isinstance(value, list):  # draft-4 tuple items
            out += [(f".{key}[{i}]", value, i) for i in range(len(value))]
        elif key in schema:
            out.append((f".{key}", schema, key))
    return out


def sub_schemas(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(path suffix, subschema)`` for every subschema directly inside ``schema``."""
    return [(path, holder[key]) for path, holder, key in slots(schema)]


def check(schema: Any, target: str, where: str, deep: bool = True) -> None:
    """Refuse what ``target`` does not enforce (see the module docstring). ``deep``: in
    the subschemas too (else ``schema``'s own keywords only)."""
    stack = [(where, schema)]
    allowed = KEYWORDS[target]
    while stack:
        path, node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            raise ConfigurationError(
                f"{path}: a schema must be an object or a boolean",
                expected=("a JSON Schema object",),
            )
        bad = sorted(k for k in node if k not in allowed and k not in ANNOTATIONS)
        if bad:
            raise ConfigurationError(
                f"{path}: {', '.join(map(repr, bad))} cannot be enforced in {target} "
                "(docs/constrained-decoding.md lists what can)",
                expected=tuple(sorted(allowed)),
            )
        fmt = node.get("format")
        if fmt is not None and fmt not in FORMATS[target]:
            raise ConfigurationError(
                f"{path}: format {fmt!r} cannot be enforced in {target}",
                expected=tuple(sorted(FORMATS[target])),
            )
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and ref.startswith("#")):
            raise ConfigurationError(
                f"{path}: only local references (#/…) are supported, not {ref!r}",
                expected=("#/$defs/NAME",),
            )
        if deep:
            stack += [(path + k, v) for k, v in sub_schemas(node)]


def resolve(root: Any, ref: str, where: str) -> Any:
    """The subschema a local ``$ref`` points at (a JSON pointer into ``root``)."""
    node = root
    for part in ref.lstrip("#").split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ConfigurationError(
                f"{where}: $ref {ref!r} points at nothing", expected=("#/$defs/NAME",)
            )
    return node


# -------------------------------------------------------------------- safe rewriting
_ANY_DEF = "callsieve_any"
#: Where a number (not an integer) is left unbounded, it is bounded by this: a JSON number
#: past a float's range (``1e999``) is no JSON value to the parser (SPEC §5), and
#: llguidance's numbers take any exponent unless bounded (then they take none: numbers
#: are written out, ``0.00001``, up to 15 digits before the point).
NUMBER_BOUND = 1e15
_ANY_REF = {"$ref": f"#/$defs/{_ANY_DEF}"}


def safe_schema(schema: dict[str, Any], safety: Safety) -> dict[str, Any]:
    """A copy of ``schema`` whose strings cannot hold what ``safety`` forbids, and whose
    objects with ``properties`` take no undeclared keys (see the module docstring)."""
    out: dict[str, Any] = json.loads(
        safe_schema_text(json.dumps(schema, ensure_ascii=False), safety)
    )
    return out


@functools.lru_cache(maxsize=4096)
def safe_schema_text(schema_json: str, safety: Safety) -> str:
    """``safe_schema`` of a schema given as JSON, as JSON (cached: tools share schemas)."""
    out = json.loads(schema_json)
    value = safety.value_pattern() if safety else None
    seen: set[int] = set()
    stack: list[Any] = [out]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        _rewrite(node, value, safety, seen)
        for path, holder, key in slots(node):
            if path.startswith((".not", ".propertyNames")):
                continue  # (a negated schema, and keys, are no value positions)
            if holder[key] is True and value is not None:
                holder[key] = dict(_ANY_REF)
            stack.append(holder[key])
    text = json.dumps(out, ensure_ascii=False)
    if value is not None and _ANY_DEF in text:
        out.setdefault("$defs", {})[_ANY_DEF] = _any_value(value)
        text = json.dumps(out, ensure_ascii=False)
    return text


def _rewrite(node: dict[str, Any], value: str | None, safety: Safety, seen: set[int]) -> None:
    if (
        "properties" in node
        and "additionalProperties" not in node
        and "patternProperties" not in node
    ):
        node["additionalProperties"] = False
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else None
    if (kinds is None or "number" in kinds) and set(node) - ANNOTATIONS != {"$ref"}:
        node.setdefault("maximum", NUMBER_BOUND)  # (see NUMBER_BOUND)
        node.setdefault("minimum", -NUMBER_BOUND)
    for key in ("enum", "const"):
        if key in node:
            _keep_safe(node, key, safety)
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in FORMAT_PATTERNS:
        # (llguidance's own date takes the year 0000, which the parser's schema check
        # refuses: the exact RFC 3339 pattern must hold too)
        _safe_string(node, FORMAT_PATTERNS[fmt], seen)
    if value is None or set(node) - ANNOTATIONS == {"$ref"}:
        return  # (a reference's target is a value position of its own)
    if kinds is None or "string" in kinds:
        _safe_string(node, value, seen)
    untyped = kinds is None and not any(
        k in node for k in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")
    )
    if (untyped or "array" in (kinds or ())) and "items" not in node and "prefixItems" not in node:
        node["items"] = dict(_ANY_REF)
    if untyped or "object" in (kinds or ()):
        _safe_keys(node, value)


def _safe_string(node: dict[str, Any], value: str, seen: set[int]) -> None:
    if "pattern" not in node:
        node["pattern"] = value
    elif node["pattern"] != value:  # (a pattern of its own: both must hold)
        extra = {"pattern": value}
        seen.add(id(extra))
        node.setdefault("allOf", []).append(extra)


def _safe_keys(node: dict[str, Any], value: str) -> None:
    extra = node.get("additionalProperties", "properties" not in node)
    if "patternProperties" in node:
        raise ConfigurationError(
            "patternProperties cannot be kept safe in this context (its keys could end the block)",
            expected=("properties", "additionalProperties"),
        )
    if extra is not False:
        node["patternProperties"] = {value: extra if isinstance(extra, dict) else dict(_ANY_REF)}
        node["additionalProperties"] = False


def _keep_safe(node: dict[str, Any], key: str, safety: Safety) -> None:
    values = node[key] if key == "enum" else [node[key]]
    if not isinstance(values, list):
        return
    kept = [v for v in values if safety.allows(json.dumps(v, ensure_ascii=False))]
    if not kept:
        raise ConfigurationError(
            f"every {key} value holds text that would end the block here: {values!r}",
            expected=("values without it",),
        )
    if key == "enum":
        node[key] = kept


def _any_value(value: str) -> dict[str, Any]:
    return {
        "anyOf": [
            {
                "type": ["null", "boolean", "number"],
                "maximum": NUMBER_BOUND,
                "minimum": -NUMBER_BOUND,
            },
            {"type": "string", "pattern": value},
            {"type": "array", "items": dict(_ANY_REF)},
            {
                "type": "object",
                "patternProperties": {value: dict(_ANY_REF)},
                "additionalProperties": False,
            },
        ]
    }

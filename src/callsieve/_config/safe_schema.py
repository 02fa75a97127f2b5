"""Strategy: a tool's JSON Schema, checked so that judging a call by it (``policy="schema"``)
reads nothing but the schema itself and ends in a bounded number of steps. A client may write
the schema (the gateway passes a request's tools on), so every way out is closed up front.

What it does: ``check(tool, schema)`` refuses, with a ``ConfigurationError`` naming the tool
and the culprit, a schema that would reach outside itself or could not end:

- a ``$ref`` (or ``$dynamicRef``, ``$recursiveRef``) that is not a fragment of the schema
  itself (``http://…``, ``file:…``, ``other.json#…``): nothing is ever fetched or read;
- a nested ``$id`` that is a URL (it would move where the references below it resolve);
- a fragment that names nothing in the schema (a JSON pointer or an anchor);
- a cycle of references that checks one value against itself forever (``{"$ref": "#"}``,
  ``a`` → ``b`` → ``a``, also through ``allOf``/``anyOf``/``oneOf``/``not``/``if``);
- more than ``MAX_FANOUT`` schemas applied to one value through such references;
- a ``pattern`` or ``patternProperties`` key that RE2 cannot run (back-references,
  look-around) — every pattern runs on RE2 (``google-re2``), in time linear in the text;
- ``patternProperties`` beside ``unevaluatedProperties`` (jsonschema would match those
  patterns with Python's backtracking ``re``).

``validator_class(cls)`` is ``cls`` with RE2 for ``pattern``, ``patternProperties`` and
``additionalProperties``, a linear ``uniqueItems``, and a step count on every keyword.
``counted(fn)`` runs ``fn`` with a fresh budget of ``MAX_STEPS`` steps: past it,
``OverBudget`` is raised and the call is rejected (the policy says so).
What it guarantees: no schema that ``check`` passes makes the validator open a file or a
connection; one call's check takes at most ``MAX_STEPS`` steps (a step is one keyword on one
value; ``enum``, ``required``, ``uniqueItems`` and ``pattern`` count their size).
What it costs: one walk over the schema when the sieve is built; a counter per keyword.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

from .._base.errors import ConfigurationError

__all__ = [
    "MAX_FANOUT",
    "MAX_STEPS",
    "OverBudget",
    "check",
    "counted",
    "uncheckable",
    "validator_class",
]

#: The most keyword steps one call's check may take (measured: docs/safety.md).
MAX_STEPS = 20_000
#: The most schemas that references may apply to one value.
MAX_FANOUT = 1_000
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
#: Keywords whose value is data, not a schema: never walked.
_DATA = frozenset(("const", "enum", "default", "examples", "example", "required"))
#: Keywords whose value maps names to schemas.
_MAPS = frozenset(("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"))
#: Keywords that apply their schemas to the same value (where a cycle can turn forever).
_IN_PLACE = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_STEPS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("callsieve_schema_steps")


class OverBudget(Exception):
    """A call's check took more than ``MAX_STEPS`` steps."""


def _refuse(tool: str, why: str) -> ConfigurationError:
    return ConfigurationError(f"the schema of tool {tool!r} {why}")


def _walk(node: Any, names: bool = False) -> Iterator[dict[str, Any]]:
    """Every object of the schema that stands where a schema may stand (``names``: ``node``
    maps names to schemas)."""
    if isinstance(node, list):
        for item in node:
            yield from _walk(item)
        return
    if not isinstance(node, dict):
        return
    if names:
        for value in node.values():
            yield from _walk(value)
        return
    yield node
    for key, value in node.items():
        if key not in _DATA:
            yield from _walk(value, names=key in _MAPS)


def check(tool: str, schema: dict[str, Any]) -> None:
    """Refuse a schema that reaches outside itself or cannot be checked safely."""
    anchors: dict[str, Any] = {}
    pointed = False
    for i, node in enumerate(_walk(schema)):
        for key in ("$id", "id"):
            ident = node.get(key)
            if isinstance(ident, str) and ident.startswith("#"):
                anchors[ident[1:]] = node
            elif isinstance(ident, str) and i and key == "$id":
                raise _refuse(tool, f"has a nested $id {ident!r}: only the root may set one")
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(key), str):
                anchors[node[key]] = node
        _check_patterns(tool, node)
        pointed = pointed or "unevaluatedProperties" in node
    if pointed and any("patternProperties" in n for n in _walk(schema)):
        raise _refuse(tool, "has patternProperties beside unevaluatedProperties")
    _Graph(tool, schema, anchors).check()


def _check_patterns(tool: str, node: dict[str, Any]) -> None:
    patterns = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    props = node.get("patternProperties")
    if isinstance(props, dict):
        patterns += list(props)
    if not patterns:
        return
    try:
        import re2
    except ImportError:
        raise ConfigurationError(
            f"the schema of tool {tool!r} has a pattern, and patterns run on RE2: "
            "pip install 'callsieve[schema]' (google-re2)",
            expected=("callsieve[schema]",),
        ) from None
    for text in patterns:
        try:
            _compiled(text)
        except re2.error as exc:  # (RE2 cannot run it: back-references, look-around, …)
            why = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
            raise _refuse(tool, f"has a pattern RE2 cannot run safely: {text!r} ({why})") from None


def uncheckable() -> tuple[type[BaseException], ...]:
    """What a check may raise instead of an answer: over budget, a reference it cannot
    follow, a value nested too deep, a pattern RE2 refuses (one ``check`` never saw)."""
    from referencing.exceptions import Unresolvable

    out: list[type[BaseException]] = [OverBudget, RecursionError, Unresolvable]
    try:
        import re2

        out.append(re2.error)
    except ImportError:
        pass
    return tuple(out)


class _Graph:
    """The schemas references apply to one value: their targets, a cycle, the fan-out."""

    def __init__(self, tool: str, schema: dict[str, Any], anchors: dict[str, Any]) -> None:
        self.tool, self.schema, self.anchors = tool, schema, anchors
        self.count: dict[int, int] = {}  # id(node) -> schemas applied to one value from it
        self.open: set[int] = set()

    def check(self) -> None:
        for node in _walk(self.schema):
            self.fanout(node)

    def target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise _refuse(
                self.tool,
                f"has the reference {ref!r}: only '#…' references to the schema itself are followed",
            )
        fragment = unquote(ref[1:])
        if not fragment.startswith("/"):
            if fragment == "":
                return self.schema
            if fragment in self.anchors:
                return self.anchors[fragment]
            raise _refuse(self.tool, f"has the reference {ref!r}, which names nothing in it")
        node: Any = self.schema
        for part in fragment[1:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise _refuse(self.tool, f"has the reference {ref!r}, which names nothing in it")
        return node

    def children(self, node: dict[str, Any]) -> list[Any]:
        out = [self.target(node[k]) for k in _REFS if isinstance(node.get(k), str)]
        for key in _IN_PLACE:
            if isinstance(node.get(key), list):
                out += node[key]
        out += [node[k] for k in _IN_PLACE_ONE if k in node]
        deps = node.get("dependentSchemas")
        if isinstance(deps, dict):
            out += list(deps.values())
        return [c for c in out if isinstance(c, dict)]

    def fanout(self, node: dict[str, Any]) -> int:
        key = id(node)
        if key in self.count:
            return self.count[key]
        if key in self.open:
            raise _refuse(self.tool, "has a cycle of references that never reaches a value")
        if len(self.open) > MAX_FANOUT:
            raise _refuse(self.tool, f"has a chain of more than {MAX_FANOUT} references")
        self.open.add(key)
        total = 1 + sum(self.fanout(c) for c in self.children(node))
        self.open.discard(key)
        if total > MAX_FANOUT:
            raise _refuse(self.tool, f"applies more than {MAX_FANOUT} schemas to one value")
        self.count[key] = total
        return total


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options=options)


def _tick(weight: int = 1) -> None:
    left = _STEPS.get(None)
    if left is None:
        return
    left[0] -= weight
    if left[0] < 0:
        raise OverBudget(f"the check took more than {MAX_STEPS} steps")


def counted(fn: Callable[[], Any]) -> Any:
    """``fn()`` with a fresh step budget (``OverBudget`` past it)."""
    token = _STEPS.set([MAX_STEPS])
    try:
        return fn()
    finally:
        _STEPS.reset(token)


def _key(value: Any) -> Any:
    """A hashable stand-in, equal where JSON Schema calls two values equal (1 == 1.0, but
    true != 1)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, list):
        return ("l", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, _key(v)) for k, v in value.items()))
    return ("v", value)


def _error(message: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string"):
        _tick(1 + len(instance) // 256)
        if not _compiled(pattern).search(instance):
            yield _error(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, props: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, sub in props.items():
        regex = _compiled(pattern)
        for key, value in instance.items():
            _tick()
            if regex.search(key):
                yield from validator.descend(value, sub, path=key, schema_path=pattern)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not unique or not validator.is_type(instance, "array"):
        return
    _tick(1 + len(instance))
    seen: set[Any] = set()
    for item in instance:
        key = _key(item)
        if key in seen:
            yield _error(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _additional(original: Any) -> Any:
    def additional(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            yield from original(validator, extra, instance, schema) or ()
            return
        known = schema.get("properties") or {}
        regexes = [_compiled(p) for p in patterns]
        extras = [k for k in instance if k not in known and not any(r.search(k) for r in regexes)]
        _tick(1 + len(instance))
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            names = ", ".join(repr(k) for k in sorted(extras))
            yield _error(
                f"{names} do not match any of the regexes: {', '.join(map(repr, patterns))}"
            )

    return additional


def _counting(keyword: str, fn: Any) -> Any:
    sized = keyword in ("enum", "required")

    def step(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _tick(1 + len(value) if sized and isinstance(value, list) else 1)
        return fn(validator, value, instance, schema)

    return step


@functools.lru_cache(maxsize=16)
def validator_class(cls: Any) -> Any:
    """``cls`` with RE2 patterns, a linear ``uniqueItems`` and counted steps."""
    import jsonschema.validators

    keywords = dict(cls.VALIDATORS)
    if "pattern" in keywords:
        keywords["pattern"] = _pattern
    if "patternProperties" in keywords:
        keywords["patternProperties"] = _pattern_properties
    if "additionalProperties" in keywords:
        keywords["additionalProperties"] = _additional(keywords["additionalProperties"])
    if "uniqueItems" in keywords:
        keywords["uniqueItems"] = _unique_items
    counted_keywords = {k: _counting(k, fn) for k, fn in keywords.items()}
    return jsonschema.validators.extend(cls, counted_keywords)  # type: ignore[no-untyped-call]

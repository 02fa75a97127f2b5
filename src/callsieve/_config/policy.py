"""Strategy: the tool policy (SPEC §9) and schema-aware coercion — what a call that the
parser found may become before it is handed out.

What it does: a ``Policy`` is built once per ``Sieve`` from the validated tool definitions
(``SieveOptions``). ``settle(name, input)`` is asked once per call, the moment the capture
has built it: it first *coerces* the input where the tool's JSON Schema types a property
(``"10"`` → ``10`` for ``integer``, ``"2.5"`` → ``2.5`` for ``number``, ``"true"`` (or
``"True"``) → ``true`` for ``boolean``, ``"null"`` (or ``"None"``) → ``null`` for ``null``, a
JSON text — or a Python literal of JSON's kinds, as templates that write values with ``str()``
do — → the object or array for ``object``/``array``; nested properties and array items too), then gives the
verdict: ``None`` (the call goes out), or the reason it is rejected — ``unknown tool 'x'``
under ``policy="allowlist"`` and ``"schema"``, ``schema: <path>: <message>`` (the first,
best-matching ``jsonschema`` error) under ``"schema"``. ``allows_name`` answers the early
question argument streaming asks when a call's name is known (no ``CallStarted`` for a name
the allowlist refuses), ``refuses`` the one it asks before a typed value goes out (a value
that breaks its property's schema dooms the call: nothing more of it is sent). ``Rejection`` is the record of one rejected call.
What it guarantees: a value whose schema type admits ``string`` is never turned into
anything else; a value is only replaced by one of the type the schema asks for (a text that
does not read as that type stays as it is, and the schema check then says so); every
replacement is recorded as ``"<path>: string -> <type>"`` on the call (``ToolCall.coercions``).
Without schemas there is nothing to coerce; without ``policy`` nothing is rejected.
``jsonschema`` is imported only when ``policy="schema"`` is asked for: its absence is a
``ConfigurationError`` saying what to install, raised at construction, and so is a schema
that is not a valid JSON Schema.
What it costs: nothing per chunk; per call, a walk over the input's values that have a
schema (depth bounded by ``MAX_COERCE_DEPTH``), and under ``"schema"`` one validation (with
argument streaming, also one per parameter sent whole, of that property alone).
"""

from __future__ import annotations

import ast
import json
from typing import Any, NamedTuple

from .._base.errors import ConfigurationError
from .._base.events import ToolCall, _Value, value

__all__ = [
    "MAX_COERCE_DEPTH",
    "ON_REJECT",
    "POLICIES",
    "Policy",
    "Rejection",
    "Settled",
    "coerced",
    "reason_kind",
    "settled",
]

POLICIES = ("allowlist", "schema")
ON_REJECT = ("drop", "text")
#: A Python literal longer than this is not read as an object or array (``_python_literal``).
MAX_LITERAL = 65536
#: Coercion follows nested ``properties``/``items`` at most this deep.
MAX_COERCE_DEPTH = 32

_NUMBER_CHARS = frozenset("0123456789+-.eE")
_UNSET: Any = object()
_SCHEMA = "schema: "


@value
class Rejection(_Value):
    """One call the policy refused: its ``name``, the ``reason``, the ``span`` (offsets of the
    whole input) and ``raw`` text of the stretch of the block it stood in (SPEC §Invariants 2),
    ``action`` (``"drop"`` or ``"text"``: what ``on_reject`` did with that text) and the
    ``call`` as it would have gone out."""

    __hash__ = None  # type: ignore[assignment]  # (its call is unhashable, ``ToolCall``)

    __slots__ = ("_name", "_reason", "_span", "_raw", "_action", "_call")
    name: str
    reason: str
    span: tuple[int, int]
    raw: str
    action: str
    call: ToolCall

    def __init__(
        self, name: str, reason: str, span: tuple[int, int], raw: str, action: str, call: ToolCall
    ) -> None:
        self._name = name
        self._reason = reason
        self._span = span
        self._raw = raw
        self._action = action
        self._call = call


def reason_kind(reason: str) -> str:
    """What a rejection counts as (``Metrics``' ``rejected`` label): ``schema`` or
    ``unknown_tool``."""
    return "schema" if reason.startswith(_SCHEMA) else "unknown_tool"


def _types(schema: Any) -> tuple[str, ...]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(k for k in kind if isinstance(k, str))
    return ()


def _read_as(text: str, kind: str) -> tuple[bool, Any]:
    """``text`` read as a value of JSON Schema type ``kind``: ``(True, value)``, or
    ``(False, None)`` when it does not read as one."""
    s = text.strip()
    if kind in ("integer", "number"):
        if not s or not set(s) <= _NUMBER_CHARS:
            return False, None
        try:
            value = json.loads(s)
        except ValueError:
            return False, None
        if isinstance(value, float) and kind == "integer":
            if not value.is_integer():
                return False, None
            value = int(value)
        return isinstance(value, (int, float)) and not isinstance(value, bool), value
    if kind == "boolean":
        low = s.lower()
        return (low in ("true", "false")), low == "true"
    if kind == "null":
        return s.lower() in ("null", "none"), None
    if kind in ("object", "array") and s[:1] in "{[":
        want = dict if kind == "object" else list
        try:
            value = json.loads(s)
        except ValueError:
            value = _python_literal(s)  # (the templates that write Python's str() of a value)
        return isinstance(value, want), value
    return False, None


def _python_literal(text: str) -> Any:
    """``text`` as a Python literal holding only JSON's kinds of value (``{'a': True}``, as
    Seed-OSS's and Qwen's templates write a dict with ``str()``), else None. Only literals are
    read (``ast.literal_eval``), at most ``MAX_LITERAL`` characters."""
    if len(text) > MAX_LITERAL:
        return None
    try:
        value = ast.literal_eval(text)
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value


def coerce(value: Any, schema: Any, path: str, out: list[str], depth: int = 0) -> Any:
    """``value`` coerced to what ``schema`` types it as (see the module docstring); each
    replacement appended to ``out`` as ``"<path>: string -> <type>"``."""
    if depth > MAX_COERCE_DEPTH or not isinstance(schema, dict):
        return value
    kinds = _types(schema)
    if isinstance(value, str):
        if not kinds or "string" in kinds:
            return value
        for kind in kinds:
            ok, new = _read_as(value, kind)
            if ok:
                out.append(f"{path or '/'}: string -> {kind}")
                return coerce(new, schema, path, out, depth + 1)
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            changed = {
                k: coerce(v, props[k], f"{path}/{k}", out, depth + 1) if k in props else v
                for k, v in value.items()
            }
            if any(changed[k] is not value[k] for k in value):
                return changed
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            changed_list = [
                coerce(v, items, f"{path}/{i}", out, depth + 1) for i, v in enumerate(value)
            ]
            if any(a is not b for a, b in zip(changed_list, value, strict=True)):
                return changed_list
    return value


class Policy:
    """What a call may become (see the module docstring). ``kind`` is ``None`` (coercion
    only), ``"allowlist"`` or ``"schema"``; ``on_reject`` ``"drop"`` or ``"text"``."""

    __slots__ = ("kind", "on_reject", "names", "schemas", "_validators", "_property_validators")

    def __init__(
        self, kind: str | None, on_reject: str, schemas: dict[str, dict[str, Any]]
    ) -> None:
        self.kind = kind
        self.on_reject = on_reject
        self.schemas = schemas
        self.names = frozenset(schemas)
        self._validators: dict[str, Any] = {}
        if kind == "schema":
            self._validators = _validators(schemas)
        # (tool, property) -> a validator of that property's schema, or None: made on first use
        self._property_validators: dict[tuple[str, str], Any] = {}

    def allows_name(self, name: str) -> bool:
        """Whether a call of this name can go out (asked when its name is known)."""
        return self.kind is None or name in self.names

    def coerce_value(self, call: str, param: str, value: Any, out: list[str]) -> Any:
        """One parameter's value coerced as ``settle`` would (argument streaming sends each
        parameter as the call will hold it)."""
        props = (self.schemas.get(call) or {}).get("properties")
        if not isinstance(props, dict) or param not in props:
            return value
        return coerce(value, props[param], f"/{param}", out)

    def refuses(self, call: str, param: str, value: Any) -> bool:
        """Under ``"schema"``: whether ``value`` (as the call holds it, coerced) breaks the
        schema the tool's ``properties`` give ``param``. The call's arguments then break the
        tool's schema too (``properties`` checks each property present on its own, whatever
        else the schema says), so argument streaming sends no more of it: the call will be
        rejected (SPEC §9.3). False when nothing says so: no schema policy, no such
        property. (The property's schema is checked as a part of the tool's, so its
        ``$ref``s resolve against the tool's schema.)"""
        validator = self._validators.get(call)
        if validator is None:
            return False
        key = (call, param)
        check = self._property_validators.get(key, _UNSET)
        if check is _UNSET:
            props = validator.schema.get("properties")
            sub = props.get(param) if isinstance(props, dict) else None
            check = None if sub is None else validator.evolve(schema=sub)
            self._property_validators[key] = check  # (a benign race: either is the same)
        if check is None:
            return False
        from . import safe_schema

        try:
            return not safe_schema.counted(lambda: check.is_valid(value))
        except safe_schema.uncheckable():  # (settle rejects the call too)
            return True

    def settle(
        self, name: str, args: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[str, ...], str | None]:
        """``(input, coercions, reason)`` for a call just built (``reason`` None: accepted)."""
        coercions: list[str] = []
        schema = self.schemas.get(name)
        if schema:
            new = coerce(args, schema, "", coercions)
            args = new if isinstance(new, dict) else args
        if self.kind is None:
            return args, tuple(coercions), None
        if name not in self.names:
            return args, tuple(coercions), f"unknown tool {name!r}"
        validator = self._validators.get(name)
        if validator is not None:
            reason = _schema_error(validator, args)
            if reason is not None:
                return args, tuple(coercions), reason
        return args, tuple(coercions), None


def coerced(policy: Policy | None, call: str, param: str, value: Any) -> Any:
    """One parameter's value as the call will hold it (``Policy.coerce_value``; no policy:
    as it is)."""
    return value if policy is None else policy.coerce_value(call, param, value, [])


class Settled(NamedTuple):
    """A call as the capture keeps it, once the policy has seen it."""

    name: str
    input: dict[str, Any]
    ident: str | None  # the model's id for the call, or None
    coercions: tuple[str, ...]
    reason: str | None  # why the policy rejects it; None: it goes out


def settled(policy: Policy | None, built: tuple[Any, ...]) -> Settled:
    """The ``Settled`` call of ``assemble_call``'s ``(name, input)`` or ``(name, input, id)``."""
    ident = built[2] if len(built) == 3 else None
    if policy is None:
        return Settled(built[0], built[1], ident, (), None)
    value, coercions, reason = policy.settle(built[0], built[1])
    return Settled(built[0], value, ident, coercions, reason)


def _validators(schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``jsonschema`` validator per tool that has a schema (``callsieve[schema]``)."""
    try:
        import jsonschema
        import jsonschema.validators
    except ImportError:
        raise ConfigurationError(
            "policy='schema' needs the jsonschema library: pip install 'callsieve[schema]'",
            expected=("callsieve[schema]",),
        ) from None
    from referencing import Registry

    from . import safe_schema

    out: dict[str, Any] = {}
    for name, schema in schemas.items():
        if not schema:
            continue
        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ConfigurationError(
                f"the schema of tool {name!r} is not a valid JSON Schema: {exc.message}"
            ) from None
        safe_schema.check(name, schema)
        # (an empty registry: a reference outside the schema is never retrieved)
        out[name] = safe_schema.validator_class(cls)(schema, registry=Registry())
    return out


def _schema_error(validator: Any, args: dict[str, Any]) -> str | None:
    import jsonschema.exceptions

    from . import safe_schema

    try:
        error = safe_schema.counted(
            lambda: jsonschema.exceptions.best_match(validator.iter_errors(args))
        )
    except safe_schema.OverBudget as exc:
        return f"{_SCHEMA}/: {exc}"
    except safe_schema.uncheckable() as exc:  # (never a crash)
        return f"{_SCHEMA}/: cannot be checked ({type(exc).__name__})"
    if error is None:
        return None
    path = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{_SCHEMA}{path}: {error.message}"

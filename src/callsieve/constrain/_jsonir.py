"""Strategy: our JSON Schema → grammar converter, for GBNF (llama.cpp takes no JSON Schema
inside a grammar), in the subset llama.cpp's own converter supports, with the context's
``Safety`` built in.

What it does: ``JsonRules(Into(g), root, safety, where).value(schema)`` adds the rules for one
JSON value to the grammar ``g`` and returns the node that stands for it. Objects: the
``properties`` in their order (each present once, ``required`` ones always), then, where
``additionalProperties`` allows (absent means no), other keys — raw text that is none of
the declared names; arrays: ``prefixItems`` then ``items`` with ``minItems``/``maxItems``;
strings (``_values``): enum/const literals, one of ``pattern``/``format``/length (two
together is a ``ConfigurationError``: GBNF cannot intersect them), or any text; integers
with bounds as digit ranges; ``anyOf``/``oneOf`` as a choice (like llama.cpp, ``oneOf`` is
not checked for exclusivity), ``allOf`` of objects merged, local ``$ref`` (recursion as
rules). Separators as ``json.dumps`` writes them, the space optional: ``, `` and ``: ``.
With a ``fallback`` (Lark), a subschema outside that subset is the fallback's node
(``%json``), not a ``ConfigurationError``; regular members and items are then terminals.
Safety: a forbidden character is written as a ``\\uXXXX`` escape in literals and kept out
of raw text (any escape may stand for it in an unconstrained string); a forbidden sequence
cannot form — ``_strings.avoid`` for unconstrained text, its last character kept out of
constrained text.
What it guarantees: every accepted text is JSON that satisfies the schema (for the keywords
above; any other was refused by ``_schema.check``) and holds nothing ``safety`` forbids.
What it costs: one walk over the schema; rules are shared through ``Grammar.define``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._base.errors import ConfigurationError
from ._ir import (
    ANY,
    NOTHING,
    Alt,
    Both,
    Chars,
    Grammar,
    Lit,
    Node,
    Ref,
    Rep,
    Seq,
    alt,
    opt,
    seq,
    star,
)
from ._product import MAX_STATES, avoiding, intersect, too_many_states
from ._regex import restrict
from ._schema import ANNOTATIONS, Safety, check, resolve
from ._strings import avoid, int_range, json_units, split_units
from ._values import string_constraints

__all__ = ["Into", "JsonRules", "regular"]

_SEP, _COLON = seq(Lit(","), opt(Lit(" "))), seq(Lit(":"), opt(Lit(" ")))
_DIGITS = Chars.span("0", "9")
_INTEGER = seq(opt(Lit("-")), alt(Lit("0"), seq(Chars.span("1", "9"), Rep(_DIGITS, 0, 18))))
#: A number as JSON writes it, within a float's range (the parser reads ``1e999`` as no JSON
#: value): at most 19 digits before the point, so an exponent of at most 288 up.
_NUMBER = seq(
    _INTEGER,
    opt(seq(Lit("."), Rep(_DIGITS, 1, 20))),
    opt(
        seq(
            Chars.of("eE"),
            alt(seq(opt(Lit("+")), int_range(0, 288)), seq(Lit("-"), Rep(_DIGITS, 1, 3))),
        )
    ),
)


@dataclass(frozen=True)
class Into:
    """Where rules go: the grammar, its format, and what the rules of its schemas share."""

    g: Grammar
    #: llguidance's Lark (it intersects strings itself), not GBNF
    lark: bool = False
    #: the most states a constrained string's product may have (``_product``)
    cap: int = MAX_STATES
    #: the rules of constrained strings in their contexts (GBNF: ``_product``)
    products: dict[object, Ref] = field(default_factory=dict)
    #: the rules every schema of this grammar and safety shares (any value, any string)
    shared: dict[str, Ref] = field(default_factory=dict)


class JsonRules:
    """Builds JSON value rules into ``into.g`` for one tool's schema (``root``, for ``$ref``)."""

    def __init__(
        self,
        into: Into,
        root: Any,
        safety: Safety,
        where: str,
        lenient: bool = False,
        fallback: Callable[[Any, str], Node] | None = None,
    ) -> None:
        self.into = into
        self.g = into.g
        #: the node for a subschema these rules refuse (Lark: ``%json``); None: refuse it
        self.fallback = fallback
        #: past the product's bound, keep the sequence's last character out (the writer
        #: writes no value here: ``Target.json``) instead of a ``ConfigurationError``
        self.lenient = lenient
        self.root = root
        self.safety = safety
        self.where = where
        self._refs: dict[str, str] = {}
        #: the rules of ``$ref`` targets being built (not regular yet: maybe recursive)
        self._building: set[str] = set()
        kept_out = safety.chars | (Chars.of(safety.seq[-1]) if safety.seq else Chars(()))
        self._tight = ANY - kept_out  # characters a constrained string may hold raw
        #: what a literal escapes (few characters: a set)
        self._escaped = frozenset(chr(o) for lo, hi in kept_out.ranges for o in range(lo, hi + 1))

    # ----------------------------------------------------------------- values
    def value(self, schema: Any, where: str | None = None) -> Node:
        """One JSON value under ``schema``. With a ``fallback``, a subschema these rules
        refuse (its own keywords, or a ``ConfigurationError`` building it) is the
        fallback's node, and the rest stays ours."""
        where = where or self.where
        if self.fallback is None:
            return self._value(schema, where)
        try:
            check(schema, "gbnf", where, deep=False)
            return self._value(schema, where)
        except ConfigurationError:
            return self.fallback(schema, where)

    def _lexeme(self, node: Node, name: str) -> Node:
        """With a fallback (Lark), ``node`` as one terminal where it is regular: its
        literals apart would be lexemes of their own, and llguidance's lexer never backs
        up (``"a"`` would take the start of ``"ab"``)."""
        if self.fallback is None or not regular(node, self.g, set(self._building)):
            return node
        return self.g.define(name, node, terminal=True)

    def _value(self, schema: Any, where: str) -> Node:
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False:
            raise ConfigurationError(
                f"{where}: a schema that accepts nothing",
                expected=("a schema that accepts a value",),
            )
        keys = set(schema) - ANNOTATIONS
        if "$ref" in schema:
            if keys != {"$ref"}:
                schema = self._merge(
                    [
                        {k: schema[k] for k in keys - {"$ref"}},
                        resolve(self.root, schema["$ref"], where),
                    ],
                    where,
                )
            else:
                return self._ref(schema["$ref"], where)
        if "allOf" in schema:
            return self.value(
                self._merge(
                    [{k: v for k, v in schema.items() if k != "allOf"}, *schema["allOf"]], where
                ),
                where,
            )
        branches = schema.get("anyOf", schema.get("oneOf"))
        if branches is not None:
            rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            return alt(
                *(
                    self.value({**rest, **b} if isinstance(b, dict) else b, f"{where}.anyOf[{i}]")
                    for i, b in enumerate(branches)
                )
            )
        if "const" in schema or "enum" in schema:
            values = [schema["const"]] if "const" in schema else list(schema["enum"])
            return alt(*(Lit(self._dumps(v)) for v in values))
        kind = schema.get("type")
        if isinstance(kind, list):
            return alt(*(self.value({**schema, "type": t}, where) for t in kind))
        return self._typed(schema, kind if isinstance(kind, str) else _infer(schema), where)

    def _typed(self, schema: dict[str, Any], kind: str | None, where: str) -> Node:
        if kind == "object":
            return self._object(schema, where)
        if kind == "array":
            return self._array(schema, where)
        if kind == "string":
            return self._string(schema, where)
        if kind == "integer":
            return self._integer(schema, where)
        if kind == "number":
            if any(
                k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
            ):
                raise ConfigurationError(
                    f"{where}: bounds on a number (not an integer) cannot be enforced in gbnf",
                    expected=("type integer",),
                )
            return self.g.define("json_number", _NUMBER, terminal=True)
        if kind == "boolean":
            return alt(Lit("true"), Lit("false"))
        if kind == "null":
            return Lit("null")
        if kind is None:
            return self.any_value()
        raise ConfigurationError(
            f"{where}: unknown type {kind!r}",
            expected=("object", "array", "string", "integer", "number", "boolean", "null"),
        )

    def _ref(self, ref: str, where: str) -> Node:
        name = self._refs.get(ref)
        if name is None:
            name = self._refs[ref] = self.g.reserve("json_ref")
            self._building.add(name)
            self.g.rules[name] = self.value(resolve(self.root, ref, where), f"{where}<{ref}>")
            self._building.discard(name)
        return Ref(name)

    def _merge(self, parts: list[Any], where: str) -> dict[str, Any]:
        """``allOf`` members (and a ``$ref`` with siblings) as one schema: properties and
        required lists joined; any other keyword must not differ."""
        out: dict[str, Any] = {}
        for part in parts:
            if isinstance(part, dict) and "$ref" in part and set(part) - ANNOTATIONS == {"$ref"}:
                part = resolve(self.root, part["$ref"], where)
            if part is True:
                continue
            if not isinstance(part, dict):
                raise ConfigurationError(
                    f"{where}: allOf of a schema that accepts nothing", expected=("object schemas",)
                )
            for k, v in part.items():
                if k == "properties":
                    out["properties"] = {**out.get("properties", {}), **v}
                elif k == "required":
                    out["required"] = list(dict.fromkeys([*out.get("required", []), *v]))
                elif k in out and out[k] != v and k not in ANNOTATIONS:
                    raise ConfigurationError(
                        f"{where}: allOf members disagree on {k!r}; "
                        "gbnf merges object members only",
                        expected=("allOf of object schemas",),
                    )
                else:
                    out[k] = v
        return out

    # ---------------------------------------------------------------- objects
    def _object(self, schema: dict[str, Any], where: str) -> Node:
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        missing = required - set(props)
        if missing:
            raise ConfigurationError(
                f"{where}: required {sorted(missing)} not in properties",
                expected=("required names listed in properties",),
            )
        extra = schema.get("additionalProperties", "properties" not in schema)
        members: list[tuple[Node, bool]] = [
            (
                self._lexeme(
                    seq(Lit(self._dumps(k)), _COLON, self.value(v, f"{where}.properties.{k}")),
                    "json_member",
                ),
                k in required,
            )
            for k, v in props.items()
        ]
        if extra is not False:
            key = self._other_key(list(props))
            val = (
                self.any_value()
                if extra is True
                else self.value(extra, f"{where}.additionalProperties")
            )
            members.append((self._lexeme(seq(key, _COLON, val), "json_member"), False))
        body = _members(members, repeat_last=extra is not False)
        return seq(Lit("{"), body, Lit("}"))

    def _other_key(self, names: list[str]) -> Node:
        """A key that is none of ``names``: raw characters only (an escape could spell one)."""
        raw, _ = json_units(self._tight)
        trie: dict[str, Any] = {}
        for name in names:
            node = trie
            for c in name:
                node = node.setdefault(c, {})
            node[""] = {}
        return seq(Lit('"'), _not_in(trie, raw, top=True), Lit('"'))

    # ----------------------------------------------------------------- arrays
    def _array(self, schema: dict[str, Any], where: str) -> Node:
        prefix = schema.get("prefixItems")
        items = schema.get("items", prefix is None)
        if isinstance(items, list):  # draft-4 tuples
            prefix, items = items, schema.get("additionalItems", False)
        fixed = [
            self._lexeme(self.value(s, f"{where}.prefixItems[{i}]"), "json_item")
            for i, s in enumerate(prefix or [])
        ]
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        more = (
            None
            if items is False
            else self._lexeme(self.value(items, f"{where}.items"), "json_item")
        )
        parts: list[Node] = []
        for k, node in enumerate(fixed):
            parts.append(seq(_SEP, node) if k else node)
        n = len(fixed)
        if more is not None:
            low, high = max(lo - n, 0), None if hi is None else max(hi - n, 0)
            if n:
                parts.append(Rep(seq(_SEP, more), low, high))
            elif high != 0:
                tail = Rep(seq(_SEP, more), max(low - 1, 0), None if high is None else high - 1)
                parts.append(seq(more, tail) if low else opt(seq(more, tail)))
        elif lo > n:
            raise ConfigurationError(
                f"{where}: minItems {lo} needs more than the {n} prefixItems", expected=("items",)
            )
        return seq(Lit("["), seq(*parts), Lit("]"))

    # ---------------------------------------------------------------- scalars
    def _string(self, schema: dict[str, Any], where: str) -> Node:
        langs, values = string_constraints(schema, where)
        if values is not None:
            return alt(*(Lit(self._dumps(v)) for v in values))
        if len(langs) > 1:
            raise ConfigurationError(
                f"{where}: pattern, format and minLength/maxLength "
                "together cannot be enforced in gbnf (use one)",
                expected=("one of them",),
            )
        if not langs:
            return self.any_string()
        kept = self.safety.chars
        if not self.safety.seq:  # (what the context keeps out, as ``\uXXXX`` escapes)
            return seq(Lit('"'), _encode(langs[0], kept), Lit('"'))
        if self.into.lark:  # (llguidance intersects: any safe string, and the schema's spelled)
            also = Chars.of(self.safety.seq)
            mine = seq(Lit('"'), _encode(langs[0], kept, also), Lit('"'))
            return self.g.define("json_string", Both(mine, self.any_string()), terminal=True)
        # (GBNF: the product of both automata, the sequence's characters escapable too;
        # past its bound a ``ConfigurationError``: a narrower language would refuse values
        # the writer writes)
        context = avoiding(self.safety.seq, "json", "j", json=True, escapable=self.safety.seq)
        lang = restrict(langs[0], ANY - kept)
        found = intersect(self.g, lang, context, self.into.products, self.into.cap)
        if found is None and self.lenient:
            found = _encode(restrict(lang, self._tight))
        if found is None:
            raise too_many_states(where, self.into.cap)
        return seq(Lit('"'), found, Lit('"'))

    def _integer(self, schema: dict[str, Any], where: str) -> Node:
        lo = _bound(schema, "minimum", "exclusiveMinimum", math.ceil, 1)
        hi = _bound(schema, "maximum", "exclusiveMaximum", math.floor, -1)
        if lo is None and hi is None:
            return self.g.define("json_integer", _INTEGER, terminal=True)
        return int_range(lo, hi)

    def any_string(self) -> Node:
        found = self.into.shared.get("string")
        if found is None:
            found = self.into.shared["string"] = self.g.define(
                "json_string", _any_string(self.safety), terminal=True
            )
        return found

    def any_value(self) -> Node:
        found = self.into.shared.get("value")
        if found is None:
            found = self.into.shared["value"] = Ref(self.g.reserve("json_value"))
            string = self.any_string()
            member = seq(string, _COLON, found)
            obj = seq(Lit("{"), opt(seq(member, star(seq(_SEP, member)))), Lit("}"))
            arr = seq(Lit("["), opt(seq(found, star(seq(_SEP, found)))), Lit("]"))
            self.g.rules[found.name] = alt(
                obj,
                arr,
                string,
                self.g.define("json_number", _NUMBER, terminal=True),
                Lit("true"),
                Lit("false"),
                Lit("null"),
            )
        return found

    def _dumps(self, value: Any) -> str:
        """``value`` as JSON (``json.dumps``'s separators), forbidden text escaped."""
        if isinstance(value, dict):
            return (
                "{"
                + ", ".join(f"{self._dumps(str(k))}: {self._dumps(v)}" for k, v in value.items())
                + "}"
            )
        if isinstance(value, list):
            return "[" + ", ".join(self._dumps(v) for v in value) + "]"
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        if isinstance(value, str) and not self._escaped.isdisjoint(text):
            text = "".join(f"\\u{ord(c):04x}" if c in self._escaped else c for c in text)
        return text


@functools.lru_cache(maxsize=16)
def _any_string(safety: Safety) -> Node:
    """A JSON string holding anything, written so that ``safety`` holds."""
    raw, escapes = json_units(ANY - safety.chars, generic=True)
    body = (
        avoid(split_units(raw, safety.seq, escapes), safety.seq)
        if safety.seq
        else star(alt(raw, *escapes))
    )
    return seq(Lit('"'), body, Lit('"'))


def regular(node: Node, g: Grammar, seen: set[str]) -> bool:
    """Does ``node`` spell a regular language, through rules that do too (made terminals
    then, so that a terminal may name them)? A recursive rule does not."""
    if isinstance(node, Ref):
        if node.name in g.terminals:
            return True
        if node.name in seen or not regular(g.rules[node.name], g, seen | {node.name}):
            return False
        g.terminals.add(node.name)
        return True
    if isinstance(node, Seq | Alt):
        return all(regular(item, g, seen) for item in node.items)
    if isinstance(node, Rep):
        return regular(node.item, g, seen)
    return isinstance(node, Lit | Chars)


def _members(members: list[tuple[Node, bool]], repeat_last: bool) -> Node:
    """An object's members in order, each once (required ones always), commas between;
    ``repeat_last``: the last member (other keys) may come any number of times."""

    def later(k: int) -> Node:
        node, req = members[k]
        item = seq(_SEP, node)
        if repeat_last and k == len(members) - 1:
            return star(item)
        return item if req else opt(item)

    last = len(members) - 1
    tails = [
        seq(
            *(later(j) for j in range(k + 1, len(members))),
            later(k) if repeat_last and k == last else Lit(""),
        )
        for k in range(len(members))
    ]
    starts: list[Node] = []
    for k, (node, req) in enumerate(members):
        starts.append(seq(node, tails[k]))
        if req:
            break
    else:
        starts.append(Lit(""))
    return alt(*starts)


def _not_in(trie: dict[str, Any], raw: Chars, top: bool = False) -> Node:
    """Raw text that is none of the words in ``trie`` (``""`` marks a word's end)."""
    out = [seq(Lit(c), _not_in(sub, raw)) for c, sub in trie.items() if c]
    others = raw - Chars.of("".join(c for c in trie if c))
    if others:
        out.append(seq(others, star(raw)))
    if "" not in trie:
        out.append(Lit(""))
    return alt(*out) if out else Lit("")


@functools.lru_cache(maxsize=1024)
def _encode(node: Node, kept: Chars = NOTHING, also: Chars = NOTHING) -> Node:
    """A value-language node as the text of a JSON string's content (exact escapes);
    ``kept``: characters spelled only as ``\\uXXXX`` escapes, as the writers spell them;
    ``also``: characters spelled either way."""
    if isinstance(node, Lit):
        if any(c in kept or c in also for c in node.text):
            return seq(*(_encode(Chars.of(c), kept, also) for c in node.text))
        return Lit(json.dumps(node.text, ensure_ascii=False)[1:-1])
    if isinstance(node, Chars):
        raw, escapes = json_units(node)
        extra = node & (kept | also)
        escapes += [Lit(f"\\u{o:04x}") for lo, hi in extra.ranges for o in range(lo, hi + 1)]
        raw = raw - kept
        return alt(*([raw] if raw else []), *escapes)
    if isinstance(node, Seq):
        return seq(*(_encode(i, kept, also) for i in node.items))
    if isinstance(node, Rep):
        return Rep(_encode(node.item, kept, also), node.lo, node.hi)
    if isinstance(node, Alt):
        return alt(*(_encode(i, kept, also) for i in node.items)) if node.items else node
    return node


def _bound(
    schema: dict[str, Any], inclusive: str, exclusive: str, rnd: Any, step: int
) -> int | None:
    found = []
    ex = schema.get(exclusive)
    bound = schema.get(inclusive)
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        v = int(rnd(bound))
        found.append(v + step if ex is True and v == bound else v)  # (draft 4's flag)
    if isinstance(ex, (int, float)) and not isinstance(ex, bool):
        v = int(rnd(ex))
        found.append(v + step if v == ex else v)
    if not found:
        return None
    return max(found) if step > 0 else min(found)


def _infer(schema: dict[str, Any]) -> str | None:
    if any(k in schema for k in ("properties", "required", "additionalProperties")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in schema for k in ("pattern", "format", "minLength", "maxLength")):
        return "string"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return None

"""Strategy: read a family's own value language into JSON — the contract's value nodes
(grammar/README.md, "Value nodes"): ``value_object``, ``value_array``, ``value_member``,
``value_key``, ``value_string`` and ``value_scalar``.

What it does: ``read_value`` turns one value node's tree into a JSON value. Each node kind
has one reader in ``_READERS``: an object is its members (a ``value_key`` and one value;
the last of a repeated key wins, as in JSON), an array its values in order, a string the
text of its runs (its delimiters are not content), a scalar its text trimmed, read as a
JSON number, ``true``, ``false`` or ``null``, else kept as the string. A node outside the
table is ignored with all below it, as everywhere in the contract.
What it guarantees: no input raises anything but ``BadValue`` (a ``ValueError``): a member
with no key or no value, or values nested deeper than ``MAX_VALUE_DEPTH``. The walk stops at
that depth, so a hostile tree of any depth costs at most that many frames.
What it costs: linear in the nodes below the value, once per parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Token, Tree

from .._base.values import json_literal
from .._grammar import names as n
from .._scan.balanced import MAX_JSON_DEPTH

__all__ = ["MAX_VALUE_DEPTH", "BadValue", "read_value"]

#: Objects and arrays nested deeper than this fail the call (as a balanced JSON run does).
MAX_VALUE_DEPTH = MAX_JSON_DEPTH


class BadValue(ValueError):
    """A value node that cannot be read (the call holding it fails)."""


def read_value(kind: str, children: list[Any]) -> Any:
    """The JSON value of a value node of ``kind`` with ``children``; ``BadValue`` if it
    cannot be read."""
    return _READERS[kind](children, 0)


def _object(children: list[Any], depth: int) -> dict[str, Any]:
    if depth >= MAX_VALUE_DEPTH:
        raise BadValue(f"a value nests deeper than {MAX_VALUE_DEPTH}")
    out: dict[str, Any] = {}
    for child in children:
        if isinstance(child, Tree) and child.data == n.VALUE_MEMBER:
            key, value = _member(child.children, depth + 1)
            out[key] = value
    return out


def _member(children: list[Any], depth: int) -> tuple[str, Any]:
    key: str | None = None
    found = False
    value: Any = None
    for child in children:
        if not isinstance(child, Tree):
            continue
        if child.data == n.VALUE_KEY:
            key = _key(child.children)
        elif child.data in _VALUES:
            value, found = _READERS[child.data](child.children, depth), True
    if key is None:
        raise BadValue("a value member needs a key")
    if not found:
        raise BadValue(f"the value member {key!r} needs a value")
    return key, value


def _array(children: list[Any], depth: int) -> list[Any]:
    if depth >= MAX_VALUE_DEPTH:
        raise BadValue(f"a value nests deeper than {MAX_VALUE_DEPTH}")
    return [
        _READERS[c.data](c.children, depth + 1)
        for c in children
        if isinstance(c, Tree) and c.data in _VALUES
    ]


def _string(children: list[Any], depth: int) -> str:
    """The text of its runs (terminals named ``*_RUN``), as written."""
    return "".join(
        str(t) for t in children if isinstance(t, Token) and t.type.endswith(n.RUN_SUFFIX)
    )


def _scalar(children: list[Any], depth: int) -> Any:
    """Its tokens' text, trimmed: a JSON number or literal is that value, else the text."""
    text = "".join(str(t) for t in children if isinstance(t, Token)).strip()
    return text if text[:1] in ("[", "{") else json_literal(text)


def _key(children: list[Any]) -> str:
    """A key token's value: its group ``q`` (a quoted key), else ``v``, else its text;
    trimmed."""
    for tok in children:
        if isinstance(tok, Token):
            groups = getattr(tok, "groups", None) or {}
            value = groups.get(n.QUOTED_GROUP)
            if value is None:
                value = groups.get(n.VALUE_GROUP)
            return (str(tok) if value is None else str(value)).strip()
    return ""


#: Value node → its reader (children, depth of the node) → JSON value.
_READERS: dict[str, Callable[[list[Any], int], Any]] = {
    n.VALUE_OBJECT: _object,
    n.VALUE_ARRAY: _array,
    n.VALUE_STRING: _string,
    n.VALUE_SCALAR: _scalar,
}
#: The nodes that are a value (a member's second part, an array's item).
_VALUES = frozenset(_READERS)

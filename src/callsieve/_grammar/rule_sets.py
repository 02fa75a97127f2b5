"""Strategy: which of a grammar's rules and terminals the contract's nodes reach — the call
rules and the rules above them, the nodes the argument stream reads, the terminals below a
call's arguments — and the parser callbacks those rules get.

What it guarantees: read from the rules alone (a rule counts by its name or its alias, as
the Transformer reads them), so any dialect's file is treated alike. What it costs: one walk
over the rules when a grammar is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .names import (
    ATTR,
    CALL,
    CALL_ARGS,
    CALL_ENVELOPE,
    CALL_ID,
    CALL_JSON,
    CALL_KWARGS,
    CALL_NAME,
    CDATA,
    FRAME,
    PARAM,
    PARAM_NAME,
    PARAM_VALUE,
    RAW_VALUE,
    REPAIR_PREFIX,
    VALUE_NODES,
)

__all__ = [
    "ARG_NODES",
    "BODY_NODES",
    "CDATA_NODES",
    "ENVELOPE_NODES",
    "JSON_NODES",
    "RAW_NODES",
    "REPAIR_PREFIX",
    "STREAM_NODES",
    "VALUE_NODES",
    "discard",
    "is_call",
    "is_frame",
    "listening",
    "repairing_calls",
    "repairs_in",
    "rules_above_calls",
    "terminals_below",
]

#: The nodes the argument stream reads as they are reduced (``_blocks.argstream``).
STREAM_NODES = frozenset({CALL_NAME, PARAM_NAME, ATTR, PARAM, CALL_ID})
#: The nodes that hold a call's arguments: a call has started once a terminal below one is read.
ARG_NODES = frozenset({PARAM, CALL_ARGS, CALL_JSON, CALL_ENVELOPE, CALL_KWARGS})
#: The nodes whose text is a parameter's body read by SPEC §5 (plain text, CDATA): a run
#: elsewhere in a ``param`` (white space before its value's tag) is not its value's.
BODY_NODES = frozenset({PARAM_VALUE})
#: The nodes whose text a body holds verbatim (``<![CDATA[…]]>``, Gemma's ``<|"|>…<|"|>``).
CDATA_NODES = frozenset({CDATA})
#: The nodes whose text is a body taken as written (``raw_value``, ``decode_raw``).
RAW_NODES = frozenset({RAW_VALUE})
#: The nodes whose text is a JSON object of arguments (streamed by ``_blocks.json_stream``).
JSON_NODES = frozenset({CALL_ARGS, CALL_JSON})
#: The nodes that may be a JSON envelope, the call's name inside (``EnvelopeStream``).
ENVELOPE_NODES = frozenset({CALL_JSON, CALL_ENVELOPE})


def is_call(rule: Any) -> bool:
    """Whether a Lark rule builds a ``call`` node (by its own name or an alias)."""
    return bool((rule.alias or rule.origin.name) == CALL)


def is_frame(rule: Any) -> bool:
    """Whether a Lark rule builds a ``frame`` node (a block of framing, no call)."""
    return bool((rule.alias or rule.origin.name) == FRAME)


def listening(
    build: Callable[[list[Any]], Any], listener: Callable[[Any], None]
) -> Callable[[list[Any]], Any]:
    """The callback ``build``, which also hands the node it builds to ``listener``."""

    def callback(children: list[Any]) -> Any:
        node = build(children)
        listener(node)
        return node

    return callback


def terminals_below(rules: list[Any], nodes: frozenset[str]) -> frozenset[str]:
    """The terminals in the rules of ``nodes`` (by name or alias) and of every rule below
    them."""
    by_origin: dict[str, list[Any]] = {}
    for r in rules:
        by_origin.setdefault(str(r.origin.name), []).append(r)
    todo = [r for r in rules if (r.alias or r.origin.name) in nodes]
    seen = {id(r) for r in todo}
    found: set[str] = set()
    while todo:
        for sym in todo.pop().expansion:
            if sym.is_term:
                found.add(str(sym.name))
                continue
            for q in by_origin.get(str(sym.name), ()):
                if id(q) not in seen and not is_call(q):
                    seen.add(id(q))
                    todo.append(q)
    return frozenset(found)


def discard(children: list[Any]) -> None:
    """The parser callback of a rule whose value nobody reads."""


def rules_above_calls(rules: list[Any]) -> list[Any]:
    """The call rules and every rule that holds one, directly or through others."""
    above = {str(r.origin.name) for r in rules if is_call(r)}
    grew = True
    while grew:
        grew = False
        for r in rules:
            name = str(r.origin.name)
            if name not in above and any(str(s.name) in above for s in r.expansion):
                above.add(name)
                grew = True
    return [r for r in rules if str(r.origin.name) in above]


def repairing_calls(rules: list[Any]) -> frozenset[Any]:
    """The call rules below which a ``repair_*`` node can stand (not through another call)."""
    by_origin: dict[str, list[Any]] = {}
    for r in rules:
        by_origin.setdefault(str(r.origin.name), []).append(r)
    out = set()
    for call in (r for r in rules if is_call(r)):
        todo, seen = [call], {id(call)}
        while todo:
            rule = todo.pop()
            if str(rule.alias or rule.origin.name).startswith(REPAIR_PREFIX):
                out.add(call)
                break
            for sym in rule.expansion:
                for q in () if sym.is_term else by_origin.get(str(sym.name), ()):
                    if id(q) not in seen and not is_call(q):
                        seen.add(id(q))
                        todo.append(q)
    return frozenset(out)


def repairs_in(tree: Any) -> list[str]:
    """The repairs a call's tree records: its ``repair_<kind>`` nodes' kinds, in order."""
    return [
        str(t.data)[len(REPAIR_PREFIX) :]
        for t in tree.iter_subtrees_topdown()
        if str(t.data).startswith(REPAIR_PREFIX)
    ]

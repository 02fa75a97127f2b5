"""Strategy: which of a grammar's rules and terminals the contract's nodes reach — the call
rules and the rules above them, the nodes the argument stream reads, the terminals below a
call's arguments — and the parser callbacks those rules get.

What it does: ``TerminalRoles`` holds, per kind of node the argument stream reads, the
terminals below it. ``ParserTables`` owns a compiled grammar's LALR parser: Lark's table, the
configuration every block's parser shares, the callbacks its call rules get, and the parsers
made from them (``new_parser``, ``listening_parser``, ``entered``, ``fork_parser``).
What it guarantees: read from the rules alone (a rule counts by its name or its alias, as
the Transformer reads them), so any dialect's file is treated alike. What it costs: one walk
over the rules when a grammar is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lark import Lark

from .lark_internals import ShareableParser, is_shift, plain_rule_names
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
    START,
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
    "ParserTables",
    "TerminalRoles",
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


@dataclass(frozen=True)
class TerminalRoles:
    """The terminals below each kind of node the argument stream reads (``_blocks.argstream``):
    a call has started once one of ``arg_terminals`` is read."""

    #: below a ``param``, ``call_args``, ``call_json``, ``call_envelope`` or ``call_kwargs``
    arg_terminals: frozenset[str]
    #: those that hold a JSON object of arguments (``call_args``, ``call_json``)
    json_terminals: frozenset[str]
    #: those of a ``raw_value`` (a body taken as written, ``decode_raw``)
    raw_terminals: frozenset[str]
    #: those of a value node (``value_object``, …): the parameter goes out whole
    value_terminals: frozenset[str]
    #: those of a JSON body that may be an envelope (``call_json`` in a call with no name yet,
    #: ``call_envelope``): its arguments stream once its name has closed
    envelope_terminals: frozenset[str]
    #: those of a body read by SPEC §5 (``param_value``): the argument stream reads no other
    #: run of a parameter as its body (``ArgStream._body_run``)
    body_terminals: frozenset[str]
    #: of which those of a ``cdata`` node: its text verbatim, not a plain body's
    cdata_terminals: frozenset[str]

    @classmethod
    def of(cls, rules: list[Any]) -> TerminalRoles:
        """The roles of a grammar's rules."""
        return cls(
            terminals_below(rules, ARG_NODES),
            terminals_below(rules, JSON_NODES),
            terminals_below(rules, RAW_NODES),
            terminals_below(rules, VALUE_NODES),
            terminals_below(rules, ENVELOPE_NODES),
            terminals_below(rules, BODY_NODES),
            terminals_below(rules, CDATA_NODES),
        )


class ParserTables:
    """A grammar's LALR parser, built once and shared by every block (immutable after
    construction). ``lark`` and its ``table`` (Lark's parse table), the ``start_state``, and
    ``build_call``: the tree-building callback of each rule that builds a call. The capture
    builds a call's tree itself, the moment its last token arrives, and assembles it. The
    parser's own callbacks for those rules and every rule above them return None: a block's
    parser keeps no tree of the calls it has read, so a block of many calls holds their
    values, not their trees, until it closes. ``repairing_calls``: the call rules whose
    tree may hold a ``repair_*`` node. ``stream_rules``: the rules whose nodes the argument
    stream reads as they are reduced (``listening_parser``)."""

    __slots__ = (
        "lark",
        "table",
        "start_state",
        "build_call",
        "repairing_calls",
        "stream_rules",
        "_shared",
        "_conf",
    )

    def __init__(self, lark: Lark) -> None:
        plain_rule_names(lark)
        self.lark = lark
        # Every block's parser is a fresh parser state around the grammar's shared
        # configuration (``lark_internals.ShareableParser``).
        shared = self._shared = ShareableParser(lark)
        self.table: Any = shared.table
        self.start_state: int = self.table.start_states[START]
        self.build_call: dict[Any, Callable[[list[Any]], Any]] = {}
        callbacks = shared.rule_callbacks
        for rule in rules_above_calls(lark.rules):
            if is_call(rule):
                self.build_call[rule] = callbacks[rule]
            callbacks[rule] = discard
        self.repairing_calls = repairing_calls(lark.rules)
        self._conf = shared.with_callbacks(callbacks, START)
        self.stream_rules = tuple(
            r for r in lark.rules if (r.alias or r.origin.name) in STREAM_NODES
        )

    def shift_target(self, state: int, name: str) -> int | None:
        """The state that parser state ``state`` shifts terminal ``name`` to, or None where it
        does not shift it."""
        action = self.table.states.get(state, {}).get(name)
        if action is None or not is_shift(action[0]):
            return None
        return int(action[1])

    def new_parser(self) -> Any:
        """A Lark parser state at the start of a block (what ``lark.parse_interactive()``
        holds, made cheaply)."""
        return self._shared.new_parser(self._conf, self.start_state)

    def listening_parser(self, listener: Callable[[Any], None]) -> Any:
        """``new_parser`` whose ``stream_rules`` hand each node they build to ``listener``
        as well (its own callbacks: a few microseconds a block). Forks of it
        (``fork_parser``) do not listen."""
        callbacks: dict[Any, Callable[..., Any]] = dict(self._shared.rule_callbacks)
        for rule in self.stream_rules:
            callbacks[rule] = listening(callbacks[rule], listener)
        return self._shared.new_parser(
            self._shared.with_callbacks(callbacks, START), self.start_state
        )

    def entered(self, tokens: list[Any], listener: Callable[[Any], None] | None = None) -> Any:
        """A block's parser state, fed its entry's ``tokens`` (``listener``: see
        ``listening_parser``)."""
        ps = self.new_parser() if listener is None else self.listening_parser(listener)
        for tok in tokens:
            ps.feed_token(tok)
        return ps

    def fork_parser(self, ps: Any) -> Any:
        """A copy of the parser state ``ps`` that shares its values (``ps.copy(False)``)."""
        return self._shared.fork_parser(self._conf, ps)

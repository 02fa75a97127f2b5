"""Strategy: where a call and a block end, read from the grammar's rules and parse table — the
part of the cold path (``derive``) that checks the scanner's contract for endings and says,
per parser state, what the capture does when a run closes (grammar/README.md, "Rule names
that become calls" and "Where a block ends").

What it does: ``ends_with_block`` finds the call rules that end where their block ends
(reduced only at the end of input, in states that could go on: ``function_call``'s open
form, whose parameters follow its name with no closer); ``check_call_ends`` refuses any
other call rule whose last symbol the scanner could not see complete: a soft or hard run
(its end is known only at the next token), or a rule that can end with anything but a
balanced run. ``tail_rules`` are the rules a call ends with (the
last symbol of a call rule, and of those, recursively); ``check_tails`` makes sure that
every state holding one of them complete only reduces it, whatever comes next — LALR's
*default reduction*, which the capture performs itself when a balanced run closes, up to the
call. ``default_key`` and ``end_sure`` say, per state, which tail rule it reduces (an action
key of the table, as ``call_key`` is) and whether its end of input is the block rule's own
reduction (else one LALR merged from another context, which the capture checks).
``raw_rest`` finds the call rules that end with a soft or hard run where the block can only
end (a raw body, the rest of its block: built when the block ends). ``ends_blocks`` tells
whether any run can end a block (the end-of-input shortcut must then know where). ``call_firsts`` are the terminals a call can begin with; ``open_ended`` the
dialects whose calls may end their block (no closer follows: no missing-wrapper repair).
At run time, ``BlockEnds`` holds what the blocks read of endings: whether a call may end with
its block (``end_calls``), the terminals after which a block may end (``block_enders``) and
the openers that are a block by themselves (``whole_openers``).
What it guarantees: a grammar it passes lets the scanner emit each call the moment its last
token or balanced run is read (a call that ends with its block: the moment the block ends),
and end each block where its rule can end.
What it costs: a few passes over the rules and the states, on a cold load only (and one
over the states when a grammar is loaded, for ``BlockEnds``).
"""

from __future__ import annotations

import re
from typing import Any

from .._base.errors import GrammarError
from .lark_internals import END, is_reduce, is_shift
from .rule_sets import is_call
from .sources import Sources
from .specs import BalancedSpec, RunTerminal, TerminalSpec, TokenSpec

__all__ = [
    "BlockEnds",
    "call_firsts",
    "check_call_ends",
    "check_tails",
    "default_key",
    "end_call_key",
    "end_sure",
    "ends_with_block",
    "open_ended",
    "raw_rest",
    "tail_rules",
]


def _by_origin(rules: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in rules:
        out.setdefault(str(r.origin.name), []).append(r)
    return out


def _ending_balanced(rules: list[Any], balanced: set[str]) -> set[str]:
    """The nonterminals every rule of which ends with a balanced run (directly, or through
    another such nonterminal): a least fixed point. (Any set of terminals: ``raw_rest``.)"""
    by_origin = _by_origin(rules)
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, alts in by_origin.items():
            if name in found:
                continue
            if all(
                r.expansion
                and (
                    str(r.expansion[-1].name) in balanced
                    if r.expansion[-1].is_term
                    else str(r.expansion[-1].name) in found
                )
                for r in alts
            ):
                found.add(name)
                grew = True
    return found


class BlockEnds:
    """Where a loaded grammar's blocks may end (immutable after construction).
    ``end_calls``: a call may end where its block ends (``end_call_key``, or a raw body that
    runs to the end of its block: ``raw_rest``); the capture then builds it when the block
    ends (``Capture._ends``). ``block_enders``: the bounded terminals after which a block may
    end, and for a run after which it may, what its end can be: the bracket that closes a
    balanced run, any character for another run. Nothing completes a block where none of
    them matches further on. ``whole_openers``: the openers that are a block by themselves
    (a frame): the block may end right after one, whatever follows it."""

    __slots__ = ("end_calls", "block_enders", "whole_openers")

    def __init__(
        self, table: Any, start_state: int, terminals: dict[str, TerminalSpec], raw_rest: bool
    ) -> None:
        states = table.states
        self.end_calls = raw_rest or any(end_call_key(actions) for actions in states.values())
        enders = sorted(
            {
                name
                for actions in states.values()
                for name, (action, arg) in actions.items()
                if is_shift(action) and END in states[arg] and name in terminals
            }
        )
        self.block_enders: tuple[TokenSpec, ...] = tuple(
            t for t in (terminals[name] for name in enders) if isinstance(t, TokenSpec)
        ) + tuple(
            TokenSpec(f"<end of {t.name}>", 0, _run_end(t))
            for t in (terminals[name] for name in enders)
            if isinstance(t, RunTerminal)
        )
        self.whole_openers = frozenset(
            name
            for name, (action, arg) in states[start_state].items()
            if is_shift(action) and END in states[arg] and name in terminals
        )


def _run_end(run: RunTerminal) -> str:
    """Where a run after which a block may end can end: after its closing bracket, for a
    balanced one; after any character, for another."""
    return re.escape(run.closer) if isinstance(run, BalancedSpec) else "[\\s\\S]"


def end_call_key(actions: dict[str, Any]) -> Any:
    """The call rule a state reduces at the end of input and only there, while it takes
    something else too (the block may go on): a call that ends where its block ends, built
    when the block ends. None: no such call here."""
    act = actions.get(END)
    if act is None or not is_reduce(act[0]) or not is_call(act[1]):
        return None
    rule = act[1]
    if len(actions) == 1 or any(
        k != END and is_reduce(a) and is_call(r) for k, (a, r) in actions.items()
    ):
        return None  # (built when its last token arrives, or refused by ``derive._state``)
    return rule


def ends_with_block(states: dict[int, dict[str, Any]]) -> set[Any]:
    """The call rules that end where their block ends, wherever they are complete: each is
    reduced only at the end of input, in a state that takes more (``end_call_key``). Their
    last symbol need not show the call complete: the block's end does."""
    at_end: set[Any] = set()
    other: set[Any] = set()
    for actions in states.values():
        rule = end_call_key(actions)
        if rule is not None:
            at_end.add(rule)
            continue
        other |= {r for a, r in actions.values() if is_reduce(a)}
    return at_end - other


def raw_rest(
    rules: list[Any], terms: dict[str, dict[str, Any]], states: dict[int, dict[str, Any]]
) -> set[Any]:
    """The call rules that end with a soft or hard run (directly, or through rules that
    always do) and are reduced only where the block can do nothing but end: a raw body that
    runs to the end of its block (grammar/README.md, "Where a block ends"), built when the
    block ends."""
    runs = {n for n, t in terms.items() if t.get("is_run") and not t.get("balanced")}
    ending = _ending_balanced(rules, runs)
    found = set()
    for r in rules:
        last = r.expansion[-1] if is_call(r) and r.expansion else None
        if last is not None and str(last.name) in (runs if last.is_term else ending):
            found.add(r)
    for actions in states.values():
        for key, (action, rule) in actions.items():
            if rule in found and (key != END or len(actions) != 1):
                found.discard(rule)  # (the block could go on after it: refused below)
    return found


def check_call_ends(
    rules: list[Any], terms: dict[str, dict[str, Any]], src: Sources, with_block: set[Any]
) -> None:
    """Refuse a call rule that does not end with a bounded terminal, a balanced run, or a
    rule that always ends with one (``GrammarError`` naming the file and rule), unless it
    ends where its block ends (``with_block``: ``ends_with_block``)."""
    balanced = {n for n, t in terms.items() if t.get("balanced")}
    ending = _ending_balanced(rules, balanced)
    for rule in rules:
        if not is_call(rule) or rule in with_block:
            continue
        where = f"{src.where(str(rule.origin.name))}: rule {src.label(rule.origin.name)} (a call)"
        last = rule.expansion[-1] if rule.expansion else None
        name = str(last.name) if last is not None else ""
        if last is not None and last.is_term:
            spec = terms.get(name, {})
            if spec.get("is_run") and not spec.get("balanced"):
                raise GrammarError(
                    f"{where} ends with the run {src.label(name)}, whose end the scanner "
                    "sees only at the next token; end the call with a closing token or a "
                    "balanced run, so the scanner sees the moment the call is complete",
                    expected=("a bounded terminal", "a balanced run"),
                )
            continue
        if last is None or name not in ending:
            raise GrammarError(
                f"{where} must end with a terminal, or with a rule that always ends with a "
                "balanced run, so the scanner sees the moment the call is complete",
                expected=("a bounded terminal", "a balanced run"),
            )


def tail_rules(rules: list[Any]) -> set[Any]:
    """The rules a call ends with: those of the nonterminal a call rule ends with, and of the
    one those end with, and so on (the call rules themselves are not among them)."""
    by_origin = _by_origin(rules)
    out: set[Any] = set()
    todo = [r for r in rules if is_call(r)]
    while todo:
        r = todo.pop()
        last = r.expansion[-1] if r.expansion else None
        if last is None or last.is_term:
            continue
        for q in by_origin.get(str(last.name), ()):
            if q not in out and not is_call(q):
                out.add(q)
                todo.append(q)
    return out


def check_tails(
    states: dict[int, dict[str, Any]],
    kernel: dict[int, set[tuple[Any, int]]],
    tails: set[Any],
    src: Sources,
) -> None:
    """Every state where a tail rule is complete must reduce it whatever comes next."""
    for s, items in kernel.items():
        for r, i in items:
            if r not in tails or i != len(r.expansion):
                continue
            if any(not is_reduce(action) or arg is not r for action, arg in states[s].values()):
                raise GrammarError(
                    f"{src.where(str(r.origin.name))}: rule {src.label(r.origin.name)} (the end "
                    "of a call) may be complete or may go on after the same tokens; a call must "
                    "be complete the moment its last token arrives"
                )


def default_key(actions: dict[str, Any], tails: set[Any]) -> str | None:
    """An action key of a state that reduces one tail rule whatever comes next, or None."""
    rules = {id(arg) for _, arg in actions.values()}
    if len(rules) != 1:
        return None
    key, (action, arg) = next(iter(actions.items()))
    if not is_reduce(action) or arg not in tails:
        return None
    return str(key)


def end_sure(actions: dict[str, Any], dialects: tuple[str, ...]) -> bool:
    """Whether the state's end of input (if it takes one) reduces a block rule: the end of the
    block, whatever the stack. Else LALR may have merged it in from another context."""
    act = actions.get(END)
    if act is None:
        return True
    action, arg = act
    return is_reduce(action) and str(arg.origin.name) in dialects


def call_firsts(rules: list[Any]) -> set[str]:
    """The terminals a call can begin with (FIRST of the call rules)."""
    by_origin = _by_origin(rules)
    nullable: set[str] = set()
    first: dict[str, set[str]] = {}
    grew = True
    while grew:
        grew = False
        for name, alts in by_origin.items():
            have = first.setdefault(name, set())
            for r in alts:
                for sym in r.expansion:
                    sname = str(sym.name)
                    add = {sname} if sym.is_term else first.get(sname, set())
                    if not add <= have:
                        have |= add
                        grew = True
                    if sym.is_term or sname not in nullable:
                        break
                else:
                    if name not in nullable:
                        nullable.add(name)
                        grew = True
    out: set[str] = set()
    for r in rules:
        if is_call(r):
            for sym in r.expansion:
                sname = str(sym.name)
                out |= {sname} if sym.is_term else first.get(sname, set())
                if sym.is_term or sname not in nullable:
                    break
    return out


def open_ended(
    states: dict[int, dict[str, Any]], masks: dict[int, int], dialects: tuple[str, ...]
) -> set[str]:
    """The dialects whose block may end right after a call: a state that builds a call and
    takes the end of input belongs to them."""
    out: set[str] = set()
    for s, actions in states.items():
        if END not in actions:
            continue
        if not any(is_reduce(a) and is_call(r) for a, r in actions.values()):
            continue
        mask = masks.get(s, -1)
        out |= {d for k, d in enumerate(dialects) if mask >> k & 1}
    return out

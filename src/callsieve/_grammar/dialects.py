"""Strategy: what a compiled grammar's rules say about its dialects — which dialects each
parser state can be part of, so that a block's dialect is read from its parse, and which
dialect's block could be complete without a call — part of the cold path (``_grammar.derive``).

What it does: ``kernels`` rebuilds the LR(0) kernel of every state of Lark's parse table
(the rule items the state's symbols have advanced, found by walking the table's shifts and
gotos from the start state, the items of each state closed over the rules; ``endings`` reads
them too), and ``state_dialects`` gives each state a bit mask of the dialects whose derivations hold one of its kernel items (bit
``k``: ``dialects[k]``; a rule belongs to every dialect it can be reached from). A parser's
state stack then tells its dialect: the dialects in every mask on the stack
(``DialectMap.dialect_of``). Two dialects that share an opener share the state after
it, but the first state only one of them has narrows the stack's masks to it; once the block
is complete, its top state holds the dialect rule's last item. ``callless`` names the
dialect rules that can derive a block without a ``call`` (or ``frame``) node (a least fixed
point over the rules: a rule can if it is no call and every symbol it expands to is a
terminal or a rule that can).
At run time, ``DialectMap`` holds those masks and each dialect's ``ValueReading``, and answers
``dialect_of`` (a parser's dialect, from its state stack) and ``value_reading_of``.
What it guarantees: the dialect a block was parsed as is in every mask on its stack (each
stack state's kernel holds an item of the derivation being parsed), so the masks' common
part is never empty, and holds that dialect alone as soon as the tokens read so far fit no
other dialect's rule.
What it costs: a closure per parser state, on a cold load only (~0.5 ms for the built-in
grammar).
"""

from __future__ import annotations

from typing import Any

from .directives import PLAIN_VALUES, DialectTraits, ValueReading, value_reading
from .lark_internals import is_shift
from .names import START
from .rule_sets import is_call, is_frame

__all__ = ["DialectMap", "callless", "kernels", "state_dialects"]


class DialectMap:
    """Which dialect a parse is in, and how that dialect's calls take their values (immutable
    after construction). ``state_dialects``: per parser state, the dialects (bit ``k``:
    ``dialects[k]``) whose rules its items belong to; a state missing here could belong to
    any. ``value_readings``: each dialect's ``ValueReading`` (its directives); where all are
    SPEC §5's (``plain_values``), the capture asks no parser state for its dialect."""

    __slots__ = ("dialects", "state_dialects", "value_readings", "plain_values")

    def __init__(
        self,
        dialects: tuple[str, ...],
        state_dialects: dict[int, int],
        traits: dict[str, DialectTraits],
    ) -> None:
        self.dialects = dialects
        self.state_dialects = state_dialects
        self.value_readings = {d: value_reading(traits[d]) for d in dialects}
        self.plain_values = all(r is PLAIN_VALUES for r in self.value_readings.values())

    def mask(self, state: int, default: int = -1) -> int:
        """The dialects parser state ``state`` can belong to (bit ``k``: ``dialects[k]``)."""
        return self.state_dialects.get(state, default)

    def dialect_of(self, stack: list[int], fallback: str) -> str:
        """The dialect a parser with state stack ``stack`` is reading: the first enabled of
        those every state on the stack can belong to (``fallback`` if none). Exact once the
        block is complete; before, the first of those whose rules fit the tokens so far.
        (Per block and per call emitted early: a few lookups.)"""
        mask = -1
        masks = self.state_dialects
        for s in stack:
            mask &= masks.get(s, -1)
        if mask <= 0:
            return fallback
        return self.dialects[(mask & -mask).bit_length() - 1]

    def value_reading_of(self, stack: list[int], fallback: str) -> ValueReading:
        """How the calls of the block a parser with state stack ``stack`` reads take their
        values (``dialect_of``'s dialect's ``ValueReading``; none asked where all are plain)."""
        if self.plain_values:
            return PLAIN_VALUES
        return self.value_readings[self.dialect_of(stack, fallback)]


def _owners(rules: list[Any], dialects: tuple[str, ...]) -> dict[str, int]:
    """Each rule's name -> the mask of the dialects it can be reached from (the start rule:
    all of them)."""
    uses: dict[str, set[str]] = {}
    for r in rules:
        uses.setdefault(str(r.origin.name), set()).update(
            str(s.name) for s in r.expansion if not s.is_term
        )
    owners: dict[str, int] = {START: (1 << len(dialects)) - 1}
    for k, d in enumerate(dialects):
        todo = [d]
        while todo:
            name = todo.pop()
            if owners.get(name, 0) & 1 << k:
                continue
            owners[name] = owners.get(name, 0) | 1 << k
            todo.extend(n for n in uses.get(name, ()) if n != START)
    return owners


def kernels(
    rules: list[Any], states: dict[int, dict[str, Any]], start: int
) -> dict[int, set[tuple[Any, int]]]:
    """Each parser state reached from ``start`` -> its LR(0) kernel: the rule items ``(rule,
    dot)`` its symbols have advanced (walking the table's shifts and gotos, each state's
    items closed over the rules)."""
    by_origin: dict[str, list[Any]] = {}
    for r in rules:
        by_origin.setdefault(str(r.origin.name), []).append(r)
    found: dict[int, set[tuple[Any, int]]] = {start: {(r, 0) for r in by_origin[START]}}
    todo = [start]
    while todo:
        s = todo.pop()
        items = set(found[s])
        stack = list(items)
        while stack:  # the closure
            r, i = stack.pop()
            if i < len(r.expansion) and not r.expansion[i].is_term:
                for q in by_origin.get(str(r.expansion[i].name), ()):
                    if (q, 0) not in items:
                        items.add((q, 0))
                        stack.append((q, 0))
        moved: dict[str, set[tuple[Any, int]]] = {}
        for r, i in items:
            if i < len(r.expansion):
                moved.setdefault(str(r.expansion[i].name), set()).add((r, i + 1))
        for symbol, kernel in moved.items():
            action = states[s].get(symbol)
            if action is None or not is_shift(action[0]):
                continue
            t = action[1]
            known = found.setdefault(t, set())
            if not kernel <= known:
                known |= kernel
                todo.append(t)
    return found


def state_dialects(
    rules: list[Any],
    states: dict[int, dict[str, Any]],
    start: int,
    dialects: tuple[str, ...],
    kernel: dict[int, set[tuple[Any, int]]] | None = None,
) -> dict[int, int]:
    """Each parser state -> the mask of the dialects its kernel items belong to (the start
    state, and any state not reached from it: all). ``kernel``: ``kernels``'s answer, if
    the caller has it."""
    everyone = (1 << len(dialects)) - 1
    owners = _owners(rules, dialects)
    found = kernels(rules, states, start) if kernel is None else kernel
    out: dict[int, int] = {}
    for s in states:
        mask = 0
        for r, _ in found.get(s, ()):
            mask |= owners.get(str(r.origin.name), everyone)
        out[s] = mask or everyone
    return out


def callless(rules: list[Any], dialects: tuple[str, ...]) -> list[str]:
    """The dialects whose block rule can derive a sentence without a ``call`` node (or a
    ``frame`` node: framing the dialect drops, a block that holds no call by design)."""
    can: set[str] = set()
    grew = True
    while grew:
        grew = False
        for r in rules:
            name = str(r.origin.name)
            if name in can or is_call(r) or is_frame(r):
                continue
            if all(s.is_term or str(s.name) in can for s in r.expansion):
                can.add(name)
                grew = True
    return [d for d in dialects if d in can]

"""Strategy: the intersection of a string schema's language with its context's, exactly, for
GBNF — which has no intersection (llguidance's Lark takes ``&`` instead) — so that a
constrained string (``pattern``, ``format``, ``minLength``/``maxLength``) holds every value
its context can carry: ``>`` in a CDATA section, a raw family's tag leads, a backtick in a
native fence.

What it does: ``intersect(g, lang, context, cache)`` walks the product of two automata —
the schema's language over the value's characters (a counter for a length, else the subset
automaton of the pattern's IR) and the context's (``Context``: what the spelled text may
hold, state by state) — and writes each live product state as one right-linear rule
(``state ::= [chars] next | … | ""``); a product with a cycle (a pattern's star, no
``maxLength``) is one expression instead (state elimination). A JSON context spells each
character as JSON does (``json_units``); its escapes leave the context's automaton in
``reset``; ``escapable`` characters may be spelled as a ``\\uXXXX`` escape too (a native
fence's backtick, as the writer spells a run). Rules are named by what follows a state (a length counter's states
by what is left of the range), so strings of one context share them across parameters.
What it guarantees: the rules spell exactly the values in both languages, each in the
spellings the context allows.
What it costs: the product's live states, once per grammar: the range times the context's
states for a length (``maxLength`` 200 in a CDATA section: about 600 short rules); past
``MAX_STATES`` (``STRUCTURAL_STATES`` in a structural tag) None. The caller then raises
``too_many_states``: a narrower language would refuse values the writer writes. A CDATA
string past ``STRUCTURAL_STATES`` is not asked for: the writer puts it in the JSON object
body (``_prompt.write.long_string``).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._base.errors import ConfigurationError
from .._prompt.write import PRODUCT_STATES, length_states
from ._ir import ANY, NOTHING, Alt, Chars, Grammar, Lit, Node, Ref, Rep, Seq, alt, seq, star
from ._strings import CONTROL, json_units

__all__ = [
    "MAX_STATES",
    "STRUCTURAL_STATES",
    "Context",
    "avoiding",
    "eliminate",
    "intersect",
    "too_many_states",
]

#: The most product states written out in GBNF: past it the export is a ConfigurationError
#: (a length of hundreds in a raw family's value would be tens of thousands of rules).
MAX_STATES = 4096
#: The same for a structural tag, whose every value is a grammar of its own (no rule is
#: shared between two parameters), and xgrammar compiles each state against the whole
#: vocabulary (about 20 ms a state at 32,000 tokens): the writer's bound too.
STRUCTURAL_STATES = PRODUCT_STATES

_SPECIAL = CONTROL | Chars.of('\x7f"\\')
Moves = tuple[tuple[Chars, int], ...]


@dataclass(frozen=True)
class Context:
    """What the spelled text of a value may hold: ``moves[state]`` (disjoint characters and
    the state they lead to; a character not listed ends the text's chances), ``finals`` (the
    states a value may end in), from state 0. ``json``: each character is spelled as in a
    JSON string (its escapes lead to ``reset``); ``escapable``: characters that may also be
    spelled ``\\uXXXX`` (to ``reset``). ``key`` tells its rules apart, ``prefix`` begins
    their names."""

    key: str
    prefix: str
    moves: tuple[Moves, ...]
    finals: frozenset[int]
    json: bool = False
    escapable: Chars = NOTHING
    reset: int = 0


@functools.lru_cache(maxsize=16)
def avoiding(s: str, key: str, prefix: str, json: bool = False, escapable: str = "") -> Context:
    """Text that never holds ``s`` (its matcher's states; every state final but the whole)."""
    moves = []
    for q in range(len(s)):
        out: list[tuple[Chars, int]] = []
        for ch in dict.fromkeys(s):
            t = _next(s, q, ch)
            if t < len(s):
                out.append((Chars.of(ch), t))
        out.append((ANY - Chars.of(s), 0))
        moves.append(tuple(out))
    finals = frozenset(range(len(s)))
    return Context(key + s, prefix, tuple(moves), finals, json, Chars.of(escapable))


def too_many_states(where: str, cap: int) -> ConfigurationError:
    """A constrained string whose product with its context is past ``cap`` states: GBNF
    cannot intersect, and a narrower language would refuse values the writer writes."""
    return ConfigurationError(
        f"{where}: the string's pattern or length in its context needs more than {cap} "
        "product states, past what gbnf and structural tags write out "
        f"({MAX_STATES} in gbnf, {STRUCTURAL_STATES} in a structural tag)",
        expected=("lark (llguidance intersects at any size)", "a smaller maxLength"),
    )


def _next(s: str, q: int, ch: str) -> int:
    text = s[:q] + ch
    return next((k for k in range(min(len(text), len(s)), 0, -1) if text.endswith(s[:k])), 0)


# ------------------------------------------------------------ the schema's language
class _Counter:
    """``ANY{lo,hi}``: its states are counts; named by what is left of the range."""

    def __init__(self, lo: int, hi: int | None) -> None:
        self.lo, self.hi = lo, hi
        self.start = 0

    def moves(self, n: Any) -> list[tuple[Chars, object]]:
        if self.hi is not None and n >= self.hi:
            return []
        return [(ANY, n + 1 if self.hi is not None or n < self.lo else n)]

    def final(self, n: Any) -> bool:
        return bool(n >= self.lo)

    def name(self, n: object) -> object:
        assert isinstance(n, int)
        need = max(self.lo - n, 0)
        return ("len", None if self.hi is None else self.hi - n, need)


class _Nfa:
    """The pattern's IR as an automaton with empty moves (Thompson's construction); its
    subset states are made as the product reaches them."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.eps: dict[int, list[int]] = collections.defaultdict(list)
        self.edges: dict[int, list[tuple[Chars, int]]] = collections.defaultdict(list)
        self.count = 1
        self.end = self._build(node, 0)
        self.start = self._closure({0})

    def _new(self) -> int:
        self.count += 1
        return self.count - 1

    def _build(self, node: Node, q: int) -> int:
        if isinstance(node, Lit):
            for ch in node.text:
                t = self._new()
                self.edges[q].append((Chars.of(ch), t))
                q = t
            return q
        if isinstance(node, Chars):
            t = self._new()
            if node:
                self.edges[q].append((node, t))
            return t
        if isinstance(node, Seq):
            for item in node.items:
                q = self._build(item, q)
            return q
        if isinstance(node, Alt):
            end = self._new()
            for item in node.items:
                self.eps[self._build(item, q)].append(end)
            return end
        if isinstance(node, Rep):
            for _ in range(node.lo):
                q = self._build(node.item, q)
            if node.hi is None:
                loop = self._new()
                self.eps[q].append(loop)
                self.eps[self._build(node.item, loop)].append(loop)
                return loop
            end = self._new()
            for _ in range(node.hi - node.lo):
                self.eps[q].append(end)
                q = self._build(node.item, q)
            self.eps[q].append(end)
            return end
        raise TypeError(f"{type(node).__name__} is not a regular pattern node")

    def _closure(self, states: set[int]) -> frozenset[int]:
        todo, seen = list(states), set(states)
        while todo:
            for t in self.eps.get(todo.pop(), ()):
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return frozenset(seen)

    def moves(self, state: Any) -> list[tuple[Chars, object]]:
        edges = [e for q in state for e in self.edges.get(q, ())]
        parts = [ANY]
        for chars, _ in edges:
            parts = [p for q in parts for p in (q & chars, q - chars) if p]
        out: list[tuple[Chars, object]] = []
        for part in parts:
            probe = chr(part.ranges[0][0])
            targets = {t for chars, t in edges if probe in chars}
            if targets:
                out.append((part, self._closure(targets)))
        return out

    def final(self, state: Any) -> bool:
        return self.end in state

    def name(self, state: object) -> object:
        return (self.node, state)


_Lang = _Counter | _Nfa


def _language(node: Node) -> _Lang:
    if isinstance(node, Rep) and node.item == ANY:
        return _Counter(node.lo, node.hi)
    return _Nfa(node)


# --------------------------------------------------------------------------- product
Edges = dict[Any, list[tuple[Node, Any]]]


@dataclass
class _Walk:
    """The product states reached from the start: their moves and the final ones."""

    edges: Edges
    final: set[Any]
    known: set[Any]  # (states whose rules ``cache`` holds: not walked again)


def intersect(
    g: Grammar, lang: Node, context: Context, cache: dict[object, Ref], cap: int = MAX_STATES
) -> Node | None:
    """The values ``lang`` (a regular IR node) and ``context`` both allow, spelled as the
    context spells them, as right-linear rules of ``g`` (``cache``: the rules made so far,
    by name); None past ``cap`` states."""
    lg = _language(lang)
    if isinstance(lg, _Counter) and length_states(lg.lo, lg.hi, len(context.moves)) > cap:
        return None  # (a count's states times the context's: known before the walk)
    start: tuple[Any, int] = (lg.start, 0)
    walk = _walk(lg, context, cache, cap, start)
    if walk is None:
        return None
    live = _live(walk.edges, walk.final, walk.known)
    if start not in live:
        return Alt(())
    if _cyclic(walk.edges, live):  # (one expression: rules that recur are no lexeme to
        # llguidance's GBNF, whose lexer cannot back up out of a "]" into "]]>")
        if walk.known & live:  # (rules made for a walk without a cycle: not met here)
            return None
        return _expression(g, start, walk.edges, live, walk.final)
    refs: dict[Any, Ref] = {}
    for p in live:
        key = (context.key, lg.name(p[0]), p[1])
        if key not in cache:
            cache[key] = Ref(g.reserve(context.prefix))
        refs[p] = cache[key]
    for p, out in walk.edges.items():
        if p not in live:
            continue
        by_target: dict[Any, list[Node]] = {}
        for spelled, t in out:
            if t in live:
                by_target.setdefault(t, []).append(spelled)
        parts = [seq(_merge(g, sp), refs[t]) for t, sp in by_target.items()]
        g.rules[refs[p].name] = alt(*parts, *([Lit("")] if p in walk.final else []))
    return refs[start]


def _walk(
    lg: _Lang, context: Context, cache: dict[object, Ref], cap: int, start: Any
) -> _Walk | None:
    """Every product state reached from ``start`` (None: more than ``cap``)."""
    out = _Walk({}, set(), set())
    todo = [start]
    seen = {start}
    while todo:
        p = todo.pop()
        l, c = p
        if (context.key, lg.name(l), c) in cache:
            out.known.add(p)
            continue
        if lg.final(l) and c in context.finals:
            out.final.add(p)
        out.edges[p] = [
            (spelled, (nl, nc))
            for chars, nl in lg.moves(l)
            for spelled, nc in _steps(context, chars, c)
        ]
        for _, t in out.edges[p]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
        if len(seen) > cap:
            return None
    return out


def _cyclic(edges: Edges, live: set[Any]) -> bool:
    """Does a move lead back to a state it left (among the live states)?"""
    state: dict[Any, int] = {}  # 1: on the path, 2: done
    for root in live:
        if root in state:
            continue
        stack = [(root, iter(t for _, t in edges.get(root, ()) if t in live))]
        state[root] = 1
        while stack:
            p, it = stack[-1]
            t = next(it, None)
            if t is None:
                state[p] = 2
                stack.pop()
            elif state.get(t) == 1:
                return True
            elif t not in state:
                state[t] = 1
                stack.append((t, iter(u for _, u in edges.get(t, ()) if u in live)))
    return False


def _expression(
    g: Grammar,
    start: Any,
    edges: Edges,
    live: set[Any],
    final: set[Any],
) -> Node:
    """The live product as one expression (state elimination), from ``start``."""
    ids = {start: 0}
    for p in live:
        ids.setdefault(p, len(ids))
    moves: dict[tuple[int, int], list[Node]] = {}
    for p, out in edges.items():
        if p in live:
            for spelled, t in out:
                if t in live:
                    moves.setdefault((ids[p], ids[t]), []).append(spelled)
    merged = {k: _merge(g, v) for k, v in moves.items()}
    return eliminate(len(ids), merged, {ids[p] for p in final if p in live})


def _merge(g: Grammar, spelled: list[Node]) -> Node:
    """The pieces that lead to one state: their characters as one class, escapes as one
    shared rule."""
    chars = NOTHING
    rest: list[Node] = []
    for s in spelled:
        if isinstance(s, Chars):
            chars = chars | s
        else:
            rest.append(s)
    escapes = [_escapes(g, tuple(rest))] if rest else []
    return alt(*([chars] if chars else []), *escapes)


def _escapes(g: Grammar, pieces: tuple[Node, ...]) -> Node:
    """One shared rule for escapes that lead to one state (``alt`` of tens of literals is
    built once per grammar)."""
    return g.define("json_escape", _alt_of(pieces))


@functools.lru_cache(maxsize=64)
def _alt_of(pieces: tuple[Node, ...]) -> Node:
    return alt(*pieces)


@functools.lru_cache(maxsize=4096)
def _steps(context: Context, chars: Chars, c: int) -> tuple[tuple[Node, int], ...]:
    """Each way on from context state ``c`` on a value character in ``chars``: a spelled
    piece and the context's state after it."""
    out: list[tuple[Node, int]] = []
    raw = chars - _SPECIAL if context.json else chars
    for cchars, nc in context.moves[c]:
        both = raw & cchars
        if both:
            out.append((both, nc))
    if context.json:
        _, escapes = json_units(chars & _SPECIAL)
        out += [(e, context.reset) for e in escapes]
    for lo, hi in (chars & context.escapable).ranges:
        out += [(Lit(f"\\u{o:04x}"), context.reset) for o in range(lo, hi + 1)]
    return tuple(out)


def _live(
    edges: dict[tuple[object, int], list[tuple[Node, tuple[object, int]]]],
    final: set[tuple[object, int]],
    known: set[tuple[object, int]],
) -> set[tuple[object, int]]:
    """The states from which a final state (or one with rules already) is reached."""
    back: dict[tuple[object, int], set[tuple[object, int]]] = collections.defaultdict(set)
    for p, out in edges.items():
        for _, t in out:
            back[t].add(p)
    live = set(final) | known
    todo = list(live)
    while todo:
        for p in back.get(todo.pop(), ()):
            if p not in live:
                live.add(p)
                todo.append(p)
    return live


def eliminate(n: int, chars: Mapping[tuple[int, int], Node], finals: set[int]) -> Node:
    """The expression of the automaton's words from state 0 to a final state (states
    eliminated one by one, as ``_strings.avoid`` does): ``chars``, the moves between states,
    each a node."""
    final = n
    edges: dict[tuple[int, int], Node] = dict(chars.items())
    for q in finals:
        edges[(q, final)] = Lit("")
    outs: dict[int, set[int]] = {}
    ins: dict[int, set[int]] = {}
    for i, j in edges:
        outs.setdefault(i, set()).add(j)
        ins.setdefault(j, set()).add(i)
    left = set(range(1, n))
    while left:
        # (the state with the fewest paths through it first: the expression stays small)
        k = min(left, key=lambda q: (len(ins.get(q, ())) * len(outs.get(q, ())), -q))
        left.discard(k)
        loop = edges.pop((k, k), None)
        middle = star(loop) if loop is not None else Lit("")
        into = [(i, edges.pop((i, k))) for i in sorted(ins.pop(k, set())) if i != k]
        out = [(j, edges.pop((k, j))) for j in sorted(outs.pop(k, set())) if j != k]
        for i, _ in into:
            outs[i].discard(k)
        for j, _ in out:
            ins[j].discard(k)
        for i, x in into:
            for j, y in out:
                path = seq(x, middle, y)
                edges[(i, j)] = alt(edges[(i, j)], path) if (i, j) in edges else path
                outs.setdefault(i, set()).add(j)
                ins.setdefault(j, set()).add(i)
    loop = edges.get((0, 0))
    tail = edges.get((0, final), Lit(""))
    return seq(star(loop) if loop is not None else Lit(""), tail)

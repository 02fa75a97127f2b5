"""Strategy: the exact language of a raw value's text in a template family (qwen3_coder,
glm45, minimax_m2, …), read off the parser's own grammar, so that the constraint takes every
string the writer writes as it is (``a < b``, ``<b>``, ``]]>``) and nothing that would end
the value early.

What it does: a raw value is a *soft* run (grammar/README.md, "Terminals"): it stops where
its stop matches, and goes on if no token of the state after it starts there. So a value
reads back exactly when no such token matches at any of its positions, the closing tag that
follows it included (a token begun in the value may run on into it). ``raw_text(grammar,
close)`` finds those tokens (the bounded terminals of the parser states the run's shift
leads to), walks their automaton over the characters' classes (the classes their patterns
name, a representative each), and builds the automaton of the text in which none of them
ever completes — a set of attempts under way per state. It then turns that automaton into
one regular expression (state elimination), the value and the closing tag in one lexeme:
llguidance's lexer never backs up, so a lead inside the value must not be read as the tag.
What it guarantees: the node matches a value followed by ``close`` exactly when the parser
reads the value back, up to the look-arounds the automaton drops (which only refuse more).
None where the run or its tokens have a shape this cannot follow (a hard run, a Unicode
class other than white space): the caller then keeps tag leads out of the value.
What it costs: once per family: one automaton step per state and character class, and an
elimination cubic in the states (tens to a few hundred).
"""

from __future__ import annotations

import collections
import functools
import re
import zlib
from dataclasses import dataclass

from .._base import re_internals as _re
from .._base.errors import ConfigurationError
from .._grammar.automaton import DEAD, EntryAutomaton
from .._grammar.compiled import CompiledGrammar
from .._grammar.specs import RunTerminal
from ._ir import ANY, NOTHING, Both, Chars, Lit, Node, Not, Rep, alt, seq, star
from ._product import Context, eliminate
from ._regex import char_class

__all__ = ["RawText", "raw_text"]

#: Python's ``\\s`` for text (``str.isspace``): what the parser's patterns mean by it.
PY_SPACE = Chars.of("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000")
PY_SPACE = PY_SPACE | Chars.span("\u2000", "\u200a")
_PY_CATEGORIES = {"CATEGORY_SPACE": PY_SPACE, "CATEGORY_NOT_SPACE": ANY - PY_SPACE}
#: How far into a possible tag the automaton follows a value: a value holding a tag's
#: beginning this long that never becomes the tag (``<parameter=`` and 40 name characters
#: with no ``>``) is refused, though it would read back.
MAX_DEPTH = 64

State = frozenset[int]
#: A bounded repeat (``{0,32}``): read as unbounded, so that a run of white space or of
#: name characters is one state, not one per count. The tokens then match more, and the
#: language refuses more: ``<`` and 33 blanks before ``/parameter>``, say.
_BOUNDED = re.compile(r"(?<!\\)\{(\d+),(\d+)\}")


@dataclass(frozen=True)
class RawText:
    """A family's raw value language: ``node`` is a value followed by ``close`` (the closing
    tag, up to where its token ends); ``reads_back(v)`` says whether ``v`` is one;
    ``context``, the value automaton for GBNF's constrained strings (``_product``)."""

    node: Node
    close: str
    automaton: EntryAutomaton
    lark: Node
    #: the value automaton, for GBNF's constrained strings (``_product``)
    context: Context
    #: Another form of the body: text before it, and its language (seed_oss's value on
    #: lines of its own, which keeps a line break at either end).
    other: tuple[str, RawText] | None = None

    def forms(self) -> list[tuple[str, RawText]]:
        """Each form: the text before the value, and its language."""
        return [("", self)] + ([self.other] if self.other is not None else [])

    def body(self, lark: bool) -> Node:
        """The whole body, in either form (``lark``: for llguidance)."""
        return alt(*(seq(Lit(head), t.lark if lark else t.node) for head, t in self.forms()))

    def reads_back(self, value: str) -> bool:
        state: State | None = frozenset()
        for ch in value:
            state = _step(self.automaton, state, ch) if state is not None else None
        return state is not None and _ends(self.automaton, state, self.close)


def _step(a: EntryAutomaton, state: State, ch: str) -> State | None:
    """The attempts under way after ``ch`` (one begins at every character); None if one
    completes: a token matched inside the value."""
    out = set()
    for q in (*state, 0):
        t = a.step(q, ch)
        if t == DEAD:
            continue
        if a.accepting[t]:
            return None
        out.add(t)
    return frozenset(out)


def _ends(a: EntryAutomaton, state: State, close: str) -> bool:
    """Do the attempts under way at the value's end all die in ``close`` (none completes)?"""
    for q in state:
        for ch in close:
            q = a.step(q, ch)
            if q == DEAD:
                break
            if a.accepting[q]:
                return False
    return True


def _class_of(op: str, av: object) -> Chars | None:
    """The characters one item of a parsed pattern matches (None: a class not followed)."""
    if op == "LITERAL":
        return Chars.of(chr(av))  # type: ignore[arg-type]
    if op == "NOT_LITERAL":
        return ANY - Chars.of(chr(av))  # type: ignore[arg-type]
    if op == "ANY":
        return ANY
    if op != "IN":
        return None
    try:  # (a class ``char_class`` does not follow: None)
        return char_class(av, "a terminal", _PY_CATEGORIES)
    except ConfigurationError:
        return None


def _classes(a: EntryAutomaton) -> tuple[Chars, ...] | None:
    """The characters split by every test the automaton makes: each class is one to it."""
    parts = [ANY]
    for source in sorted(a.move_sources()):
        items = _re.parse(source)
        test = _class_of(str(items[0][0]), items[0][1]) if len(items) == 1 else None
        if test is None:
            return None
        parts = [p for q in parts for p in (q & test, q - test) if p]
    return tuple(parts)


def _after_run(g: CompiledGrammar) -> list[str] | None:
    """The patterns of the tokens the parser may read where a raw value's run stops."""
    specs = [g.terminals[n] for n in g.roles.raw_terminals]
    runs = [t for t in specs if isinstance(t, RunTerminal)]
    if not runs or any(not t.soft for t in runs):
        return None
    sources: set[str] = set()
    for state in g.parser.table.states:
        for run in runs:
            target = g.parser.shift_target(state, run.name)
            if target is not None:
                sources |= {t.source for t in g.states[target].bounded if t.source}
    return sorted(sources) if sources else None


def _first_token_end(a: EntryAutomaton, text: str) -> int | None:
    """Where the first token in ``text`` ends (an attempt begun at any character)."""
    state: State = frozenset()
    for k, ch in enumerate(text):
        nxt = _step(a, state, ch)
        if nxt is None:
            return k + 1
        state = nxt
    return None


@functools.lru_cache(maxsize=32)
def raw_text(g: CompiledGrammar, arg_close: str, lead_trim: str = "") -> RawText | None:
    """A family's raw value language, the closing tag ``arg_close`` after it (see the
    module's docstring); ``lead_trim``: characters a value may not begin with (the opening
    tag takes them). None where this cannot follow the parser."""
    found = _after_run(g)
    if found is None:
        return None
    a = EntryAutomaton([_BOUNDED.sub(r"{\1,}", source) for source in found])
    classes = _classes(a)
    end = _first_token_end(a, arg_close)
    if classes is None or end is None:
        return None
    close = arg_close[:end]
    no_start = Chars.of(lead_trim)
    node = _language(a, classes, close, no_start)
    lark = _lark(a, classes, close, no_start)
    key = f"raw{zlib.crc32((arg_close + chr(0) + lead_trim).encode()):08x}"
    return RawText(node, close, a, lark, _context(a, classes, close, no_start, key))


def _lark(a: EntryAutomaton, classes: tuple[Chars, ...], close: str, no_start: Chars) -> Node:
    """The same language for llguidance, in its ``&`` and ``~``: text ending in ``close``
    in which no token begins before ``close`` (at least ``len(close) + 1`` characters from
    the end). Far smaller than the value automaton's expression, whose states cross."""
    ids = {0: 0}
    todo = [0]
    edges: dict[tuple[int, int], Chars] = {}
    finals: set[int] = set()
    while todo:
        q = todo.pop()
        if a.accepting[q]:
            finals.add(ids[q])
            continue
        for cls in classes:
            t = a.step(q, chr(cls.ranges[0][0]))
            if t == DEAD:
                continue
            if t not in ids:
                ids[t] = len(ids)
                todo.append(t)
            key = (ids[q], ids[t])
            edges[key] = edges.get(key, NOTHING) | cls
    token = eliminate(len(ids), edges, finals)
    begun = Both(seq(token, star(ANY)), Rep(ANY, len(close) + 1, None))
    node: Node = Both(seq(star(ANY), Lit(close)), Not(seq(star(ANY), begun)))
    if no_start:
        node = Both(node, Not(seq(no_start, star(ANY))))
    return node


def _language(a: EntryAutomaton, classes: tuple[Chars, ...], close: str, no_start: Chars) -> Node:
    """The value automaton as one expression, followed by ``close``."""
    n, edges, finals = _value_automaton(a, classes, close, no_start)
    return seq(eliminate(n, edges, finals), Lit(close))


def _context(
    a: EntryAutomaton, classes: tuple[Chars, ...], close: str, no_start: Chars, key: str
) -> Context:
    """The value automaton as a ``_product.Context`` (GBNF's constrained strings)."""
    n, edges, finals = _value_automaton(a, classes, close, no_start)
    moves: list[list[tuple[Chars, int]]] = [[] for _ in range(n)]
    for (i, j), chars in sorted(edges.items()):
        moves[i].append((chars, j))
    return Context(key, "r", tuple(tuple(m) for m in moves), frozenset(finals))


def _value_automaton(
    a: EntryAutomaton, classes: tuple[Chars, ...], close: str, no_start: Chars
) -> tuple[int, dict[tuple[int, int], Chars], set[int]]:
    """The value automaton (states: attempts under way; a start of its own where the value
    may not begin with ``no_start``): its size, its moves, its final states (where
    ``close`` may follow)."""
    reps = [chr(c.ranges[0][0]) for c in classes]
    start: tuple[State, bool] = (frozenset(), bool(no_start))
    ids: dict[tuple[State, bool], int] = {start: 0}
    depth = {start: 0}
    todo = collections.deque([start])
    edges: dict[tuple[int, int], Chars] = {}
    finals: set[int] = set()
    while todo:
        key = todo.popleft()
        state, first = key
        i = ids[key]
        if _ends(a, state, close):
            finals.add(i)
        for cls, rep in zip(classes, reps):
            chars = cls - no_start if first else cls
            nxt = _step(a, state, rep) if chars else None
            if nxt is None:
                continue
            after = (nxt, False)
            if after not in ids:
                if depth[key] >= MAX_DEPTH:
                    continue
                ids[after] = len(ids)
                depth[after] = depth[key] + 1
                todo.append(after)
            j = ids[after]
            edges[(i, j)] = edges.get((i, j), NOTHING) | chars
    return len(ids), edges, finals

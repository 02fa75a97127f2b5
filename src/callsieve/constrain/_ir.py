"""Strategy: a small grammar IR — literals, character sets, sequences, choices, repeats,
references and embedded JSON Schemas — and its two printers, llguidance's Lark and
llama.cpp's GBNF, so that every export is built once and spelled twice.

What it does: nodes are frozen dataclasses (hashable: equal sub-grammars are shared and a
``Grammar``'s rule table deduplicates them); ``Chars`` holds sorted code-point intervals
with the set algebra the exporter needs (union, difference, complement). A ``Grammar`` is
an ordered table of rules, some marked as *terminals* (lexemes: llguidance lexes them
greedily as one token of text, so a terminal never ends where a longer match of itself
could go on). ``lark(g)`` prints rules lower-case and terminals upper-case, ``Json`` as
``%json``, ``Both``/``Not`` as llguidance's ``&``/``~`` (terminals only); ``gbnf(g)``
prints every rule as ``name ::= …`` (``Json``, ``Both`` and ``Not`` are refused: the GBNF
builder never makes them).
What it guarantees: literal and character escapes that both consumers read back exactly —
ASCII punctuation and controls as hex escapes, other characters as UTF-8.
What it costs: linear in the size of the grammar.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "ANY",
    "NOTHING",
    "Alt",
    "Both",
    "Chars",
    "Grammar",
    "Hole",
    "Json",
    "Lit",
    "Node",
    "Not",
    "Ref",
    "Rep",
    "Seq",
    "alt",
    "gbnf",
    "lark",
    "opt",
    "plus",
    "seq",
    "star",
]

MAX_CODE = 0x10FFFF


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Chars:
    """A set of characters: sorted, disjoint, non-adjacent ``(lo, hi)`` code points."""

    ranges: tuple[tuple[int, int], ...]

    @staticmethod
    def of(text: str) -> Chars:
        return Chars(_norm([(ord(c), ord(c)) for c in text]))

    @staticmethod
    def span(lo: str, hi: str) -> Chars:
        return Chars(((ord(lo), ord(hi)),))

    def __or__(self, other: Chars) -> Chars:
        return Chars(_norm([*self.ranges, *other.ranges]))

    def __invert__(self) -> Chars:
        """Every other character (of ``ANY``: surrogates are no characters of UTF-8 text)."""
        out, nxt = [], 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= MAX_CODE:
            out.append((nxt, MAX_CODE))
        return Chars(tuple(out)) & ANY

    def __sub__(self, other: Chars) -> Chars:
        return self & ~other

    def __and__(self, other: Chars) -> Chars:
        out = []
        for a, b in self.ranges:
            for c, d in other.ranges:
                lo, hi = max(a, c), min(b, d)
                if lo <= hi:
                    out.append((lo, hi))
        return Chars(_norm(out))

    def __contains__(self, ch: str) -> bool:
        o = ord(ch)
        return any(lo <= o <= hi for lo, hi in self.ranges)

    def __bool__(self) -> bool:
        return bool(self.ranges)


ANY = Chars(((0, 0xD7FF), (0xE000, MAX_CODE)))
NOTHING = Chars(())


def _norm(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    lo: int
    hi: int | None  # None: no upper bound


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Json:
    """A JSON Schema, as llguidance embeds it (``%json``); ``text`` is its JSON."""

    text: str


@dataclass(frozen=True)
class Both:
    """Text both ``a`` and ``b`` match (llguidance's ``&``, in terminals only)."""

    a: Node
    b: Node


@dataclass(frozen=True)
class Not:
    """Any text ``a`` does not match (llguidance's ``~``, in terminals only)."""

    a: Node


class Hole:
    """A place a builder fills later (``_shapes``' values and names): no printer prints
    one; compared by identity."""

    __slots__ = ()


Node = Lit | Chars | Seq | Alt | Rep | Ref | Json | Both | Not | Hole
EMPTY = Lit("")


def seq(*items: Node) -> Node:
    flat: list[Node] = []
    for item in items:
        parts = item.items if isinstance(item, Seq) else (item,)
        for p in parts:
            if p == EMPTY:
                continue
            if isinstance(p, Lit) and flat and isinstance(flat[-1], Lit):
                flat[-1] = Lit(flat[-1].text + p.text)
            else:
                flat.append(p)
    return EMPTY if not flat else flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Node) -> Node:
    """A choice (no items: matches nothing); an empty choice among others makes it optional."""
    flat: list[Node] = []
    for item in items:
        for p in item.items if isinstance(item, Alt) else (item,):
            if p not in flat:
                flat.append(p)
    if EMPTY in flat and len(flat) > 1:
        flat.remove(EMPTY)
        inner = flat[0] if len(flat) == 1 else Alt(tuple(flat))
        return inner if isinstance(inner, Rep) and inner.lo == 0 else Rep(inner, 0, 1)
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def opt(item: Node) -> Node:
    return Rep(item, 0, 1)


def star(item: Node) -> Node:
    return Rep(item, 0, None)


def plus(item: Node) -> Node:
    return Rep(item, 1, None)


class Grammar:
    """Rules in order (the first is the start rule); ``terminals`` names the lexemes."""

    __slots__ = ("rules", "terminals", "_names", "_last")

    def __init__(self) -> None:
        self.rules: dict[str, Node] = {}
        self.terminals: set[str] = set()
        self._names: dict[tuple[Node, bool], str] = {}
        self._last: dict[str, int] = {}  # the last number given to a name

    def reserve(self, name: str) -> str:
        """A fresh rule name, its body set later (``rules[name] = …``): for recursion."""
        base, k = name, self._last.get(name, 1)
        if k > 1:
            name = f"{base}_{k}"
        while name in self.rules:
            k += 1
            name = f"{base}_{k}"
        self._last[base] = k
        self.rules[name] = Alt(())
        return name

    def define(self, name: str, body: Node, terminal: bool = False) -> Ref:
        """Add rule ``name`` (a fresh name if taken), or the existing rule with this body."""
        found = self._names.get((body, terminal))
        if found is not None:
            return Ref(found)
        name = self.reserve(name)
        self.rules[name] = body
        if terminal:
            self.terminals.add(name)
        self._names[(body, terminal)] = name
        return Ref(name)


# ---------------------------------------------------------------------------- printers
#: Characters escaped in literals (both formats), and in classes (Lark's regex, GBNF).
_LIT_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
_CLASS_SPECIAL = frozenset('\\]^-[&~/"')


def _printable(c: str) -> bool:
    o = ord(c)
    return (0x20 <= o < 0x7F or o > 0x9F) and not (0xD800 <= o <= 0xDFFF)


def _lit(text: str) -> str:
    """A string literal, read the same by llguidance's Lark and by GBNF."""
    return '"' + _LIT_ESCAPE.sub(_escape, text) + '"'


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    short = _LIT_SHORT.get(c)
    if short is not None:
        return short
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


#: What a literal escapes: its quote, the backslash, and what is not printable.
_LIT_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\ud800-\udfff]')


def _rx_char(o: int) -> str:
    c = chr(o)
    return c if _printable(c) and c not in _CLASS_SPECIAL else f"\\x{{{o:x}}}"


#: GBNF's short escapes in a class (llama.cpp, llguidance's converter and xgrammar read them).
_GBNF_SHORT = {"\\": "\\\\", "]": "\\]", "[": "\\[", '"': '\\"'}


def _gbnf_char(o: int) -> str:
    c = chr(o)
    if c in _GBNF_SHORT:
        return _GBNF_SHORT[c]
    if _printable(c) and c not in "^-":
        return c
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


@functools.lru_cache(maxsize=4096)
def _gbnf_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """A GBNF class: what needs a hex escape comes last, since xgrammar reads ``\\x`` with
    every hex digit that follows (``\\x5cb`` is one character to it), and nothing that
    follows a hex escape there is a hex digit (a ``-``, a ``\\``, the ``]``)."""
    neg = (~Chars(ranges)).ranges
    use, caret = (neg, "^") if 0 < len(neg) < len(ranges) else (ranges, "")
    plain: list[str] = []
    hexed: list[str] = []
    for lo, hi in use:
        a, b = _gbnf_char(lo), _gbnf_char(hi)
        item = a if lo == hi else f"{a}-{b}"
        (hexed if "\\x" in item or "\\u" in item else plain).append(item)
    return f"[{caret}{''.join(plain)}{''.join(hexed)}]"


def _gbnf_lit(text: str) -> str:
    """A GBNF literal; after a hex escape a hex digit starts a literal of its own."""
    out, hexed = [], False
    for c in text:
        if hexed and c in "0123456789abcdefABCDEF":
            out.append('" "')
        esc = _LIT_SHORT.get(c)
        if esc is None and not _printable(c):
            esc = f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
            hexed = True
        else:
            hexed = False
        out.append(esc or c)
    return '"' + "".join(out) + '"'


@functools.lru_cache(maxsize=4096)
def _class(ranges: tuple[tuple[int, int], ...], emit: Callable[[int], str]) -> str:
    """A character class, negated where that is shorter."""
    neg = (~Chars(ranges)).ranges
    use, caret = (neg, "^") if 0 < len(neg) < len(ranges) else (ranges, "")
    body = "".join(emit(lo) if lo == hi else f"{emit(lo)}-{emit(hi)}" for lo, hi in use)
    return f"[{caret}{body}]"


def _single(n: Chars) -> str | None:
    """The one character of a one-character class."""
    return chr(n.ranges[0][0]) if len(n.ranges) == 1 and n.ranges[0][0] == n.ranges[0][1] else None


def _lark_node(n: Node, names: dict[str, str], top: bool = False) -> str:
    if isinstance(n, Lit):
        return _lit(n.text)
    if isinstance(n, Chars):
        one = _single(n)
        return _lit(one) if one is not None else "/" + _class(n.ranges, _rx_char) + "/"
    if isinstance(n, Ref):
        return names[n.name]
    if isinstance(n, Json):
        return "%json " + n.text
    if isinstance(n, Seq):
        return " ".join(_lark_atom(i, names) for i in n.items)
    if isinstance(n, Alt):
        body = " | ".join(_lark_node(i, names) for i in n.items)
        return body if top else f"({body})"
    if isinstance(n, Rep):
        return _lark_atom(n.item, names) + _quant(n.lo, n.hi)
    if isinstance(n, Both):
        return f"{_lark_atom(n.a, names)} & {_lark_atom(n.b, names)}"
    if isinstance(n, Not):
        return "~" + _lark_atom(n.a, names)
    raise TypeError(n)


def _lark_atom(n: Node, names: dict[str, str]) -> str:
    text = _lark_node(n, names)
    return f"({text})" if isinstance(n, (Seq, Both)) else text


def _quant(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, 1):
        return "?"
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if hi == lo:
        return f"{{{lo}}}"
    return f"{{{lo},{'' if hi is None else hi}}}"


def lark(g: Grammar, header: str = "") -> str:
    """The grammar in llguidance's Lark syntax; the first rule is ``start``."""
    names = {}
    for k, name in enumerate(g.rules):
        names[name] = "start" if k == 0 else (name.upper() if name in g.terminals else name.lower())
    lines = [header] if header else []
    lines += [f"{names[n]}: {_lark_node(body, names, top=True)}" for n, body in g.rules.items()]
    return "\n".join(lines) + "\n"


def _gbnf_node(n: Node, names: dict[str, str]) -> str:
    if isinstance(n, Lit):
        return _gbnf_lit(n.text)
    if isinstance(n, Chars):
        one = _single(n)
        return _gbnf_lit(one) if one is not None else _gbnf_class(n.ranges)
    if isinstance(n, Ref):
        return names[n.name]
    if isinstance(n, Seq):
        return " ".join(_gbnf_atom(i, names) for i in n.items)
    if isinstance(n, Alt):
        return "(" + " | ".join(_gbnf_node(i, names) for i in n.items) + ")"
    if isinstance(n, Rep):
        return _gbnf_atom(n.item, names) + _quant(n.lo, n.hi)
    raise TypeError(f"{type(n).__name__} has no GBNF form")


def _gbnf_atom(n: Node, names: dict[str, str]) -> str:
    text = _gbnf_node(n, names)
    return f"({text})" if isinstance(n, Seq) else text


def gbnf(g: Grammar) -> str:
    """The grammar in GBNF; the first rule is ``root``."""
    names = {
        name: "root" if k == 0 else name.lower().replace("_", "-") for k, name in enumerate(g.rules)
    }
    return "".join(f"{names[n]} ::= {_gbnf_node(body, names)}\n" for n, body in g.rules.items())

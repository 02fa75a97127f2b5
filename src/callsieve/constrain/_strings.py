"""Strategy: the string-level pieces every export needs — text that never holds a given
sequence, the characters of a JSON string, integer ranges as digits — built as grammar IR,
and the IR printed back as a regular expression for JSON Schema ``pattern``s.

What it does: ``avoid(units, s)`` is every sequence of ``units`` (IR nodes, each tagged
with the character of ``s`` it is, or None for one holding none of them) in which ``s``
never occurs: the string-matching automaton of ``s`` (its states: how much of ``s`` the
text ends with), every state final but the one that has all of ``s``, turned into one
expression by eliminating states — so ``]]>`` (a CDATA section's end) or a Markdown
fence's run of backticks cannot appear, however the text is cut. ``json_units(chars)`` is
one character of a JSON string whose value characters are ``chars``: the raw ones JSON
allows, ``\\"``, ``\\\\``, the control characters and DEL escaped (DEL as llguidance's JSON
writes it); ``generic=True`` lets any
escape stand (an unconstrained string). ``int_range(lo, hi)`` is the decimal spelling of
every integer in a range (either end open). ``regex_text(node)`` prints an IR node as an
ECMA-262 / Rust regular expression (``\\xHH``, ``\\uHHHH`` escapes, ``(?:…)`` groups).
What it guarantees: each is exact — no more and no fewer strings than it says.
What it costs: ``avoid`` is cubic in ``len(s)`` (three characters here); the rest linear.
"""

from __future__ import annotations

import functools

from .._base.errors import ConfigurationError
from ._ir import ANY, MAX_CODE, Alt, Chars, Lit, Node, Rep, Seq, alt, seq, star

__all__ = ["CONTROL", "avoid", "int_range", "json_units", "regex_text", "split_units"]

CONTROL = Chars(((0, 0x1F),))
#: Written as an escape only, as llguidance's JSON writes it (and ``callsieve.prompt``).
_DEL = Chars.of("\x7f")
_QUOTE, _BACKSLASH = Chars.of('"'), Chars.of("\\")
_HEX = Chars.span("0", "9") | Chars.span("a", "f") | Chars.span("A", "F")
_SHORT = {"\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f", '"': '"', "\\": "\\"}
#: What an escape's text is made of: a forbidden sequence must hold none of it.
_ESCAPE_TEXT = Chars.of('\\"/bfnrtu') | _HEX
Unit = tuple[Node, "str | None"]


def avoid(units: list[Unit], s: str) -> Node:
    """Every sequence of ``units`` that never holds ``s`` (see the module docstring)."""
    n = len(s)
    final = n  # the extra final state every state may stop at
    edges: dict[tuple[int, int], Node] = {}
    for q in range(n):
        edges[(q, final)] = Lit("")
        for node, letter in units:
            t = _next(s, q, letter)
            if t < n:
                edges[(q, t)] = alt(edges[(q, t)], node) if (q, t) in edges else node
    for k in range(n - 1, 0, -1):  # eliminate the states but the start
        loop = edges.pop((k, k), None)
        middle = star(loop) if loop is not None else Lit("")
        into = [(i, e) for (i, j), e in list(edges.items()) if j == k]
        out = [(j, e) for (i, j), e in list(edges.items()) if i == k]
        for key in [key for key in edges if k in key]:
            del edges[key]
        for i, a in into:
            for j, b in out:
                path = seq(a, middle, b)
                edges[(i, j)] = alt(edges[(i, j)], path) if (i, j) in edges else path
    loop = edges.get((0, 0))
    return seq(star(loop) if loop is not None else Lit(""), edges[(0, final)])


def _next(s: str, q: int, letter: str | None) -> int:
    """The matcher's state after ``s[:q]`` and one unit (``letter`` None: no char of ``s``)."""
    if letter is None:
        return 0
    text = s[:q] + letter
    for k in range(min(len(text), len(s)), 0, -1):
        if text.endswith(s[:k]):
            return k
    return 0


def split_units(raw: Chars, s: str, others: list[Node]) -> list[Unit]:
    """``raw`` characters and ``others`` (escapes) as ``avoid``'s units for sequence ``s``."""
    if any(c in _ESCAPE_TEXT for c in s):
        raise ConfigurationError(
            f"cannot keep {s!r} out of JSON strings: its characters are those of an escape"
        )
    mine = Chars.of(s)
    units: list[Unit] = [(Chars.of(c), c) for c in dict.fromkeys(s) if c in raw]
    rest = raw - mine
    if rest:
        units.append((rest, None))
    return units + [(o, None) for o in others]


@functools.lru_cache(maxsize=1024)
def json_units(chars: Chars, generic: bool = False) -> tuple[Chars, list[Node]]:
    """One character of a JSON string holding ``chars``: (its raw characters, its escapes).
    ``generic``: any JSON escape (for an unconstrained string)."""
    raw = chars - CONTROL - _DEL - _QUOTE - _BACKSLASH
    if generic:
        return raw, [seq(Lit("\\"), alt(Chars.of('"\\/bfnrt'), seq(Lit("u"), Rep(_HEX, 4, 4))))]
    escapes: list[Node] = []
    special = chars & (CONTROL | _DEL | _QUOTE | _BACKSLASH)
    for lo, hi in special.ranges:
        for o in range(lo, hi + 1):
            c = chr(o)
            escapes.append(Lit("\\" + _SHORT[c]) if c in _SHORT else Lit(f"\\u{o:04x}"))
    return raw, escapes


@functools.lru_cache(maxsize=1024)
def int_range(lo: int | None, hi: int | None) -> Node:
    """The decimal spelling (no sign on zero, no leading zeros) of every integer in
    ``[lo, hi]`` (None: unbounded)."""
    parts: list[Node] = []
    if lo is None or lo < 0:
        neg_hi = None if lo is None else -lo
        neg_lo = 1 if hi is None or hi >= 0 else -hi
        if neg_hi is None or neg_lo <= neg_hi:
            parts.append(seq(Lit("-"), _natural(neg_lo, neg_hi)))
    if hi is None or hi >= 0:
        parts.append(_natural(max(lo or 0, 0), hi))
    if not parts:
        raise ConfigurationError(f"no integer lies between {lo} and {hi}")
    return alt(*parts)


def _natural(a: int, b: int | None) -> Node:
    """Non-negative integers ``a <= x <= b`` (b None: unbounded)."""
    parts = []
    top = len(str(b)) if b is not None else len(str(a))
    for width in range(len(str(a)), top + 1):
        lo = max(a, 10 ** (width - 1) if width > 1 else 0)
        hi = min(b, 10**width - 1) if b is not None else 10**width - 1
        if lo <= hi:
            parts.append(_same_width(str(lo), str(hi)))
    if b is None:  # and every longer number
        parts.append(seq(Chars.span("1", "9"), Rep(Chars.span("0", "9"), top, None)))
    return alt(*parts)


def _same_width(x: str, y: str) -> Node:
    """Decimal strings of one width between ``x`` and ``y``: the shared head, then the first
    digit's range — its ends recursing on the rest, the digits between them free."""
    if not x:
        return Lit("")
    if x[0] == y[0]:
        return seq(Lit(x[0]), _same_width(x[1:], y[1:]))
    rest = len(x) - 1
    digits = Rep(Chars.span("0", "9"), rest, rest) if rest else Lit("")
    low, high = x[0], y[0]
    parts = []
    if x[1:] != "0" * rest:  # the low end's rest is bounded below
        parts.append(seq(Lit(low), _same_width(x[1:], "9" * rest)))
        low = chr(ord(low) + 1)
    top = None
    if y[1:] != "9" * rest:  # the high end's rest is bounded above
        top = seq(Lit(high), _same_width("0" * rest, y[1:]))
        high = chr(ord(high) - 1)
    if low <= high:
        parts.append(seq(Chars.span(low, high), digits))
    return alt(*parts, *([top] if top is not None else []))


# ------------------------------------------------------------------------ regex text
def _rx(o: int) -> str:
    c = chr(o)
    if c.isascii() and c.isalnum():
        return c
    if o < 0x80:
        return f"\\x{o:02x}"
    if o <= 0xFFFF:
        return f"\\u{o:04x}"
    return c


def regex_text(node: Node) -> str:
    """``node`` as a regular expression (nodes of the regular subset only)."""
    if isinstance(node, Lit):
        return "".join(_rx(ord(c)) for c in node.text)
    if isinstance(node, Chars):
        ranges, caret = node.ranges, ""
        if node.ranges and node.ranges[-1][1] == MAX_CODE:
            ranges, caret = (ANY - node).ranges, "^"
        if not ranges:
            return "[\\s\\S]" if caret else "[^\\s\\S]"
        body = "".join(_rx(lo) if lo == hi else f"{_rx(lo)}-{_rx(hi)}" for lo, hi in ranges)
        return f"[{caret}{body}]"
    if isinstance(node, Seq):
        return "".join(_atom(i) for i in node.items)
    if isinstance(node, Alt):
        return (
            "(?:" + "|".join(regex_text(i) for i in node.items) + ")" if node.items else "[^\\s\\S]"
        )
    if isinstance(node, Rep):
        q = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((node.lo, node.hi))
        if q is None:
            q = (
                f"{{{node.lo}}}"
                if node.hi == node.lo
                else f"{{{node.lo},{'' if node.hi is None else node.hi}}}"
            )
        return _atom(node.item, group=True) + q
    raise TypeError(f"{type(node).__name__} is not regular")


def _atom(node: Node, group: bool = False) -> str:
    text = regex_text(node)
    if isinstance(node, Seq) or (group and isinstance(node, Lit) and len(node.text) != 1):
        return f"(?:{text})"
    return text

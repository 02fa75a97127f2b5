"""Strategy: read a regular expression — a JSON Schema ``pattern`` (ECMA-262 semantics) or a
string format's pattern — into the grammar IR, so it can be printed as GBNF and restricted
to the characters a context allows.

What it does: ``regex_node(source)`` parses with the ``re`` module's own parser and walks
the tree: literals, classes (``\\d`` ``\\w`` ``\\s`` as ECMA-262 defines them, ASCII digits
and word characters), ``.`` (any character but a line terminator), groups, alternation and
bounded or unbounded repeats. JSON Schema's ``pattern`` matches anywhere in the string, so
a missing ``^`` or ``$`` becomes "any text" on that side; an anchor elsewhere, a
look-around, a back-reference, a conditional or an inline flag is a ``ConfigurationError``
(llama.cpp's converter refuses the same). ``restrict(node, allowed)`` keeps only the
characters in ``allowed`` in every class (the language of the result is the language of the
node intersected with ``allowed*``, exactly: a regular language's words over a smaller
alphabet).
What it guarantees: the node matches exactly the strings the pattern matches in full, given
the anchoring rule above. What it costs: linear in the pattern.
"""

from __future__ import annotations

from typing import Any

from .._base import re_internals as _re
from .._base.errors import ConfigurationError
from ._ir import ANY, Alt, Chars, Lit, Node, Rep, Seq, alt, seq, star

__all__ = ["DIGIT", "SPACE", "WORD", "char_class", "regex_node", "restrict"]

DIGIT = Chars.span("0", "9")
WORD = Chars.span("a", "z") | Chars.span("A", "Z") | DIGIT | Chars.of("_")
#: ECMA-262 white space and line terminators (``\\s``).
SPACE = Chars.of("\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | Chars.span(
    "\u2000", "\u200a"
)
_LINE_END = Chars.of("\n\r\u2028\u2029")
_CATEGORY = {
    "CATEGORY_DIGIT": DIGIT,
    "CATEGORY_NOT_DIGIT": ~DIGIT,
    "CATEGORY_WORD": WORD,
    "CATEGORY_NOT_WORD": ~WORD,
    "CATEGORY_SPACE": SPACE,
    "CATEGORY_NOT_SPACE": ~SPACE,
}


def regex_node(source: str, where: str = "pattern") -> Node:
    """The IR of ``source`` matched in full, with JSON Schema's anchoring (see above)."""
    try:
        items = _re.parse(source)
    except Exception as exc:  # noqa: BLE001 - re's errors, and anything else it may raise
        raise ConfigurationError(
            f"{where}: not a regular expression: {exc}", expected=("a regular expression",)
        ) from None
    head = not (items and _is_at(items[0], "AT_BEGINNING"))
    tail = not (items and _is_at(items[-1], "AT_END"))
    items = items[(0 if head else 1) : (len(items) if tail else -1)]
    body = _seq(items, where)
    return seq(star(ANY) if head else Lit(""), body, star(ANY) if tail else Lit(""))


def _is_at(item: Any, name: str) -> bool:
    op, av = item
    return str(op) == "AT" and str(av) in (name, name + "_STRING")


def _seq(items: list[Any], where: str) -> Node:
    return seq(*(_item(op, av, where) for op, av in items))


def _item(op: Any, av: Any, where: str) -> Node:
    name = str(op)
    if name == "LITERAL":
        return Lit(chr(av))
    if name == "NOT_LITERAL":
        return ~Chars.of(chr(av))
    if name == "ANY":
        return ~_LINE_END
    if name == "IN":
        return char_class(av, where)
    if name == "SUBPATTERN":
        if av[1] or av[2]:
            raise _unsupported("an inline flag", where)
        return _seq(list(av[3]), where)
    if name == "BRANCH":
        return alt(*(_seq(list(b), where) for b in av[1]))
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        lo, hi, body = av
        return Rep(_seq(list(body), where), lo, None if hi == _re.MAXREPEAT else hi)
    if name == "AT":
        raise _unsupported("an anchor inside the pattern", where)
    if name in ("ASSERT", "ASSERT_NOT"):
        raise _unsupported("a look-around", where)
    if name in ("GROUPREF", "GROUPREF_EXISTS"):
        raise _unsupported("a back-reference", where)
    raise _unsupported(name.lower(), where)


def char_class(items: Any, where: str, categories: dict[str, Chars] = _CATEGORY) -> Chars:
    """The characters a parsed ``[…]`` matches. ``categories``: what ``\\d``, ``\\w``, ``\\s``
    mean (JSON Schema's by default; a terminal's are Python's)."""
    out = Chars(())
    negate = False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            out = out | Chars.of(chr(av))
        elif name == "RANGE":
            out = out | Chars.span(chr(av[0]), chr(av[1]))
        elif name == "CATEGORY" and str(av) in categories:
            out = out | categories[str(av)]
        else:
            raise _unsupported(f"{name.lower()} in a character class", where)
    return ~out if negate else out & ANY


def _unsupported(what: str, where: str) -> ConfigurationError:
    return ConfigurationError(
        f"{where}: {what} is not supported (regular patterns only)",
        expected=("literals, classes, groups, |, and repeats",),
    )


def restrict(node: Node, allowed: Chars) -> Node:
    """``node`` with every character outside ``allowed`` taken out (a class that loses all
    its characters, or a literal that holds one, matches nothing: an empty choice)."""
    if isinstance(node, Chars):
        return node & allowed
    if isinstance(node, Lit):
        return node if all(c in allowed for c in node.text) else Alt(())
    if isinstance(node, Seq):
        parts = [restrict(i, allowed) for i in node.items]
        return Alt(()) if any(_nothing(p) for p in parts) else seq(*parts)
    if isinstance(node, Alt):
        kept = [p for p in (restrict(i, allowed) for i in node.items) if not _nothing(p)]
        return Alt(()) if not kept else alt(*kept)
    if isinstance(node, Rep):
        inner = restrict(node.item, allowed)
        if _nothing(inner):
            return Lit("") if node.lo == 0 else Alt(())
        return Rep(inner, node.lo, node.hi)
    return node


def _nothing(node: Node) -> bool:
    return (isinstance(node, Alt) and not node.items) or (isinstance(node, Chars) and not node)

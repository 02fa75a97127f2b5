"""Strategy: analyse a regular expression's structure (as ``re`` parses it) for the scanner:
which characters a match can start with (``first_chars``: what prose is searched for), and a
second expression that matches every *prefix* of
every string the first can match — the "could this still become a token?" question — so it
can be asked with the standard ``re`` module in one call.

What it does: ``prefix_closure(source)`` walks the ``re`` parser's tree. For a sequence
``a1 a2 … an`` the closure is ``a1 (a2 (… | pre(a3)) | pre(a2)) | pre(a1)``; a repeat
``X{m,n}`` becomes ``X{0,n-1} pre(X)``; alternatives close separately. A tail may run
into the context a look-ahead needs (``X(?=Y)`` closes as ``pre(X) | X pre(Y)``); other
look-arounds are dropped (treated as satisfied), so the closure is a superset: it may call a
tail viable that the next character would rule out, never the reverse. Callers therefore decide
*completeness* with the exact pattern and use the closure only to decide how long to hold.
What it guarantees: linear size in the source; ``None`` for constructs it does not know
(back-references, conditionals, inline flags), so the caller can refuse the grammar. What it costs: nothing at run time beyond one ``re`` call.
"""

from __future__ import annotations

import re
from typing import Any

from .._base import re_internals as _re

__all__ = [
    "char_class_source",
    "end_chars",
    "first_chars",
    "growable_before_lookahead",
    "literal_text",
    "max_width",
    "prefix_closure",
    "reads_before",
    "regex_items",
]

_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


class _Unsupported(ValueError):
    pass


def _esc(code: int) -> str:
    return re.escape(chr(code))


def char_class_source(op: Any, av: Any) -> str:
    """The ``re`` source of one single-character item of a parsed pattern (a literal, a
    negated literal, any character, or a class). Raises ValueError for what it cannot say."""
    name = str(op)
    if name == "LITERAL":
        return _esc(av)
    if name == "NOT_LITERAL":
        return f"[^{_esc(av)}]"
    if name == "ANY":
        return r"[\s\S]"
    if name != "IN":
        raise _Unsupported(name)
    neg = ""
    parts = []
    for iop, iav in av:
        iname = str(iop)
        if iname == "NEGATE":
            neg = "^"
        elif iname == "LITERAL":
            parts.append(_esc(iav))
        elif iname == "RANGE":
            parts.append(f"{_esc(iav[0])}-{_esc(iav[1])}")
        elif iname == "CATEGORY" and str(iav) in _CATEGORIES:
            parts.append(_CATEGORIES[str(iav)])
        else:
            raise _Unsupported(iname)
    return f"[{neg}{''.join(parts)}]"


def _full(items: list[tuple[Any, Any]]) -> str:
    return "".join(_full_item(op, av) for op, av in items)


def _full_item(op: Any, av: Any) -> str:
    name = str(op)
    if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
        return char_class_source(op, av)
    if name == "SUBPATTERN":
        _group, add, dele, sub = av
        if add or dele:
            raise _Unsupported("inline flags")
        return f"(?:{_full(list(sub))})"
    if name == "BRANCH":
        return "(?:" + "|".join(_full(list(alt)) for alt in av[1]) + ")"
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        lo, hi, body = av
        hi_s = "" if hi == _re.MAXREPEAT else str(hi)
        return f"(?:{_full(list(body))}){{{lo},{hi_s}}}"
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return ""  # zero-width: dropped (see module docstring)
    raise _Unsupported(name)


def _pre_seq(items: list[tuple[Any, Any]]) -> str:
    # N(i) = (?: full(a_i) N(i+1) | pre(a_i) ), N(n) = "" ; pre() includes the empty string.
    out = ""
    for op, av in reversed(items):
        if str(op) == "ASSERT" and av[0] == 1:
            # A look-ahead: the text may end inside the context it needs, or go on.
            look = _pre_seq(list(av[1]))
            out = f"(?:{out}|{look})" if out else look
            continue
        full = _full_item(op, av)
        pre = _pre_item(op, av)
        if not full:  # zero-width items vanish from the closure
            continue
        out = f"(?:{full}{out}|{pre})"
    return out


def _pre_item(op: Any, av: Any) -> str:
    name = str(op)
    if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
        return f"{_full_item(op, av)}?"
    if name == "SUBPATTERN":
        return _pre_seq(list(av[3]))
    if name == "BRANCH":
        return "(?:" + "|".join(_pre_seq(list(alt)) for alt in av[1]) + ")"
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        _lo, hi, body = av
        if hi == 0:
            return ""
        body_items = list(body)
        hi_s = "" if hi == _re.MAXREPEAT else str(hi - 1)
        return f"(?:(?:{_full(body_items)}){{0,{hi_s}}}{_pre_seq(body_items)})"
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return ""
    raise _Unsupported(name)


def prefix_closure(source: str) -> str | None:
    """A regex source matching every prefix (the empty one included) of every match of
    ``source``, or None if ``source`` uses a construct this does not handle."""
    try:
        parsed = _re.parse(source)
        return _pre_seq(list(parsed))
    except (_Unsupported, _re.ReInternalsUnavailable, re.error, RecursionError):
        return None


def first_chars(pattern: str) -> set[str] | None:
    """The characters a match of ``pattern`` can start with, or None if that is not a small
    fixed set (negated classes, categories such as \\s, a pattern that can match empty)."""
    return _edge_chars(pattern, last=False)


def end_chars(pattern: str) -> set[str] | None:
    """The characters whose arrival can *complete* a match of ``pattern``: its last character,
    or, for a pattern that ends in a look-ahead, the character the look-ahead needs. None if
    that is not a small fixed set."""
    return _edge_chars(pattern, last=True)


def _edge_chars(pattern: str, last: bool) -> set[str] | None:
    try:
        parsed = _re.parse(pattern)
    except (re.error, _re.ReInternalsUnavailable):  # pragma: no cover - Lark validated it
        return None
    chars, nullable = _edge(list(parsed), last)
    return None if (chars is None or nullable) else chars


#: What ``\\s`` matches in a str pattern: every Unicode white-space character lies at or below
#: U+3000, so the class is small and can be listed.
_SPACES = frozenset(c for c in map(chr, range(0x3001)) if re.match(r"\s", c))


def _class_chars(av: Any) -> set[str] | None:
    chars: set[str] = set()
    for iop, iav in av:
        iname = str(iop)
        if iname == "LITERAL":
            chars.add(chr(iav))
        elif iname == "RANGE" and iav[1] - iav[0] < 512:
            chars.update(chr(c) for c in range(iav[0], iav[1] + 1))
        elif iname == "CATEGORY" and str(iav) == "CATEGORY_SPACE":
            chars |= _SPACES
        else:
            return None  # negated classes, other categories: not a small set
    return chars


def _edge(items: list[Any], last: bool) -> tuple[set[str] | None, bool]:
    """The characters a match of the sequence ``items`` can start with (``last=False``) or
    be completed by (``last=True``), and whether it can match empty. None: not a small set."""
    out: set[str] = set()
    for op, av in reversed(items) if last else items:
        name = str(op)
        if name == "AT":
            continue
        if name in ("ASSERT", "ASSERT_NOT"):
            if not last:
                continue  # look-arounds consume nothing
            if name == "ASSERT" and av[0] == 1:  # a trailing look-ahead decides completion
                first, nullable = _edge(list(av[1]), False)
                return (None, False) if first is None or nullable else (out | first, False)
            return None, False
        if name == "LITERAL":
            return out | {chr(av)}, False
        if name == "IN":
            chars = _class_chars(av)
            return (None, False) if chars is None else (out | chars, False)
        if name == "SUBPATTERN":
            sub, nullable = _edge(list(av[-1]), last)
        elif name == "BRANCH":
            sub, nullable = set(), False
            for alt in av[1]:
                f, n = _edge(list(alt), last)
                if f is None:
                    return None, False
                sub |= f
                nullable = nullable or n
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, _hi, body = av
            sub, nullable = _edge(list(body), last)
            nullable = nullable or lo == 0
        else:
            return None, False
        if sub is None:
            return None, False
        out |= sub
        if not nullable:
            return out, False
    return out, True


def literal_text(pattern: str) -> str | None:
    """The one string ``pattern`` matches, if it is a plain sequence of literal characters
    (no flags, classes, repeats or look-arounds); else None."""
    try:
        items = _re.parse(pattern)
    except (re.error, _re.ReInternalsUnavailable):
        return None
    if not items or any(str(op) != "LITERAL" for op, _ in items):
        return None
    return "".join(chr(av) for _, av in items)


def growable_before_lookahead(pattern: str) -> set[str]:
    """Characters that break "a complete match never grows": where a greedy repeat of one
    character class (``[^ >]{1,9}``) stands right before a look-ahead (``(?=[ >\\u200b])``),
    every character both accept. A text cut just after such a character matches short (the
    repeat backs off, the look-ahead takes it) while the whole text matches long. A lazy or
    possessive repeat, or a fixed count, cannot do that. Empty: none found (only this
    adjacent shape is checked)."""
    try:
        items = _re.parse(pattern)
    except (re.error, _re.ReInternalsUnavailable):  # pragma: no cover - Lark validated it
        return set()
    return _growable(items)


def _growable(items: list[tuple[Any, Any]]) -> set[str]:
    out: set[str] = set()
    for k, (op, av) in enumerate(items):
        name = str(op)
        if name == "SUBPATTERN":
            out |= _growable(list(av[3]))
        elif name == "BRANCH":
            for alt in av[1]:
                out |= _growable(list(alt))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            out |= _growable(list(av[2]))
        elif name == "ASSERT" and av[0] == 1 and k:
            looked = first_chars(_full(list(av[1])))
            if looked is None:
                continue
            for body in _ending_repeats(items[k - 1]):
                try:
                    cls = re.compile(char_class_source(*body))
                except _Unsupported:
                    continue
                out |= {c for c in looked if cls.fullmatch(c)}
    return out


def _ending_repeats(item: tuple[Any, Any]) -> list[tuple[Any, Any]]:
    """The one-character bodies of the greedy, variable repeats that may end ``item``'s
    match: the item itself, or the last item of a group (named or not) or of any branch."""
    op, av = item
    name = str(op)
    if name == "MAX_REPEAT":
        body = list(av[2])
        return body if av[0] != av[1] and len(body) == 1 else []
    if name == "SUBPATTERN":
        inner = list(av[3])
        return _ending_repeats(inner[-1]) if inner else []
    if name == "BRANCH":
        return [r for alt in av[1] if alt for r in _ending_repeats(list(alt)[-1])]
    return []


def regex_items(pattern: str) -> list[tuple[Any, Any]]:
    """``pattern`` as ``re`` parses it (its items: op and argument), for the grammar's other
    readers of a pattern's structure (``_grammar.overlap``), so ``re``'s internals are
    reached through one module (``_base.re_internals``)."""
    return _re.parse(pattern)


def max_width(pattern: str) -> int:
    """The length of the longest match of ``pattern`` (a very large number if unbounded)."""
    return _re.max_width(pattern)


#: Anchors that look at the text before the match position (or at its absolute position).
_BEFORE_ANCHORS = frozenset(
    (
        "AT_BEGINNING",
        "AT_BEGINNING_LINE",
        "AT_BEGINNING_STRING",
        "AT_BOUNDARY",
        "AT_NON_BOUNDARY",
        "AT_LOC_BOUNDARY",
        "AT_LOC_NON_BOUNDARY",
        "AT_UNI_BOUNDARY",
        "AT_UNI_NON_BOUNDARY",
    )
)


def reads_before(pattern: str) -> bool:
    """Whether ``pattern.match(buf, p)`` may depend on ``buf[:p]``: a look-behind, ``^``,
    ``\\A`` or ``\\b``. If not, matching ``buf[p:]`` alone gives the same answer."""
    try:
        items = _re.parse(pattern)
    except (re.error, _re.ReInternalsUnavailable):  # pragma: no cover - Lark validated it
        return True
    return _reads_before(items)


def _reads_before(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        name = str(op)
        if name == "AT":
            if str(av) in _BEFORE_ANCHORS:
                return True
        elif name in ("ASSERT", "ASSERT_NOT"):
            if av[0] < 0 or _reads_before(list(av[1])):
                return True
        elif name == "SUBPATTERN":
            if _reads_before(list(av[3])):
                return True
        elif name == "BRANCH":
            if any(_reads_before(list(alt)) for alt in av[1]):
                return True
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if _reads_before(list(av[2])):
                return True
        elif name in ("GROUPREF", "GROUPREF_EXISTS", "ATOMIC_GROUP"):
            return True  # not analysed: assume the worst
    return False

"""Strategy: the scanner's one decision at a token boundary inside a block — which bounded
terminal starts here, or whether the rest is a tag cut by the end of the text, to be held.

What it does: ``decide(spec, buf, p, final)`` tries the parser state's bounded terminals
that may start with ``buf[p]``, in priority order; the first that matches is the token,
unless a higher one may still complete on more text (then the text is held: the answer
must not depend on where a chunk ends; held over a lower one's match, it is ``OVERTAKING``:
any character may settle it). ``GroupToken`` keeps a terminal's named groups
from the match made in context; ``new_token`` makes a Lark token cheaply.
What it guarantees: the same decision for the same text and state, so a decision may be
remembered (``Capture._token_at``). What it costs: a few ``re`` calls, on short texts.
"""

from __future__ import annotations

from typing import Any, TypeVar

from lark import Token

from .._grammar.specs import StateSpec, TokenSpec

__all__ = ["DECISION_SPAN", "OVERTAKING", "Decision", "GroupToken", "decide", "new_token"]


class GroupToken(Token):
    """A token that keeps its terminal's named groups (``v``: a value, ``k``: a key) from the
    match the scanner made in context — a look-ahead at its end cannot be re-checked later."""

    __slots__ = ("groups",)

    groups: dict[str, str | None]


_new_str = str.__new__


_T = TypeVar("_T", bound=Token)


def new_token(cls: type[_T], name: str, value: str) -> _T:
    """``Token(name, value)``, set up the way Lark's own constructor does, without the call
    through its keyword-deprecation shim (which costs more than the rest)."""
    tok = _new_str(cls, value)
    tok.type = name
    tok.value = value
    tok.start_pos = tok.line = tok.column = None
    tok.end_line = tok.end_column = tok.end_pos = None
    return tok


#: ``(terminal, value, token, cut, pending)``: take ``token`` (the text ``value`` of
#: ``terminal``, a ``GroupToken`` if the terminal has named groups; built once per decision
#: and shared, as nothing changes a token once made), or hold a tag cut by the end of the
#: text (``cut``; ``pending``: the one terminal it may become, or None, or ``OVERTAKING``),
#: or neither: no token starts here.
Decision = tuple[Any, str, Any, bool, Any]
_NO_TOKEN: Decision = (None, "", None, False, None)
_CUT: Decision = (None, "", None, True, None)


def _any(chunk: str) -> bool:
    return True


#: The ``pending`` of a tail held because a higher terminal may still overtake a lower one
#: that already matched (an invoke's ``>`` that may yet be the JSON body's, once a ``{``
#: comes): that is settled when the higher one completes *or dies*, and any character may
#: kill it, so every chunk asks again (its ``end_probe`` finds something in any chunk; the
#: pending terminal's own probe only knows what can complete it).
OVERTAKING = TokenSpec("<overtaking>", 0, None, width=4096)
OVERTAKING.end_probe = _any
_OVERTAKEN: Decision = (None, "", None, True, OVERTAKING)
#: Decisions on texts up to this long are remembered (per parser state; see
#: ``CompiledGrammar.remember`` for the bound): a token cut by a chunk boundary plus the
#: next chunk of a stream is shorter, while the texts at a tag in large chunks, which
#: seldom come back, are not kept.
DECISION_SPAN = 32


def decide(spec: StateSpec, buf: str, p: int, final: bool) -> Decision:
    """The scanner's one decision at ``buf[p]`` in a parser state: the bounded terminals are
    tried in priority order; one that may still complete there (``buf[p:]`` is a viable
    prefix, unless ``final``) keeps any lower one from being taken."""
    n = len(buf)
    pending = None
    for term in spec.starting(buf[p]):
        tm = term.pattern.match(buf, p)
        if tm is not None:
            if pending is not None:  # a higher one may still overtake this match
                return _OVERTAKEN
            value = tm.group()
            tok: Token
            if term.pattern.groupindex:
                gtok = new_token(GroupToken, term.name, value)
                gtok.groups = tm.groupdict()
                tok = gtok
            else:
                tok = new_token(Token, term.name, value)
            return term, value, tok, False, None
        if not final and n - p <= term.reach and term.viable(buf, p) is not None:
            if pending is not None:  # a second one: hold, and no single terminal is pending
                return _CUT
            pending = term
    return _NO_TOKEN if pending is None else (None, "", None, True, pending)

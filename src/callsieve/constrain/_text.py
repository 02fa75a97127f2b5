"""Strategy: the free text before a tool block, as a grammar — text that ``parse()`` will
release as text, so that the block after it is read as the call it spells.

What it does: ``free_text(g, grammar, target)`` adds the rules of the free text to ``g`` and
returns its node. What the parser does with prose decides what the text may hold:
  - a tag lead (``<``, ``＜``, ``〈`` in the default dialects: ``EntryIndex.lead_chars``)
    starts an opener, the start of a call whose wrapper the repair inserts, or a reasoning
    tag; so a lead stands only before a character at which every entry of the grammar dies
    (asked of the grammar's own entry automata, those of the answer and of the text before
    it; a ``</think>`` there is text) — ``a < b`` and ``x <= y`` stay possible,
    ``<tool_calls>``, ``<invoke`` or ``<think>`` do not;
  - Markdown code hides a block (SPEC §6), so code must be closed before the block: an
    inline span is one backtick, text without a backtick or line break, one backtick (never
    two spans side by side: ````` `` ````` is a run of two); a fence is a line of exactly
    three backticks with an info string, lines that do not begin (after blanks) with a
    backtick or tilde, and a bare closing line of three backticks; tildes come one at a
    time (``~~~`` at a line start opens a fence). Inside code a tag lead is harmless.
The rest of the text is free. For llguidance the pieces are lexemes (a run of prose stops
at a lead, so the opener after the text is lexed as the opener); GBNF spells a line with
right recursion, because llguidance's GBNF converter would otherwise fuse the line into
one lexeme that runs past the opener.
What it guarantees: a text it accepts, followed by a block, leaves the parser in prose,
outside code, with no block begun (tested as a property with the parser).
What it costs: once per grammar: one automaton step per lead and printable ASCII character.
"""

from __future__ import annotations

import functools

from .._grammar.automaton import DEAD
from .._grammar.compiled import CompiledGrammar
from .._grammar.entry_tables import THINK_TABLES
from ._ir import ANY, Chars, Grammar, Lit, Node, Ref, alt, opt, plus, seq, star

__all__ = ["free_text", "safe_followers"]

_NL, _TICK, _TILDE = "\n", "`", "~"
#: The characters tried after a lead: printable ASCII and the tab.
_CANDIDATES = "\t" + "".join(chr(c) for c in range(32, 127))


@functools.lru_cache(maxsize=32)
def safe_followers(g: CompiledGrammar) -> tuple[tuple[str, str], ...]:
    """For each tag lead, the characters after which no entry can be under way."""
    inside = THINK_TABLES[-1][0]  # (inside reasoning: not where the free text stands)
    autos = [t.automaton for name, t in g.openers.entry_tables.items() if name != inside]
    out = []
    for lead in g.openers.lead_chars:
        starts = [(a, a.step(0, lead)) for a in autos]
        kill = "".join(
            c
            for c in _CANDIDATES
            if c not in g.openers.lead_chars
            and c not in _TICK + _TILDE
            and all(s == DEAD or a.step(s, c) == DEAD for a, s in starts)
        )
        out.append((lead, kill))
    return tuple(out)


def free_text(g: Grammar, grammar: CompiledGrammar, target: str) -> Node:
    """The free text's node (rules added to ``g``); ``target`` is ``"lark"`` or ``"gbnf"``."""
    leads = grammar.openers.lead_chars
    prose = g.define("prose", plus(ANY - Chars.of(leads + _NL + _TICK + _TILDE)), terminal=True)
    pairs = [seq(Lit(lead), Chars.of(kill)) for lead, kill in safe_followers(grammar) if kill]
    unit: Node = prose
    if pairs:
        unit = alt(prose, g.define("lead_pair", alt(*pairs), terminal=True))
    span = g.define(
        "code_span", seq(Lit(_TICK), plus(ANY - Chars.of(_TICK + _NL)), Lit(_TICK)), terminal=True
    )
    content = seq(
        star(Chars.of(" \t")),
        opt(seq(ANY - Chars.of(" \t" + _TICK + _TILDE + _NL), star(ANY - Chars.of(_NL)))),
        Lit(_NL),
    )
    fence = g.define(
        "code_fence",
        seq(
            Lit(_TICK * 3),
            star(ANY - Chars.of(_TICK + _NL)),
            Lit(_NL),
            star(content),
            Lit(_TICK * 3 + _NL),
        ),
        terminal=True,
    )
    tilde = Lit(_TILDE)
    if target == "gbnf":
        line = _recursive_line(g, unit, tilde, span)
    else:
        line = g.define(
            "line",
            seq(
                star(alt(unit, seq(tilde, unit), seq(span, unit), seq(span, tilde, unit))),
                opt(alt(tilde, span, seq(span, tilde))),
            ),
        )
    return g.define("text", seq(star(alt(seq(line, Lit(_NL)), fence)), line))


def _recursive_line(g: Grammar, unit: Node, tilde: Node, span: Node) -> Ref:
    line = g.reserve("line")
    after_span = g.reserve("after_span")
    rest = alt(seq(unit, Ref(line)), seq(tilde, unit, Ref(line)), tilde)
    g.rules[line] = alt(Lit(""), rest, seq(span, Ref(after_span)))
    g.rules[after_span] = alt(Lit(""), rest)
    return Ref(line)

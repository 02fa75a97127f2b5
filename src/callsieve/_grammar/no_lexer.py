"""Strategy: the lexer Lark is given — none. The incremental scanner (``_blocks.capture``)
feeds the parser tokens itself, so Lark's lexer never runs; Lark still wants a class.

What it does: ``NoLexer`` is the ``lexer=`` class of every Lark parser callsieve builds, in
the derivation (``derive``) and when a parser is rebuilt from the cache (``compiled``),
whose allow-list of pickled globals names it.
What it guarantees: running it is a ``GrammarError``, never a silent lex.
What it costs: nothing.
"""

from __future__ import annotations

from typing import Any

from lark.lexer import Lexer

from .._base.errors import GrammarError

__all__ = ["NoLexer"]


class NoLexer(Lexer):
    """Lark wants a lexer; ours is the incremental scanner, which feeds tokens directly."""

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, lexer_state: Any, parser_state: Any) -> Any:  # pragma: no cover
        raise GrammarError("callsieve feeds tokens itself; Lark's lexer is never run")

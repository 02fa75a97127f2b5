"""The real consumers of exported constraints (SPEC §18), for the tests: llguidance's matcher
driven by a byte-level tokenizer (256 one-byte tokens and an end-of-sequence token: no model
is needed), and xgrammar's, where it is importable (it is not in the test extra: its wheel
pulls a GPU stack).

``ByteMatcher(grammar, fmt)`` compiles a Lark grammar (``fmt="lark"``) or GBNF (through
llguidance's own GBNF converter) and raises ``AssertionError`` with llguidance's message if
the grammar does not validate; ``feed`` consumes text byte by byte, ``allowed`` is the mask
as byte values (``EOS`` for the end), ``forced`` the bytes the grammar forces next.
"""

from __future__ import annotations

import functools
from typing import Any

import llguidance

EOS = 256


class _Bytes:
    """A tokenizer of one token per byte, and an end-of-sequence token."""

    def __init__(self) -> None:
        self.tokens = [bytes([i]) for i in range(256)] + [b"</s>"]
        self.eos_token_id = EOS
        self.bos_token_id = None
        self.special_token_ids = [EOS]

    def __call__(self, text: Any) -> list[int]:
        return list(text.encode("utf-8") if isinstance(text, str) else text)


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()))


def compiled(grammar: str, fmt: str = "lark") -> str:
    """llguidance's grammar for ``grammar`` (validated: an invalid one fails the test)."""
    g = llguidance.grammar_from(fmt, grammar)
    error = llguidance.LLMatcher.validate_grammar(g, TOKENIZER)
    assert not error, error
    return g


@functools.lru_cache(maxsize=128)
def _fresh(grammar: str, fmt: str) -> Any:
    """A matcher at the start of ``grammar`` (kept: each use takes a copy of it)."""
    return llguidance.LLMatcher(TOKENIZER, compiled(grammar, fmt), log_level=0)


class ByteMatcher:
    def __init__(self, grammar: str, fmt: str = "lark", _m: Any = None) -> None:
        self.m = _m if _m is not None else _fresh(grammar, fmt).deep_copy()

    def copy(self) -> ByteMatcher:
        return ByteMatcher("", _m=self.m.deep_copy())

    def feed(self, text: str | bytes) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else text
        return all(self.m.consume_token(b) for b in data)

    def accepting(self) -> bool:
        return self.m.is_accepting()

    def error(self) -> str:
        return self.m.get_error()

    def allowed(self) -> list[int]:
        mask = self.m.compute_bitmask()
        return [t for t in range(EOS + 1) if mask[t // 8] >> (t % 8) & 1]

    def forced(self) -> bytes:
        return self.m.compute_ff_bytes()


#: The bytes a completion tries first: those that close strings, objects, tags and lines.
CLOSING = b'"}]>/<\n'


def complete(m: ByteMatcher, limit: int = 4000) -> bytes | None:
    """The shortest bytes that take ``m`` to where the grammar may end (breadth first,
    forced bytes taken whole, closing bytes tried first), or None past ``limit`` states."""
    frontier: list[tuple[ByteMatcher, bytes]] = [(m, b"")]
    seen = 0
    while frontier and seen < limit:
        nxt: list[tuple[ByteMatcher, bytes]] = []
        for state, path in frontier:
            allowed = state.allowed()
            if EOS in allowed:
                return path
            order = [b for b in CLOSING if b in allowed] + [
                b for b in allowed if b not in CLOSING and b != EOS
            ]
            for b in order:
                seen += 1
                if seen > limit:
                    return None
                child = state.copy()
                if not child.feed(bytes([b])):
                    continue
                forced = child.forced()
                if forced and not child.feed(forced):
                    continue
                nxt.append((child, path + bytes([b]) + forced))
        frontier = nxt
    return None


def accepts(grammar: str, text: str, fmt: str = "lark") -> bool:
    """Does the grammar accept exactly ``text`` (every byte, then the end)?"""
    m = ByteMatcher(grammar, fmt)
    return m.feed(text) and m.accepting()


def xgrammar() -> Any:
    """The xgrammar module, or None where it is not importable."""
    try:
        import xgrammar as xgr
    except ImportError:
        return None
    return xgr


def xgrammar_accepts(tag: dict[str, Any], texts: list[str]) -> list[bool]:
    """xgrammar's verdict on each text under a structural tag (compiled once)."""
    import json

    xgr = xgrammar()
    vocab = [bytes([i]) for i in range(256)] + [b"</s>"]
    info = xgr.TokenizerInfo(vocab, xgr.VocabType.RAW, stop_token_ids=[EOS])
    compiled_tag = xgr.GrammarCompiler(info).compile_grammar(
        xgr.Grammar.from_structural_tag(json.dumps(tag))
    )
    out = []
    for text in texts:
        m = xgr.GrammarMatcher(compiled_tag)
        out.append(
            bool(m.accept_string(text.encode("utf-8")))
            and (m.is_completed() or bool(m.accept_token(EOS)))
        )
    return out

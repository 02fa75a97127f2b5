"""Strategy: a what-if for ``bench_instructions.py --exec``, not part of the library: how much
would a lean LALR step over Lark's own parse table save, the first option the engine issue's
notes weigh for the (c) target?

It replaces Lark's ``ParserState.feed_token`` in the measured process by the same loop over
the same table and the same tree-building callbacks, without what the lean step would drop:
the ``assert`` lines (one of them compares a ``Rule`` with an ``int`` through
``Rule.__eq__``, a Python call, on every reduction), the end-of-input branch and the repeated
attribute reads. The parse, the tree and the sieve's events are unchanged.

    python benchmarks/bench_instructions.py --cases c --exec benchmarks/whatif_lean_lalr.py
"""

from __future__ import annotations

from typing import Any

from lark.exceptions import UnexpectedToken
from lark.lexer import Token
from lark.parsers.lalr_analysis import Shift
from lark.parsers.lalr_parser_state import ParserState

_lark_feed_token = ParserState.feed_token


def _lean_feed_token(self: Any, token: Token, is_end: bool = False) -> Any:
    if is_end:
        return _lark_feed_token(self, token, is_end)
    state_stack = self.state_stack
    value_stack = self.value_stack
    conf = self.parse_conf
    states = conf.states
    callbacks = conf.callbacks
    kind = token.type
    while True:
        try:
            action, arg = states[state_stack[-1]][kind]
        except KeyError:
            expected = {s for s in states[state_stack[-1]] if s.isupper()}
            raise UnexpectedToken(  # type: ignore[no-untyped-call]
                token, expected, state=self, interactive_parser=None) from None
        if action is Shift:
            state_stack.append(arg)
            value_stack.append(token if kind not in callbacks else callbacks[kind](token))
            return None
        size = len(arg.expansion)
        if size:
            children = value_stack[-size:]
            del state_stack[-size:]
            del value_stack[-size:]
        else:
            children = []
        value_stack.append(callbacks[arg](children))
        state_stack.append(states[state_stack[-1]][arg.origin.name][1])


ParserState.feed_token = _lean_feed_token  # type: ignore[method-assign]

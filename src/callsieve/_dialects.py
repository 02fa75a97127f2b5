"""Strategy: what a compiled grammar's rules say about its dialects — which dialect's block
could be complete without a call — part of the cold path (``_derive``).

What it does: ``callless`` names the dialect rules that can derive a block without a
``call`` node (a least fixed point over the rules: a rule can if it is no call and every
symbol it expands to is a terminal or a rule that can).
What it guarantees: a dialect it does not name holds a ``call`` node in every block its
rule derives.
What it costs: a few passes over the rules, on a cold load only (~0.05 ms for the built-in
grammar).
"""

from __future__ import annotations

from typing import Any

from ._grammar import _is_call

__all__ = ["callless"]


def callless(rules: list[Any], dialects: tuple[str, ...]) -> list[str]:
    """The dialects whose block rule can derive a sentence without a ``call`` node."""
    can: set[str] = set()
    grew = True
    while grew:
        grew = False
        for r in rules:
            name = str(r.origin.name)
            if name in can or _is_call(r):
                continue
            if all(s.is_term or str(s.name) in can for s in r.expansion):
                can.add(name)
                grew = True
    return [d for d in dialects if d in can]

"""Strategy: the one door to Lark's private interfaces. Other modules use Lark's public API
(``Lark``, ``Token``, ``Tree``, ``Transformer``, ``Discard``, ``LarkError``, a grammar's
``rules`` and ``terminals``) and the names below.

What it does: the engine drives Lark's LALR parser one token at a time and analyses its parse
table. Lark documents neither. Every private name used lives here:

- ``Lark.parser.parser.parser.parse_table``: the LALR table, with ``states`` (per state, per
  symbol, an action and its argument) and ``start_states``;
- the actions' names, ``"Shift"`` and ``"Reduce"`` (``is_shift``, ``is_reduce``);
- ``lark.parsers.lalr_parser_state.ParserState`` and ``ParseConf``, a parser state built
  around a grammar's shared configuration (``new_parser``, ``fork_parser``);
- ``ParseConf.states``, ``.callbacks`` and ``.end_state``; an interactive parser's
  ``parser_state`` and ``lexer_thread``;
- ``Lark.memo_serialize`` and ``Lark._load_from_dict`` (the grammar cache);
- ``Rule.origin.name``, made a plain ``str`` on load (``plain_rule_names``);
- a terminal's ``pattern.to_regexp()`` and ``pattern.max_width`` (``terminal_source``,
  ``terminal_width``).

A parser state is used elsewhere through ``ParserStateView``: ``feed_token``,
``state_stack``, ``value_stack`` and ``position``.

What it guarantees: a change in one of these names breaks this module, not the engine.
CI runs the grammar checks on the lowest and the newest Lark the pin allows (``.ci/run``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from lark import Lark, Token
from lark.grammar import Rule
from lark.lexer import TerminalDef
from lark.parsers.lalr_parser_state import ParseConf, ParserState

__all__ = [
    "END",
    "ParserStateView",
    "ShareableParser",
    "end_action",
    "end_state",
    "feed_end",
    "is_reduce",
    "is_shift",
    "load_lark",
    "parse_table",
    "plain_rule_names",
    "reduce_by_hand",
    "serialize_lark",
    "state_row",
    "terminal_source",
    "terminal_width",
]

#: The end-of-input symbol of Lark's parse table.
END = "$END"


class ParserStateView(Protocol):
    """What the engine reads and calls of a Lark parser state."""

    state_stack: list[int]
    value_stack: list[Any]

    @property
    def position(self) -> int: ...

    def feed_token(self, token: Token, is_end: bool = False) -> Any: ...


def terminal_source(terminal: Any) -> str:
    """The regular expression of a grammar's terminal (a literal's too)."""
    source: str = terminal.pattern.to_regexp()
    return source


def terminal_width(terminal: Any) -> int:
    """The length of the longest text a grammar's terminal matches."""
    return int(terminal.pattern.max_width)


def parse_table(lark: Lark) -> Any:
    """The LALR parse table of ``lark`` (``states``, ``start_states``)."""
    return lark.parser.parser.parser.parse_table


def is_shift(action: Any) -> bool:
    """Whether a parse table's action is a shift."""
    return getattr(action, "name", "") == "Shift"


def is_reduce(action: Any) -> bool:
    """Whether a parse table's action is a reduction."""
    return getattr(action, "name", "") == "Reduce"


def serialize_lark(lark: Lark) -> tuple[Any, Any]:
    """``lark``'s parser as plain data, for the grammar cache."""
    data, memo = lark.memo_serialize([TerminalDef, Rule])
    return data, memo


def load_lark(data: Any, memo: Any) -> Lark:
    """The parser ``serialize_lark`` stored."""
    lark: Lark = Lark._load_from_dict(data, memo)  # type: ignore[no-untyped-call]
    return lark


def plain_rule_names(lark: Lark) -> None:
    """Make every rule's name a plain ``str``. Most are Lark ``Token``s (a ``str`` with a
    Python ``__eq__``), so every goto after a reduce ran that ``__eq__``. Plain names keep
    those lookups in C; hashes and equality are unchanged."""
    for rule in lark.rules:
        rule.origin.name = str(rule.origin.name)


class ShareableParser:
    """A grammar's parser configuration, shared by every block's parser. Lark's
    ``parse_interactive`` builds it again each time, which costs more than parsing a tag."""

    __slots__ = ("_thread", "rule_callbacks", "table")

    def __init__(self, lark: Lark) -> None:
        model = lark.parse_interactive()  # (made the documented way, once)
        self._thread = model.lexer_thread
        self.table = parse_table(lark)
        #: Each rule's tree-building callback, as the parser was made with.
        self.rule_callbacks: dict[Any, Callable[..., Any]] = dict(
            model.parser_state.parse_conf.callbacks
        )

    def with_callbacks(self, callbacks: dict[Any, Callable[..., Any]], start: str) -> Any:
        """A configuration of the same table with other callbacks."""
        return ParseConf(self.table, callbacks, start)

    def new_parser(self, conf: Any, start_state: int) -> Any:
        """A parser state at ``start_state``, with configuration ``conf``."""
        return ParserState(conf, self._thread, [start_state], [])

    def fork_parser(self, conf: Any, ps: Any) -> Any:
        """A copy of the parser state ``ps`` that shares its values (``ps.copy(False)``, with
        configuration ``conf``)."""
        return ParserState(conf, self._thread, ps.state_stack[:], ps.value_stack[:])


def state_row(ps: Any, state: int) -> dict[str, Any]:
    """The parse table's row of ``state`` (symbol -> action), from a parser state."""
    row: dict[str, Any] = ps.parse_conf.parse_table.states[state]
    return row


def feed_end(ps: Any) -> None:
    """Feed the parser state ``ps`` the end of input (raises ``LarkError`` where it cannot
    end)."""
    ps.feed_token(Token(END, ""), True)


def reduce_by_hand(ps: Any, stack: list[int], values: list[Any], rule: Any) -> list[Any]:
    """One reduction of ``rule`` on ``stack`` and ``values`` (a parser state ``ps``'s, or
    copies of them), as Lark's ``feed_token`` makes it: the rule's callback, then the goto.
    Returns the children it took."""
    conf = ps.parse_conf
    size = len(rule.expansion)
    children = values[-size:] if size else []
    if size:
        del stack[-size:]
        del values[-size:]
    values.append(conf.callbacks[rule](children))
    stack.append(conf.states[stack[-1]][rule.origin.name][1])
    return children


def end_action(ps: Any, state: int) -> tuple[Any, Any]:
    """The action (and its argument) ``state`` takes at the end of input, or Nones."""
    action: tuple[Any, Any] = ps.parse_conf.states[state].get(END, (None, None))
    return action


def end_state(ps: Any) -> int:
    """The state a parser that has read a whole block stands in."""
    return int(ps.parse_conf.end_state)

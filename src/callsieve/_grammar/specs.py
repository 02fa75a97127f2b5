"""Strategy: what the scanner reads for one terminal (``TerminalSpec`` and its three kinds),
one parser state (``StateSpec``) and one entry (``EntrySpec``) of a compiled grammar
(``compiled``).

What it does: a terminal is one of three kinds, each a type of its own over a small common
core (``TerminalSpec``: name, priority, pattern sources; ``is_run`` and ``balanced`` say the
kind). A ``TokenSpec`` is a bounded token: its exact pattern, its prefix closure ``viable``
("could this text still become the token?"), the characters that can start and complete it.
A ``RunSpec`` is a streaming run: its stop, and the tail of a buffer that may still become
the stop. A ``BalancedSpec`` is a JSON value whose end only the run's own reader knows
(``_scan.balanced``). Both runs give the sieve one interface (``RunTerminal``: ``find_stop``,
``may_stop``, ``stop_char``, ``stop_probe``, ``soft``, ``placeholder``). ``terminal_spec``
makes the right kind from a blueprint's record. A ``StateSpec`` lists the bounded terminals
a parser state accepts (priority order, by first character), its run, whether the block may
end there (and whether it must: ``closes``; and whether that end is certain, ``end_sure``),
the call rule that reduces there, and the rule it reduces whatever comes next on the way to
a call (``default_rule``, where a balanced run ends a call). It also holds the scanner's
remembered decisions there (see ``CompiledGrammar.remember``).
What it guarantees: a spec's patterns (``pattern``, ``stop``, ``tail``) are compiled when it
is made, from their frozen forms when the grammar came from the cache (``_grammar.patterns``).
Only ``viable`` waits: ``_compile_viable`` compiles it at its first call and puts the
compiled ``match`` in its place (most terminals are never cut by a chunk boundary). Two
threads that both compile it get equal patterns; either may stay.
What it costs: a few microseconds per spec, and one pattern compile per pattern, at load.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar

from lark import Token

from .patterns import compile as compile_pattern

__all__ = [
    "CLOSES_CDATA",
    "MAX_BOUNDED_WIDTH",
    "OPENS_CALL",
    "OPENS_CDATA",
    "BalancedSpec",
    "EntrySpec",
    "RunSpec",
    "RunTerminal",
    "StateSpec",
    "TerminalSpec",
    "TokenSpec",
    "entry_group_prefix",
    "terminal_spec",
]

#: A bounded terminal longer than this could make hold-back quadratic; refuse it.
MAX_BOUNDED_WIDTH = 4096

#: What a bounded token means to a capture (``TokenSpec.marks``, bits set by the compiled
#: grammar): it opens a call (a checkpoint, ``_blocks.lessons``), or opens or closes a CDATA
#: (the loose-CDATA repair, ``_blocks.repair``).
OPENS_CALL = 1
OPENS_CDATA = 2
CLOSES_CDATA = 4


def _class_source(chars: frozenset[str]) -> str:
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


def _viable_source(closure: str) -> str:
    return f"(?:{closure})\\Z"


@functools.lru_cache(maxsize=256)
def _char_search(chars: frozenset[str]) -> Any:
    """The bound ``search`` of a class of ``chars`` (shared: a grammar has a few dozen)."""
    return compile_pattern(_class_source(chars)).search


def entry_group_prefix(k: int) -> str:
    """What entry ``k``'s own named groups are prefixed with in an entry table's ``exact``
    alternation (so that two entries may both have a ``v``)."""
    return f"_e{k}_"


class TerminalSpec:
    """The core every terminal has: its name, its priority and its pattern sources (``source``:
    a bounded token's, ``stop_source``: a run's stop; None where the kind has none). The kind
    is the class: ``TokenSpec``, ``RunSpec`` or ``BalancedSpec`` (``is_run``, ``balanced``)."""

    __slots__ = ("name", "priority", "source", "stop_source")

    is_run: ClassVar[bool] = False
    balanced: ClassVar[bool] = False

    def __init__(
        self, name: str, priority: int, source: str | None, stop_source: str | None
    ) -> None:
        self.name = name
        self.priority = priority
        self.source = source
        self.stop_source = stop_source


class TokenSpec(TerminalSpec):
    """A bounded token: its exact ``pattern`` (compiled now), its prefix closure, the
    characters that start and complete it."""

    __slots__ = (
        "pattern",
        "first",
        "viable",
        "closure",
        "reach",
        "end_chars",
        "width",
        "end_probe",
        "marks",
    )

    pattern: Any  # re.Pattern: the whole token (None only for a spec with no source)

    def __init__(
        self,
        name: str,
        priority: int,
        source: str | None,
        end_chars: frozenset[str] | None = None,
        width: int = 0,
        closure: str = "",
        reach: int = 0,
        first: frozenset[str] | None = None,
    ) -> None:
        super().__init__(name, priority, source, None)
        self.pattern = compile_pattern(source) if source is not None else None
        #: the characters a match starts with (None: not a small set)
        self.first = first
        #: ``viable(buf, p)``: ``buf[p:]`` may still become the token (a superset, asked only
        #: when ``pattern`` does not match), never true past ``reach`` characters (the token
        #: and the context its look-ahead needs). Compiled at its first call
        #: (``_compile_viable``).
        self.closure = closure
        self.viable: Callable[[str, int], Any] = self._compile_viable
        self.reach = reach
        #: the characters that can complete a match (None: any), its longest match
        self.end_chars = end_chars
        self.width = width
        #: ``end_probe(chunk) is None``: this chunk cannot complete a pending match (or None)
        self.end_probe: Callable[[str], Any] | None = (
            _char_search(frozenset(end_chars)) if end_chars else None
        )
        self.marks = 0  # what it means to a capture (``OPENS_CALL``, ...)

    def _compile_viable(self, buf: str, p: int) -> Any:
        """``viable``'s first call: compile the closure, put its ``match`` in ``viable``'s place."""
        self.viable = compile_pattern(_viable_source(self.closure)).match
        return self.viable(buf, p)


class RunTerminal(TerminalSpec):
    """What the sieve and the capture ask of any run. ``find_stop(buf, p, final)``: where a
    run starting at ``p`` stops, ``(index, is_tail)``: a complete stop wins; else (unless
    ``final``) a tail that may still become one; else the end. An index of -1: only the
    run's reader can tell, so the sieve's fast half gives the chunk to the machine (a deep
    run's probe, ``_scan.balanced.DeepProbe``). ``may_stop(chunk)``:
    ``chunk`` holds the stop, or ends in what may begin it. ``stop_char``: the one
    character every stop starts with (``ch not in chunk``: no stop), or None. ``soft``:
    a stop that starts no token is taken as content. ``placeholder``: the zero-length
    token fed when the run starts (one, shared: nothing changes a token once made)."""

    __slots__ = ("placeholder", "soft", "stop_char", "stop_probe", "find_stop", "may_stop")

    is_run: ClassVar[bool] = True

    def __init__(self, name: str, priority: int, stop_source: str | None) -> None:
        super().__init__(name, priority, None, stop_source)
        self.placeholder: Any = Token(name, "")
        self.soft = False
        self.stop_char: str | None = None
        self.stop_probe: Callable[[str], Any] | None = None
        self.find_stop: Callable[[str, int, bool], tuple[int, bool]] = _here
        self.may_stop: Callable[[str], bool] = _anywhere


class RunSpec(RunTerminal):
    """A streaming run that ends at its stop (``stop``, compiled now), or at a ``tail`` of the
    buffer that may still become the stop."""

    __slots__ = ("stop", "tail_source", "tail", "tail_span")

    stop: Any  # re.Pattern: a complete stop
    tail: Any  # re.Pattern: a buffer tail that may still become a stop, or None

    def __init__(
        self,
        name: str,
        priority: int,
        stop_source: str,
        soft: bool = False,
        tail_source: str | None = None,
        tail_span: int = 0,
        stop_char: str | None = None,
        stop_first: str | None = None,
        stop_literal: str | None = None,
    ) -> None:
        super().__init__(name, priority, stop_source)
        self.soft = soft
        self.stop = compile_pattern(stop_source)
        self.tail_source = tail_source
        self.tail = compile_pattern(tail_source) if tail_source is not None else None
        self.tail_span = tail_span  # such a tail is shorter than this
        self.stop_char = stop_char
        #: a soft run whose stop starts with one of a few characters: ``_may_stop`` first looks
        #: for one of them (``\n?<``, qwen3_coder's values: the chunks of a long value hold
        #: neither, and a class search is one call where the stop and its tail were two
        #: searches; benchmarks/README.md, "Fast paths")
        self.stop_probe = _char_search(frozenset(stop_first)) if stop_first else None
        if stop_literal is not None:
            self.find_stop, self.may_stop = _literal_stop(stop_literal)
        else:
            self.find_stop = self._find_stop
            self.may_stop = self._may_stop

    def _find_stop(self, buf: str, p: int, final: bool) -> tuple[int, bool]:
        """``find_stop`` for any stop: one search for it, one for a tail."""
        m = self.stop.search(buf, p)
        if m is not None:
            return m.start(), False
        n = len(buf)
        if self.tail is not None and not final:
            t = self.tail.search(buf, max(p, n - self.tail_span))
            if t is not None:
                return t.start(), True
        return n, False

    def _may_stop(self, chunk: str) -> bool:
        """``chunk`` holds the run's stop, or ends in what may begin it (any stop)."""
        probe = self.stop_probe
        if probe is not None and probe(chunk) is None:
            return False  # (no character a stop begins with: neither a stop nor its tail)
        s, tail = self.find_stop(chunk, 0, False)
        return tail or s < len(chunk)


def _literal_stop(
    literal: str,
) -> tuple[Callable[[str, int, bool], tuple[int, bool]], Callable[[str], bool]]:
    """``find_stop`` and ``may_stop`` for a fixed stop (``]]>``): ``find``, ``in`` and
    ``endswith`` instead of searches."""
    heads = tuple(literal[:k] for k in range(len(literal) - 1, 0, -1))  # longest first

    def find_stop(buf: str, p: int, final: bool) -> tuple[int, bool]:
        i = buf.find(literal, p)
        if i >= 0:
            return i, False
        n = len(buf)
        if not final and buf.endswith(heads, p):  # (one call for all; then which one)
            for head in heads:
                if buf.endswith(head, p):
                    return n - len(head), True
        return n, False

    def may_stop(chunk: str) -> bool:
        return literal in chunk or chunk.endswith(heads)

    return find_stop, may_stop


class BalancedSpec(RunTerminal):
    """A balanced run (grammar/README.md): each run of it is read by a
    ``_scan.balanced.JsonRun`` of its own, which a capture puts in this spec's place. This
    spec only describes the terminal: the bracket that closes it (``closer``), whether the
    token before read its opening one (``opened``: the rest of a value) or white space may
    come before it (``lead_ws``), and the quotes of its strings (Python's in an argument
    list). Where a JSON value ends depends on all of it, which only that reader knows: to
    anyone else, it may stop anywhere (``find_stop``, ``may_stop``)."""

    __slots__ = ("lead_ws", "closer", "opened", "quotes")

    balanced: ClassVar[bool] = True

    def __init__(
        self,
        name: str,
        priority: int,
        lead_ws: bool = False,
        closer: str = "",
        opened: bool = False,
    ) -> None:
        super().__init__(name, priority, None)
        self.lead_ws = lead_ws
        self.closer = closer
        self.opened = opened
        self.quotes = "\"'" if closer == ")" else '"'


def terminal_spec(record: dict[str, Any]) -> TokenSpec | RunSpec | BalancedSpec:
    """The spec of one terminal from its blueprint record (``_grammar.derive._terminal``): the
    kind its ``is_run`` and ``balanced`` say, made from the record's other fields."""
    kw = {k: v for k, v in record.items() if k not in ("is_run", "balanced", "source")}
    if record.get("balanced"):
        return BalancedSpec(**kw)
    if record.get("is_run"):
        return RunSpec(**kw)
    return TokenSpec(source=record.get("source"), **kw)


def _here(buf: str, p: int, final: bool) -> tuple[int, bool]:
    return p, False


def _anywhere(chunk: str) -> bool:
    return True


class StateSpec:
    """What the scanner may meet in one parser state."""

    __slots__ = (
        "bounded",
        "call_rule",
        "end_ok",
        "closes",
        "end_sure",
        "default_rule",
        "run",
        "shell_probe",
        "shell_width",
        "decisions",
        "expected",
        "_by_first",
        "_any_first",
    )

    def __init__(
        self,
        bounded: tuple[TokenSpec, ...],
        run: RunTerminal | None,
        end_ok: bool,
        call_rule: Any,
        default_rule: Any = None,
        end_sure: bool = True,
    ) -> None:
        self.bounded = bounded
        self.run = run
        #: the block may end here (the state takes the end of input); it *closes* here when
        #: it takes nothing else (grammar/README.md, "Where a block ends"), and the end is
        #: sure when it is the block rule's own reduction, not one LALR merged in
        self.end_ok = end_ok
        self.closes = end_ok and not bounded and run is None
        self.end_sure = end_sure
        self.call_rule = call_rule  # the Lark rule that reduces to a call here, or None
        #: the rule this state reduces whatever comes next, where that is on the way from a
        #: balanced run to the call it ends (the capture reduces it itself), or None
        self.default_rule = default_rule
        # While a token cut by a chunk boundary is pending here, a chunk with none of these
        # characters cannot complete it (``shell_probe(chunk) is None``): append, re-match
        # later. None: any character might.
        ends = _shell_chars(bounded)
        self.shell_probe = _char_search(ends) if ends else None
        self.shell_width = max((t.width for t in bounded), default=0)
        #: The scanner's decisions here for short texts, by text (see ``Capture._token_at``).
        #: A cache: it only holds answers the terminals already determine, as no terminal's
        #: match may read before its start (the loader refuses look-behinds, ``^``, ``\\b``).
        self.decisions: dict[str, Any] = {}
        #: What a failure here says the state accepts (``_blocks.messages.expected_terminals``), made
        #: at the first failure in this state: a cache of what the parse table determines.
        self.expected: str | None = None
        # The bounded terminals a match may start with a given character, in priority order.
        self._any_first = tuple(t for t in bounded if t.first is None)
        chars = set().union(*(t.first for t in bounded if t.first is not None))
        self._by_first = {
            c: tuple(t for t in bounded if t.first is None or c in t.first) for c in chars
        }

    def starting(self, c: str) -> tuple[TokenSpec, ...]:
        """The bounded terminals that may match from a character ``c`` (priority order)."""
        return self._by_first.get(c, self._any_first)


def _shell_chars(bounded: tuple[TokenSpec, ...]) -> frozenset[str]:
    """The characters that can complete one of ``bounded`` (empty: any may)."""
    ends: set[str] = set()
    for t in bounded:
        if t.end_chars is None:
            return frozenset()
        ends |= t.end_chars
    return frozenset(ends)


class EntrySpec:
    """A terminal that can start a block from prose."""

    __slots__ = ("dialect", "synthetic", "terminal")

    def __init__(self, terminal: str, dialect: str, synthetic: str | None) -> None:
        self.terminal = terminal
        self.dialect = dialect
        self.synthetic = synthetic  # opener to insert first (missing-wrapper repair), or None

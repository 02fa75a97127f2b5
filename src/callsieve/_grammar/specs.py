"""Strategy: what the scanner reads for one terminal (``TerminalSpec``), one parser state
(``StateSpec``) and one entry (``EntrySpec``) of a compiled grammar (``compiled``).

What it does: a ``TerminalSpec`` is a bounded token (its exact pattern, its prefix closure
``viable``: "could this text still become the token?", the characters that can start and
complete it) or a streaming run (its stop, and the tail of a buffer that may still become
the stop; or, for a *balanced* run, a JSON value whose end only the run's own reader knows,
``_scan.balanced``); a ``StateSpec`` lists the bounded terminals a parser state accepts
(priority order, by first character), its run, whether the block may end there (and whether
it must: ``closes``; and whether that end is certain, ``end_sure``), the call rule that reduces
there, and the rule it reduces whatever comes next on the way to a call (``default_rule``, where
a balanced run ends a call); it also holds the scanner's remembered decisions there (see
``CompiledGrammar.remember``).
What it guarantees: a pattern is compiled the first time it is read (``pattern``, ``stop``,
``tail`` through ``__getattr__``; ``viable`` on its first call), from its frozen form when the
grammar came from the cache (``_grammar.patterns``), and is a plain attribute from then on: no cost
on the hot path. Two threads that both compile one get equal patterns; either may stay.
What it costs: a few microseconds per spec to build; one compile per pattern used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from lark import Token

from .patterns import compile as compile_pattern

__all__ = ["MAX_BOUNDED_WIDTH", "EntrySpec", "StateSpec", "TerminalSpec", "entry_group_prefix"]

#: A bounded terminal longer than this could make hold-back quadratic; refuse it.
MAX_BOUNDED_WIDTH = 4096


def _class_source(chars: frozenset[str]) -> str:
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


def _viable_source(closure: str) -> str:
    return f"(?:{closure})\\Z"


@functools.lru_cache(maxsize=256)
def _char_search(chars: frozenset[str]) -> Any:
    """The bound ``search`` of a class of ``chars`` (shared: a grammar has a few dozen)."""
    return compile_pattern(_class_source(chars)).search


def entry_group_prefix(k: int) -> str:
    """What entry ``k``'s own named groups are prefixed with in the grammar's ``entry_exact``
    alternation (so that two entries may both have a ``v``)."""
    return f"_e{k}_"


class TerminalSpec:
    """How the scanner reads one terminal. ``pattern``, ``stop`` and ``tail`` are compiled
    the first time they are read (``__getattr__``: an unset slot), then plain attributes."""

    __slots__ = (
        "name",
        "priority",
        "source",
        "pattern",
        "first",
        "viable",
        "_closure",
        "reach",
        "is_run",
        "soft",
        "stop_source",
        "stop",
        "tail_source",
        "tail",
        "tail_span",
        "stop_char",
        "stop_probe",
        "end_chars",
        "width",
        "end_probe",
        "find_stop",
        "may_stop",
        "placeholder",
        "balanced",
        "lead_ws",
        "closer",
        "opened",
        "quotes",
    )

    pattern: Any  # re.Pattern: the whole token (bounded terminals), else None
    stop: Any  # re.Pattern: a complete stop (runs), else None
    tail: Any  # re.Pattern: a buffer tail that may still become a stop, or None

    def __init__(
        self,
        name: str,
        priority: int,
        source: str | None,
        is_run: bool = False,
        soft: bool = False,
        stop_source: str | None = None,
        tail_source: str | None = None,
        tail_span: int = 0,
        stop_char: str | None = None,
        stop_first: str | None = None,
        stop_literal: str | None = None,
        end_chars: frozenset[str] | None = None,
        width: int = 0,
        closure: str = "",
        reach: int = 0,
        first: frozenset[str] | None = None,
        balanced: bool = False,
        lead_ws: bool = False,
        closer: str = "",
        opened: bool = False,
    ) -> None:
        self.name = name
        self.priority = priority
        self.source = source  # the pattern's source (bounded terminals)
        if source is None:
            self.pattern = None
        #: bounded: the characters a match starts with (None: not a small set)
        self.first = first
        #: bounded: ``viable(buf, p)``: ``buf[p:]`` may still become the token (a superset,
        #: asked only when ``pattern`` does not match), never true past ``reach`` characters
        #: (the token and the context its look-ahead needs). Compiled on first use: most
        #: terminals are never cut by a chunk boundary in a given process.
        self._closure = closure
        self.viable: Callable[[str, int], Any] = self._compile_viable
        self.reach = reach
        self.is_run = is_run
        self.soft = soft  # soft run: a stop that starts no token is taken as content
        #: a balanced run (grammar/README.md): each run of it is read by a
        #: ``_scan.balanced.JsonRun`` of its own; this spec only describes the terminal: the
        #: bracket that closes it (``closer``), whether the token before read its opening
        #: one (``opened``: the rest of a value) or white space may come before it
        #: (``lead_ws``), and the quotes of its strings (Python's in an argument list)
        self.balanced = balanced
        self.lead_ws = lead_ws
        self.closer = closer
        self.opened = opened
        self.quotes = "\"'" if closer == ")" else '"'

        self.stop_source = stop_source
        if stop_source is None:
            self.stop = None
        self.tail_source = tail_source
        if tail_source is None:
            self.tail = None
        self.tail_span = tail_span  # such a tail is shorter than this
        #: the one character every stop starts with (``ch not in chunk``: no stop), or None
        self.stop_char = stop_char
        #: a soft run whose stop starts with one of a few characters: ``_may_stop`` first looks
        #: for one of them (``\n?<``, qwen3_coder's values: the chunks of a long value hold
        #: neither, and a class search is one call where the stop and its tail were two
        #: searches — bench_families.py, qwen3_coder chat at 1-8-character chunks: 0.56 -> 0.36 s)
        self.stop_probe = _char_search(frozenset(stop_first)) if stop_first else None
        #: bounded: the characters that can complete a match (None: any), its longest match
        self.end_chars = end_chars
        self.width = width
        #: ``end_probe(chunk) is None``: this chunk cannot complete a pending match (or None)
        self.end_probe = _char_search(frozenset(end_chars)) if end_chars else None
        #: a run: the zero-length token fed when it starts (one, shared: nothing changes a
        #: token once made, and the capture replaces it by the run's text when it ends)
        self.placeholder: Any = Token(name, "") if is_run else None
        #: ``find_stop(buf, p, final)``: where a run starting at ``p`` stops, ``(index,
        #: is_tail)``: a complete stop wins; else (unless ``final``) a tail that may still
        #: become one; else the end. ``may_stop(chunk)``: ``chunk`` holds the stop, or ends
        #: in what may begin it.
        self.find_stop: Callable[[str, int, bool], tuple[int, bool]] = self._find_stop
        self.may_stop: Callable[[str], bool] = self._may_stop
        literal = stop_literal
        if literal is not None:
            # A fixed stop (``]]>``): ``find``, ``in`` and ``endswith`` instead of searches.
            heads = tuple(literal[:k] for k in range(len(literal) - 1, 0, -1))  # longest first

            def find_stop(buf: str, p: int, final: bool) -> tuple[int, bool]:
                i = buf.find(literal, p)
                if i >= 0:
                    return i, False
                n = len(buf)
                if not final:
                    for head in heads:
                        if buf.endswith(head, p):
                            return n - len(head), True
                return n, False

            def may_stop(chunk: str) -> bool:
                return literal in chunk or chunk.endswith(heads)

            self.find_stop = find_stop
            self.may_stop = may_stop
        elif balanced:
            # Where a JSON value ends depends on all of it, which only the reader of one run
            # knows (``_scan.balanced.JsonRun``, which a capture puts in this spec's place): to
            # anyone else, it may stop anywhere.
            self.find_stop = _here
            self.may_stop = _anywhere

    def __getattr__(self, name: str) -> Any:
        """Reached only for an unset slot: ``pattern``, ``stop`` or ``tail``, compiled now.
        (Two threads may both compile it; either result is the same pattern.)"""
        if name == "pattern":
            source = self.source
        elif name == "stop":
            source = self.stop_source
        elif name == "tail":
            source = self.tail_source
        else:
            raise AttributeError(name)
        value = compile_pattern(source) if source is not None else None
        setattr(self, name, value)
        return value

    def _compile_viable(self, buf: str, p: int) -> Any:
        self.viable = compile_pattern(_viable_source(self._closure)).match
        return self.viable(buf, p)

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
        bounded: tuple[TerminalSpec, ...],
        run: TerminalSpec | None,
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

    def starting(self, c: str) -> tuple[TerminalSpec, ...]:
        """The bounded terminals that may match from a character ``c`` (priority order)."""
        return self._by_first.get(c, self._any_first)


def _shell_chars(bounded: tuple[TerminalSpec, ...]) -> frozenset[str]:
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

"""Strategy: load the `.lark` files, compile one Lark LALR parser, and derive from its
terminals and parse table everything the scanner needs.

What it does: ``common.lark`` plus one file per enabled dialect (``<dialect>.lark``, whose
block rule is named after the dialect) are joined, a ``start`` rule listing the dialects is
added, and Lark builds the LALR table (``strict=True``: no conflict is resolved silently).
Then, once per grammar:
  - every terminal becomes a ``TerminalSpec``: a bounded token, with its exact pattern and
    its prefix closure, so that a chunk tail can be asked "could this still become the
    token?" (``re`` in one call each), and the characters that can complete it; or a
    streaming run, with its stop and a prefix closure of the stop (see grammar/README.md);
  - every parser state becomes a ``StateSpec``: which bounded terminals it accepts (in
    priority order), which run, whether the block may end there, whether a call is complete;
  - the *entry* terminals — wrapper openers, and for the missing-wrapper repair the
    terminals a wrapper accepts first — with the lead characters prose is searched for, the
    exact ``re`` alternation of their patterns and the lazy automaton that follows them.
What it guarantees: the grammar files are the only place a tag spelling is written down.
What it costs: one compile per distinct (dialects, directories), cached; nothing per chunk.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark import Lark, Token
from lark.lexer import Lexer
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser_state import ParserState

from ._automaton import EntryAutomaton
from ._errors import ConfigurationError, GrammarError
from ._prefix import (
    end_chars,
    first_chars,
    growable_before_lookahead,
    literal_text,
    max_width,
    prefix_closure,
    reads_before,
)

__all__ = [
    "DEFAULT_DIALECTS",
    "CompiledGrammar",
    "EntrySpec",
    "StateSpec",
    "TerminalSpec",
    "available_dialects",
    "grammar_dirs",
    "load_grammar",
]

DEFAULT_DIALECTS: tuple[str, ...] = ("dsml", "dsml_v4", "dsml_v32", "xml", "deepseek_native")

#: A bounded terminal longer than this could make hold-back quadratic; refuse it.
MAX_BOUNDED_WIDTH = 4096
#: The grammar's two caches of answers — the scanner's decisions over all parser states, the
#: sieve's settled tag leads — are each emptied when they hold this many (each a short text
#: and its answer: a few hundred bytes at most; the (c) benchmark's 200 blocks need 475
#: decisions, the (b) benchmark's prose 2,202 settled leads).
DECISION_LIMIT = 4096

_SOFT_RUN = re.compile(r"^\(\?:\(\?!(?P<stop>.+)\)\[\\s\\S\]\)\+$", re.DOTALL)
_HARD_RUN = re.compile(r"^\[(?P<cls>.+)\]\+$", re.DOTALL)
_CALL_RULE = "call"


class _NoLexer(Lexer):
    """Lark wants a lexer; ours is the incremental scanner, which feeds tokens directly."""

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, lexer_state: Any, parser_state: Any) -> Any:  # pragma: no cover
        raise GrammarError("callsieve feeds tokens itself; Lark's lexer is never run")


class TerminalSpec:
    """How the scanner reads one terminal."""

    __slots__ = ("name", "priority", "pattern", "first", "viable", "_closure", "reach",
                 "is_run", "soft", "stop", "tail", "tail_span", "stop_char", "end_chars",
                 "width", "end_probe", "find_stop", "may_stop", "placeholder")

    def __init__(self, name: str, priority: int, pattern: Any, is_run: bool = False,
                 soft: bool = False, stop: Any = None, tail: Any = None, tail_span: int = 0,
                 stop_char: str | None = None,
                 end_chars: set[str] | None = None, width: int = 0,
                 closure: str = "", reach: int = 0, first: set[str] | None = None) -> None:
        self.name = name
        self.priority = priority
        self.pattern = pattern  # re.Pattern: the whole token (bounded terminals)
        #: bounded: the characters a match starts with (None: not a small set)
        self.first = frozenset(first) if first is not None else None
        #: bounded: ``viable(buf, p)``: ``buf[p:]`` may still become the token (a superset,
        #: asked only when ``pattern`` does not match), never true past ``reach`` characters
        #: (the token and the context its look-ahead needs). Compiled on first use: most
        #: terminals are never cut by a chunk boundary in a given process.
        self._closure = closure
        self.viable: Callable[[str, int], Any] = self._compile_viable
        self.reach = reach
        self.is_run = is_run
        self.soft = soft  # soft run: a stop that starts no token is taken as content
        self.stop = stop  # re.Pattern: a complete stop
        self.tail = tail  # re.Pattern: a buffer tail that may still become a stop, or None
        self.tail_span = tail_span  # such a tail is shorter than this
        #: the one character every stop starts with (``ch not in chunk``: no stop), or None
        self.stop_char = stop_char
        #: bounded: the characters that can complete a match (None: any), its longest match
        self.end_chars = end_chars
        self.width = width
        #: ``end_probe(chunk) is None``: this chunk cannot complete a pending match (or None)
        self.end_probe = _char_search(end_chars) if end_chars else None
        #: a run: the zero-length token fed when it starts (one, shared: nothing changes a
        #: token once made, and the capture replaces it by the run's text when it ends)
        self.placeholder: Any = Token(name, "") if is_run else None
        #: ``find_stop(buf, p, final)``: where a run starting at ``p`` stops, ``(index,
        #: is_tail)``: a complete stop wins; else (unless ``final``) a tail that may still
        #: become one; else the end. ``may_stop(chunk)``: ``chunk`` holds the stop, or ends
        #: in what may begin it.
        self.find_stop: Callable[[str, int, bool], tuple[int, bool]] = self._find_stop
        self.may_stop: Callable[[str], bool] = self._may_stop
        literal = literal_text(stop.pattern) if is_run and stop is not None else None
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

    def _compile_viable(self, buf: str, p: int) -> Any:
        self.viable = re.compile(f"(?:{self._closure})\\Z").match
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
        s, tail = self.find_stop(chunk, 0, False)
        return tail or s < len(chunk)


class StateSpec:
    """What the scanner may meet in one parser state."""

    __slots__ = ("bounded", "call_rule", "end_ok", "run", "shell_probe", "shell_width",
                 "decisions", "_by_first", "_any_first")

    def __init__(self, bounded: tuple[TerminalSpec, ...], run: TerminalSpec | None,
                 end_ok: bool, call_rule: Any) -> None:
        self.bounded = bounded
        self.run = run
        self.end_ok = end_ok
        self.call_rule = call_rule  # the Lark rule that reduces to a call here, or None
        # While a token cut by a chunk boundary is pending here, a chunk with none of these
        # characters cannot complete it (``shell_probe(chunk) is None``): append, re-match
        # later. None: any character might.
        ends: set[str] = set()
        for t in bounded:
            if t.end_chars is None:
                ends = set()
                break
            ends |= t.end_chars
        self.shell_probe = _char_search(ends) if ends else None
        self.shell_width = max((t.width for t in bounded), default=0)
        #: The scanner's decisions here for short texts, by text (see ``Capture._token_at``).
        #: A cache: it only holds answers the terminals already determine, as no terminal's
        #: match may read before its start (the loader refuses look-behinds, ``^``, ``\\b``).
        self.decisions: dict[str, Any] = {}
        # The bounded terminals a match may start with a given character, in priority order.
        self._any_first = tuple(t for t in bounded if t.first is None)
        chars = set().union(*(t.first for t in bounded if t.first is not None))
        self._by_first = {c: tuple(t for t in bounded if t.first is None or c in t.first)
                          for c in chars}

    def starting(self, c: str) -> tuple[TerminalSpec, ...]:
        """The bounded terminals that may match from a character ``c`` (priority order)."""
        return self._by_first.get(c, self._any_first)


class EntrySpec:
    """A terminal that can start a block from prose."""

    __slots__ = ("dialect", "synthetic", "terminal")

    def __init__(self, terminal: str, dialect: str, synthetic: str | None) -> None:
        self.terminal = terminal
        self.dialect = dialect
        self.synthetic = synthetic  # opener to insert first (missing-wrapper repair), or None


class CompiledGrammar:
    """One compiled grammar and everything derived from it. Immutable after construction,
    except for caches that only hold what is already determined: the entry automaton's DFA
    states, each bounded terminal's prefix-closure pattern (compiled on first use), the
    scanner's decisions per parser state (``remember``) and the sieve's settled tag leads
    (``settle``), each bounded by ``DECISION_LIMIT``."""

    def __init__(self, dialects: tuple[str, ...], text: str) -> None:
        self.dialects = dialects
        self.text = text
        try:
            self.lark = Lark(text, parser="lalr", lexer=_NoLexer, strict=True,
                             maybe_placeholders=False)
        except GrammarError:
            raise
        except Exception as exc:  # lark.exceptions.GrammarError and friends
            raise GrammarError(f"grammar does not compile: {exc}") from exc
        table = self.lark.parser.parser.parser.parse_table
        self.table = table
        # The parse table's keys are plain str, but most rules' names are lark Tokens (str
        # with a Python __eq__), so every goto after a reduce ran that __eq__. Plain names
        # keep those lookups in C; hashes and equality are unchanged.
        for rule in self.lark.rules:
            rule.origin.name = str(rule.origin.name)
        self.start_state: int = table.start_states["start"]
        # One interactive parser made the documented way; every block's parser is a fresh
        # parser state around its (immutable) configuration and its idle lexer thread:
        # ``Lark.parse_interactive`` builds those again each time, which costs more than
        # parsing a whole tag.
        model = self.lark.parse_interactive()
        self._lalr = model.parser
        self._conf = model.parser_state.parse_conf
        self._thread = model.lexer_thread
        self.terminals: dict[str, TerminalSpec] = {
            t.name: _terminal_spec(t) for t in self.lark.terminals
        }
        for rule in self.lark.rules:
            if _is_call(rule) and not (rule.expansion and rule.expansion[-1].is_term):
                raise GrammarError(
                    f"rule {rule.origin.name} (a call) must end with a terminal, so the scanner "
                    "sees the moment the call is complete")
        self.states: dict[int, StateSpec] = {
            s: self._state_spec(actions) for s, actions in table.states.items()
        }
        self._remembered = 0  # decisions stored in the states' caches since the last clear
        #: What the sieve found following the tag leads of a short prose text from its
        #: first lead on (``Sieve._settles``), by that text: a cache, see ``settle``.
        self.settlements: dict[str, tuple[int, int]] = {}
        self.opener_dialect: dict[str, str] = {}
        for rule in self.lark.rules:
            if rule.origin.name in dialects and rule.expansion:
                self.opener_dialect.setdefault(rule.expansion[0].name, str(rule.origin.name))
        self.entries, self.lead_chars = self._entries()
        sources = [self.terminals[e.terminal].pattern.pattern for e in self.entries]
        #: exact: the highest-priority entry that matches completely at a position
        self.entry_exact = re.compile("|".join(
            f"(?P<{e.terminal}>{src})" for e, src in zip(self.entries, sources)))
        #: fast: could the text after a lead character still become an entry?
        self.entry_automaton = EntryAutomaton(sources)
        self.entry_index = {e.terminal: k for k, e in enumerate(self.entries)}

    def remember(self, memo: dict[str, Any], key: str, decision: Any) -> None:
        """Store a scanner decision in one state's ``decisions``; past ``DECISION_LIMIT``
        in all, every state's are dropped first (so their memory is bounded, and a text
        seen again is simply decided again)."""
        if self._remembered >= DECISION_LIMIT:
            for spec in self.states.values():
                spec.decisions.clear()
            self._remembered = 0
        memo[key] = decision
        self._remembered += 1

    def settle(self, key: str, answer: tuple[int, int]) -> None:
        """Store what the sieve found after a tag lead in ``settlements``, dropped whole
        past ``DECISION_LIMIT``: a bound of its own, so prose can never push the scanner's
        decisions out, nor they it."""
        if len(self.settlements) >= DECISION_LIMIT:
            self.settlements.clear()
        self.settlements[key] = answer

    def new_parser(self) -> InteractiveParser:
        """A Lark ``InteractiveParser`` at the start of a block (what
        ``lark.parse_interactive()`` returns, made cheaply)."""
        ps = ParserState(self._conf, self._thread, [self.start_state], [])
        return InteractiveParser(self._lalr, ps, self._thread)

    def fork_parser(self, ip: InteractiveParser) -> InteractiveParser:
        """A copy of ``ip`` that shares its values (``ip.copy(deepcopy_values=False)``,
        without copying the idle lexer thread)."""
        ps = ip.parser_state
        twin = ParserState(self._conf, self._thread, ps.state_stack[:], ps.value_stack[:])
        return InteractiveParser(self._lalr, twin, self._thread)

    # ----------------------------------------------------------------- derivation
    def _state_spec(self, actions: dict[str, Any]) -> StateSpec:
        bounded: list[TerminalSpec] = []
        run: TerminalSpec | None = None
        call_rule = None
        for name, (action, arg) in actions.items():
            spec = self.terminals.get(name)
            if getattr(action, "name", "") == "Reduce" and _is_call(arg):
                call_rule = arg
            if spec is None:
                continue
            if spec.is_run:
                if run is not None and run.name != name:
                    raise GrammarError(
                        f"one parser state accepts two runs, {run.name} and {name}; "
                        "the scanner could not tell where one ends",
                        expected=(run.name, name),
                    )
                run = spec
            else:
                bounded.append(spec)
        bounded.sort(key=lambda t: -t.priority)
        if call_rule is not None and any(
                getattr(action, "name", "") != "Reduce" or arg is not call_rule
                for action, arg in actions.values()):
            raise GrammarError(
                f"rule {call_rule.origin.name} (a call) may be complete or may go on after the "
                "same tokens; a call must be complete the moment its last token arrives")
        return StateSpec(tuple(bounded), run, "$END" in actions, call_rule)

    def _entries(self) -> tuple[tuple[EntrySpec, ...], str]:
        start_actions = self.table.states[self.start_state]
        openers = [self.terminals[n] for n in start_actions if n in self.terminals]
        openers.sort(key=lambda t: -t.priority)
        entries = [EntrySpec(t.name, self.opener_dialect.get(t.name, ""), None) for t in openers]
        seen = {e.terminal for e in entries}
        for opener in openers:
            action, after = start_actions[opener.name]
            if getattr(action, "name", "") != "Shift":
                continue
            for name in self.table.states[after]:
                spec = self.terminals.get(name)
                if spec is None or spec.is_run or name in seen:
                    continue
                seen.add(name)
                entries.append(EntrySpec(name, self.opener_dialect.get(opener.name, ""),
                                         opener.name))
        lead: set[str] = set()
        for e in entries:
            first = first_chars(self.terminals[e.terminal].pattern.pattern)
            if first is None:
                raise GrammarError(
                    f"terminal {e.terminal} can start a block but its first character is not "
                    "a fixed set; prose could not be searched for it"
                )
            lead |= first
        return tuple(entries), "".join(sorted(lead))

    def dialect_of_close(self, close_value: str, fallback: str) -> str:
        """The dialect a closing wrapper is spelled in (for blocks whose opener was repaired)."""
        opened = re.sub(r"^([<＜〈][\u200b-\u200d\u2060\ufeff]*)\s*[/／]", r"\1", close_value)
        for e in self.entries:
            if e.synthetic is None and self.terminals[e.terminal].pattern.match(opened):
                return e.dialect
        return fallback


def _is_call(rule: Any) -> bool:
    """Whether a Lark rule builds a ``call`` node (by its own name or an alias)."""
    return bool((rule.alias or rule.origin.name) == _CALL_RULE)


def _terminal_spec(t: Any) -> TerminalSpec:
    source = t.pattern.to_regexp()
    if reads_before(source):
        raise GrammarError(
            f"terminal {t.name} looks before the position it is matched at (a look-behind, "
            "^, \\A or \\b); the scanner matches a token, or a run's stop, from the text "
            "held since it began, which may not hold what stands before it",
            expected=("a pattern that reads only from its own start on (look-aheads are fine)",))
    if t.name.endswith("_RUN"):
        soft = _SOFT_RUN.match(source)
        hard = _HARD_RUN.match(source) if soft is None else None
        if soft is not None:
            stop_src = soft.group("stop")
        elif hard is not None:
            stop_src = f"[^{hard.group('cls')}]"
        else:
            raise GrammarError(
                f"run terminal {t.name} must be written (?:(?!STOP)[\\s\\S])+ or [CLASS]+",
                expected=("(?:(?!STOP)[\\s\\S])+", "[CLASS]+"),
            )
        closure = prefix_closure(stop_src)
        if closure is None:
            raise GrammarError(f"the stop of run terminal {t.name} uses an unsupported construct")
        width = min(max_width(stop_src), MAX_BOUNDED_WIDTH)
        tail = re.compile(f"(?=[\\s\\S])(?:{closure})\\Z") if width > 1 else None
        first = first_chars(stop_src) if soft is not None else None
        stop_char = next(iter(first)) if first is not None and len(first) == 1 else None
        return TerminalSpec(t.name, t.priority, None, True, soft is not None,
                            re.compile(stop_src), tail, width, stop_char)
    if t.pattern.max_width > MAX_BOUNDED_WIDTH:
        raise GrammarError(
            f"terminal {t.name} can be longer than {MAX_BOUNDED_WIDTH} characters; bound its "
            "repetitions or make it a run (name ending in _RUN)"
        )
    grows = growable_before_lookahead(source)
    if grows:
        raise GrammarError(
            f"terminal {t.name} could match short on a text cut by a chunk boundary and long on "
            f"the whole text: a repeat before a look-ahead both accept {sorted(grows)!r}; take "
            "those characters out of one of them",
            expected=("a look-ahead that accepts nothing the repeat before it accepts",))
    closure = prefix_closure(source)
    if closure is None:
        raise GrammarError(
            f"terminal {t.name} uses a construct whose prefixes cannot be computed "
            "(back-reference, conditional or inline flag)")
    return TerminalSpec(t.name, t.priority, re.compile(source),
                        end_chars=end_chars(source), width=min(max_width(source), MAX_BOUNDED_WIDTH),
                        closure=closure, reach=max_width(closure), first=first_chars(source))


def _char_search(chars: set[str]) -> Any:
    """The bound ``search`` of a class of ``chars``."""
    return re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]").search


def grammar_dirs(extra: tuple[str, ...] = ()) -> tuple[Path, ...]:
    """Where ``.lark`` files are looked up: ``extra`` first, then the installed package's
    ``grammar/`` (or, in a source checkout, the repository's top-level ``grammar/``)."""
    here = Path(__file__).resolve().parent
    packaged = here / "grammar"
    builtin = packaged if packaged.is_dir() else here.parents[1] / "grammar"
    return tuple(Path(d) for d in extra) + (builtin,)


def available_dialects(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every dialect a ``.lark`` file exists for (``common.lark`` is not a dialect)."""
    names: dict[str, None] = {}
    for d in grammar_dirs(extra_dirs):
        for f in sorted(d.glob("*.lark")):
            if f.stem != "common":
                names.setdefault(f.stem, None)
    return tuple(names)


@functools.lru_cache(maxsize=32)
def load_grammar(dialects: tuple[str, ...] = DEFAULT_DIALECTS,
                 extra_dirs: tuple[str, ...] = ()) -> CompiledGrammar:
    """Compile the grammar for ``dialects`` (memoised: same arguments, same object)."""
    if not dialects:
        raise ConfigurationError("at least one dialect must be enabled")
    dirs = grammar_dirs(extra_dirs)

    def find(name: str) -> Path:
        for d in dirs:
            f = d / f"{name}.lark"
            if f.is_file():
                return f
        raise ConfigurationError(
            f"no grammar file for dialect {name!r}",
            expected=available_dialects(extra_dirs),
        )

    for name in dialects:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise ConfigurationError(f"dialect name {name!r} must be a lower-case Lark rule name")
    parts = [find("common").read_text(encoding="utf-8")]
    parts += [find(name).read_text(encoding="utf-8") for name in dialects]
    parts.append("start: " + " | ".join(dialects) + "\n")
    return CompiledGrammar(tuple(dialects), "\n".join(parts))

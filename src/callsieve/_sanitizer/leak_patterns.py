"""Strategy: the leaked-output sanitizer's patterns (SPEC §13), read from the grammar — never
written in Python.

What it does: ``leak_patterns()`` joins ``common.lark`` and ``_leaks.lark`` (a data file, not a
dialect: ``_grammar.files``) and has Lark read the terminals its ``leaks`` rule lists; the
wrapper blocks come from the default dialects' compiled grammar (``load_grammar``): their
openers (the entries that are not repairs) and the terminals that end a block. It compiles
``tokens`` (the tags removed where they stand, one named group per kind), ``openers`` and
``enders`` (a leaked block's ends), ``json_open`` (where a leaked JSON value may begin),
``empty_fence``, and for each of them the prefix closure (``_grammar.prefix``) that says whether a
text's tail may still become one (what a ``LeakFilter`` holds back), and the characters a
match can start with (what the filter's fence tracker stops at).
What it guarantees: one ``LeakPatterns`` per process, built on first use under a lock
(a documented cache); a grammar whose terminals the closure cannot handle is a
``GrammarError``.
What it costs: ~30 ms once per process (Lark reading two grammar files, a few compiles).
"""

from __future__ import annotations

import functools
import re
import threading

from lark import Lark

from .._base.errors import GrammarError
from .._grammar.compiled import load_grammar
from .._grammar.files import _read, grammar_dirs
from .._grammar.lark_internals import terminal_source
from .._grammar.names import THINK_CLOSE, THINK_OPEN
from .._grammar.prefix import first_chars, max_width, prefix_closure

__all__ = ["TOKEN_KINDS", "LeakPatterns", "leak_patterns"]

#: The terminals removed where they stand, by the kind the filter acts on (``_leaks.lark``).
TOKEN_KINDS = {
    THINK_OPEN: "think_open",
    THINK_CLOSE: "think_close",
    "LEAK_SPECIAL": "special",
    "LEAK_SHELL_OPEN": "shell_open",
    "LEAK_SHELL_CLOSE": "shell_close",
    "LEAK_RESULT_OPEN": "result_open",
    "LEAK_RESULT_CLOSE": "result_close",
}
_DATA_FILE = "_leaks"
_LOCK = threading.Lock()
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def _viable(sources: list[str]) -> re.Pattern[str]:
    closures = []
    for source in sources:
        closure = prefix_closure(source)
        if closure is None:
            raise GrammarError(
                f"{_DATA_FILE}.lark: a pattern the sanitizer cannot hold back for: {source[:60]!r}"
            )
        closures.append(f"(?:{closure})")
    return re.compile(f"(?:{'|'.join(closures)})\\Z")


class LeakPatterns:
    """The compiled patterns (see the module docstring)."""

    def __init__(self, terminals: dict[str, str], openers: list[str], enders: list[str]) -> None:
        token_sources = [terminals[name] for name in TOKEN_KINDS]
        self.tokens = re.compile(
            "|".join(f"(?P<{kind}>{terminals[name]})" for name, kind in TOKEN_KINDS.items())
        )
        self.think_close = re.compile(terminals[THINK_CLOSE])
        self.openers = re.compile("|".join(f"(?:{s})" for s in openers))
        self.enders = re.compile("|".join(f"(?:{s})" for s in enders))
        self.json_open = re.compile(terminals["LEAK_JSON_OPEN"])
        self.empty_fence = re.compile(terminals["LEAK_EMPTY_FENCE"])
        self.call_key = re.compile(terminals["LEAK_CALL_KEY"])
        self.call_name_key = re.compile(terminals["LEAK_CALL_NAME_KEY"])
        self.result_key = re.compile(terminals["LEAK_RESULT_KEY"])
        #: A tail that may still become a token, an opener or a JSON candidate's start, and
        #: the longest such tail (a lead further from the end than this is no tail).
        held = [*token_sources, *openers, terminals["LEAK_JSON_OPEN"]]
        self.viable = _viable(held)
        self.held_width = max(max_width(source) for source in held)
        self.fence_viable = _viable([terminals["LEAK_EMPTY_FENCE"]])
        self.fence_width = max_width(terminals["LEAK_EMPTY_FENCE"])
        self.fence_lead = self._leads([terminals["LEAK_EMPTY_FENCE"]])
        self.close_width = max(max_width(terminals[THINK_CLOSE]), *(max_width(s) for s in enders))
        self.opener_leads = self._leads(openers)  # (what may follow an opener: a tag)
        #: What a match can start with: the filter's fence tracker stops at these.
        self.leads = self._leads([*token_sources, *openers, terminals["LEAK_JSON_OPEN"]])

    @staticmethod
    def _leads(sources: list[str]) -> str:
        chars: set[str] = set()
        for source in sources:
            first = first_chars(source)
            if first is None:
                raise GrammarError(
                    f"{_DATA_FILE}.lark: a pattern that may start with any "
                    f"character: {source[:60]!r}"
                )
            chars |= first
        return "".join(sorted(chars))


def _anonymous(source: str) -> str:
    """A pattern without its named groups (several are joined into one alternation)."""
    return _NAMED_GROUP.sub("(?:", source)


@functools.cache
def _load() -> LeakPatterns:
    dirs = grammar_dirs()
    texts = [_read(d / f"{name}.lark")[1] for name in ("common", _DATA_FILE) for d in dirs[-1:]]
    lark = Lark("\n".join(texts), start="leaks", parser="lalr")
    terminals = {t.name: _anonymous(terminal_source(t)) for t in lark.terminals}
    g = load_grammar()
    openers = [
        _anonymous(g.terminals[e.terminal].source or "") for e in g.entries if e.synthetic is None
    ]
    enders = [_anonymous(t.source or "") for t in g.ends.block_enders]
    return LeakPatterns(terminals, openers, enders)


def leak_patterns() -> LeakPatterns:
    """The process's ``LeakPatterns`` (built once, the first time it is asked for)."""
    with _LOCK:
        return _load()

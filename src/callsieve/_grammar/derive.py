"""Strategy: compile a joined grammar with Lark and derive from its terminals and parse table
everything the scanner needs, as plain data — the cold path of loading a grammar, run only
when the cache (``_grammar.cache``) has no tables for it.

What it does: ``Sources`` joins the files, each dialect file's own names in its namespace
(``_grammar.namespace``). Lark builds the LALR table (``strict=True``: no conflict is resolved
silently); bounded terminals of one spelling that one parser state accepts are merged into
one and the joined text compiled again (a conflict then is refused, naming them). Then
every terminal is analysed (grammar/README.md): a bounded token — its
pattern, its prefix closure (the "could this still become the token?" question), widths,
first and end characters — or a streaming run — its stop, a prefix closure of the stop.
Every parser state is checked against the scanner's contract (one run at most; a call is
complete the moment its last token arrives) and reduced to the names of what it accepts.
The *entry* terminals (wrapper openers and, for the missing-wrapper repair, what a wrapper
accepts first), their lead characters, the exact alternation of their patterns (each
terminal's own named groups renamed apart, so two entries may both have a ``v``) and the
entry automaton's NFA, and the dialects each parser state belongs to (``_grammar.dialects``),
complete the ``Blueprint``: a dict of str, int, tuples and Lark's own
serialisation, which ``CompiledGrammar`` is built from whether it was just derived or read
back from the cache.
What it guarantees: every problem with a grammar is a ``GrammarError`` that names the file
(and line, where the definition is found) and the terminal or rule as the file writes it;
Lark's own errors keep its line and column, mapped back from the joined text to the file
and column they fall in. A dialect whose block could be complete without a call is refused.
What it costs: ~70 ms for the built-in grammar, once per grammar and machine: Lark ~20 ms
(twice when terminals are merged), the terminals' analysis ~45 ms (``re`` parsing and compiling: each pattern is compiled once
here to validate it, which also fills ``re``'s cache for the first use in this process).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from lark import Lark

from .._base.errors import GrammarError
from .automaton import nfa_table
from .dialects import callless, kernels, state_dialects
from .endings import (
    call_firsts,
    check_call_ends,
    check_tails,
    default_key,
    end_call_key,
    end_sure,
    ends_with_block,
    open_ended,
    raw_rest,
    tail_rules,
)
from .entry_tables import THINK_TABLES
from .lark_internals import (
    END,
    is_reduce,
    is_shift,
    parse_table,
    serialize_lark,
    terminal_source,
    terminal_width,
)
from .names import RUN_SUFFIX, START, check_terminals
from .namespace import same_spellings
from .no_lexer import NoLexer
from .overlap import relation
from .patterns import freeze
from .prefix import (
    end_chars,
    first_chars,
    growable_before_lookahead,
    literal_text,
    max_width,
    prefix_closure,
    reads_before,
)
from .rule_sets import is_call
from .sources import Sources
from .specs import MAX_BOUNDED_WIDTH, entry_group_prefix

__all__ = ["Blueprint", "Sources", "derive"]

#: What ``CompiledGrammar`` is built from (see the module docstring for the keys).
Blueprint = dict[str, Any]

_SOFT_RUN = re.compile(r"^\(\?:\(\?!(?P<stop>.+)\)\[\\s\\S\]\)\+$", re.DOTALL)
_HARD_RUN = re.compile(r"^\[(?P<cls>.+)\]\+$", re.DOTALL)
#: The balanced runs (grammar/README.md): their patterns, each with the bracket that closes
#: it, whether white space may come before its opening bracket, and whether the token before
#: it read that bracket (the rest of a value).
_BALANCED = {
    "\\s*\\{[\\s\\S]*\\}": ("}", True, False),
    "\\{[\\s\\S]*\\}": ("}", False, False),
    "\\s*\\[[\\s\\S]*\\]": ("]", True, False),
    "\\[[\\s\\S]*\\]": ("]", False, False),
    "[\\s\\S]*\\}": ("}", False, True),
    "[\\s\\S]*\\]": ("]", False, True),
    "[\\s\\S]*\\)": (")", False, True),
}
_JSON_RUN_FORMS = tuple(_BALANCED)
#: What a pattern that means to be one begins with (refused unless it is one exactly).
_JSON_RUN_LIKE = re.compile(r"^(?:(?:\\s[*+]|\[\\s\]\*)?\\[\{\[]|\[\\s\\S\]\*)")
#: Escapes, classes and named groups in a pattern's source (to rename the groups).
_GROUP_SYNTAX = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\(\?P<(\w+)>|\(\?P=(\w+)\)", re.DOTALL)


def rename_groups(source: str, prefix: str) -> str:
    """``source`` with every named group (and reference to one) renamed ``prefix + name``."""

    def sub(m: re.Match[str]) -> str:
        if m[1]:
            return f"(?P<{prefix}{m[1]}>"
        if m[2]:
            return f"(?P={prefix}{m[2]})"
        return m[0]

    return _GROUP_SYNTAX.sub(sub, source)


def derive(dialects: tuple[str, ...], src: Sources) -> tuple[Blueprint, Lark]:
    """Compile ``src`` and derive its blueprint (or raise ``GrammarError``)."""
    lark = _compile(src)
    for _ in range(8):  # merging may bring two more spellings alike into one state
        merge = same_spellings(lark.terminals, parse_table(lark).states)
        if not merge:
            break
        src = src.merged(merge)
        try:
            lark = _compile(src)
        except GrammarError as exc:
            pairs = ", ".join(
                f"{src.label(a)} ({src.where(a)}) and {src.label(b)} ({src.where(b)})"
                for a, b in sorted(merge.items())
            )
            raise GrammarError(
                f"terminals {pairs} are the same spelling, read in one parser "
                f"state, so they are one terminal; as one, the grammar does not "
                f"compile: {exc}"
            ) from None
    table = parse_table(lark)
    terms = {t.name: _terminal(t, src) for t in lark.terminals}
    anchored = _anchored(terms, table.states, table.start_states[START], src)
    check_terminals(terms, src.where)
    rest = raw_rest(lark.rules, terms, table.states)
    check_call_ends(lark.rules, terms, src, ends_with_block(table.states) | rest)
    start = table.start_states[START]
    kernel = kernels(lark.rules, table.states, start)
    tails = tail_rules(lark.rules)
    check_tails(table.states, kernel, tails, src)
    states = {
        s: _state(actions, terms, src, tails, dialects, rest) for s, actions in table.states.items()
    }
    masks = state_dialects(lark.rules, table.states, start, dialects, kernel)
    opener_dialect = _opener_dialects(lark.rules, dialects)
    repairable = (call_firsts(lark.rules), open_ended(table.states, masks, dialects))
    entries, _ = _entries(table.states, start, terms, opener_dialect, dialects, src, repairable)
    # (the anchored entries last: the answer's and reasoning's tables are the others)
    entries = tuple(sorted(entries, key=lambda e: e[0] in anchored))
    plain = len(entries) - sum(e[0] in anchored for e in entries)
    sources = [terms[e[0]]["source"] for e in entries]
    groups = [
        f"(?P<{e[0]}>{rename_groups(s, entry_group_prefix(k))})"
        for k, (e, s) in enumerate(zip(entries, sources))
    ]
    exact = "|".join(groups[:plain])
    try:
        freeze("|".join(groups))
    except re.error as exc:  # pragma: no cover - each part compiled on its own already
        raise GrammarError(
            f"{src.where(*(e[0] for e in entries))}: the entry terminals' "
            f"alternation does not compile: {exc}"
        ) from None
    nfa = _nfa(entries[:plain], sources[:plain], src)
    think = _think_tables(src, entries[:plain], sources[:plain], exact)
    lead_set: set[str] = set()
    for source in sources[:plain]:
        lead_set |= first_chars(source) or set()
    lead = "".join(sorted(lead_set.union(*(t["first"] for t in think.values()))))
    start_tables = _start_tables(src, entries, sources, groups, plain)
    widened = _widened(entries[:plain], terms, think, src)
    _blocks_need_calls(dialects, lark.rules, src)
    data, memo = serialize_lark(lark)
    blueprint: Blueprint = {
        "dialects": dialects,
        "lark": (data, memo),
        "terminals": list(terms.values()),
        "states": states,
        "opener_dialect": opener_dialect,
        "entries": entries,
        "lead_chars": lead,
        "entry_exact": exact,
        "nfa": nfa,
        "think": {k: {n: v for n, v in t.items() if n != "first"} for k, t in think.items()},
        "state_dialects": masks,
        "widened": widened,
        "raw_rest": bool(rest),
        **start_tables,
    }
    return blueprint, lark


def _shown(chars: set[str]) -> str:
    """A lead set as a message shows it: white space as ``\\s``, the rest as written."""
    spaces = {c for c in chars if c.isspace()}
    rest = "".join(sorted(chars - spaces))
    return " ".join(([r"\s"] if spaces else []) + ([repr(rest)] if rest else []))


def _widened(
    entries: tuple[tuple[str, str, str | None], ...],
    terms: dict[str, dict[str, Any]],
    think: dict[str, dict[str, Any]],
    src: Sources,
) -> list[str]:
    """One message for each missing-opener entry that begins with a character no opener (nor
    reasoning tag) begins with: prose is then searched for that character too, which the
    author never wrote (a call opener that may begin with white space makes every space a
    place a block may start). The loader warns with these (``GrammarWarning``)."""
    searched: set[str] = set().union(*(t["first"] for t in think.values()))
    for name, _, synthetic in entries:
        if synthetic is None:
            searched |= first_chars(terms[name]["source"]) or set()
    out = []
    for name, _, synthetic in entries:
        extra = (first_chars(terms[name]["source"]) or set()) - searched
        if synthetic is not None and extra:
            out.append(
                f"{src.where(name)}: terminal {src.label(name)} begins a call, so the "
                f"missing-opener repair makes it an entry: prose is now searched for "
                f"{_shown(extra)} too (its lead set: "
                f"{_shown(first_chars(terms[name]['source']) or set())}); begin it "
                "with a character its opener begins with, or let the opener take what "
                "comes first (grammar/README.md, Entries)"
            )
    return out


def _anchored(
    terms: dict[str, dict[str, Any]], states: dict[int, dict[str, Any]], start: int, src: Sources
) -> set[str]:
    """The terminals written ``/^…/``: they may stand only at the start of the reply (or right
    after reasoning), as a block's first token; anywhere else the loader refuses them."""
    found = {name for name, t in terms.items() if t.pop("anchored", False)}
    for s, actions in states.items():
        for name in found:
            if s != start and name in actions:
                raise GrammarError(
                    f"{src.where(name)}: terminal {src.label(name)} is anchored (^) but may "
                    "stand inside a block; an anchored terminal may only begin one",
                    expected=("an anchored terminal that only begins a block",),
                )
    return found


def _start_tables(
    src: Sources,
    entries: tuple[tuple[str, str, str | None], ...],
    sources: list[str],
    groups: list[str],
    plain: int,
) -> dict[str, Any]:
    """The entry tables of the reply's start, when some entries are anchored (``entries``
    from ``plain`` on): ``"start"`` (every entry) and ``"start_think"`` (every entry and
    ``THINK_OPEN``), with the characters they begin with. None anchored: nothing."""
    if plain == len(entries):
        return {}
    exact = "|".join(groups)
    lead: set[str] = set()
    for source in sources:
        lead |= first_chars(source) or set()
    think = _think_tables(src, entries, sources, exact).get("preamble")
    if think is not None:
        lead |= think["first"]
        think = {n: v for n, v in think.items() if n != "first"}
    return {
        "start": {"exact": exact, "nfa": _nfa(entries, sources, src), "think": think},
        "start_lead_chars": "".join(sorted(lead)),
    }


def _opener_dialects(rules: list[Any], dialects: tuple[str, ...]) -> dict[str, str]:
    """The terminals a dialect's block can begin with (its rule's first symbols, through the
    rules it begins with: a block may begin with its call, ``hermes: hermes_call``), each
    mapped to the first enabled dialect that begins with it."""
    by_origin: dict[str, list[Any]] = {}
    for r in rules:
        by_origin.setdefault(str(r.origin.name), []).append(r)
    out: dict[str, str] = {}
    for dialect in dialects:
        todo, seen = list(by_origin.get(dialect, ())), set()
        while todo:
            rule = todo.pop(0)
            if not rule.expansion or id(rule) in seen:
                continue
            seen.add(id(rule))
            first = rule.expansion[0]
            if first.is_term:
                out.setdefault(str(first.name), dialect)
            else:
                todo += by_origin.get(str(first.name), [])
    return out


def _think_tables(
    src: Sources, entries: tuple[tuple[str, str, str | None], ...], sources: list[str], exact: str
) -> dict[str, dict[str, Any]]:
    """The entry tables of the reasoning contexts (SPEC §15, ``_grammar.entry_tables``): for each of
    ``THINK_OPEN`` (the "preamble" table) and ``THINK_CLOSE`` (the "reasoning" one), the
    block entries and that tag, last: its terminal, exact alternation and NFA. The tag is the
    one ``common.lark`` defines and those the enabled dialect files define (a family's own
    reasoning tags, grammar/README.md): one pattern, their alternation. The tags belong to no
    block rule, so Lark, which drops terminals no rule uses, compiles them from those files
    alone."""
    files = [
        (k, space)
        for k, space in enumerate(src.spaces[: len(src.original)])
        if k == 0 or space is not None
    ]
    found: dict[str, list[str]] = {}  # tag -> its terminal in each file that defines it
    used: list[int] = []
    for k, space in files:
        text = src.original[k][1]
        for _, name in THINK_TABLES:
            if re.search(rf"^{name}\s*[.:]", text, re.MULTILINE):
                found.setdefault(name, []).append(name if space is None else _joined(space, name))
                if k not in used:
                    used.append(k)
    if not found:
        return {}
    mini = Sources([src.original[k] for k in used], tuple(src.spaces[k] for k in used))
    names = [n for tags in found.values() for n in tags]
    try:
        lark = Lark(
            mini.text + "\nstart: " + " | ".join(names) + "\n",
            parser="lalr",
            lexer=NoLexer,
            maybe_placeholders=False,
        )
    except Exception as exc:  # lark.exceptions.GrammarError and friends
        raise mini.lark_error(exc) from exc
    terms = {t.name: _terminal(t, mini) for t in lark.terminals}
    out: dict[str, dict[str, Any]] = {}
    k = len(entries)
    for table, name in THINK_TABLES:
        if name not in found:
            continue
        parts: list[str] = []
        first: set[str] = set()
        for i, tag in enumerate(found[name]):
            spec = terms[tag]
            tag_first = first_chars(spec["source"]) if spec["source"] is not None else None
            if spec["is_run"] or tag_first is None:
                raise GrammarError(
                    f"{mini.where(tag)}: terminal {mini.label(tag)} must be a bounded tag "
                    "whose first character is a fixed set (a reasoning tag)"
                )
            first |= tag_first
            parts.append(rename_groups(spec["source"], f"_t{i}_"))
        tag_source = parts[0] if len(parts) == 1 else "|".join(f"(?:{p})" for p in parts)
        part = f"(?P<{name}>{rename_groups(tag_source, entry_group_prefix(k))})"
        out[table] = {
            "terminal": name,
            "exact": f"{exact}|{part}" if exact else part,
            "nfa": nfa_table([*sources, tag_source]),
            "first": frozenset(first),
        }
    return out


def _joined(space: str, name: str) -> str:
    """A dialect file's own terminal ``name`` as joined (``namespace``)."""
    return f"{space.upper()}__{name}"


def _compile(src: Sources) -> Lark:
    """Lark's parser for ``src`` (strict: a conflict is an error), or a ``GrammarError``."""
    try:
        return Lark(src.text, parser="lalr", lexer=NoLexer, strict=True, maybe_placeholders=False)
    except GrammarError:  # pragma: no cover - Lark raises its own
        raise
    except Exception as exc:  # lark.exceptions.GrammarError and friends
        raise src.lark_error(exc) from exc


def _blocks_need_calls(dialects: tuple[str, ...], rules: list[Any], src: Sources) -> None:
    """Refuse a dialect whose block could be complete without a call: the sieve would take
    its text from the prose as a block of no calls."""
    refused = callless(rules, dialects)
    if refused:
        name = refused[0]
        raise GrammarError(
            f"{src.where(name)}: rule {name} (the {name} block) can be complete without any "
            "call, so text that is no call would be taken for a block; make at least one "
            "call part of every way the block can be written (e.g. call+, not call*)",
            expected=("a block rule that always holds a call",),
        )


def _nfa(entries: tuple[tuple[str, str, str | None], ...], sources: list[str], src: Sources) -> Any:
    """The entry automaton's NFA; a construct it cannot follow names its terminal."""
    try:
        return nfa_table(sources)
    except GrammarError:
        for (name, _, _), source in zip(entries, sources):
            try:
                nfa_table([source])
            except GrammarError as exc:
                raise GrammarError(
                    f"{src.where(name)}: terminal {src.label(name)} can start a block, but {exc}"
                ) from None
        raise  # pragma: no cover - each alone was fine


def _state(
    actions: dict[str, Any],
    terms: dict[str, dict[str, Any]],
    src: Sources,
    tails: set[Any],
    dialects: tuple[str, ...],
    rest: set[Any],
) -> tuple[tuple[str, ...], str | None, bool, str | None, str | None, bool]:
    """One parser state: its bounded terminals (priority order), its run, whether the block
    may end there, an action key whose reduce builds a call (or None), one whose reduce is
    the tail rule it reduces whatever comes next (or None), and whether its end is sure
    (``endings``)."""
    bounded: list[dict[str, Any]] = []
    run: str | None = None
    call_rule = None
    call_key = None
    for name, (action, arg) in actions.items():
        spec = terms.get(name)
        if is_reduce(action) and is_call(arg):
            call_rule, call_key = arg, name
        if spec is None:
            continue
        if spec["is_run"]:
            if run is not None and run != name:
                raise GrammarError(
                    f"{src.where(run)}: one parser state accepts two runs, {src.label(run)} "
                    f"and {src.label(name)} ({src.where(name)}); the scanner could not tell "
                    "where one ends",
                    expected=(src.label(run), src.label(name)),
                )
            run = name
        else:
            bounded.append(spec)
    # (priority first; between equals the name, never the table's order, which follows string
    # hashing and so differs between processes)
    bounded.sort(key=lambda t: (-t["priority"], t["name"]))
    if end_call_key(actions) is not None or call_rule in rest:  # (built when the block ends)
        call_rule = call_key = None
    if call_rule is not None and any(
        not is_reduce(action) or arg is not call_rule for action, arg in actions.values()
    ):
        raise GrammarError(
            f"{src.where(str(call_rule.origin.name))}: rule "
            f"{src.label(call_rule.origin.name)} (a call) "
            "may be complete or may go on after the same tokens; a call must be complete the "
            "moment its last token arrives, or only where its block ends (at the end of the "
            'input alone: grammar/README.md, "Where a block ends")'
        )
    may_end = END in actions
    if may_end and run is not None and (terms[run].get("soft") or terms[run].get("balanced")):
        raise GrammarError(
            f"{src.where(run)}: terminal {src.label(run)} (a soft or balanced run) may follow "
            "where a block may end; the scanner could not tell from the next character "
            "whether the block goes on. Let a bounded token come first there (`;` and a "
            "look-ahead at the `{`), or make it a hard run",
            expected=("a bounded terminal", "a hard run"),
        )
    return (
        tuple(t["name"] for t in bounded),
        run,
        may_end,
        call_key,
        default_key(actions, tails),
        end_sure(actions, dialects),
    )


def _entries(
    states: dict[int, Any],
    start: int,
    terms: dict[str, dict[str, Any]],
    opener_dialect: dict[str, str],
    dialects: tuple[str, ...],
    src: Sources,
    repairable: tuple[set[str], set[str]] = (set(), set()),
) -> tuple[tuple[tuple[str, str, str | None], ...], str]:
    """The entry terminals ``(terminal, dialect, synthetic opener or None)``, best first,
    and the characters they can start with. Best first: the higher priority, then the
    opener of the first enabled dialect, then the name — never the parse table's order of
    its actions, which follows Python's string hashing and so differs between processes
    (where two entries match the same text, the first one is taken). The missing-wrapper
    repair's entries are the terminals an opener accepts first that begin a call
    (``repairable[0]``), in dialects whose calls are followed by a closer (not in
    ``repairable[1]``, whose calls may end their block)."""
    firsts, open_ = repairable
    rank = {d: k for k, d in enumerate(dialects)}

    def best(t: dict[str, Any]) -> tuple[int, int, str]:
        return -t["priority"], rank.get(opener_dialect.get(t["name"], ""), len(rank)), t["name"]

    start_actions = states[start]
    openers = sorted((terms[n] for n in start_actions if n in terms), key=best)
    openers = _isolated(openers, states, start_actions, terms, opener_dialect, src)
    entries = [(t["name"], opener_dialect.get(t["name"], ""), None) for t in openers]
    seen = {e[0] for e in entries}
    for opener in openers:
        action, after = start_actions[opener["name"]]
        if not is_shift(action) or opener_dialect.get(opener["name"]) in open_:
            continue
        for name in sorted(
            states[after], key=lambda n: (-terms[n]["priority"], n) if n in terms else (0, n)
        ):
            spec = terms.get(name)
            if spec is None or spec["is_run"] or name in seen or name not in firsts:
                continue
            seen.add(name)
            entries.append((name, opener_dialect.get(opener["name"], ""), opener["name"]))
    lead: set[str] = set()
    for e in entries:
        first = first_chars(terms[e[0]]["source"])
        if first is None:
            raise GrammarError(
                f"{src.where(e[0])}: terminal {src.label(e[0])} can start a block but its first "
                "character is not a fixed set; prose could not be searched for it"
            )
        lead |= first
    return tuple(entries), "".join(sorted(lead))


def _isolated(
    openers: list[dict[str, Any]],
    states: dict[int, Any],
    start_actions: dict[str, Any],
    terms: dict[str, dict[str, Any]],
    opener_dialect: dict[str, str],
    src: Sources,
) -> list[dict[str, Any]]:
    """Dialect isolation (grammar/README.md, "Entries"): ``openers`` (best first), with each
    one moved before the openers of other dialects that match its text too, when it is the
    more specific (``_grammar.overlap``) and the block it opens reads otherwise. Two such
    openers that neither resolves — neither the more specific, one priority — or a more
    specific one a higher priority would always shadow, are a ``GrammarError`` naming both
    files."""

    def follow(t: dict[str, Any]) -> frozenset[str]:
        """What the block may read after opener ``t``: its terminals' spellings (their specs
        but for the names), or the names of what is no terminal (the end)."""
        after = states[start_actions[t["name"]][1]]
        return frozenset(
            repr(sorted((k, v) for k, v in terms[n].items() if k != "name")) if n in terms else n
            for n in after
        )

    out: list[dict[str, Any]] = []
    for t in openers:
        at = len(out)
        for k, other in enumerate(out):
            if opener_dialect.get(other["name"]) == opener_dialect.get(t["name"]):
                continue
            if follow(other) == follow(t):
                continue  # (the same text follows either way: the parser tells them apart)
            rel = relation(other["source"], t["source"])
            if not rel.overlap:
                continue
            specific = other if rel.a_within_b else t if rel.b_within_a else None
            if specific is None and other["priority"] != t["priority"]:
                continue  # (the author ordered them: the higher priority wins)
            if specific is None or specific["priority"] < max(t["priority"], other["priority"]):
                raise _overlapping(other["name"], t["name"], src, specific is None)
            if specific is t:
                at = min(at, k)
        out.insert(at, t)
    return out


def _overlapping(a: str, b: str, src: Sources, equal: bool) -> GrammarError:
    why = (
        "neither is the more specific"
        if equal
        else "the more specific one has the lower priority, so it would never open a block"
    )
    return GrammarError(
        f"{src.where(a)}: terminal {src.label(a)} and {src.where(b)}: terminal {src.label(b)} "
        f"open blocks of two dialects on the same text, and {why}; spell one more specifically, "
        "give the one that should win a higher priority (NAME.2), or enable one of them only",
        expected=(src.label(a), src.label(b)),
    )


@functools.lru_cache(maxsize=8192)
def _compiled(source: str, what: str) -> None:
    """Raise ``GrammarError`` unless ``source`` compiles (``what`` says where it is)."""
    try:
        freeze(source)
    except re.error as exc:
        at = f" at position {exc.pos}" if exc.pos is not None else ""
        raise GrammarError(
            f"{what} is not a valid regular expression: {exc.msg}{at} in {source!r}"
        ) from None


def _terminal(t: Any, src: Sources) -> dict[str, Any]:
    """The ``TerminalSpec`` arguments of one Lark terminal."""
    where = f"{src.where(t.name)}: terminal {src.label(t.name)}"
    source = terminal_source(t)
    _compiled(source, where)  # (first: Lark's width of an invalid pattern raises its own error)
    return dict(_terminal_args(t.name, t.priority, source, terminal_width(t), where))


@functools.lru_cache(maxsize=8192)
def _terminal_args(name: str, priority: int, source: str, width: int, where: str) -> dict[str, Any]:
    """``_terminal``'s answer, kept: each set of dialects loaded derives its terminals
    again (a grammar dir beside ``"all"``, a draft beside every dialect). Callers copy it."""
    anchored = source.startswith("^") and not name.endswith(RUN_SUFFIX)
    if anchored:  # (only at the start of the reply: ``_anchored``)
        source = source[1:]
    if reads_before(source):
        raise GrammarError(
            f"{where} looks before the position it is matched at (a look-behind, "
            "^, \\A or \\b); the scanner matches a token, or a run's stop, from the text "
            "held since it began, which may not hold what stands before it",
            expected=("a pattern that reads only from its own start on (look-aheads are fine)",),
        )
    if name.endswith(RUN_SUFFIX):
        shape = _BALANCED.get(source)
        if shape is not None:
            closer, lead_ws, opened = shape
            return {
                "name": name,
                "priority": priority,
                "source": None,
                "is_run": True,
                "balanced": True,
                "lead_ws": lead_ws,
                "closer": closer,
                "opened": opened,
            }
        if _JSON_RUN_LIKE.match(source):
            raise GrammarError(
                f"{where}: a balanced run must be written exactly as one of "
                + ", ".join(f"/{f}/" for f in _JSON_RUN_FORMS)
                + "; the scanner finds where the value ends, the pattern only declares it",
                expected=tuple(f"/{f}/" for f in _JSON_RUN_FORMS),
            )
        soft = _SOFT_RUN.match(source)
        hard = _HARD_RUN.match(source) if soft is None else None
        if soft is not None:
            stop_src = soft.group("stop")
        elif hard is not None:  # (its stop: a character outside the class, `[^\r\n]+` too)
            cls = hard.group("cls")
            stop_src = f"[{cls[1:]}]" if cls.startswith("^") else f"[^{cls}]"
        else:
            raise GrammarError(
                f"{where}: a run terminal must be written (?:(?!STOP)[\\s\\S])+, [CLASS]+ "
                "or \\s*\\{[\\s\\S]*\\} (a JSON object)",
                expected=("(?:(?!STOP)[\\s\\S])+", "[CLASS]+", _JSON_RUN_FORMS[0]),
            )
        _compiled(stop_src, f"{where}: its stop")
        closure = prefix_closure(stop_src)
        if closure is None:
            raise GrammarError(f"{where}: its stop uses an unsupported construct")
        width = min(max_width(stop_src), MAX_BOUNDED_WIDTH)
        first = first_chars(stop_src) if soft is not None else None
        return {
            "name": name,
            "priority": priority,
            "source": None,
            "is_run": True,
            "soft": soft is not None,
            "stop_source": stop_src,
            "tail_source": f"(?=[\\s\\S])(?:{closure})\\Z" if width > 1 else None,
            "tail_span": width,
            "stop_literal": literal_text(stop_src),
            "stop_char": next(iter(first)) if first is not None and len(first) == 1 else None,
            "stop_first": "".join(sorted(first)) if first is not None and len(first) > 1 else None,
        }
    if width > MAX_BOUNDED_WIDTH:
        raise GrammarError(
            f"{where} can be longer than {MAX_BOUNDED_WIDTH} characters; bound its "
            "repetitions or make it a run (name ending in _RUN)"
        )
    grows = growable_before_lookahead(source)
    if grows:
        raise GrammarError(
            f"{where} could match short on a text cut by a chunk boundary and long on "
            f"the whole text: a repeat before a look-ahead both accept {sorted(grows)!r}; take "
            "those characters out of one of them",
            expected=("a look-ahead that accepts nothing the repeat before it accepts",),
        )
    closure = prefix_closure(source)
    if closure is None:
        raise GrammarError(
            f"{where} uses a construct whose prefixes cannot be computed "
            "(back-reference, conditional or inline flag)"
        )
    ends = end_chars(source)
    first = first_chars(source)
    return {
        **({"anchored": True} if anchored else {}),
        "name": name,
        "priority": priority,
        "source": source,
        "is_run": False,
        "end_chars": frozenset(ends) if ends is not None else None,
        "width": min(max_width(source), MAX_BOUNDED_WIDTH),
        "closure": closure,
        "reach": max_width(closure),
        "first": frozenset(first) if first is not None else None,
    }

"""Strategy: join the grammar files into one Lark grammar with each dialect file's own names
in a namespace of its own, and merge terminals that are one spelling (grammar/README.md,
"Namespaces") — part of the cold path of loading a grammar (``_grammar.derive``).

What it does: ``namespace`` reads a file with a small tokenizer (Lark's own patterns for
comments, strings and regular expressions, so nothing in them is mistaken for a name), finds
the names the file defines (a rule or terminal heading a line: ``name:``, ``?name:``,
``NAME.2:``) and renames them and every use of them in that file ``dialect__name`` (rules)
or ``DIALECT__NAME`` (terminals), a leading ``_`` kept in front (so an inlined rule stays
inlined, a filtered terminal filtered, and ``_RUN`` stays the suffix). Not renamed: the
dialect's block rule (named after the dialect), the contract's names (``CONTRACT``), names
the file does not define (``common.lark``'s, or another file's written in full), an alias
after ``->`` and ``%import``/``%declare`` lines. ``common.lark`` and the start rule are
joined unchanged. ``namespace`` also applies a ``merge`` map (a terminal's name to the name
of the one it is merged into) to every use of a name, in any file. ``same_spellings`` finds
what to merge in a compiled grammar: bounded terminals of one pattern and one priority that
one parser state accepts (a scanner could only ever read the first of them there).
What it guarantees: renaming changes no line: every position in the joined text maps back to
its file, line and column (``Renamed.column``), and every name to the name as written
(``Renamed.labels``). The built-in dialects' names do not collide, so their grammar is the
one it was before namespaces, up to names.
What it costs: one pass over each file (~0.5 ms for the built-in grammar) on a cold load only;
``same_spellings`` one look at each parser state's actions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .lark_internals import terminal_source
from .names import CONTRACT, RUN_SUFFIX

__all__ = ["CONTRACT", "Renamed", "defined_names", "namespace", "renamed_rule", "same_spellings"]

#: One token of a .lark file that matters here; what lies between tokens is punctuation,
#: white space, numbers and modifiers (``?``, ``!``). Strings and regexps as Lark reads them.
_TOKEN = re.compile(
    r"""
    (?P<skip>//[^\n]*|\#[^\n]*|"(?:\\"|\\\\|[^"\n])*?"i?|/(?!/)(?:\\/|\\\\|[^/])*?/[imslux]*)
  | (?P<name>_?[a-z][_a-z0-9]*|_?[A-Z][_A-Z0-9]*)
  | (?P<arrow>->)
  | (?P<directive>%[a-z]+)
  | (?P<nl>\n)
""",
    re.VERBOSE,
)
#: What follows a defined name at the head of a line: template parameters, a priority, ``:``.
_HEAD_REST = re.compile(r"[ \t]*(?:\{[^}\n]*\}[ \t]*)?(?:\.[ \t]*[+-]?\d+[ \t]*)?:")
#: Directives whose names are shared by every file, copied as they are.
_VERBATIM = ("%import", "%declare")


class Renamed:
    """A file's text as joined, and how to read it in the file's own terms."""

    __slots__ = ("labels", "shifts", "text")

    def __init__(
        self, text: str, labels: dict[str, str], shifts: dict[int, list[tuple[int, int, int]]]
    ) -> None:
        self.text = text
        #: the joined name of every renamed name -> the name as written in the file
        self.labels = labels
        #: per line (0 = the file's first): each renaming on it, (column, old length, new
        #: length), columns 0-based in the file's line, in order
        self.shifts = shifts

    def column(self, line: int, column: int) -> int:
        """The file's column (1-based) of column ``column`` of its line ``line`` (1-based) as
        joined."""
        shift = 0
        for at, old, new in self.shifts.get(line - 1, ()):
            start = at + shift + 1  # the renamed name's first column, joined
            if column >= start + new:
                shift += new - old
            elif column >= start:
                return at + 1
            else:
                break
        return column - shift


def qualified(name: str, space: str) -> str:
    """``name`` in the namespace ``space`` (a dialect name): ``space__name`` for a rule,
    ``SPACE__NAME`` for a terminal, a leading ``_`` kept in front."""
    lead = "_" if name.startswith("_") else ""
    core = name[len(lead) :]
    return f"{lead}{space.upper() if core[:1].isupper() else space}__{core}"


def _tokens(text: str) -> list[tuple[str, int, int, bool]]:
    """The names of ``text`` that may be renamed: ``(name, start, end, defines)``, where
    ``defines`` says the name heads a definition. Names after ``->`` and on verbatim
    directive lines are left out."""
    out: list[tuple[str, int, int, bool]] = []
    line_start = True  # nothing but white space and modifiers since the line began
    after_arrow = verbatim = False
    pos = 0
    for m in _TOKEN.finditer(text):
        gap = text[pos : m.start()]
        if gap.strip(" \t\r\f\v?!"):
            line_start = False
        pos = m.end()
        kind = m.lastgroup
        if kind == "nl":
            line_start, after_arrow, verbatim = True, False, False
            continue
        if kind == "name" and not (after_arrow or verbatim):
            defines = line_start and _HEAD_REST.match(text, m.end()) is not None
            out.append((m.group(), m.start(), m.end(), defines))
        elif kind == "directive" and m.group() in _VERBATIM:
            verbatim = True
        after_arrow = kind == "arrow"
        if kind != "skip" or not m.group().startswith(("//", "#")):
            line_start = False
    return out


def namespace(text: str, space: str | None, merge: dict[str, str] | None = None) -> Renamed:
    """``text`` (one grammar file) with its own names in namespace ``space`` (None: none,
    as for ``common.lark``), then every use of a name in ``merge`` replaced by its value."""
    tokens = _tokens(text)
    own: set[str] = set()
    if space is not None:
        own = {name for name, _, _, defines in tokens if defines} - CONTRACT - {space}
    merge = merge or {}
    pieces: list[str] = []
    labels: dict[str, str] = {}
    shifts: dict[int, list[tuple[int, int, int]]] = {}
    pos = 0
    line, line_at = 0, 0  # the line of ``pos`` and where it begins
    for name, start, end, defines in tokens:
        new = qualified(name, space) if name in own and space is not None else name
        if not defines:
            new = merge.get(new, new)
        if new == name:
            continue
        line += text.count("\n", line_at, start)
        line_at = text.rfind("\n", 0, start) + 1
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = end
        if name in own:
            labels[qualified(name, space or "")] = name
        shifts.setdefault(line, []).append((start - line_at, len(name), len(new)))
    pieces.append(text[pos:])
    return Renamed("".join(pieces), labels, shifts)


def defined_names(text: str) -> tuple[str, ...]:
    """The rules and terminals ``text`` (one grammar file) defines, in order."""
    return tuple(name for name, _, _, defines in _tokens(text) if defines)


def renamed_rule(text: str, old: str, new: str) -> str:
    """``text`` (one grammar file) with rule ``old`` named ``new``, where it is defined and
    used (not in comments, strings or patterns, nor after ``->``): a dialect that reads
    another's grammar (``//%reads``) takes its file with the block rule named after itself."""
    pieces: list[str] = []
    pos = 0
    for name, start, end, _ in _tokens(text):
        if name == old:
            pieces += [text[pos:start], new]
            pos = end
    return "".join(pieces) + text[pos:]


def same_spellings(terminals: Iterable[Any], states: dict[int, dict[str, Any]]) -> dict[str, str]:
    """Bounded terminals (Lark's ``TerminalDef``) with one pattern and one priority that one
    parser state accepts: each one's name -> the name of the first defined of them."""
    terminals = list(terminals)
    order = {t.name: k for k, t in enumerate(terminals)}
    spelling = {
        t.name: (terminal_source(t), t.priority)
        for t in terminals
        if not t.name.endswith(RUN_SUFFIX)
    }
    merge: dict[str, str] = {}
    for actions in states.values():
        alike: dict[tuple[str, int], list[str]] = {}
        for name in actions:
            key = spelling.get(name)
            if key is not None:
                alike.setdefault(key, []).append(name)
        for names in alike.values():
            if len(names) > 1:
                names.sort(key=order.__getitem__)
                for name in names[1:]:
                    merge[name] = names[0]
    return merge

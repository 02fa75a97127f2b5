"""Strategy: the grammar's source as Lark reads it — the files joined, each dialect file's own
names in its namespace — and where a line, a column or a name of it comes from.

What it does: ``Sources`` joins the files (``_grammar.namespace`` renames a dialect file's own names)
and turns a Lark error about the joined text back into the file, line and column, and the
names as written (``lark_error``).
What it guarantees: every grammar problem the loader reports names the file it is in.
What it costs: one pass over the grammar text, on the cold path only.
"""

from __future__ import annotations

import re

from .._base.errors import GrammarError
from .namespace import namespace

__all__ = ["Sources"]

_LINE_COL = re.compile(r"line (\d+),? col(?:umn)? (\d+)")
_NAMED = re.compile(r"in rule (\w+)|[Rr]ule '?(\w+)'?|[Tt]erminal '?(\w+)'?|'(\w+)'")


class Sources:
    """The grammar files joined into one text, each dialect file's own names in its namespace
    (``_grammar.namespace``), and where a line, a column or a name of it comes from."""

    def __init__(
        self,
        parts: list[tuple[str, str]],
        spaces: tuple[str | None, ...] = (),
        merge: dict[str, str] | None = None,
    ) -> None:
        self.original = parts  # (file, text) as read
        self.spaces = spaces  # the namespace of each part (None: none), as many as parts
        self.merge = merge or {}
        self.renamed = [
            namespace(text, spaces[k] if k < len(spaces) else None, self.merge)
            for k, (_, text) in enumerate(parts)
        ]
        self.parts = [(path, r.text) for (path, _), r in zip(parts, self.renamed)]
        self.text = "\n".join(text for _, text in self.parts)
        #: the joined name of every renamed name -> the name as written
        self.labels = {new: old for r in self.renamed for new, old in r.labels.items()}
        self._label_re = (
            re.compile(
                r"\b(?:"
                + "|".join(map(re.escape, sorted(self.labels, key=len, reverse=True)))
                + r")\b"
            )
            if self.labels
            else None
        )
        self._starts: list[int] = []  # the joined text's line number of each part's line 1
        line = 1
        for _, text in self.parts:
            self._starts.append(line)
            line += text.count("\n") + 1

    def merged(self, merge: dict[str, str]) -> Sources:
        """The same files joined with terminals merged (``merge``: a name -> the name it is
        merged into), on top of what this one merged."""
        both = {**self.merge, **merge}

        def last(name: str) -> str:  # (a chain a -> b -> c: a -> c)
            seen = {name}
            while name in both and both[name] not in seen:
                name = both[name]
                seen.add(name)
            return name

        return Sources(self.original, self.spaces, {a: last(a) for a in both})

    def label(self, name: str) -> str:
        """A name of the joined text as its file writes it."""
        return self.labels.get(name, name)

    def relabel(self, message: str) -> str:
        """``message`` with the joined text's names as their files write them."""
        if self._label_re is None:
            return message
        return self._label_re.sub(lambda m: self.labels[m[0]], message)

    def _part(self, line: int) -> int:
        return max(i for i, s in enumerate(self._starts) if s <= line) if line >= 1 else 0

    def at(self, line: int) -> tuple[str, int]:
        """The file and its line number of line ``line`` of the joined text."""
        k = self._part(line)
        return self.parts[k][0], line - self._starts[k] + 1

    def column(self, line: int, column: int) -> int:
        """The file's column of column ``column`` of line ``line`` of the joined text."""
        k = self._part(line)
        return self.renamed[k].column(line - self._starts[k] + 1, column)

    def where(self, *names: str) -> str:
        """``file:line`` where the first of ``names`` found is defined (a rule or a terminal,
        by its joined name), else the files."""
        for name in names:
            head = re.compile(rf"^[ \t]*[?!]*{re.escape(name)}(?:\.-?\d+)?[ \t]*:", re.MULTILINE)
            for path, text in self.parts:
                m = head.search(text)
                if m is not None:
                    return f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        return "grammar files " + ", ".join(p for p, _ in self.parts[:-1])

    def lark_error(self, exc: Exception) -> GrammarError:
        """Lark's error, with its joined-text positions turned into file positions and its
        names into the names as written."""

        def place(m: re.Match[str]) -> str:
            path, n = self.at(int(m[1]))
            return f"line {n}, column {self.column(int(m[1]), int(m[2]))} of {path}"

        message = _LINE_COL.sub(place, str(exc))
        line, column = getattr(exc, "line", None), getattr(exc, "column", None)
        if isinstance(line, int) and line > 0:
            path, n = self.at(line)
            where = (
                f"{path}:{n}:{self.column(line, column)}"
                if isinstance(column, int) and column > 0
                else f"{path}:{n}"
            )
        else:
            found = [g for m in _NAMED.finditer(message) for g in m.groups() if g]
            where = self.where(*found)
        return GrammarError(f"{where}: grammar does not compile: {self.relabel(message.strip())}")

"""Strategy: where the grammar's files are, and what ``common.lark`` declares about them.

What it does: ``grammar_dirs`` lists the folders ``.lark`` files are looked up in (the
caller's first, then the built-in ``grammar/``); ``available_dialects`` the dialect files
there; ``default_dialects`` reads the ``//%default_dialects`` directive of the first
``common.lark`` found (``DEFAULT_DIALECTS`` is the built-in one's, read at import);
``_find`` and ``_read`` locate and read one file for the loader.
What it guarantees: a missing folder or file is a ``ConfigurationError``; a malformed
directive a ``GrammarError`` naming the file and line.
What it costs: a few small file reads, once per process for the defaults.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

from .._base.errors import ConfigurationError, GrammarError

__all__ = [
    "ALL",
    "DEFAULTS_DIRECTIVE",
    "DEFAULT_DIALECTS",
    "DIRECTIVE",
    "READS_DIRECTIVE",
    "all_dialects",
    "available_dialects",
    "default_dialects",
    "dialect_summaries",
    "dialects",
    "every_dialect",
    "grammar_dirs",
    "reads",
    "resolve_dialects",
    "unknown_dialect",
]

#: A line of ``common.lark`` the loader reads (to Lark, a comment): ``//%name value …``.
DIRECTIVE = "//%"
#: The one directive: the dialects enabled when none are named, in order (grammar/README.md).
DEFAULTS_DIRECTIVE = "default_dialects"
#: A dialect file's directive naming the dialect whose grammar it reads (``_grammar.directives``).
READS_DIRECTIVE = "reads"


def grammar_dirs(extra: tuple[str, ...] = ()) -> tuple[Path, ...]:
    """Where ``.lark`` files are looked up: ``extra`` first, then the installed package's
    ``grammar/`` (or, in a source checkout, the repository's top-level ``grammar/``). A
    folder in ``extra`` that does not exist, or is not a folder, is a ConfigurationError."""
    for d in extra:
        p = Path(d)
        if not p.is_dir():
            why = "is a file, not a folder" if p.exists() else "does not exist"
            raise ConfigurationError(f"grammar folder {str(d)!r} {why}", expected=("a folder",))
    package = Path(__file__).resolve().parents[1]  # (``callsieve/``; this is ``_grammar/``)
    packaged = package / "grammar"
    builtin = packaged if packaged.is_dir() else package.parents[1] / "grammar"
    return tuple(Path(d) for d in extra) + (builtin,)


def available_dialects(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every dialect a ``.lark`` file exists for (``common.lark`` is not a dialect)."""
    return _dialects_in(grammar_dirs(extra_dirs))


def _read(path: Path) -> tuple[str, str]:
    """A grammar file's name and text (UTF-8); a file that cannot be read is a GrammarError."""
    try:
        return str(path), path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GrammarError(
            f"{path}: not valid UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start})"
        ) from None
    except OSError as exc:
        raise GrammarError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def default_dialects(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The dialects the ``common.lark`` found first in ``grammar_dirs(extra_dirs)`` declares
    as the defaults (its ``//%default_dialects`` line). No such line, or a malformed one, is a
    GrammarError naming the file (and line)."""
    dirs = grammar_dirs(extra_dirs)
    path = _find("common", dirs, extra_dirs)
    declared = _declared(*_read(path), dirs)
    if declared is None:
        raise GrammarError(
            f"{path}: declares no default dialects",
            expected=(f"a line {DIRECTIVE}{DEFAULTS_DIRECTIVE} dialect …",),
        )
    return declared


def _is_dialect_name(name: str) -> bool:
    """``[a-z][a-z0-9_]*``, without a regex."""
    return (
        name[:1].isalpha()
        and name.isascii()
        and name == name.lower()
        and name.replace("_", "").isalnum()
    )


def _declared(path: str, text: str, dirs: tuple[Path, ...]) -> tuple[str, ...] | None:
    """What ``common.lark``'s directive lines (``DIRECTIVE``) declare: the default dialects,
    or None if it has no such line. A directive the loader does not know, a second
    declaration, or one that names no dialect, a name twice, or a name no ``.lark`` file in
    ``dirs`` is for, is a GrammarError at its file and line."""
    if DIRECTIVE not in text:
        return None
    found: tuple[str, ...] | None = None
    expected = (f"{DIRECTIVE}{DEFAULTS_DIRECTIVE} dialect …",)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith(DIRECTIVE):
            continue
        where = f"{path}:{n}"
        word, *names = line[len(DIRECTIVE) :].split() or [""]
        if word != DEFAULTS_DIRECTIVE:
            raise GrammarError(
                f"{where}: unknown loader directive {line.strip()!r}", expected=expected
            )
        if found is not None:
            raise GrammarError(
                f"{where}: the default dialects are declared a second time", expected=expected
            )
        if not names:
            raise GrammarError(
                f"{where}: {DIRECTIVE}{DEFAULTS_DIRECTIVE} names no dialect", expected=expected
            )
        for name in names:
            if not _is_dialect_name(name) or name == "common":
                raise GrammarError(
                    f"{where}: {name!r} is not a dialect name (a lower-case "
                    "Lark rule name, not common)",
                    expected=expected,
                )
            if names.count(name) > 1:
                raise GrammarError(
                    f"{where}: dialect {name!r} is declared twice", expected=expected
                )
            if not any((d / f"{name}.lark").is_file() for d in dirs):
                raise GrammarError(
                    f"{where}: no grammar file for default dialect {name!r}",
                    expected=_dialects_in(dirs),
                )
        found = tuple(names)
    return found


def _dialects_in(dirs: tuple[Path, ...]) -> tuple[str, ...]:
    """Every dialect a ``.lark`` file in ``dirs`` exists for."""
    names: dict[str, None] = {}
    for d in dirs:
        for f in sorted(d.glob("*.lark")):
            if f.stem != "common" and _is_dialect_name(f.stem):  # (``_leaks.lark``: data)
                names.setdefault(f.stem, None)
    return tuple(names)


#: The name that enables every dialect there is (``dialects="all"``).
ALL = "all"
#: A dialect file's first comment line of this shape is its one-line summary.
_SUMMARY = re.compile(r"\A//\s*dialect:\s*([a-z][a-z0-9_]*)\s*[—:-]+\s*(.+)$", re.MULTILINE)


def every_dialect(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every dialect there is: the default dialects (as ``default_dialects``), then every other
    dialect a ``.lark`` file in the folders is for, by name, the caller's folders' before the
    built-in ones."""
    defaults = default_dialects(extra_dirs)
    return defaults + tuple(d for d in available_dialects(extra_dirs) if d not in defaults)


def all_dialects(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What ``dialects="all"`` enables: ``every_dialect``, less each dialect that reads another
    one's grammar (``//%reads``): the one it reads is there, and a grammar is loaded once."""
    dirs = grammar_dirs(extra_dirs)
    return tuple(
        d for d in every_dialect(extra_dirs) if _reads_file(_find(d, dirs, extra_dirs)) is None
    )


def _reads_file(path: Path) -> str | None:
    """``reads`` of the file at ``path``, read once while it is unchanged."""
    stat = path.stat()
    return _reads_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=1024)
def _reads_cached(path: str, mtime_ns: int, size: int) -> str | None:
    del mtime_ns, size  # (the key: a file changed is read again)
    return reads(_read(Path(path))[1])


def reads(text: str) -> str | None:
    """The dialect a dialect file's ``//%reads NAME`` line names, else None (its shape is
    ``_grammar.directives``' to check)."""
    if DIRECTIVE + READS_DIRECTIVE not in text:
        return None
    for line in text.splitlines():
        word, *names = line[len(DIRECTIVE) :].split() or [""]
        if line.startswith(DIRECTIVE) and word == READS_DIRECTIVE and names:
            return names[0]
    return None


def resolve_dialects(
    dialects: str | tuple[str, ...] | None, extra_dirs: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """The dialects a ``Sieve`` enables: ``dialects`` as named; ``"all"``: ``all_dialects``;
    None (not named): ``DEFAULT_DIALECTS``, then every dialect the caller's folders have a
    file for (a folder of one's own dialects is there to be used) — unless one of those folders
    brings a ``common.lark`` of its own: then what that file declares (``default_dialects``)."""
    if isinstance(dialects, tuple):
        return dialects
    # (a folder that is not there is ``load_grammar``'s to refuse, with its own message)
    dirs = tuple(d for d in extra_dirs if Path(d).is_dir())
    if dialects == ALL:
        return all_dialects(dirs)
    if not dirs:
        return DEFAULT_DIALECTS
    if any((Path(d) / "common.lark").is_file() for d in dirs):
        return default_dialects(dirs)  # (a folder with a common.lark of its own declares them)
    own = _dialects_in(tuple(Path(d) for d in dirs))
    return DEFAULT_DIALECTS + tuple(d for d in own if d not in DEFAULT_DIALECTS)


def unknown_dialect(name: object, extra_dirs: tuple[str, ...] = ()) -> ConfigurationError:
    """The one error for a dialect name that names no dialect, wherever a name is taken: it
    lists the dialects there are (``expected``)."""
    known = available_dialects(extra_dirs)
    return ConfigurationError(
        f"unknown dialect {name!r}; the dialects are {', '.join(known)} (or {ALL!r} for every one)",
        expected=(*known, ALL),
    )


def dialect_summaries(extra_dirs: tuple[str, ...] = ()) -> dict[str, str]:
    """``{dialect: its one-line summary}`` for every dialect there is, the defaults first:
    the summary is the rest of the ``// dialect: NAME — …`` line a dialect file starts with
    (grammar/README.md), "" for a file without one."""
    dirs = grammar_dirs(extra_dirs)
    out: dict[str, str] = {}
    for name in every_dialect(extra_dirs):
        _, text = _read(_find(name, dirs, extra_dirs))
        m = _SUMMARY.search(text)
        out[name] = m.group(2).strip() if m is not None and m.group(1) == name else ""
    return out


def dialects(grammar_dirs: Iterable[str | os.PathLike[str]] = ()) -> dict[str, str]:
    """Every dialect there is, with its one-line summary, the defaults first (then by name;
    ``grammar_dirs``' own before the built-in ones): what ``callsieve dialects`` prints.

    >>> import callsieve
    >>> callsieve.dialects()["hermes"].split(":")[0]
    'Hermes 2 Pro/3, Qwen2.5, QwQ, Qwen3'
    """
    return dialect_summaries(tuple(os.fspath(d) for d in grammar_dirs))


def _find(name: str, dirs: tuple[Path, ...], extra_dirs: tuple[str, ...]) -> Path:
    """The first ``<name>.lark`` in ``dirs``; none is a ConfigurationError."""
    for d in dirs:
        f = d / f"{name}.lark"
        if f.is_file():
            return f
    if name == "common":
        raise ConfigurationError(f"no common.lark in the grammar folders {extra_dirs!r}")
    raise unknown_dialect(name, extra_dirs)


#: The dialects enabled when none are named: what the built-in ``common.lark`` declares.
DEFAULT_DIALECTS: tuple[str, ...] = default_dialects()

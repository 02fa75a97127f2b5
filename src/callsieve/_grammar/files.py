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

from pathlib import Path

from .._base.errors import ConfigurationError, GrammarError

__all__ = [
    "DEFAULTS_DIRECTIVE",
    "DEFAULT_DIALECTS",
    "DIRECTIVE",
    "available_dialects",
    "default_dialects",
    "grammar_dirs",
]

#: A line of ``common.lark`` the loader reads (to Lark, a comment): ``//%name value …``.
DIRECTIVE = "//%"
#: The one directive: the dialects enabled when none are named, in order (grammar/README.md).
DEFAULTS_DIRECTIVE = "default_dialects"


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


def _find(name: str, dirs: tuple[Path, ...], extra_dirs: tuple[str, ...]) -> Path:
    """The first ``<name>.lark`` in ``dirs``; none is a ConfigurationError."""
    for d in dirs:
        f = d / f"{name}.lark"
        if f.is_file():
            return f
    raise ConfigurationError(
        f"no grammar file for dialect {name!r}", expected=available_dialects(extra_dirs)
    )


#: The dialects enabled when none are named: what the built-in ``common.lark`` declares.
DEFAULT_DIALECTS: tuple[str, ...] = default_dialects()

"""Strategy: one exception tree, rooted at CallsieveError.

What it guarantees: every error this library raises on purpose is a CallsieveError; the ones
that signal misuse of a Python contract also subclass the matching builtin (TypeError,
ValueError, RuntimeError) so ordinary ``except`` clauses keep working. Malformed *model
output* never raises: it is released as text (SPEC §Invariants 5). Errors carry the offset
and what was expected where that is known. Cost: nothing on the hot path.
"""

from __future__ import annotations

__all__ = [
    "CallsieveError",
    "ConfigurationError",
    "FormatError",
    "GrammarError",
    "GrammarWarning",
    "InputTypeError",
    "SieveClosedError",
    "UnknownOptionError",
]


class CallsieveError(Exception):
    """Root of every error callsieve raises on purpose."""

    def __init__(self, message: str, *, offset: int | None = None, expected: tuple[str, ...] = ()):
        super().__init__(message)
        self.offset = offset
        self.expected = expected


class SieveClosedError(CallsieveError, RuntimeError):
    """``feed()`` or ``close()`` called on a sieve that is already closed."""


class InputTypeError(CallsieveError, TypeError):
    """A chunk or text that is not a ``str``."""


class ConfigurationError(CallsieveError, ValueError):
    """An unknown option, or an option with a value outside its documented set."""


class FormatError(CallsieveError, ValueError):
    """The prompt side (``callsieve.prompt``, ``callsieve.deepseek``) was given what it cannot
    read or write: a tool definition, call or result of an unknown shape, a name the
    dialect cannot spell, arguments that are not a JSON object. ``offset`` is where in the
    text (for arguments read from text), ``expected`` what would have been accepted."""


class GrammarError(CallsieveError):
    """A grammar file breaks the scanner contract (see grammar/README.md)."""


class GrammarWarning(UserWarning):
    """A grammar the loader accepts but whose author may not mean what it does: a
    missing-opener entry that widens the characters prose is searched for (grammar/README.md,
    Entries). Not a ``CallsieveError``: nothing is raised."""


class UnknownOptionError(ConfigurationError, TypeError):
    """An option name ``Sieve``/``parse`` does not know (a ``TypeError`` too, as Python
    raises for an unexpected keyword argument)."""

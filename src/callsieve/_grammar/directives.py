"""Strategy: what a dialect file declares about its family, besides its rules — one table of
the loader directives a dialect file may hold, read into one frozen record per dialect.

What it does: a line ``//%name arg …`` of a dialect file (to Lark, a comment) declares a
trait of the family that no rule can say: how its models behave, not what they write.
``DIRECTIVES`` lists the names a dialect file may use and the shape of their arguments;
``read`` turns a file's lines into a ``DialectTraits``. ``common.lark``'s own directive
(``default_dialects``) is ``_grammar.files``'; it is not a dialect's trait.
What it guarantees: an unknown directive, a directive twice, or arguments of the wrong shape
is a ``GrammarError`` at the file and line, with the directives there are. A dialect with
no directive has ``NO_TRAITS``. Adding a trait is one row of ``DIRECTIVES`` and the code
that reads it (``DialectTraits.flag`` or ``DialectTraits.words``).
What it costs: one pass over a dialect file's lines per grammar load (warm or cold).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .._base.errors import GrammarError
from .files import DEFAULTS_DIRECTIVE, DIRECTIVE, READS_DIRECTIVE, _is_dialect_name

__all__ = [
    "DEFAULT_ENVELOPE",
    "DIRECTIVES",
    "NO_TRAITS",
    "PLAIN_VALUES",
    "DialectTraits",
    "Directive",
    "EnvelopeKeys",
    "ValueReading",
    "read",
    "value_reading",
]

#: What a directive takes: nothing (a flag), or one or more words (``[A-Za-z0-9_.:-]``).
Shape = Literal["flag", "words"]


@dataclass(frozen=True)
class Directive:
    """One directive a dialect file may hold: its name, what it takes, and what it means."""

    name: str
    shape: Shape
    meaning: str


#: Every directive a dialect file may hold (grammar/README.md, "Dialect directives").
DIRECTIVES: dict[str, Directive] = {
    d.name: d
    for d in (
        Directive(
            "calls_end_thought",
            "flag",
            "the family's models open calls inside a thought they never close: a call opener "
            "inside an open thought ends it (SPEC §15)",
        ),
        Directive(
            "raw_values_are_strings",
            "flag",
            "a raw value with no schema for its parameter is its text (`null` aside), as the "
            "family's reference parsers read it (SPEC §19)",
        ),
        Directive(
            "repeated_parameter_keeps_last",
            "flag",
            "a parameter named twice in a call keeps its last value, as the family's "
            "reference parsers read it (SPEC §19), not an array (SPEC §5)",
        ),
        Directive(
            "envelope_name",
            "words",
            "the keys a JSON envelope of the dialect names its call under, first found wins "
            '(instead of "name")',
        ),
        Directive(
            "envelope_arguments",
            "words",
            "the keys a JSON envelope of the dialect holds its arguments under, first found "
            'wins (instead of "arguments", "parameters", "input")',
        ),
        Directive(
            "envelope_id",
            "words",
            'the keys a JSON envelope of the dialect holds its call\'s id under (instead of "id")',
        ),
        Directive(
            READS_DIRECTIVE,
            "words",
            "the dialect is another dialect's grammar under its own name, with its own "
            'directives: the file holds no rule, and dialects="all" leaves it out',
        ),
    )
}


@dataclass(frozen=True)
class EnvelopeKeys:
    """The keys a JSON envelope (``call_json`` in a call without a name, ``call_envelope``)
    is read by, in any order: its call's name (the first of ``name`` it has), its arguments
    (the first of ``arguments``), the model's id (the first of ``ident``), and ``function``,
    whose object may be the envelope itself (OpenAI's wire form). A ``call_envelope`` has no
    key but these and ``type``."""

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ("arguments", "parameters", "input")
    ident: tuple[str, ...] = ("id",)
    function: str = "function"

    @property
    def known(self) -> frozenset[str]:
        """Every key an envelope may have (``call_envelope``: no other)."""
        return frozenset((*self.name, *self.arguments, *self.ident, self.function, "type"))


#: The keys of a dialect that declares none (grammar/README.md, ``call_json``).
DEFAULT_ENVELOPE = EnvelopeKeys()


@dataclass(frozen=True)
class DialectTraits:
    """What one dialect file declares: each directive it holds and its words (a flag: none)."""

    declared: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def flag(self, name: str) -> bool:
        """Whether the file holds directive ``name`` (which must be in ``DIRECTIVES``)."""
        _known(name)
        return any(n == name for n, _ in self.declared)

    def words(self, name: str) -> tuple[str, ...]:
        """The words of directive ``name`` in the file (``()`` if it has none)."""
        _known(name)
        return next((w for n, w in self.declared if n == name), ())

    @property
    def reads(self) -> str | None:
        """The dialect whose grammar this one reads (``//%reads NAME``), else None."""
        words = self.words(READS_DIRECTIVE)
        return words[0] if words else None

    @property
    def envelope(self) -> EnvelopeKeys:
        """The JSON envelope's keys: those the file declares (``//%envelope_name``,
        ``//%envelope_arguments``, ``//%envelope_id``), the default ones for the rest."""
        d = DEFAULT_ENVELOPE
        return EnvelopeKeys(
            self.words("envelope_name") or d.name,
            self.words("envelope_arguments") or d.arguments,
            self.words("envelope_id") or d.ident,
        )


#: The traits of a dialect file without directives.
NO_TRAITS = DialectTraits()


@dataclass(frozen=True)
class ValueReading:
    """How a dialect's calls are read, where its family's directives say (SPEC §19):
    ``raw_strings``, a raw value with no schema is its text; ``last_wins``, a repeated
    parameter keeps its last value; ``envelope``, the keys its JSON envelopes are read by."""

    raw_strings: bool = False
    last_wins: bool = False
    envelope: EnvelopeKeys = DEFAULT_ENVELOPE


#: SPEC §5's reading: raw JSON-looking values are JSON, a repeated parameter an array.
PLAIN_VALUES = ValueReading()


def value_reading(traits: DialectTraits) -> ValueReading:
    """The ``ValueReading`` a dialect's traits declare (``PLAIN_VALUES`` itself for none)."""
    reading = ValueReading(
        traits.flag("raw_values_are_strings"),
        traits.flag("repeated_parameter_keeps_last"),
        traits.envelope,
    )
    return PLAIN_VALUES if reading == PLAIN_VALUES else reading


def _known(name: str) -> None:
    if name not in DIRECTIVES:  # (a typo in the engine, not in a grammar file)
        raise KeyError(f"no dialect directive {name!r}")


def _is_word(word: str) -> bool:
    return (
        word.isascii()
        and word.replace("_", "").replace(".", "").replace(":", "").replace("-", "").isalnum()
    )


def read(path: str, text: str) -> DialectTraits:
    """The directives of dialect file ``path`` (its ``text``). ``common.lark``'s directive,
    an unknown one, one twice, or arguments of the wrong shape are GrammarErrors at the file
    and line."""
    if DIRECTIVE not in text:
        return NO_TRAITS
    expected = tuple(f"{DIRECTIVE}{name}" for name in DIRECTIVES)
    found: dict[str, tuple[str, ...]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith(DIRECTIVE):
            continue
        where = f"{path}:{n}"
        name, *words = line[len(DIRECTIVE) :].split() or [""]
        if name == DEFAULTS_DIRECTIVE:
            raise GrammarError(
                f"{where}: the default dialects are declared in common.lark, not in a dialect file",
                expected=("common.lark",),
            )
        directive = DIRECTIVES.get(name)
        if directive is None:
            raise GrammarError(
                f"{where}: unknown loader directive {line.strip()!r}", expected=expected
            )
        if name in found:
            raise GrammarError(f"{where}: {DIRECTIVE}{name} is declared twice", expected=expected)
        if (directive.shape == "flag") != (not words) or not all(map(_is_word, words)):
            what = "no arguments" if directive.shape == "flag" else "one or more words"
            raise GrammarError(
                f"{where}: {DIRECTIVE}{name} takes {what}", expected=(f"{DIRECTIVE}{name}",)
            )
        if name == READS_DIRECTIVE and (len(words) != 1 or not _is_dialect_name(words[0])):
            raise GrammarError(
                f"{where}: {DIRECTIVE}{name} takes one dialect name",
                expected=(f"{DIRECTIVE}{name} NAME",),
            )
        found[name] = tuple(words)
    return DialectTraits(tuple(found.items()))

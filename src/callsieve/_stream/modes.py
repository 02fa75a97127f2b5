"""Strategy: the sieve's states and its transitions as data, in one place (as h11 keeps its
state machine in ``_state``): what ``Sieve.state`` tells users, the finer ``Mode`` the
machine reads each chunk in, the ``Context`` of the reply that prose stands in (SPEC §15)
with what each context means (``CONTEXTS``), where a reply starts (``FIRST_CONTEXT``), and
the one choice of the mode after the machine ran (``next_mode``). docs/architecture.md,
"The modes", draws it.

What it does: three enums (their members also as module globals for the hot paths), the
table of contexts, and ``next_mode``. The readers that run in each mode, and the one writer
of the mode that arms them (``SieveMachine._enter``), are in ``sieve``.
What it guarantees: a ``Mode`` or ``Context`` member hashes by identity (a table lookup is a
plain dict lookup, no Python-level ``Enum.__hash__``); every change of context reads its
meaning from ``CONTEXTS``, every mode the machine leaves the sieve in comes from
``next_mode``.
What it costs: nothing per chunk; a context change is one table lookup, the choice after
the machine a few attribute tests.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple

from .._base.events import Reasoning, Text
from .._grammar.names import STRAY_RUN

if TYPE_CHECKING:
    from .._blocks.capture import Capture

__all__ = ["CONTEXTS", "FIRST_CONTEXT", "Context", "ContextSpec", "Mode", "SieveState", "next_mode"]


class SieveState(enum.Enum):
    """What the public ``Sieve.state`` tells: between blocks, inside one, or closed."""

    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


class Mode(enum.Enum):
    """What the next chunk is read as (each mode's reader is ``SieveMachine._read_<mode>``)."""

    PROSE = "prose"  # between blocks, nothing held
    REASONING = "reasoning"  # between blocks inside reasoning (SPEC §15), nothing held
    CANDIDATE = "candidate"  # between blocks, a possible opener held
    RUN = "run"  # inside a block, in a streaming run (an argument body)
    CUT_TAG = "cut tag"  # inside a block, a tag cut by the chunk boundary held
    BEFORE_TEXT = "before text"  # before the answer (or, under "open", the reasoning) begins
    MACHINE = "machine"  # anything else: the machine reads every chunk
    CLOSED = "closed"

    # Members are singletons: hash them by identity (``Enum.__hash__`` is a Python-level
    # call, on every change of mode, in ``_READERS[mode]``).
    __hash__ = object.__hash__


class Context(enum.Enum):
    """Where in the reply the prose between blocks stands (SPEC §15): what it is searched for
    (``_grammar.entry_tables``) and what it is released as — ``CONTEXTS`` says."""

    START = "start"  # the reply's start (and right after reasoning): anchored entries too
    PREAMBLE = "preamble"  # before the answer: a <think> opens reasoning; text, read whole
    OPENING = "opening"  # reasoning="open", before any reasoning: as PREAMBLE, but reasoning
    REASONING = "reasoning"  # inside reasoning: a </think> ends it; released as Reasoning
    ANSWER = "answer"  # the answer (or reasoning="off"): blocks only; released as Text

    __hash__ = object.__hash__


# The members as plain module globals, on paths that run once per chunk (benchmarks/README.md,
# "Fast paths", "enum members as globals").
PROSE, CANDIDATE, RUN, CUT_TAG = Mode.PROSE, Mode.CANDIDATE, Mode.RUN, Mode.CUT_TAG
MACHINE, CLOSED, REASONING = Mode.MACHINE, Mode.CLOSED, Mode.REASONING
BEFORE_TEXT = Mode.BEFORE_TEXT
PREAMBLE, IN_REASONING, ANSWER = Context.PREAMBLE, Context.REASONING, Context.ANSWER
OPENING, START = Context.OPENING, Context.START


class ContextSpec(NamedTuple):
    """What one ``Context`` means to the machine."""

    #: The entry tables (``EntryIndex.entry_tables``) it needs, its own first: the
    #: sieve has the context only if the grammar has them all.
    tables: tuple[str, ...]
    #: Whether Markdown code is tracked in it (reasoning is read without code: SPEC §15).
    code: bool
    #: What its prose is released as.
    kind: type[Text | Reasoning]
    #: The mode it is read in with nothing held.
    home: Mode
    #: The context that takes over at the first character of text that is not white space
    #: (a ``<think>`` may only stand after white space), or None: it lasts.
    until_text: Context | None
    #: The context after a reasoning tag found in it: the first of these the sieve has.
    after_tag: tuple[Context, ...]
    #: The context once a block opens in it: the first of these the sieve has (none: it stays).
    after_block: tuple[Context, ...] = ()


#: Every context, by what it means (the reasoning tags are ``THINK_OPEN``/``THINK_CLOSE``,
#: read only where a context's table has them: ``_grammar.entry_tables``).
CONTEXTS: dict[Context, ContextSpec] = {
    # (a grammar with anchored entries only: ``_grammar.derive._start_tables``)
    START: ContextSpec(
        ("start",), True, Text, BEFORE_TEXT, ANSWER, (IN_REASONING,), (PREAMBLE, ANSWER)
    ),
    PREAMBLE: ContextSpec(
        ("preamble", "reasoning"), True, Text, BEFORE_TEXT, ANSWER, (IN_REASONING,)
    ),
    OPENING: ContextSpec(
        ("preamble", "reasoning"), False, Reasoning, BEFORE_TEXT, IN_REASONING, (IN_REASONING,)
    ),
    IN_REASONING: ContextSpec(
        ("reasoning",), False, Reasoning, REASONING, None, (START, PREAMBLE, ANSWER)
    ),
    ANSWER: ContextSpec(("answer",), True, Text, PROSE, None, (IN_REASONING,)),
}

#: Where a reply starts, by the ``reasoning`` option: the first of these the sieve has
#: (``"open"``: white space, then a ``<think>`` the model wrote anyway, is a tag; a grammar
#: without the reasoning tags has only the answer). ``"off"`` has the answer only.
FIRST_CONTEXT: dict[str, tuple[Context, ...]] = {
    "tags": (START, PREAMBLE, ANSWER),
    "open": (OPENING, IN_REASONING),
    "off": (START, ANSWER),
}


def next_mode(cap: Capture | None, held: str, candidate: bool, home: Mode) -> Mode:
    """The mode the machine leaves the sieve in (after ``_process``): between blocks, the
    context's ``home`` — or CANDIDATE when it holds a ``candidate`` opener (but before the
    text begins, BEFORE_TEXT hands that to the machine); inside a block, CUT_TAG when a tag
    cut by the chunk boundary is ``held``, RUN in a streaming run (not a strict capture's
    stray text, which it checks itself), else MACHINE."""
    if cap is None:
        return CANDIDATE if candidate and home is not BEFORE_TEXT else home
    if cap.waiting and held:
        return CUT_TAG
    run = cap.run
    if run is not None and not (cap.strict and run.name == STRAY_RUN):
        return RUN
    return MACHINE

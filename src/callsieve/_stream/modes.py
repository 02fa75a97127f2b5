"""Strategy: the sieve's states and every transition between them as data, in one place
(as h11 keeps its state machine in ``_state``). It holds what ``Sieve.state`` tells users,
the finer ``Mode`` the machine reads each chunk in, and the ``Context`` of the reply that
prose stands in (SPEC §15). docs/architecture.md, "The machine as data", draws it.

What it does: ``STEPS`` is every step: (a mode or a context, what was ``Found``) -> where it
may go. ``step`` looks one up. ``READERS`` gives each mode its reader and its fast half (``Fast``).
``CONTEXTS`` says what each context means, ``FIRST_CONTEXT`` where a reply starts, and
``next_mode`` which mode the machine leaves the sieve in.
What it guarantees: a step not in ``STEPS`` raises ``IllegalStep``, an internal error. The
sieve changes its mode only through ``SieveMachine._step``, and the context only through
``Where.step``; both ask ``step``. A ``Mode``, ``Context`` or ``Found`` member hashes by
identity (a table lookup is a plain dict lookup).
What it costs: nothing per chunk; a step is one dict lookup.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple

from .._base.errors import CallsieveError
from .._base.events import Reasoning, Text
from .._grammar.names import STRAY_RUN

if TYPE_CHECKING:
    from .._blocks.capture import Capture

__all__ = [
    "BLOCK_MOVES",
    "CONTEXTS",
    "FIRST_CONTEXT",
    "MODE_STEPS",
    "READERS",
    "STEPS",
    "Context",
    "ContextSpec",
    "Fast",
    "Found",
    "IllegalStep",
    "Mode",
    "ModeSpec",
    "SieveState",
    "next_mode",
    "step",
]


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
    NEW = "new"  # before the first step (``__init__`` takes it at once)

    # Members are singletons: hash them by identity (``Enum.__hash__`` is a Python-level
    # call, on every step, in ``STEPS`` and ``_READERS[mode]``).
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


# The members as plain module globals: the machine reads them on every step, and an enum
# member's lookup is dear (benchmarks/README.md, "Fast paths", "enum members as globals").
PROSE, CANDIDATE, RUN, CUT_TAG = Mode.PROSE, Mode.CANDIDATE, Mode.RUN, Mode.CUT_TAG
MACHINE, CLOSED, REASONING, NEW = Mode.MACHINE, Mode.CLOSED, Mode.REASONING, Mode.NEW
BEFORE_TEXT = Mode.BEFORE_TEXT
PREAMBLE, IN_REASONING, ANSWER = Context.PREAMBLE, Context.REASONING, Context.ANSWER
OPENING, START = Context.OPENING, Context.START


class ContextSpec(NamedTuple):
    """What one ``Context`` means to the machine (where it goes next is in ``STEPS``)."""

    #: The entry tables (``EntryIndex.entry_tables``) it needs, its own first: the
    #: sieve has the context only if the grammar has them all.
    tables: tuple[str, ...]
    #: Whether Markdown code is tracked in it (reasoning is read without code: SPEC §15).
    code: bool
    #: What its prose is released as.
    kind: type[Text | Reasoning]
    #: The mode it is read in with nothing held.
    home: Mode


#: Every context, by what it means (the reasoning tags are ``THINK_OPEN``/``THINK_CLOSE``,
#: read only where a context's table has them: ``_grammar.entry_tables``).
CONTEXTS: dict[Context, ContextSpec] = {
    # (a grammar with anchored entries only: ``_grammar.derive._start_tables``)
    START: ContextSpec(("start",), True, Text, BEFORE_TEXT),
    PREAMBLE: ContextSpec(("preamble", "reasoning"), True, Text, BEFORE_TEXT),
    OPENING: ContextSpec(("preamble", "reasoning"), False, Reasoning, BEFORE_TEXT),
    IN_REASONING: ContextSpec(("reasoning",), False, Reasoning, REASONING),
    ANSWER: ContextSpec(("answer",), True, Text, PROSE),
}

#: Where a reply starts, by the ``reasoning`` option: the first of these the sieve has
#: (``"open"``: white space, then a ``<think>`` the model wrote anyway, is a tag; a grammar
#: without the reasoning tags has only the answer). ``"off"`` has the answer only.
FIRST_CONTEXT: dict[str, tuple[Context, ...]] = {
    "tags": (START, PREAMBLE, ANSWER),
    "open": (OPENING, IN_REASONING),
    "off": (START, ANSWER),
}


class Found(enum.Enum):
    """What a reader or the machine found: the second half of a step's key in ``STEPS``."""

    BEGIN = "the sieve is made"  # a mode: its first
    LOG_FULL = "the hot half's budget is spent"  # a mode: fold the log, top it up
    LEAD_ALIVE = "a tag lead alive at the chunk's end"  # a mode: hold it
    LEAD_DIED = "the held lead died"  # a mode: its text is prose
    RUN_ON = "the run goes on"  # a mode: arm its hot half again
    STOP_CUT = "a run's stop at a tag the chunk cuts"  # a mode: hold the tag
    MACHINE_RAN = "the machine ran"  # a mode: ``next_mode`` chooses among the targets
    END = "close()"  # a mode
    FIRST_TEXT = "the first text that is not white space"  # a context (and BEFORE_TEXT)
    THINK_TAG = "a reasoning tag"  # a context
    THOUGHT_ENDS = "calls that end the thought"  # a context (``ENDS_THOUGHT``)
    BLOCK = "a block opens"  # a context

    __hash__ = object.__hash__


# The members as plain module globals too, as the modes' and the contexts' are.
BEGIN, LOG_FULL, LEAD_ALIVE, LEAD_DIED = (
    Found.BEGIN,
    Found.LOG_FULL,
    Found.LEAD_ALIVE,
    Found.LEAD_DIED,
)
RUN_ON, STOP_CUT, MACHINE_RAN, END = Found.RUN_ON, Found.STOP_CUT, Found.MACHINE_RAN, Found.END
FIRST_TEXT, THINK_TAG, THOUGHT_ENDS, BLOCK = (
    Found.FIRST_TEXT,
    Found.THINK_TAG,
    Found.THOUGHT_ENDS,
    Found.BLOCK,
)


class IllegalStep(CallsieveError, RuntimeError):
    """A step that is not in ``STEPS``: a bug in the machine, never the input's fault
    (internal: not exported; the stateful property test provokes it)."""


_LIVE = (PROSE, REASONING, BEFORE_TEXT, CANDIDATE, RUN, CUT_TAG, MACHINE)
_AFTER_THOUGHT = (START, PREAMBLE, ANSWER)

#: Every step the machine may take: (a mode or a context, what was found) -> the modes or
#: contexts it may go to. A context goes to the first target the sieve has (``Where``); a
#: mode to the one its reader or ``next_mode`` chose, which must be a target. A step that is
#: not here raises ``IllegalStep``. What each mode runs is ``READERS``.
STEPS: dict[tuple[Mode | Context, Found], tuple[Mode | Context, ...]] = {
    # The modes.
    (NEW, BEGIN): (PROSE, REASONING, BEFORE_TEXT, MACHINE),  # (the context's, or "off")
    (PROSE, LOG_FULL): (PROSE,),
    (REASONING, LOG_FULL): (REASONING,),
    (PROSE, LEAD_ALIVE): (CANDIDATE,),
    (REASONING, LEAD_ALIVE): (CANDIDATE,),
    (CANDIDATE, LEAD_DIED): (PROSE, REASONING),
    (BEFORE_TEXT, FIRST_TEXT): (PROSE, REASONING),
    (RUN, RUN_ON): (RUN,),
    (RUN, STOP_CUT): (CUT_TAG,),
    **{(mode, MACHINE_RAN): _LIVE for mode in _LIVE},
    **{(mode, END): (CLOSED,) for mode in _LIVE},
    # The contexts (SPEC §15).
    (START, FIRST_TEXT): (ANSWER,),
    (PREAMBLE, FIRST_TEXT): (ANSWER,),
    (OPENING, FIRST_TEXT): (IN_REASONING,),
    (START, THINK_TAG): (IN_REASONING,),
    (PREAMBLE, THINK_TAG): (IN_REASONING,),
    (OPENING, THINK_TAG): (IN_REASONING,),
    (IN_REASONING, THINK_TAG): _AFTER_THOUGHT,
    (IN_REASONING, THOUGHT_ENDS): _AFTER_THOUGHT,
    (ANSWER, THINK_TAG): (ANSWER,),  # (a stray ``</think>``: text)
    (START, BLOCK): (PREAMBLE, ANSWER),  # (the start's anchored entries end)
    (PREAMBLE, BLOCK): (PREAMBLE,),
    (OPENING, BLOCK): (OPENING,),
    (IN_REASONING, BLOCK): (IN_REASONING,),
    (ANSWER, BLOCK): (ANSWER,),
}


#: The contexts a block's opening moves from (elsewhere its step stays where it is).
BLOCK_MOVES = frozenset(c for (c, f), to in STEPS.items() if f is BLOCK and to != (c,))

#: ``STEPS``' mode steps, by mode and then what was found: a mode's row, which
#: ``SieveMachine._step`` holds while in it (one lookup by identity a step).
MODE_STEPS: dict[Mode, dict[Found, tuple[Mode | Context, ...]]] = {mode: {} for mode in Mode}
for (_at, _found), _to in STEPS.items():
    if isinstance(_at, Mode):
        MODE_STEPS[_at][_found] = _to


class Fast(enum.IntEnum):
    """A mode's fast half: what ``SieveMachine.feed`` does with the common chunk instead of
    calling the mode's reader. ``SieveMachine._step`` arms the one its new mode's row names
    (``_fast``); ``feed`` has one branch per member. PROSE, the commonest, is the one false
    member, so its branch costs a truth test (benchmarks/README.md, "The fast halves")."""

    #: An ASCII chunk without the tag lead: logged, and released as ``Text``.
    PROSE = 0
    NONE = 1  # every chunk goes to the reader
    #: The same, released as ``Reasoning``.
    REASONING = 2
    #: A chunk in which the run's stop cannot be: appended to the run (armed while nothing
    #: is held).
    RUN = 3
    #: RUN's for a run streaming as arguments as it is (``ArgStream.streams_as_is``): the
    #: same chunk, with no closing tag's lead, appended and sent (``ArgStream.hot``).
    #: ``SieveMachine._arm_run`` picks it, or NONE, in RUN's stead.
    ARG = 4


class ModeSpec(NamedTuple):
    """What the sieve runs in one mode."""

    #: Its reader: the ``SieveMachine`` method ``feed`` calls for a chunk the fast half leaves.
    reader: str
    #: Its fast half (``feed`` runs it; ``SieveMachine._step`` arms it).
    fast: Fast


#: Each mode's reader and fast half (RUN's: ``Fast.RUN``, ``ARG`` or ``NONE``, as
#: ``SieveMachine._arm_run`` finds the run).
READERS: dict[Mode, ModeSpec] = {
    PROSE: ModeSpec("_read_prose", Fast.PROSE),
    REASONING: ModeSpec("_read_prose", Fast.REASONING),
    CANDIDATE: ModeSpec("_read_candidate", Fast.NONE),
    RUN: ModeSpec("_read_run", Fast.RUN),
    CUT_TAG: ModeSpec("_read_cut_tag", Fast.NONE),
    BEFORE_TEXT: ModeSpec("_read_before_text", Fast.NONE),
    MACHINE: ModeSpec("_read_machine", Fast.NONE),
    CLOSED: ModeSpec("_read_closed", Fast.NONE),
    NEW: ModeSpec("_read_closed", Fast.NONE),  # (never read: the sieve leaves it as it is made)
}


def step(at: Mode | Context, found: Found) -> tuple[Mode | Context, ...]:
    """The targets of the step from ``at`` on ``found``; ``IllegalStep`` if there is none."""
    to = STEPS.get((at, found))
    if to is None:
        raise IllegalStep(f"no step from {at} on {found.name}: the machine is broken")
    return to


def next_mode(cap: Capture | None, held: str, candidate: bool, home: Mode) -> Mode:
    """The mode the machine leaves the sieve in (after ``_process``): between blocks, the
    context's ``home`` — or CANDIDATE when it holds a ``candidate`` opener (but before the
    text begins, BEFORE_TEXT hands that to the machine); inside a block, CUT_TAG when a tag
    cut by the chunk boundary is ``held``, RUN in a streaming run (not a strict capture's
    stray text, which it checks itself), else MACHINE."""
    if cap is None:
        return CANDIDATE if candidate and home is not BEFORE_TEXT else home
    if cap.held.waiting and held:
        return CUT_TAG
    run = cap.run
    if run is not None and not (cap.strict and run.name == STRAY_RUN):
        return RUN
    return MACHINE

"""Strategy: the sieve's states as values — what ``Sieve.state`` tells users, and the finer
``Mode`` the machine reads each chunk in (docs/architecture.md, "The modes").

What it does: two enums, and the ``Mode`` members as module globals for the hot paths.
What it guarantees: a ``Mode`` member hashes by identity (``_READERS[mode]`` is a plain dict
lookup, no Python-level ``Enum.__hash__``).
What it costs: nothing per chunk.
"""

from __future__ import annotations

import enum

__all__ = ["Context", "Mode", "SieveState"]


class SieveState(enum.Enum):
    """What the public ``Sieve.state`` tells: between blocks, inside one, or closed."""

    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


class Mode(enum.Enum):
    """What the next chunk is read as (each mode's reader is ``ModeReaders._read_<mode>``)."""

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
    (``_entry_tables``) and what it is released as."""

    PREAMBLE = "preamble"  # before the answer: a <think> opens reasoning; text, read whole
    OPENING = "opening"  # reasoning="open", before any reasoning: as PREAMBLE, but reasoning
    REASONING = "reasoning"  # inside reasoning: a </think> ends it; released as Reasoning
    ANSWER = "answer"  # the answer (or reasoning="off"): blocks only; released as Text

    __hash__ = object.__hash__


# The members as plain module globals (``Mode.RUN`` costs an enum descriptor call, about
# 90 ns in CPython 3.11, on paths that run once per chunk).
PROSE, CANDIDATE, RUN, CUT_TAG = Mode.PROSE, Mode.CANDIDATE, Mode.RUN, Mode.CUT_TAG
MACHINE, CLOSED, REASONING = Mode.MACHINE, Mode.CLOSED, Mode.REASONING
BEFORE_TEXT = Mode.BEFORE_TEXT
PREAMBLE, IN_REASONING, ANSWER = Context.PREAMBLE, Context.REASONING, Context.ANSWER
OPENING = Context.OPENING
#: The contexts that end at the first character of text that is not white space, and the
#: context each then gives way to (a ``<think>`` may only stand after white space).
UNTIL_TEXT = {PREAMBLE: ANSWER, OPENING: IN_REASONING}

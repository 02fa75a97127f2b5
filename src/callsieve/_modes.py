"""Strategy: the sieve's states as values — what ``Sieve.state`` tells users, and the finer
``Mode`` the machine reads each chunk in (docs/architecture.md, "The modes").

What it does: two enums, and the ``Mode`` members as module globals for the hot paths.
What it guarantees: a ``Mode`` member hashes by identity (``_READERS[mode]`` is a plain dict
lookup, no Python-level ``Enum.__hash__``).
What it costs: nothing per chunk.
"""

from __future__ import annotations

import enum

__all__ = ["Mode", "SieveState"]


class SieveState(enum.Enum):
    """What the public ``Sieve.state`` tells: between blocks, inside one, or closed."""

    PROSE = "prose"
    CAPTURE = "capture"
    CLOSED = "closed"


class Mode(enum.Enum):
    """What the next chunk is read as (each mode's reader is ``ModeReaders._read_<mode>``)."""

    PROSE = "prose"  # between blocks, nothing held
    CANDIDATE = "candidate"  # between blocks, a possible opener held
    RUN = "run"  # inside a block, in a streaming run (an argument body)
    CUT_TAG = "cut tag"  # inside a block, a tag cut by the chunk boundary held
    MACHINE = "machine"  # anything else: the machine reads every chunk
    CLOSED = "closed"

    # Members are singletons: hash them by identity (``Enum.__hash__`` is a Python-level
    # call, on every change of mode, in ``_READERS[mode]``).
    __hash__ = object.__hash__


# The members as plain module globals (``Mode.RUN`` costs an enum descriptor call, about
# 90 ns in CPython 3.11, on paths that run once per chunk).
PROSE, CANDIDATE, RUN, CUT_TAG = Mode.PROSE, Mode.CANDIDATE, Mode.RUN, Mode.CUT_TAG
MACHINE, CLOSED = Mode.MACHINE, Mode.CLOSED

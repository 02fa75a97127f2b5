"""Strategy: a hypothesis state machine drives one ``Sieve`` with arbitrary chunks and checks,
after every step, what the streaming contract (SPEC §7, §Invariants 1-3) promises at that
moment, not only at the end.

What it does: rules feed chunks drawn from a mix of random text, whole and cut-up tag
fragments (DSML, fullwidth DSML, legacy XML, CDATA, closing tags), complete blocks,
backticks and fences, line breaks, a lone ``<`` or ``＜``, zero-width characters, and
random splits of such pieces over several feeds; one rule closes the sieve, after which a
feed must raise ``SieveClosedError``. The machine runs with ``early_emit`` "block" or
"invoke" (the first step chooses). One more rule asks the sieve, in whatever mode and
context the feeds left it, for a step its transition table (``_stream.modes.STEPS``) does
not have: it must raise ``IllegalStep`` and change nothing, so the feeds after it still
agree with ``parse()``; the feeds themselves never take such a step (nothing else raises).
What it checks, after every step: what was released (the Text events' text and the
ToolCalls events' ``block.raw``, in order) is a prefix of the input so far; the rest is held
(there is no public accessor for it: it is computed as ``input[len(released):]``), and
while the sieve is in PROSE the held part is at most ``MAX_HELD_IN_PROSE`` characters and
starts with a tag lead. At close (the rule, or teardown if no close was drawn): released is
the whole input, and the coalesced text and calls equal ``callsieve.parse(input)`` with the
same options (calls compared by name and ``json.dumps(input, sort_keys=True)``).
What it costs: about 150 runs of up to 30 steps, a few seconds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import callsieve
from callsieve import SieveClosedError, SieveState, Text, ToolCalls
from callsieve._stream.modes import STEPS, Found, IllegalStep, Mode

#: The longest tail the sieve may hold outside a block. The longest opener cut by a chunk
#: boundary is about 40 characters (``<``, zero-width noise, a 24-character protocol prefix,
#: the local name); the generator below never builds the 32-character white-space runs the
#: grammar tolerates before ``>``, which could legitimately hold more.
MAX_HELD_IN_PROSE = 64
TAG_LEADS = "<＜〈"

DSML = [
    "<|DSML|tool_calls>",
    "</|DSML|tool_calls>",
    '<|DSML|invoke name="f">',
    "</|DSML|invoke>",
    '<|DSML|parameter name="p">',
    "</|DSML|parameter>",
    '<|DSML|parameter name="n" string="false">',
    "<｜DSML｜tool_calls>",
    "</｜DSML｜tool_calls>",
    '<｜DSML｜invoke name="h">',
    "</｜DSML｜invoke>",
]
XML = [
    "<tool_calls>",
    "</tool_calls>",
    '<invoke name="g">',
    "</invoke>",
    '<parameter name="q">',
    "</parameter>",
    "<function_calls>",
    "</function_calls>",
    '<invoke name="e"/>',
]
MISC = [
    "<![CDATA[",
    "]]>",
    "`",
    "``",
    "```",
    "```xml\n",
    "~~~",
    "\n```\n",
    "\n",
    "\n\n",
    " ",
    "<",
    "＜",
    "〈",
    "\u200b",
    "\u200d",
    "\ufeff",
    "|",
    "｜",
    ">",
    "＞",
    "/",
    '"',
    "=",
    "42",
    '{"a": 1}',
    "Hello, world. ",
    "I will use <tool_calls> now. ",
    "&lt;",
    "é字💥",
]
BLOCKS = [
    (
        '<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n<|DSML|parameter name="location">'
        "<![CDATA[Tokyo]]></|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>"
    ),
    (
        '<tool_calls><invoke name="read_file"><parameter name="path">README.md</parameter>'
        "</invoke></tool_calls>"
    ),
    (
        '<tool_calls><invoke name="a"><parameter name="p"><![CDATA[x</parameter></invoke>'
        '<invoke name="b"/></tool_calls>'
    ),
    '<invoke name="c"><parameter name="n">7</parameter></invoke></tool_calls>',
    '```\n<tool_calls><invoke name="quoted"/></tool_calls>\n```\n',
    '`<tool_calls><invoke name="inline"/></tool_calls>`',
]
FRAGMENTS = st.one_of(st.sampled_from(DSML + XML + MISC), st.sampled_from(BLOCKS))


@st.composite
def sliced(draw: Any) -> str:
    """A piece of a fragment: a tag cut anywhere."""
    frag: str = draw(FRAGMENTS)
    a = draw(st.integers(0, len(frag)))
    b = draw(st.integers(a, len(frag)))
    return frag[a:b]


TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
PIECE = st.one_of(FRAGMENTS, FRAGMENTS, sliced(), TEXT)
CHUNK = st.one_of(PIECE, st.lists(PIECE, min_size=1, max_size=5).map("".join))


def canon(calls: Any) -> list[tuple[str, str]]:
    return [(c.name, json.dumps(c.input, sort_keys=True)) for c in calls]


def _machine_state(sieve: Any) -> tuple[Any, ...]:
    """What an impossible step must leave as it was: the mode, its reader and steps, the
    context, the public state and the fast half with its budget."""
    return (
        sieve._mode,
        sieve._reader,
        sieve._steps,
        sieve._where.context,
        sieve.state,
        sieve._fast,
        sieve._hot,
    )


class SieveMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.early_emit = "block"
        self.sieve = callsieve.Sieve(early_emit=self.early_emit)
        self.fed: list[str] = []
        self.released: list[str] = []  # Text texts and ToolCalls block.raw, in order
        self.text: list[str] = []
        self.calls: list[Any] = []
        self.closed = False

    @initialize(early_emit=st.sampled_from(["block", "invoke"]))
    def choose_options(self, early_emit: str) -> None:
        self.early_emit = early_emit
        self.sieve = callsieve.Sieve(early_emit=early_emit)

    def _take(self, events: list[Any]) -> None:
        for e in events:
            if isinstance(e, Text):
                self.released.append(e.text)
                self.text.append(e.text)
            elif isinstance(e, ToolCalls):
                self.released.append(e.block.raw)
                self.calls.extend(e.calls)
            else:
                raise TypeError(f"unexpected event {e!r}")

    def _feed(self, chunk: str) -> None:
        self.fed.append(chunk)
        self._take(self.sieve.feed(chunk))

    @precondition(lambda self: not self.closed)
    @rule(chunk=CHUNK)
    def feed(self, chunk: str) -> None:
        self._feed(chunk)

    @precondition(lambda self: not self.closed)
    @rule(pieces=st.lists(PIECE, min_size=1, max_size=6), data=st.data())
    def feed_split(self, pieces: list[str], data: Any) -> None:
        """Several pieces joined, then fed cut at arbitrary points (empty chunks included)."""
        text = "".join(pieces)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
        for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True):
            self._feed(text[a:b])

    @precondition(lambda self: not self.closed)
    @rule(chunk=st.sampled_from(DSML + XML + BLOCKS))
    def feed_per_character(self, chunk: str) -> None:
        for ch in chunk:
            self._feed(ch)

    @precondition(lambda self: not self.closed)
    @rule()
    def close(self) -> None:
        self._take(self.sieve.close())
        self.closed = True
        self._check_whole()

    @precondition(lambda self: self.closed)
    @rule(chunk=CHUNK)
    def feed_after_close_raises(self, chunk: str) -> None:
        with pytest.raises(SieveClosedError):
            self.sieve.feed(chunk)

    @rule(found=st.sampled_from(list(Found)), data=st.data())
    def an_impossible_step_raises(self, found: Found, data: Any) -> None:
        """A step not in the table (from the mode, or from the context), or to a mode that
        is not one of the step's targets, raises ``IllegalStep`` and leaves the sieve as it
        was."""
        sieve = self.sieve
        before = _machine_state(sieve)
        targets = STEPS.get((sieve._mode, found))
        with pytest.raises(IllegalStep):
            if targets is None:
                sieve._step(found)
            else:
                sieve._step(
                    found, data.draw(st.sampled_from([m for m in Mode if m not in targets]))
                )
        if (sieve._where.context, found) not in STEPS:
            with pytest.raises(IllegalStep):
                sieve._where.step(found)
        after = _machine_state(sieve)
        assert all(a is b for a, b in zip(after, before, strict=True)), (before, after)

    @invariant()
    def released_is_a_prefix_and_held_is_bounded(self) -> None:
        so_far = "".join(self.fed)
        released = "".join(self.released)
        assert so_far.startswith(released), (
            f"released {released!r} is not a prefix of the input {so_far!r}"
        )
        held = so_far[len(released) :]
        if self.closed:
            assert held == "", f"{held!r} still held after close()"
        elif self.sieve.state is SieveState.PROSE:
            assert len(held) <= MAX_HELD_IN_PROSE, (
                f"{len(held)} characters held in prose: {held!r}; input {so_far!r}"
            )
            assert held == "" or held[0] in TAG_LEADS, f"held {held!r} in prose"

    def _check_whole(self) -> None:
        doc = "".join(self.fed)
        assert "".join(self.released) == doc
        want = callsieve.parse(doc, early_emit=self.early_emit)
        assert ("".join(self.text), canon(self.calls)) == (want.text, canon(want.calls)), (
            f"streamed {self.fed!r} (early_emit={self.early_emit!r}) disagrees with parse()"
        )

    def teardown(self) -> None:
        if not self.closed:
            self.close()


SieveMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestSieveStateful = SieveMachine.TestCase

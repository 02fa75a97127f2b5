"""SPEC §Invariants under argument streaming (``early_emit="arguments"``, SPEC §7.5), as
properties: for blocks the parser accepts, whatever they hold and however they are split,

- the calls and the text are those of ``parse()`` (chunking invariance), and the events
  rebuild the input (conservation);
- the deltas of a call that finishes spell exactly its ``arguments``;
- what streamed for a call is never taken back: no call is aborted and sent again — for
  plain text beside CDATA, a CDATA left open at the end that the loose-CDATA repair closes,
  a list parameter written once per item, a JSON body whose values the schema coerces (the
  shapes that used to be sent again, issue 23).

The shapes that still abort by necessity (a repeated name the schema does not type as a
list, a repeated key in a JSON body: docs/streaming.md) are left out of the generator.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    CDATA_INNER,
    ENTITY_TEXT,
    MARKUP_DIALECTS,
    NAMES,
    PLAIN,
    PROSE_CHARS,
    WS,
    doc_and_chunks,
    soak_settings,
)

from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    FormatError,
    Reasoning,
    Sieve,
    Text,
    ToolCalls,
)
from callsieve import parse as parse_whole
from callsieve.prompt import format_calls

SETTINGS = soak_settings(150)

#: ``f`` has a schema (a list, an integer, a string); ``g`` has none.
TOOLS = [
    {
        "name": "f",
        "parameters": {
            "type": "object",
            "properties": {
                "tags": {"type": "array"},
                "n": {"type": "integer"},
                "s": {"type": "string"},
            },
        },
    },
    {"name": "g"},
]

PART = st.one_of(
    PLAIN.map(lambda t: (False, t)),
    ENTITY_TEXT.map(lambda t: (False, t)),
    CDATA_INNER.map(lambda t: (True, t)),
)
#: A body of plain text and CDATA in any order (SPEC §5: read in the order written).
MIXED = st.lists(PART, max_size=4).map(
    lambda parts: "".join(f"<![CDATA[{t}]]>" if cdata else t for cdata, t in parts)
)
TYPED = st.sampled_from(["3", " 4 ", "x", "<![CDATA[5]]>", "-1"])
JSON_OBJECT = st.dictionaries(
    st.sampled_from(["n", "s", "k", "tags"]),
    st.one_of(st.integers(-9, 99), st.text(max_size=5), st.sampled_from(["7", "true", "[1]"])),
    max_size=3,
).map(lambda d: json.dumps(d, ensure_ascii=False))


@st.composite
def invoke(draw: Any, lt: str, lts: str, dsml: bool) -> str:
    name = draw(st.sampled_from(["f", "g"]))
    if draw(st.integers(0, 4)) == 0:  # a JSON object as the body (SPEC §4)
        return f'{lt}invoke name="{name}">{draw(WS)}{draw(JSON_OBJECT)}{draw(WS)}{lts}invoke>'
    params = []
    taken: set[str] = set()
    for _ in range(draw(st.integers(0, 4))):
        pname = draw(st.one_of(st.sampled_from(["tags", "n", "s"]), NAMES))
        if pname in taken and not (name == "f" and pname == "tags"):
            continue  # (a name repeated that no schema types as a list: it must abort)
        taken.add(pname)
        attr = draw(st.sampled_from(["", ' string="true"'])) if dsml else ""
        body = draw(TYPED) if pname == "n" else draw(MIXED)
        params.append(f'{draw(WS)}{lt}parameter name="{pname}"{attr}>{body}{lts}parameter>')
    return f'{lt}invoke name="{name}">{"".join(params)}{draw(WS)}{lts}invoke>'


@st.composite
def accepted_block(draw: Any) -> str:
    """A block the parser accepts: valid, or valid but for its last CDATA's ``]]>``, which
    the end of the input leaves open (the loose-CDATA repair closes it, SPEC §4.3)."""
    dialect = draw(st.sampled_from(sorted(MARKUP_DIALECTS)))
    lt, lts, wrapper = MARKUP_DIALECTS[dialect]
    calls = [draw(invoke(lt, lts, dialect != "xml")) for _ in range(draw(st.integers(1, 3)))]
    ws = draw(WS)
    doc = f"{draw(PLAIN)}{lt}{wrapper}>{ws}{ws.join(calls)}{draw(WS)}{lts}{wrapper}>"
    last = doc.rfind("]]>")
    if last >= 0 and draw(st.booleans()):
        loose = doc[:last] + doc[last + 3 :]
        if parse_whole(loose, tools=TOOLS).calls:  # (the repair reads it: still accepted)
            return loose
    return doc + draw(PLAIN)


def streamed(chunks: list[str]) -> list[Any]:
    sieve = Sieve(TOOLS, early_emit="arguments")
    return [e for c in chunks for e in sieve.feed(c)] + sieve.close()


@SETTINGS
@given(doc_and_chunks(accepted_block()))
def test_what_streams_for_an_accepted_block_is_never_taken_back(
    case: tuple[str, list[str]],
) -> None:
    doc, chunks = case
    events = streamed(chunks)
    whole = parse_whole(doc, tools=TOOLS, early_emit="arguments")
    # Chunking invariance and conservation, as for every reply.
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    assert [(c.name, c.input) for c in calls] == [(c.name, c.input) for c in whole.calls]
    text = "".join(e.text for e in events if isinstance(e, Text))
    assert text == whole.text
    rebuilt = "".join(
        e.text
        if isinstance(e, Text)
        else e.source
        if isinstance(e, Reasoning)
        else e.block.raw
        if isinstance(e, ToolCalls)
        else ""
        for e in events
    )
    assert rebuilt == doc
    # No call is aborted, and each call's deltas spell its arguments.
    assert [e for e in events if isinstance(e, CallAborted)] == []
    deltas: dict[int, str] = {}
    for e in events:
        if isinstance(e, ArgumentsDelta):
            deltas[e.index] = deltas.get(e.index, "") + e.delta
        elif isinstance(e, CallFinished):
            assert deltas.get(e.index, "") == e.call.arguments


@SETTINGS
@given(doc_and_chunks(accepted_block()))
def test_under_a_schema_policy_a_rejected_call_is_only_ever_begun(
    case: tuple[str, list[str]],
) -> None:
    """SPEC §9.3 with argument streaming: the calls handed out are ``parse()``'s, none of
    them rejected; a call the schema rejects may have begun (``CallStarted``, some deltas)
    but aborts, and what streamed of it is the start of the arguments it would have had."""
    doc, chunks = case
    sieve = Sieve(TOOLS, early_emit="arguments", policy="schema")
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    whole = parse_whole(doc, tools=TOOLS, early_emit="arguments", policy="schema")
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    assert [(c.name, c.input) for c in calls] == [(c.name, c.input) for c in whole.calls]
    assert [r.call.input for r in sieve.rejections] == [r.call.input for r in whole.rejections]
    rejected = [r.call for r in sieve.rejections]
    assert not any(c is r for c in calls for r in rejected)
    aborted = [e for e in events if isinstance(e, CallAborted)]
    assert all(e.reason == "rejected" for e in aborted)
    sent: dict[int, str] = {}
    for e in events:
        if isinstance(e, ArgumentsDelta):
            sent[e.index] = sent.get(e.index, "") + e.delta
    if len(aborted) == len(rejected):  # (each began: a call rejected before it began has none)
        for abort, call in zip(aborted, rejected, strict=True):
            assert call.arguments.startswith(sent.get(abort.index, ""))


# ------------------------------------------------------------------ raw values (SPEC §7.5)
#: The writers that write a string as raw text (a ``raw_value``, read back by
#: ``decode_raw``; gemma4's a ``cdata`` node between ``<|"|>``): glm45 and hy_v3 put white
#: space between a key and its value's tag.
RAW_WRITERS = (
    "functiongemma",
    "gemma4",
    "glm45",
    "hy_v3",
    "minimax_m2",
    "minimax_m3",
    "qwen3_coder",
    "seed_oss",
    "step3",
)
#: ``s`` is typed ``string``; ``t`` and every parameter of ``g`` have no schema.
RAW_TOOLS = [
    {"name": "f", "input_schema": {"type": "object", "properties": {"s": {"type": "string"}}}},
    {"name": "g"},
]
#: Strings a plain body would read otherwise: white space at the ends, entities, CDATA's
#: end, a lone ``<``, text that looks like JSON.
RAW_TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            [" ", "\n", "\t", "\r\n", "&lt;", "&amp;", "&#65;", "]]>", "<", "a < b", "é字💥"]
            + ["42", "true", '"q"', "\\", "[1]", "{", "<b>x</b>"]
        ),
        st.text(PROSE_CHARS, max_size=4),
    ),
    min_size=1,
    max_size=5,
).map("".join)


@st.composite
def raw_reply(draw: Any) -> tuple[str, str, list[str]]:
    """``(dialect, reply, chunks)``: one block of ``format_calls`` in a raw-value writer, of
    string values only, and a split of it."""
    dialect = draw(st.sampled_from(RAW_WRITERS))
    calls = []
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(["f", "g"]))
        keys = draw(st.lists(st.sampled_from(["s", "t", "u"]), min_size=1, max_size=3, unique=True))
        calls.append((name, {k: draw(RAW_TEXT) for k in keys}))
    try:
        doc = format_calls(calls, dialect=dialect, tools=RAW_TOOLS)
    except FormatError:  # (a value that holds the family's closing tag: not writable)
        assume(False)
        raise
    return (dialect, *draw(doc_and_chunks(st.just(doc))))


@SETTINGS
@given(raw_reply())
def test_a_raw_value_streams_as_it_will_be_read(case: tuple[str, str, list[str]]) -> None:
    """A raw value goes out as ``decode_raw`` reads it, not trimmed or entity-decoded as a
    plain body: however the reply is split, and fed per character, no call is sent again,
    each call's deltas are JSON of its input, and the calls are ``parse()``'s."""
    dialect, doc, chunks = case
    whole = parse_whole(doc, tools=RAW_TOOLS, dialects=(dialect,))
    assert whole.calls
    for pieces in (chunks, list(doc)):
        sieve = Sieve(RAW_TOOLS, dialects=(dialect,), early_emit="arguments")
        events = [e for c in pieces for e in sieve.feed(c)] + sieve.close()
        assert [e for e in events if isinstance(e, CallAborted)] == []
        deltas: dict[int, str] = {}
        finished = []
        for e in events:
            if isinstance(e, ArgumentsDelta):
                deltas[e.index] = deltas.get(e.index, "") + e.delta
            elif isinstance(e, CallFinished):
                assert json.loads(deltas.get(e.index, "")) == e.call.input
                finished.append(e.call)
        assert [(c.name, c.input) for c in finished] == [(c.name, c.input) for c in whole.calls]


def test_plain_text_after_an_empty_cdata_streams_as_the_call_reads_it() -> None:
    """``<![CDATA[]]> a`` is `` a``: the empty section begins the value, so the text after
    it is not trimmed as a value's first text would be (hypothesis found it "rewritten")."""
    doc = '<tool_calls><invoke name="f"><parameter name="s"><![CDATA[]]> a</parameter>'
    doc += "</invoke></tool_calls>"
    for size in (1, 3, len(doc)):
        sieve = Sieve(TOOLS, early_emit="arguments", policy="schema")
        chunks = [doc[i : i + size] for i in range(0, len(doc), size)]
        events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
        assert [e for e in events if isinstance(e, CallAborted)] == []
        sent = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
        assert sent == '{"s":" a"}'

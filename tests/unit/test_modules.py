"""Unit tests of the private modules, one group each (the behaviour tests are by SPEC section)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from callsieve import Block, ConfigurationError, FormatError, Text, ToolCall, ToolCalls
from callsieve._base.values import (
    decode_entities,
    decode_param,
    json_literal,
    parse_argument_object,
)
from callsieve._config.tools import read_tools, schemas_of
from callsieve._grammar.compiled import load_grammar
from callsieve._grammar.prefix import (
    end_chars,
    first_chars,
    growable_before_lookahead,
    max_width,
    reads_before,
)
from callsieve._scan.decide import decide
from callsieve._scan.fences import FenceState, FenceTracker, tail_after

# Compiled once here, so no property test pays for the compile inside its deadline.
GRAMMAR = load_grammar()


# ---------------------------------------------------------------------------- _values (§5)
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("-1.5e3", -1500.0),
        ("true", True),
        ("null", None),
        ("[1, 2]", [1, 2]),
        ('{"k": 1}', {"k": 1}),
        ("007", "007"),
        ("1.", "1."),
        ("[oops", "[oops"),
        ("", ""),
        ("hello", "hello"),
    ],
)
def test_json_literal(text: str, value: Any) -> None:
    assert json_literal(text) == value and type(json_literal(text)) is type(value)


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("a &lt; b &gt; c &amp; &quot;x&quot; &apos;y&apos;", "a < b > c & \"x\" 'y'"),
        ("&#65;&#x42;", "AB"),
        ("&nbsp; stays", "&nbsp; stays"),
        ("&#99999999;", "&#99999999;"),
        ("no entities", "no entities"),
    ],
)
def test_decode_entities(text: str, decoded: str) -> None:
    assert decode_entities(text) == decoded


@pytest.mark.parametrize(
    ("name", "parts", "string", "schema", "value"),
    [
        ("p", [(False, "  x &lt; y  ")], None, None, "x < y"),
        ("p", [(True, " raw ")], None, None, " raw "),
        ("p", [(True, "a"), (False, "\n"), (True, "b")], None, None, "a\nb"),  # (in order)
        ("p", [(False, "\n"), (True, "a"), (False, "\n")], None, None, "a"),
        ("p", [(False, " 12 ")], "true", None, " 12 "),
        ("p", [(False, "[1]")], "false", None, [1]),
        ("p", [(False, "not json")], "false", None, "not json"),
        ("p", [(False, "123")], None, "string", "123"),
        ("p", [(False, "123")], None, ["string", "null"], "123"),
        ("p", [(False, "<item>1</item><item>a</item>")], None, None, [1, "a"]),
        ("p", [(False, "<a>1</a><a>2</a><b>x</b>")], None, None, {"a": [1, 2], "b": "x"}),
        ("p", [(False, "<a><b>1</b></a>")], None, None, {"a": {"b": 1}}),
        ("p", [(False, "text <b>bold</b> more")], None, None, "text <b>bold</b> more"),
        ("p", [(True, "<b>urgent</b>")], None, None, "<b>urgent</b>"),
        ("p", [(True, "<x>1</x><y>2</y>")], None, None, {"x": 1, "y": 2}),
        ("content", [(True, "<x>1</x><y>2</y>")], None, None, "<x>1</x><y>2</y>"),
        ("p", [(False, "<a>\udcff</a>")], None, None, "<a>\udcff</a>"),
    ],
)
def test_decode_param(
    name: str, parts: list[tuple[bool, str]], string: str | None, schema: Any, value: Any
) -> None:
    assert decode_param(name, parts, string, schema) == value


@pytest.mark.parametrize(
    ("text", "obj"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ('```json\n{"a": 1}\n```', None),  # (fences: grammar)
        ("[1]", None),
        ("nope", None),
    ],
)
def test_parse_argument_object(text: str, obj: Any) -> None:
    assert parse_argument_object(text) == obj


# ---------------------------------------------------------------------------- _config.tools
def test_the_tool_reader_reads_every_shape_once() -> None:
    """One reader for every place that needs tool definitions (options, policy, assembler,
    prompt side): names, descriptions, schemas and the definitions as plain dicts."""
    openai = {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}
    tools = [
        openai,
        {"name": "b", "description": "B", "parameters": {"properties": {}}},
        {"name": "c", "input_schema": {"type": "object"}},
        {"name": "d", "parameters": None, "input_schema": {"type": "object"}},
        {"name": "e"},
    ]
    specs = read_tools(tools)
    assert [(t.name, t.description) for t in specs] == [
        ("a", ""),
        ("b", "B"),
        ("c", ""),
        ("d", ""),
        ("e", ""),
    ]
    assert specs[0].definition is openai  # (a plain dict is kept as given)
    assert schemas_of(specs) == {
        "a": {"type": "object"},
        "b": {"properties": {}},
        "c": {"type": "object"},
        "d": {"type": "object"},
        "e": {},
    }
    assert read_tools(None) == () and schemas_of(()) == {}
    assert schemas_of(read_tools([{"name": "f"}, {"name": "f", "parameters": {"x": 1}}])) == {
        "f": {"x": 1}
    }  # (a later definition of a name wins)


@pytest.mark.parametrize(
    ("tools", "where"),
    [
        (["junk"], "tools[0]"),
        ([{"name": "a"}, {"no": "name"}], "tools[1]"),
        ([{"function": "f"}], "tools[0]['function']"),
        ([{"name": "a", "description": 3}], "tools[0]['description']"),
        ([{"name": "a", "input_schema": []}], "tools[0]['input_schema']"),
    ],
)
def test_the_tool_reader_refuses_with_the_callers_error(tools: Any, where: str) -> None:
    for error in (ConfigurationError, FormatError):
        with pytest.raises(error, match=re.escape(where)) as info:
            read_tools(tools, error)
        assert info.value.expected  # (the shapes it takes)


# ---------------------------------------------------------------------------- _fences (§6)
def _walk(tracker: FenceTracker, chunks: list[str]) -> list[int]:
    """Feed ``chunks`` as the sieve does; return the absolute offsets of live tag leads."""
    found, tail, offset = [], "\n", 0
    for chunk in chunks:
        pos = 0
        while True:
            i = tracker.advance(chunk, pos, False, tail)
            if i >= len(chunk):
                break
            found.append(offset + i)
            pos = i + 1
        tail = tail_after(tail, chunk, len(chunk))
        offset += len(chunk)
    return found


@pytest.mark.parametrize(
    ("text", "live"),
    [
        ("a <b", [2]),
        ("`<x>` <y", [6]),
        ("```\n<x>\n```\n<y", [12]),
        ("~~~~\n```\n<x>\n```\n<y>\n~~~~\n<z", [26]),  # bare ``` lines inside ~~~~ are content
        ("   ```\n<x>\n```\n<y", [15]),
        ("    ```\n<x>", []),  # four spaces: not a fence; the run opens an inline span instead
        ("x ``` <a ``` <b", [13]),  # mid-line run: an inline span closed by an equal run
        ("`open\n\n<x", [7]),  # a blank line ends an unclosed span
        ("```\n<x>", []),  # a fence never closed
    ],
)
def test_fence_tracker_any_chunking(text: str, live: list[int]) -> None:
    assert _walk(FenceTracker("<"), [text]) == live
    assert _walk(FenceTracker("<"), list(text)) == live


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("a < b `code` c < d\n```py\n", FenceState.FENCE),
        ("x<y `a", FenceState.CODE),
        ("<a `<b` <c", FenceState.LIVE),
    ],
)
def test_fence_consume_reads_past_dead_tag_leads(text: str, state: FenceState) -> None:
    """``consume`` takes prose whose tag leads the sieve found dead (logged by its hot
    path): the tracker reads on after each, however many, in one call."""
    t = FenceTracker("<")
    t.consume(text, "\n")
    assert t.state is state


def test_fence_state_is_exposed() -> None:
    t = FenceTracker("<")
    t.advance("```py\n", 0, False, "\n")
    assert t.state is FenceState.FENCE and t.stack == [("`", 3)]


# ---------------------------------------------------------------------------- _prefix
@pytest.mark.parametrize(
    ("pattern", "first", "last", "width"),
    [
        (r"\]\]>", {"]"}, {">"}, 3),
        (r"<x(?=[ >])", {"<"}, {" ", ">"}, 2),
        (r"a?b", {"a", "b"}, {"b"}, 2),
        (r"[^a]", None, None, 1),
    ],
)
def test_regex_edges(pattern: str, first: Any, last: Any, width: int) -> None:
    assert first_chars(pattern) == first
    assert end_chars(pattern) == last
    assert max_width(pattern) == width


@pytest.mark.parametrize(
    ("pattern", "grows"),
    [
        (r"[^\s>]{1,9}(?=[\s>\u200b])", {"\u200b"}),  # greedy: cut after \u200b, it backs off
        (r"[^\s>]{1,9}?(?=[\s>\u200b])", set()),  # lazy: the shortest match either way
        (r"[^\s>]{3}(?=[\s>\u200b])", set()),  # a fixed count cannot back off
        (r"[^\s>]{1,9}(?=[\s>])", set()),  # the look-ahead takes nothing the repeat takes
        (r"(?P<v>\"[^\"]*\"|[a-z]{1,9}(?=[a>]))", {"a"}),  # found inside groups and branches
        (r"(?P<v>\S{1,64})(?=[\s>])", {">"}),  # the repeat ends a named group (issue 32)
        (r"(?:(?P<v>[a-z]{1,9})|\d)(?=[a>])", {"a"}),  # ... or a branch of a group
        (r"(?P<v>[a-z]{1,9}x)(?=[a>])", set()),  # the group ends on a fixed character
    ],
)
def test_growable_before_lookahead(pattern: str, grows: set[str]) -> None:
    assert growable_before_lookahead(pattern) == grows


@pytest.mark.parametrize(
    ("pattern", "before"),
    [
        (r"<\|?tool_calls>", False),
        (r"[^\s>]{1,9}(?=[\s>])", False),  # a look-ahead reads after the start only
        (r"x$", False),  # the end is the same for the rest of a text and the text itself
        (r"^<x>", True),
        (r"\A<x>", True),
        (r"\b<x>", True),
        (r"(?<=\n)<x>", True),
        (r"<x>(?!(?<=a)b)", True),  # found inside a look-ahead
        (r"(?:a|(?:b\B))+", True),  # and inside repeats, groups and branches
    ],
)
def test_reads_before(pattern: str, before: bool) -> None:
    """A terminal whose match may look before its start cannot be decided from the text
    after it: its parser states keep no remembered decisions."""
    assert reads_before(pattern) is before


# ---------------------------------------------------------------------------- _events
def test_events_compare_by_value_and_repr_their_fields() -> None:
    call = ToolCall("f", {"a": 1}, "call_1", "xml", ("missing_opener",))
    block = Block((0, 5), "xml", "complete", (), (), "<x/>!")
    assert ToolCalls((call,), block) == ToolCalls(
        (ToolCall("f", {"a": 1}, "call_1", "xml", ("missing_opener",)),), block
    )
    assert Text("a") != Text("b") and Text("a") != "a"
    assert repr(Text("a")) == "Text(text='a')"
    assert call.arguments == '{"a":1}'
    assert hash(Text("a")) == hash(Text("a"))


# ---------------------------------------------------------------------------- _grammar scanner
@given(st.text(alphabet="]>a\n", max_size=12), st.integers(0, 12), st.booleans())
def test_literal_stop_agrees_with_the_regex_stop(buf: str, p: int, final: bool) -> None:
    """A fixed stop (CDATA's ``]]>``) is found with str methods; the answer is the one the
    general regex search (stop, then longest tail) gives."""
    run = GRAMMAR.terminals["CDATA_RUN"]
    p = min(p, len(buf))
    assert run.find_stop is not run._find_stop  # the literal shortcut is on
    assert run.find_stop(buf, p, final) == run._find_stop(buf, p, final)
    stop, tail = run._find_stop(buf, 0, False)
    assert run.may_stop(buf) == (tail or stop < len(buf))


@pytest.mark.parametrize(
    ("name", "tail", "viable"),
    [
        ("INVOKE_OPEN", "<|DSML|inv", True),
        ("INVOKE_OPEN", "<|DSML|invoke", True),  # its look-ahead needs one more character
        ("INVOKE_OPEN", '<|DSML|invoke"', False),  # a quote: no prefix, no look-ahead
        ("NAME_ATTR", ' name="wri', True),
        ("NAME_ATTR", " name=x", True),  # a bare value, ended by its look-ahead
        ("CALLS_CLOSE", "</|DSML|par", True),  # "|DSML|par…" may be a prefix before tool_calls
        ("CDATA_OPEN", "<![CDX", False),
    ],
)
def test_prefix_closure_holds_a_cut_token(name: str, tail: str, viable: bool) -> None:
    """A bounded token cut by a chunk boundary: its prefix closure (look-ahead context
    included) says whether the tail may still become it."""
    term = load_grammar().terminals[name]
    assert term.pattern.match(tail) is None
    assert (term.viable(tail, 0) is not None) is viable


_SHELL_TEXT = (
    st.lists(
        st.sampled_from(
            [
                "<|DSML|invoke",
                "<|DSML|parameter",
                ' name="f"',
                " string='true'",
                ">",
                "/>",
                "<![CDATA[",
                "]]>",
                "</|DSML|parameter>",
                "</|DSML|invoke>",
                "</|DSML|tool_calls>",
                "<tool_calls>",
                "\n  ",
                "x",
                "<",
                "|",
                '"',
                "=",
            ]
        ),
        max_size=4,
    )
    .map("".join)
    .flatmap(lambda s: st.integers(0, len(s)).map(lambda k: s[:k]))
)


@given(st.data(), _SHELL_TEXT, st.integers(0, 40))
def test_remembered_decisions_equal_fresh_ones(data: st.DataObject, text: str, p: int) -> None:
    """The scanner remembers its decision for a short text per parser state; asked again at
    any offset of any text, the remembered answer is the one a fresh decision gives."""
    from callsieve._blocks.capture import Capture, CaptureContext, HeldTail
    from callsieve._blocks.lessons import Lessons

    spec = data.draw(st.sampled_from([s for s in GRAMMAR.states.values() if s.bounded]))
    cap = object.__new__(Capture)
    cap.ctx = CaptureContext(GRAMMAR, {}, Lessons(), None)
    cap.held = HeldTail()
    cap.spec = spec
    buf = data.draw(_SHELL_TEXT) + text
    p = min(p, len(buf) - 1)
    if p < 0:
        return
    for _ in range(2):  # the first may compute and store, the second finds
        got = cap._token_at(buf, p, False)
        want = decide(spec, buf, p, False)
        assert got[0] is want[0] and got[1] == want[1] and got[3:] == want[3:]
        assert cap.held.pending is want[4]
        if want[2] is not None:
            assert (got[2].type, str(got[2]), getattr(got[2], "groups", None)) == (
                want[2].type,
                str(want[2]),
                getattr(want[2], "groups", None),
            )


def test_remembered_decisions_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grammar's caches (scanner decisions, settled tag leads) are shared by every sieve
    of a grammar: past ``DECISION_LIMIT`` stored answers each starts again, and what they
    answer is unchanged."""
    import callsieve._grammar.compiled as grammar_module
    import callsieve._grammar.entry_tables as entry_tables_module
    from callsieve import Sieve

    monkeypatch.setattr(grammar_module, "DECISION_LIMIT", 5)
    monkeypatch.setattr(entry_tables_module, "DECISION_LIMIT", 5)
    sieve = Sieve()
    g = sieve._g
    for spec in g.states.values():
        spec.decisions.clear()
    g.openers.entry_tables["answer"].settlements.clear()
    g._remembered = 0
    block = (
        '<|DSML|tool_calls>\n<|DSML|invoke name="f">\n<|DSML|parameter name="a">'
        "<![CDATA[x]]></|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>"
    )
    prose = "".join(f"x<{c} " for c in "abcdefghij")  # ten different non-tag leads
    text = prose + block + " done"
    events = []
    most = 0
    for k in range(0, len(text), 3):
        events += sieve.feed(text[k : k + 3])
        most = max(
            most,
            sum(len(s.decisions) for s in g.states.values()),
            len(g.openers.entry_tables["answer"].settlements),
        )
    events += sieve.close()
    assert 0 < most <= 5
    assert "".join(e.text for e in events if isinstance(e, Text)) == prose + " done"
    assert [(c.name, c.input) for e in events if isinstance(e, ToolCalls) for c in e.calls] == [
        ("f", {"a": "x"})
    ]


_PROSE_TEXT = st.lists(
    st.sampled_from(
        [
            "<",
            "a",
            " ",
            "b",
            "<b",
            "<br>",
            "<|DSML|",
            "tool_calls",
            "`",
            "~",
            "=",
            "\n",
            "＜",
            "〈",
            "x<2",
            "<<EOF",
            "function",
            "|",
            ">",
        ]
    ),
    max_size=6,
).map("".join)


@given(_PROSE_TEXT, _PROSE_TEXT)
def test_remembered_lead_answers_equal_fresh_ones(before: str, text: str) -> None:
    """The sieve remembers what it found following the tag leads of a short prose text, by
    the text from its first lead on; with any text before that lead, the answer (and the
    automaton state left for a held lead) is the one a fresh walk gives."""
    from callsieve._grammar.compiled import load_grammar
    from callsieve._scan.fences import FenceTracker
    from callsieve._stream.entries import EntryFinder

    g = load_grammar()
    lead_search = FenceTracker(g.openers.lead_chars).live_lead.search
    finder = EntryFinder(g, g.openers.entry_tables["answer"], lead_search)
    whole = before + text
    found = lead_search(whole, len(before))
    if found is None:
        return
    for _ in range(2):  # the first may work it out and store it, the second finds it
        got = finder.settles(whole, found)
        fresh = EntryFinder(g, g.openers.entry_tables["answer"], lead_search)._follow(whole, found)
        assert got.at == fresh.at
        if got.at >= 0:
            assert got.state == fresh.state


# ---------------------------------------------------------------------- _argstream.escape
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                "a",
                '"',
                "\\",
                "\n",
                "\t",
                "\r",
                "\x00",
                "\x1f",
                "\b",
                "\f",
                "é",
                "\u2028",
                "\x7f",
                "\ud800",
            ]
        ),
        max_size=12,
    )
)
def test_argument_escape_is_json_dumps_without_the_quotes(text: str) -> None:
    from callsieve._blocks.argstream import escape

    assert escape(text) == json.dumps(text, ensure_ascii=False)[1:-1]


# ---------------------------------------------------------------------- _json_stream
_JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.dictionaries(st.text(max_size=4), _JSON_VALUES, max_size=4),
    st.booleans(),
    st.sampled_from([None, 1, 2]),
    st.lists(st.integers(1, 9), max_size=30),
)
def test_a_json_object_streams_as_its_compact_dumps(
    value: dict[str, Any], ascii_: bool, indent: int | None, sizes: list[int]
) -> None:
    """Written any way ``json.dumps`` writes it (escaped to ASCII or not, indented or not),
    fed in any pieces, a JSON object comes out as ``ToolCall.arguments`` writes it."""
    from callsieve._blocks.json_stream import JsonStream

    text = json.dumps(value, ensure_ascii=ascii_, indent=indent)
    stream, out, pos = JsonStream(), [], 0
    for size in [*sizes, len(text)]:
        out.append(stream.feed(text[pos : pos + size]))
        pos += size
    assert "".join(out) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))

"""SPEC §7 argument streaming (``early_emit="arguments"``): ``CallStarted`` when a call's name
is final, ``ArgumentsDelta`` fragments while its parameters arrive, ``CallFinished`` with
the call (whose ``arguments`` the fragments spell exactly), ``CallAborted`` when its block
fails; ``index`` counts the calls of the whole response.

The property runs generated replies at generated splits; the examples pin down when each
kind of value goes out (docs/streaming.md, "Argument streaming").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import check_argument_stream, chunk_at, stream_arguments
from hypothesis import given
from strategies import doc_and_chunks, soak_settings

from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Sieve,
    Text,
)

SETTINGS = soak_settings(120)  # (CALLSIEVE_EXAMPLES: a longer soak)


def streamed(chunks: list[str], **opts: Any) -> list[Any]:
    return stream_arguments(chunks, **opts)


def in_chunks(doc: str, size: int) -> list[str]:
    return chunk_at(doc, range(size, len(doc), size))


check_stream = check_argument_stream


# ---------------------------------------------------------------------------- the property
@SETTINGS
@given(doc_and_chunks())
def test_argument_streaming_holds_for_any_reply_and_split(case: tuple[str, list[str]]) -> None:
    doc, chunks = case
    check_stream(doc, streamed(chunks))


# ---------------------------------------------------------------------------- examples
DSML_CALL = (
    '<|DSML|tool_calls>\n<|DSML|invoke name="write_file">\n'
    '<|DSML|parameter name="path">src/app.py</|DSML|parameter>\n'
    '<|DSML|parameter name="content"><![CDATA[{body}]]></|DSML|parameter>\n'
    "</|DSML|invoke>\n</|DSML|tool_calls>"
)


def test_a_long_cdata_argument_streams_before_its_closing_tag() -> None:
    """The issue's figure: 4,096 characters of CDATA fed in 32-character chunks give more
    than 100 deltas before the parameter's closing tag arrives."""
    body = "".join(f'line {i}: print("x")\n' for i in range(400))[:4096]
    doc = DSML_CALL.format(body=body)
    close = doc.index("]]>")
    sieve = Sieve(early_emit="arguments")
    before = 0
    for k, chunk in enumerate(in_chunks(doc, 32)):
        events = sieve.feed(chunk)
        if (k + 1) * 32 <= close:
            before += sum(isinstance(e, ArgumentsDelta) for e in events)
    assert before > 100
    found = check_stream(doc, streamed(in_chunks(doc, 32)))
    assert found["finished"][0].input == {"path": "src/app.py", "content": body}


V32_CALL = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="write_file">\n'
    '<｜DSML｜parameter name="content" string="true">{body}{close}\n'
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)
#: Text that could begin the parameter's closing tag, or another tag, and does not: code's
#: ``<``, a cut-short closing tag, one without its ``>``, other tags of the dialect.
V32_TRAPS = (
    "if a<{i}: # 1 < 2, </｜DSML｜param, </｜DSML｜parameter x, <｜DSML｜parameter "
    '"q">, </｜DSML｜invoke>, </｜DSML｜function_calls>\n\tprint("x\\y")\n'
)
STREAM_LEADS = "<＜〈"  # (what every tag the dialect closes a parameter with begins with)
#: A ``<`` that a chunk boundary cuts is held until a character that could complete its tag
#: arrives, within the longest tag's width (docs/architecture.md, ``CUT_TAG``).
TAG_ROOM = 160


@pytest.mark.parametrize("close", ["</｜DSML｜parameter>", "</|DSML|parameter>"])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 32])
def test_a_raw_string_argument_streams_as_it_arrives(size: int, close: str) -> None:
    """DeepSeek V3.2's ``string="true"`` body streams each chunk as it arrives, escaped
    (the hot half of a CDATA string): after every chunk, what streamed is the start of
    the call's ``arguments`` and holds all of the body read so far but a tail that may
    begin the closing tag (at most ``TAG_ROOM`` long, a fraction of the body); text that
    only looks like a closing tag streams once it cannot be one, and the closing tag (an
    alias spelling too) never does; the deltas spell the arguments exactly, no abort."""
    body = "".join(V32_TRAPS.format(i=i) for i in range(12))
    assert len(body) > 5 * TAG_ROOM
    doc = V32_CALL.format(body=body, close=close)
    at, end = doc.index(body), doc.index(body) + len(body)
    found = check_stream(doc, streamed(in_chunks(doc, size)))
    assert found["aborted"] == []
    (call,) = found["finished"]
    assert call.input == {"content": body}
    head = '{"content":"'
    assert call.arguments.startswith(head)
    sieve = Sieve(early_emit="arguments")
    sent = ""
    for k, chunk in enumerate(in_chunks(doc, size)):
        sent += "".join(e.delta for e in sieve.feed(chunk) if isinstance(e, ArgumentsDelta))
        assert call.arguments.startswith(sent)
        fed = min(len(doc), (k + 1) * size)
        if at < fed <= end:  # the body is being read: all of it streamed but a held tail
            streamed_body = json.loads(f'"{sent[len(head) :]}"') if len(sent) > len(head) else ""
            held = body[: fed - at][len(streamed_body) :]
            assert body.startswith(streamed_body)
            assert held == "" or (held[0] in STREAM_LEADS and len(held) <= TAG_ROOM), held
    assert (
        sent + "".join(e.delta for e in sieve.close() if isinstance(e, ArgumentsDelta))
        == call.arguments
    )


@pytest.mark.parametrize("body", ['<parameter name="a">1</parameter>', '{"a": 1}'])
def test_the_call_starts_once_its_name_is_final(body: str) -> None:
    """In markup, with the invoke tag's ``>`` (a terminal that can belong to the arguments:
    the grammar says so, ``TerminalRoles.arg_terminals``) — once the scanner knows which
    ``>`` it is: an invoke's body is parameters or a JSON object (SPEC §4), so the ``>`` is
    settled by the first character after it that is not white space (``<`` or ``{``)."""
    doc = f'<tool_calls><invoke name="f">\n {body}</invoke></tool_calls>'
    at = doc.index(">", doc.index("<invoke"))
    sieve = Sieve(early_emit="arguments", id_factory=lambda: "call_0")
    assert not any(isinstance(e, CallStarted) for e in sieve.feed(doc[:at]))
    assert sieve.feed(doc[at : at + 3]) == []
    assert sieve.feed(doc[at + 3])[:1] == [CallStarted(0, "call_0", "f")]


def test_a_call_without_arguments_starts_and_finishes_at_its_end() -> None:
    events = streamed(['<tool_calls><invoke name="f"/>', "</tool_calls>"])
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["CallStarted", "ArgumentsDelta", "CallFinished", "ToolCalls", "ToolCalls"]


def deltas_before_close(doc: str, **opts: Any) -> str:
    """What went out for a call before its parameter's closing tag (fed per character)."""
    stop = doc.index("</parameter>")
    sieve = Sieve(early_emit="arguments", **opts)
    out = ""
    for ch in doc[:stop]:
        out += "".join(e.delta for e in sieve.feed(ch) if isinstance(e, ArgumentsDelta))
    return out


def one(body: str, name: str = "p", attrs: str = "") -> str:
    return (
        f'<tool_calls><invoke name="f"><parameter name="{name}"{attrs}>{body}'
        "</parameter></invoke></tool_calls>"
    )


def test_values_go_out_when_they_are_decided() -> None:
    # A plain body that is a string streams, trimmed, its entities decoded.
    assert deltas_before_close(one("  say &lt;hi&gt; now  ")) == '{"p":"say <hi> now'
    # A body that may still be a number or a literal waits for its end ...
    assert deltas_before_close(one("42")) == ""
    assert deltas_before_close(one("true")) == ""
    # ... and streams once it cannot be one.
    assert deltas_before_close(one("2024 was a year")) == '{"p":"2024 was a year'
    # CDATA streams verbatim unless it may be structured XML.
    assert deltas_before_close(one('<![CDATA[ a "q"\n]]>')) == '{"p":" a \\"q\\"\\n'
    assert deltas_before_close(one("<![CDATA[<a>1</a><b>2</b>]]>")) == ""
    assert (
        deltas_before_close(one("<![CDATA[<a>1</a>]]>", name="content")) == '{"content":"<a>1</a>'
    )
    # string="true" keeps the raw body; string="false" is JSON, complete at its end.
    assert deltas_before_close(one(" x ", attrs=' string="true"')) == '{"p":" x '
    assert deltas_before_close(one("[1, 2]", attrs=' string="false"')) == ""


def test_a_schema_type_string_streams_a_plain_body_at_once() -> None:
    tools = [{"name": "f", "parameters": {"properties": {"p": {"type": "string"}}}}]
    assert deltas_before_close(one("42", name="p"), tools=tools) == '{"p":"42'
    found = check_stream(one("42"), streamed(list(one("42")), tools=tools), tools=tools)
    assert found["finished"][0].input == {"p": "42"}


@pytest.mark.parametrize("value", ["\n&lt; a ", " ]]> b", "\tc\n"])
def test_a_raw_string_value_streams_as_written(value: str) -> None:
    """A raw value under a schema type ``string`` streams as ``decode_raw`` reads it: not
    trimmed, entities kept. glm45 writes white space between a key and its value's tag; it
    is not the body's (it once opened a plain body, and the call was sent again)."""
    tools = [{"name": "f", "parameters": {"properties": {"p": {"type": "string"}}}}]
    doc = f"<tool_call>f\n<arg_key>p</arg_key>\n<arg_value>{value}</arg_value>\n</tool_call>"
    sieve = Sieve(tools, dialects=("glm45",), early_emit="arguments")
    sent = ""
    for ch in doc[: doc.index("</arg_value>")]:
        sent += "".join(e.delta for e in sieve.feed(ch) if isinstance(e, ArgumentsDelta))
    assert sent == '{"p":' + json.dumps(value)[:-1]
    found = check_stream(
        doc, streamed(list(doc), tools=tools, dialects=("glm45",)), tools=tools, dialects=("glm45",)
    )
    assert found["aborted"] == []
    assert found["finished"][0].input == {"p": value}


def test_indexes_count_the_calls_of_the_whole_response() -> None:
    block = (
        '<tool_calls><invoke name="a"/><invoke name="b"><parameter name="x">1</parameter>'
        "</invoke></tool_calls>"
    )
    doc = f"one {block} two {block} three"
    events = streamed(list(doc))
    found = check_stream(doc, events)
    started = [(e.index, e.name) for e in events if isinstance(e, CallStarted)]
    assert started == [(0, "a"), (1, "b"), (2, "a"), (3, "b")]
    assert [c.arguments for c in found["finished"]] == ["{}", '{"x":1}'] * 2


def test_a_block_that_fails_aborts_its_started_call() -> None:
    doc = '<tool_calls><invoke name="a"/><invoke name="b"><parameter name="x"><![CDATA[never closed'
    events = streamed(in_chunks(doc, 5))
    found = check_stream(doc, events)
    assert [c.name for c in found["finished"]] == ["a"]
    assert found["aborted"] == [1]
    # The aborted call's text is released, as with early_emit="invoke".
    assert (
        "".join(e.text for e in events if isinstance(e, Text))
        == doc[doc.index('<invoke name="b"') :]
    )


def test_a_repeated_parameter_name_sends_the_call_again_whole() -> None:
    """Its values collect into an array where the first one already went out as a
    string: the started call is aborted and the call sent again under a new index."""
    doc = one('<![CDATA[first]]></parameter><parameter name="p"><![CDATA[second]]>', name="p")
    events = streamed(list(doc))
    found = check_stream(doc, events)
    assert found["aborted"] == [0]
    assert [json.loads(c.arguments) for c in found["finished"]] == [{"p": ["first", "second"]}]
    assert [e.index for e in events if isinstance(e, CallFinished)] == [1]


def test_a_block_missing_its_opener_streams_nothing_before_its_closing_wrapper() -> None:
    doc = '<invoke name="f"><parameter name="p"><![CDATA[abc]]></parameter></invoke></tool_calls>'
    sieve = Sieve(early_emit="arguments")
    assert sieve.feed(doc[: -len("</tool_calls>")]) == []
    events = sieve.feed(doc[-len("</tool_calls>") :]) + sieve.close()
    assert [type(e).__name__ for e in events] == [
        "CallStarted",
        "ArgumentsDelta",
        "CallFinished",
        "ToolCalls",
    ]
    check_stream(doc, streamed(list(doc)))


def test_deepseek_native_arguments_stream_as_compact_json() -> None:
    """The JSON of a native call streams as its ``arguments`` write it (white space dropped;
    a number once it ends), in V3's fenced form and V3.1's bare one."""
    v3 = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get\n```json\n"
        '{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    v31 = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get<｜tool▁sep｜>"
        '{"city": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    for doc in (v3, v31):
        events = streamed(list(doc))
        found = check_stream(doc, events)
        assert [e.name for e in events if isinstance(e, CallStarted)] == ["get"]
        assert found["deltas"] == {0: '{"city":"Paris","days":3}'}
        deltas = [e for e in events if isinstance(e, ArgumentsDelta)]
        assert len(deltas) > 10 and deltas[0].delta == "{"


def test_a_cdata_the_repair_closes_streamed_only_what_no_cut_can_change() -> None:
    """A CDATA string streams up to the first text where a tag that could close its
    parameter matches or may begin; the rest waits for ``]]>``. If the input ends first,
    the loose-CDATA repair cuts the CDATA at such a tag (SPEC §4.3), so what streamed is
    the start of the value: the call finishes, nothing is sent again."""
    doc = one("<![CDATA[abc", name="p")  # ... </parameter></invoke></tool_calls>, no ]]>
    for chunks in (list(doc), [doc], in_chunks(doc, 4)):
        events = streamed(chunks)
        found = check_stream(doc, events)
        assert found["aborted"] == [] and [c.input for c in found["finished"]] == [{"p": "abc"}]
        assert found["deltas"] == {0: '{"p":"abc"}'}
    # What waits: from a tag that could close the parameter (all of it once one is whole) ...
    held = one("<![CDATA[a < b </para and </div> then </parameter> x y", name="p")
    assert deltas_before_close(held) == '{"p":"a < b </para and </div> then '
    # ... to its "]]>": then it is content after all, and goes out.
    closed = one("<![CDATA[x </parameter> y]]>", name="p")
    events = streamed(list(closed))
    assert check_stream(closed, events)["finished"][0].input == {"p": "x </parameter> y"}
    deltas = [e.delta for e in events if isinstance(e, ArgumentsDelta)]
    assert "".join(deltas[:3]) == '{"p":"x ' and deltas[3] == "</parameter> y"


# ------------------------------------------------------------- what streamed stays the start
def test_text_before_cdata_streams_in_the_order_written() -> None:
    """SPEC §5: plain text beside CDATA keeps its place, so the text that streamed before a
    CDATA is the start of the value: no call is sent again."""
    doc = one("see <![CDATA[x < y]]> then")
    found = check_stream(doc, streamed(list(doc)))
    assert found["aborted"] == [] and found["finished"][0].input == {"p": "see x < y then"}
    # (" then" may still be the body's trailing white space and text: out with the parameter)
    assert deltas_before_close(doc) == '{"p":"see x < y'
    raw = one(" a &amp; <![CDATA[b]]>", attrs=' string="true"')
    assert deltas_before_close(raw) == '{"p":" a &amp; b'
    assert check_stream(raw, streamed(in_chunks(raw, 3)))["aborted"] == []


def test_a_list_parameter_and_what_follows_it_go_out_with_the_call() -> None:
    """A parameter the schema types as an array may repeat (one parameter per item): its
    value, and the place of the parameters after it, are known only when the call ends."""
    tools = [{"name": "f", "parameters": {"properties": {"p": {"type": "array"}}}}]
    doc = (
        '<tool_calls><invoke name="f"><parameter name="q">1</parameter>'
        '<parameter name="p">a</parameter><parameter name="r">x</parameter>'
        '<parameter name="p">b</parameter></invoke></tool_calls>'
    )
    for chunks in (list(doc), [doc], in_chunks(doc, 7)):
        events = streamed(chunks, tools=tools)
        found = check_stream(doc, events, tools=tools)
        assert found["aborted"] == []
        assert found["finished"][0].input == {"q": 1, "p": ["a", "b"], "r": "x"}
    deltas = [e.delta for e in streamed(list(doc), tools=tools) if isinstance(e, ArgumentsDelta)]
    assert deltas == ['{"q":1', ',"p":["a","b"],"r":"x"}']


def test_under_a_schema_policy_a_value_that_breaks_it_is_not_sent() -> None:
    """SPEC §9.3: a typed value goes out when it is complete; one that breaks its property's
    schema dooms the call, so nothing more of it goes out before the ``CallAborted``."""
    tools = [
        {
            "name": "w",
            "parameters": {
                "type": "object",
                "$defs": {"n": {"type": "integer", "minimum": 1}},
                "properties": {"city": {"type": "string"}, "days": {"$ref": "#/$defs/n"}},
            },
        }
    ]
    doc = (
        '<tool_calls><invoke name="w"><parameter name="city">Paris</parameter>'
        '<parameter name="days">0</parameter><parameter name="x">y</parameter>'
        "</invoke></tool_calls>"
    )
    for chunks in (list(doc), [doc]):
        events = streamed(chunks, tools=tools, policy="schema")
        check_stream(doc, events, tools=tools, policy="schema")
        sent = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
        assert sent == '{"city":"Paris"'
        assert [(e.index, e.reason) for e in events if isinstance(e, CallAborted)] == [
            (0, "rejected")
        ]
    # A value its schema accepts goes out whole, coerced, and the call finishes.
    good = doc.replace(">0<", ">3<")
    found = check_stream(good, streamed(list(good), tools=tools, policy="schema"), tools=tools)
    assert found["aborted"] == [] and found["finished"][0].input["days"] == 3


# ---------------------------------------------------------------- JSON envelopes
ENVELOPES = [
    (
        "hermes",
        '<tool_call>\n{"name": "write", "arguments": {"path": "a.txt", "body": "%s"}}\n</tool_call>',
    ),
    ("llama3_json", '{"name": "write", "parameters": {"path": "a.txt", "body": "%s"}}'),
    ("mistral", '[TOOL_CALLS][{"name": "write", "arguments": {"path": "a.txt", "body": "%s"}}]'),
    ("json", '{"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "body": "%s"}}]}'),
    ("tool_use", '{"type": "tool_use", "name": "write", "input": {"path": "a.txt", "body": "%s"}}'),
    (
        "json",
        (
            '[{"id": "call_1", "type": "function", "function": {"name": "write", "arguments": '
            '{"path": "a.txt", "body": "%s"}}}]'
        ),
    ),
]


@pytest.mark.parametrize(
    ("dialect", "shape"), ENVELOPES, ids=[f"{d}-{k}" for k, (d, _) in enumerate(ENVELOPES)]
)
def test_an_envelopes_arguments_stream_once_its_name_has_closed(dialect: str, shape: str) -> None:
    """A call whose name is inside its JSON (``call_json`` with no name, ``call_envelope``):
    ``CallStarted`` when the name's string closes, then the arguments as they arrive — long
    before the object closes."""
    body = "line\\n" * 2000
    doc = shape % body
    sieve = Sieve(dialects=(dialect,), early_emit="arguments")
    events: list[Any] = []
    before_end: list[Any] = []
    for k, c in enumerate(in_chunks(doc, 5)):
        events += sieve.feed(c)
        if k * 5 < len(doc) // 2:
            before_end = list(events)
    events += sieve.close()
    assert any(isinstance(e, CallStarted) for e in before_end)
    streamed = "".join(e.delta for e in before_end if isinstance(e, ArgumentsDelta))
    assert len(streamed) > len(body) // 3, streamed[:80]
    found = check_stream(doc, events, dialects=(dialect,))
    assert [c.input for c in found["finished"]] == [{"path": "a.txt", "body": "line\n" * 2000}]
    assert found["aborted"] == []


def test_an_envelope_whose_arguments_come_first_sends_them_whole() -> None:
    doc = '{"tool_calls": [{"arguments": {"a": 1}, "name": "f"}]}'
    events = streamed(list(doc), dialects=("json",))
    deltas = [e.delta for e in events if isinstance(e, ArgumentsDelta)]
    assert deltas == ['{"a":1}']
    check_stream(doc, events, dialects=("json",))


#: A JSON string with every kind of escape: those ``json.dumps`` writes alike (``\"``,
#: ``\\``, ``\n``, ``\t``, ``\b``, ``\f``, ``\r``) and those it does not (``\/``, ``\u``,
#: a surrogate pair, a lone high surrogate), between plain characters.
ESCAPED = 'a\\"b\\\\c\\/d\\ne\\tf\\bg\\fh\\ri\\u00e9j\\ud83d\\ude00k\\ud800l ' * 40
JSON_BODIES = [
    ("hermes", '<tool_call>\n{"name": "write", "arguments": {"body": "%s", "n": 1}}\n</tool_call>'),
    (
        "deepseek_native",
        (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write<｜tool▁sep｜>"
            '{"body": "%s", "n": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
        ),
    ),
]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("dialect", "shape"), JSON_BODIES, ids=[d for d, _ in JSON_BODIES])
def test_a_json_strings_escapes_stream_exactly_in_chunks_of_any_size(
    dialect: str, shape: str, size: int
) -> None:
    """A JSON body's string streams through the sieve's hot half: a chunk of plain characters
    and escapes that ``json.dumps`` writes alike goes out as it is; one with a quote, a cut
    escape, ``\\/``, ``\\u`` or a surrogate half waiting is read in full. Whatever the chunk
    size, the deltas spell the arguments and nothing is sent again."""
    doc = shape % ESCAPED
    events = streamed(in_chunks(doc, size), dialects=(dialect,))
    found = check_stream(doc, events, dialects=(dialect,))
    assert found["aborted"] == []
    assert [c.input for c in found["finished"]] == [
        {"body": json.loads('"' + ESCAPED + '"'), "n": 1}
    ]


def test_an_envelopes_value_the_schema_may_coerce_goes_out_coerced_when_it_ends() -> None:
    """As in a JSON body: an envelope's top-level argument that the tool's schema types
    (``"3"`` under ``integer``) is held until it ends and goes out as the call holds it, so
    nothing is sent again; a string argument beside it streams as it arrives."""
    tools = [
        {
            "name": "get",
            "parameters": {"properties": {"days": {"type": "integer"}, "city": {"type": "string"}}},
        }
    ]
    doc = (
        '<tool_call>\n{"name": "get", "arguments": {"city": "Paris is a long name",'
        ' "days": "3"}}\n</tool_call>'
    )
    for chunks in (list(doc), in_chunks(doc, 3), [doc]):
        events = streamed(chunks, dialects=("hermes",), tools=tools)
        found = check_stream(doc, events, dialects=("hermes",), tools=tools)
        assert found["aborted"] == []
        assert found["deltas"] == {0: '{"city":"Paris is a long name","days":3}'}
    events = streamed(list(doc), dialects=("hermes",), tools=tools)
    deltas = [e.delta for e in events if isinstance(e, ArgumentsDelta)]
    assert ":3" in deltas  # (held to its end, then out at once, coerced)


def test_an_envelopes_repeated_key_stops_its_stream_and_says_why() -> None:
    """A key the envelope's arguments already have: the last value wins at the first one's
    place, which went out, so the call is sent again whole, as ``repeated_key``."""
    doc = '<tool_call>\n{"name": "f", "arguments": {"a": "x", "a": "y"}}\n</tool_call>'
    for chunks in (list(doc), [doc]):
        events = streamed(chunks, dialects=("hermes",))
        found = check_stream(doc, events, dialects=("hermes",))
        assert [c.input for c in found["finished"]] == [{"a": "y"}]
        reasons = [e.reason for e in events if isinstance(e, CallAborted)]
        assert reasons == ["repeated_key"] or (reasons == [] and chunks == [doc])

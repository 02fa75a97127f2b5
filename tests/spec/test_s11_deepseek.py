"""SPEC §11 DeepSeek native protocol helpers (``callsieve.deepseek``): a constant for every
marker, the writers, and the lenient reader ("succeeds when name and JSON block are complete
even if end markers have not arrived; returns calls or a failure reason").

The round trip: what the ``format_*`` helpers write, ``try_parse_calls``, ``parse()`` and
``Sieve`` (every chunking, ``run_all_ways``) read back as the same calls. The docstring
examples of the modules are run here too.
"""

from __future__ import annotations

import doctest
import importlib
import json
from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways
from hypothesis import given
from hypothesis import strategies as st
from strategies import soak_settings
from test_s16_prompt import CALLS

from callsieve import FormatError, parse
from callsieve import deepseek as ds

#: The markers as SPEC §11 spells them.
SPEC_MARKERS = {
    "USER": "<｜User｜>",
    "ASSISTANT": "<｜Assistant｜>",
    "TOOL_CALLS_BEGIN": "<｜tool▁calls▁begin｜>",
    "TOOL_CALLS_END": "<｜tool▁calls▁end｜>",
    "TOOL_CALL_BEGIN": "<｜tool▁call▁begin｜>",
    "TOOL_CALL_END": "<｜tool▁call▁end｜>",
    "TOOL_SEP": "<｜tool▁sep｜>",
    "TOOL_OUTPUTS_BEGIN": "<｜tool▁outputs▁begin｜>",
    "TOOL_OUTPUTS_END": "<｜tool▁outputs▁end｜>",
    "TOOL_OUTPUT_BEGIN": "<｜tool▁output▁begin｜>",
    "TOOL_OUTPUT_END": "<｜tool▁output▁end｜>",
    "BEGIN_OF_SENTENCE": "<｜begin▁of▁sentence｜>",
    "END_OF_SENTENCE": "<｜end▁of▁sentence｜>",
}


@pytest.mark.parametrize(("name", "spelling"), SPEC_MARKERS.items())
def test_every_marker_is_a_constant(name: str, spelling: str) -> None:
    assert getattr(ds, name) == spelling
    assert spelling in ds.ALL_MARKERS


def test_the_plain_text_pieces() -> None:
    assert ds.FUNCTION == "function"
    assert ds.JSON_FENCE == "```json\n" and ds.JSON_FENCE_END == "\n```"
    assert len(ds.ALL_MARKERS) == len(set(ds.ALL_MARKERS)) == len(SPEC_MARKERS)


@pytest.mark.parametrize(
    "module", ["callsieve.deepseek", "callsieve._blocks.native_read", "callsieve.prompt"]
)
def test_the_docstring_examples_hold(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_the_header_is_what_follows_the_call_begin_marker() -> None:
    """SPEC §11: exactly ``function<｜tool▁sep｜>NAME\\n```json\\n`` — neither marker, which
    the model writes as its signal; ``format_call_prefix`` is the whole prefix of a call."""
    assert ds.format_call_header("get_weather") == ("function<｜tool▁sep｜>get_weather\n```json\n")
    assert ds.format_call_prefix("get_weather") == (
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    )
    assert ds.format_call_tail(last=False) == "\n```<｜tool▁call▁end｜>\n"
    assert ds.format_call_tail(last=True) == "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    text = (
        ds.TOOL_CALLS_BEGIN
        + ds.TOOL_CALL_BEGIN
        + ds.format_call_header("f")
        + '{"a": 1}'
        + ds.format_call_tail(True)
    )
    assert text == ds.format_calls([("f", {"a": 1})])
    assert canon_calls(run_all_ways(text).calls) == [("f", canon_value({"a": 1}))]


def test_results() -> None:
    assert ds.format_result("ok") == "<｜tool▁output▁begin｜>ok<｜tool▁output▁end｜>"
    assert ds.format_results(["a", "b"]) == (
        "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>a<｜tool▁output▁end｜>\n"
        "<｜tool▁output▁begin｜>b<｜tool▁output▁end｜><｜tool▁outputs▁end｜>"
    )
    assert ds.format_results([]) == ""


def _want(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(n, canon_value(i)) for n, i in calls]


@soak_settings(150)
@given(calls=CALLS)
def test_format_round_trips_through_every_reader(calls: list[tuple[str, dict[str, Any]]]) -> None:
    text = ds.format_calls(calls)
    read = ds.try_parse_calls(text)
    assert read and read.reason == "" and read.end == len(text)
    assert canon_calls(read.calls) == _want(calls)
    assert canon_calls(parse(text).calls) == _want(calls)


@soak_settings(10)
@given(calls=CALLS)
def test_format_round_trips_through_the_sieve(calls: list[tuple[str, dict[str, Any]]]) -> None:
    text = "Checking.\n" + ds.format_calls(calls)
    assert canon_calls(run_all_ways(text).calls) == _want(calls)


CALL_A = ("get_weather", {"city": "Hangzhou", "q": "```"})
CALL_B = ("browser::search", {"query": "a\nb"})


def test_a_call_counts_once_its_name_and_json_are_complete() -> None:
    text = ds.format_calls([CALL_A, CALL_B])
    first_done = text.index(ds.TOOL_CALL_END)  # the closing fence has arrived, no end marker
    seen = []
    for k in range(len(text) + 1):
        read = ds.try_parse_calls(text[:k])
        assert bool(read) == (read.reason == "")
        seen.append(len(read.calls))
        if k >= first_done:
            assert canon_calls(read.calls)[:1] == _want([CALL_A])
        else:
            assert not read.calls and read.reason
    assert seen == sorted(seen) and seen[-1] == 2


def test_every_block_is_read() -> None:
    text = ds.format_calls([CALL_A]) + "\nand then\n" + ds.format_calls([CALL_B])
    read = ds.try_parse_calls(text)
    assert canon_calls(read.calls) == _want([CALL_A, CALL_B]) == canon_calls(parse(text).calls)
    assert read.end == len(text)


def test_v31_bare_json_counts_when_its_object_closes() -> None:
    text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": {"b": [1, "}"]}}'
    assert ds.try_parse_calls(text[:-1]).reason
    assert ds.try_parse_calls(text).calls[0].input == {"a": {"b": [1, "}"]}}
    fenced = '<｜tool▁call▁begin｜>f<｜tool▁sep｜>```json\n{"a": 1}\n```'
    assert ds.try_parse_calls(fenced).calls[0].input == {"a": 1}


MALFORMED = [
    '<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1,]}<｜tool▁call▁end｜>',
    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": }\n```',
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n[1, 2]\n```",
    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"x": NaN}\n```',
    "<｜tool▁call▁begin｜>f<｜tool▁sep｜>" + "[" * 100_000 + "<｜tool▁call▁end｜>",
    '<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁call▁begin｜>""<｜tool▁sep｜>{}',
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_arguments_give_a_reason(text: str) -> None:
    read = ds.try_parse_calls(text)
    assert not read and read.calls == ()
    assert "call 1 (f)" in read.reason or "call 2 has an empty name" in read.reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no markers here", "no tool call marker"),
        ("<｜tool▁calls▁begin｜>", "no call begins"),
        ("<｜tool▁call▁begin｜>get_wea", "name of the first call is not complete"),
        ('<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": "unterminated', "not complete"),
    ],
)
def test_nothing_read_gives_a_reason(text: str, reason: str) -> None:
    read = ds.try_parse_calls(text)
    assert read.calls == () and reason in read.reason


@soak_settings(300)
@given(
    text=st.text(
        st.sampled_from(list('<｜|>▁_ tool calls begin end sep function{}[]":1`\njson'))
        | st.characters(),
        max_size=80,
    )
)
def test_the_readers_never_raise(text: str) -> None:
    read = ds.try_parse_calls(text)
    assert isinstance(read.reason, str) and (bool(read) == (read.reason == ""))
    for call in read.calls:
        json.dumps(call.input)
    ds.has_tool_call_signal(text)
    ds.has_call_terminator(text)
    found = ds.try_extract_tool_name(text)
    assert found is None or (found[0] and text.endswith(found[1]))


def test_signals_take_every_alias_spelling() -> None:
    for text in ("<|tool▁calls▁begin|>", "<｜tool_calls_begin｜>", "<|tool call begin|>"):
        assert ds.has_tool_call_signal("Sure. " + text)
    assert not ds.has_tool_call_signal("tool calls begin")
    assert ds.has_call_terminator("x<|tool_call_end|>") and ds.has_call_terminator(
        ds.TOOL_CALLS_END
    )
    assert not ds.has_call_terminator(ds.TOOL_CALL_BEGIN)


def test_extract_tool_name() -> None:
    """``(name, after_marker)``: the text after the call-begin marker, so a caller writes only
    what the model has not (SPEC §11)."""
    header = ds.format_call_header("get_weather")
    marker = "x" + ds.TOOL_CALLS_BEGIN + ds.TOOL_CALL_BEGIN
    for k in range(len(header) + 1):  # the model stopped anywhere in the header
        found = ds.try_extract_tool_name(marker + header[:k])
        complete = "get_weather\n" in header[:k]  # V3: the name's line has ended
        assert (found is not None) == complete, header[:k]
        if found is not None:
            name, after = found
            assert (name, after) == ("get_weather", header[:k])
            assert after + ds.format_call_header(name)[len(after) :] == header
    beyond = header + '{"city": "Hangzhou"}'  # the model wrote past the header
    assert ds.try_extract_tool_name(marker + beyond) == ("get_weather", beyond)
    assert ds.try_extract_tool_name(marker + "function<｜tool▁sep｜>get_wea") is None
    assert ds.try_extract_tool_name(marker + "function<｜tool▁sep｜>two words\n") is None
    v31 = "<｜tool▁call▁begin｜>browser::search<｜tool▁sep｜>"
    assert ds.try_extract_tool_name(v31 + "{") == (
        "browser::search",
        "browser::search<｜tool▁sep｜>{",
    )
    assert ds.try_extract_tool_name("<｜tool▁call▁begin｜>get") is None
    assert ds.try_extract_tool_name("no marker") is None


def test_parse_argument_object() -> None:
    assert ds.parse_argument_object("") == {}
    assert ds.parse_argument_object('  {"a": [1]} ') == {"a": [1]}
    assert ds.parse_argument_object('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(FormatError) as info:
        ds.parse_argument_object('{"a": 1,,}')
    assert info.value.offset == 8
    with pytest.raises(FormatError):
        ds.parse_argument_object("[1]")


def test_names_the_grammar_cannot_read_back_are_refused() -> None:
    for bad in ("", "two words", "a\nb", "x<y", "{f}"):
        with pytest.raises(FormatError):
            ds.format_call_header(bad)
    with pytest.raises(FormatError):
        ds.format_arguments({"x": float("inf")})

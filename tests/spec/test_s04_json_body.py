"""SPEC §4: "An invoke's body is either parameters or one JSON object holding its arguments
(``<invoke name="f">{"a": 1}</invoke>``, as vLLM and SGLang accept); a body that is neither
fails the block." In every DSML and XML dialect of the built-in grammar, whole, per character
and at random splits (``check`` / ``run_all_ways``), and under argument streaming (§7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import check, run_all_ways, stream, table
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import JSON_VALUES, NAMES

from callsieve import ArgumentsDelta, CallFinished, CallStarted, Sieve, parse

# (wrapper opener, wrapper closer, tag prefix, closing-tag prefix) per markup dialect
WRAPPERS = {
    "dsml": ("<|DSML|tool_calls>", "</|DSML|tool_calls>", "<|DSML|", "</|DSML|"),
    "dsml_v4": ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", "<｜DSML｜", "</｜DSML｜"),
    "dsml_v32": (
        "<｜DSML｜function_calls>",
        "</｜DSML｜function_calls>",
        "<｜DSML｜",
        "</｜DSML｜",
    ),
    "dsml_v41": ("<｜DSML｜ calls>", "</｜DSML｜ calls>", "<｜DSML｜ ", "</｜DSML｜ "),
    "xml": ("<tool_calls>", "</tool_calls>", "<", "</"),
}


def block(dialect: str, *bodies: tuple[str, str]) -> str:
    """A block of ``dialect`` with one invoke per ``(name, body)``."""
    open_, close, lt, lts = WRAPPERS[dialect]
    invokes = "".join(f'\n{lt}invoke name="{n}">{b}{lts}invoke>' for n, b in bodies)
    return f"{open_}{invokes}\n{close}"


BODY_ROWS = [
    ("compact", '{"city":"SF"}', {"city": "SF"}),
    ("spaced-lines", '\n{"city": "SF"}\n', {"city": "SF"}),
    ("indented", '\n  {\n    "city": "SF",\n    "days": 3\n  }\n', {"city": "SF", "days": 3}),
    ("empty-is-zero-arguments", "{}", {}),
    ("empty-spaced", " \n {} \n ", {}),
    (
        "nested",
        '{"a": {"b": [1, {"c": null}], "d": true}, "e": -2.5e3}',
        {"a": {"b": [1, {"c": None}], "d": True}, "e": -2500.0},
    ),
    # the tag names the call: a "name" key is an argument like any other
    (
        "name-key-is-an-argument",
        '{"name": "g", "arguments": {"x": 1}}',
        {"name": "g", "arguments": {"x": 1}},
    ),
    (
        "closing-tags-in-strings",
        '{"s": "</invoke></tool_calls></｜DSML｜invoke>}{"}',
        {"s": "</invoke></tool_calls></｜DSML｜invoke>}{"},
    ),
    ("escapes", '{"s": "a\\"b\\\\c\\u00e9\\n"}', {"s": 'a"b\\cé\n'}),
    ("unicode", '{"城市": "杭州", "emoji": "😀"}', {"城市": "杭州", "emoji": "😀"}),
]


@pytest.mark.parametrize("dialect", sorted(WRAPPERS))
@table(BODY_ROWS)
def test_s4_a_json_object_is_the_invokes_arguments(row: tuple[Any, ...], dialect: str) -> None:
    body, args = row
    text = block(dialect, ("get_weather", body))
    r = check(f"Sure.\n{text}\nDone.", "Sure.\n\nDone.", [("get_weather", args)])
    assert [b.dialect for b in r.blocks] == [dialect]


@pytest.mark.parametrize("dialect", sorted(WRAPPERS))
def test_s4_json_and_parameter_invokes_mix_in_one_block(dialect: str) -> None:
    _, _, lt, lts = WRAPPERS[dialect]
    text = block(
        dialect,
        ("a", '{"x": [1, 2]}'),
        ("b", f'\n{lt}parameter name="y">2{lts}parameter>\n'),
        ("c", "{}"),
    )
    check(text, "", [("a", {"x": [1, 2]}), ("b", {"y": 2}), ("c", {})])


def test_s4_the_issues_example_and_the_missing_opener_repair() -> None:
    invoke = '<｜DSML｜invoke name="get_weather">\n{"city": "SF"}\n</｜DSML｜invoke>'
    check(
        f"<｜DSML｜tool_calls>\n{invoke}\n</｜DSML｜tool_calls>",
        "",
        [("get_weather", {"city": "SF"})],
    )
    r = check(f"x {invoke}</｜DSML｜tool_calls> y", "x  y", [("get_weather", {"city": "SF"})])
    assert r.calls[0].repairs == ("missing_opener",)
    # a bare invoke never followed by a closing wrapper is text, JSON body or not
    check(f"x {invoke} y", f"x {invoke} y", [])


FAIL_ROWS = [
    # "a body that is neither fails the block"
    ("array", "[1, 2]", "unexpected '['"),
    ("string", '"x"', "unexpected '\"'"),
    ("number", "3", "unexpected '3'"),
    ("trailing-comma", '{"a": 1,}', "a JSON body is not a JSON object"),
    ("single-quotes", "{'a': 1}", "a JSON body is not a JSON object"),
    ("nan", '{"a": NaN}', "a JSON body is not a JSON object"),
    ("text-after", '{"a": 1} and more', "unexpected 'a'"),
    ("two-objects", '{"a": 1}{"b": 2}', "unexpected '{'"),
    ("object-then-parameter", '{"a": 1}<parameter name="b">2</parameter>', "unexpected"),
    ("unclosed", '{"a": {"b": 1}', "the input ended"),
    ("unclosed-string", '{"a": "b}', "the input ended"),
    ("bracket-closes-object", '{"a": 1]', "a ']' closes the JSON object"),
]


@table(FAIL_ROWS)
def test_s4_a_body_that_is_not_a_json_object_fails_the_block(row: tuple[Any, ...]) -> None:
    body, why = row
    text = f'a <tool_calls><invoke name="f">{body}</invoke></tool_calls> b'
    r = run_all_ways(text)
    assert r.calls == () and r.text == text
    assert any(why in d for b in r.blocks for d in b.diagnostics), r.blocks


def test_s4_a_failed_json_block_does_not_hide_a_later_one() -> None:
    bad = '<tool_calls><invoke name="f">{"a": 1,}</invoke></tool_calls>'
    good = '<tool_calls><invoke name="g">{"b": 2}</invoke></tool_calls>'
    check(f"{bad} then {good}", f"{bad} then ", [("g", {"b": 2})])


def test_s4_white_space_before_the_object_is_bounded() -> None:
    """JSON_TAG_END reads at most 64 white-space characters between the invoke's ``>`` and
    the ``{`` (a bounded token, grammar/README.md); more than that is no JSON body, and the
    block fails as any body that is neither does."""
    ok = '<tool_calls><invoke name="f">' + " " * 64 + '{"a": 1}</invoke></tool_calls>'
    check(ok, "", [("f", {"a": 1})])
    far = ok.replace(" " * 64, " " * 65)
    check(far, far, [])


# ---------------------------------------------------------------- §7 streaming
def test_s7_early_emit_invoke_sends_each_json_call_as_its_invoke_closes() -> None:
    text = block("dsml_v41", ("a", '{"x": "}"}'), ("b", "{}"))
    first_close = text.index("</｜DSML｜ invoke>") + len("</｜DSML｜ invoke>")
    sieve = Sieve(early_emit="invoke")
    events = sieve.feed(text[:first_close])
    assert [c.name for e in events for c in getattr(e, "calls", ())] == ["a"]
    assert run_all_ways(text, early_emit="invoke").calls[1].name == "b"


@pytest.mark.parametrize("dialect", sorted(WRAPPERS))
def test_s7_argument_deltas_stream_while_the_object_arrives(dialect: str) -> None:
    body = '{\n  "city": "T\\u00f6ky\\u014d",\n  "days": [1, 2.5e1],\n  "x": {"y": null}\n}'
    text = block(dialect, ("get_weather", f"\n{body}\n"))
    end = text.index(body) + len(body)
    sieve = Sieve(early_emit="arguments")
    events: list[Any] = []
    before_end = 0
    for k, ch in enumerate(text):
        got = sieve.feed(ch)
        events += got
        if k < end - 1:
            before_end += sum(isinstance(e, ArgumentsDelta) for e in got)
    events += sieve.close()
    (started,) = [e for e in events if isinstance(e, CallStarted)]
    assert started.name == "get_weather"
    deltas = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
    (finished,) = [e.call for e in events if isinstance(e, CallFinished)]
    assert deltas == finished.arguments == '{"city":"Tökyō","days":[1,25.0],"x":{"y":null}}'
    assert before_end > 20  # the deltas went out as the body arrived, not at its end


ARGS = st.dictionaries(NAMES, JSON_VALUES, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    args=ARGS,
    dialect=st.sampled_from(sorted(WRAPPERS)),
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    data=st.data(),
)
def test_s4_any_object_round_trips_under_any_chunking(
    args: dict[str, Any], dialect: str, indent: int | None, ascii_only: bool, data: st.DataObject
) -> None:
    body = json.dumps(args, indent=indent, ensure_ascii=ascii_only)
    text = f"hi {block(dialect, ('f', body))} bye"
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=10)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    whole = parse(text)
    assert [(c.name, c.input) for c in whole.calls] == [("f", args)]
    for mode in ("block", "arguments"):
        events = stream(chunks, early_emit=mode)
        calls = [c for e in events for c in getattr(e, "calls", ())]
        assert [(c.name, c.input) for c in calls] == [("f", args)]
        if mode == "arguments":
            deltas = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
            assert deltas == calls[0].arguments

"""SPEC §12, the grammar contract's value nodes (grammar/README.md, "Value nodes"): a family's
own value language, said in its grammar file, read into JSON by the engine — ``value_object``
of ``value_member``s (a ``value_key`` and a value), ``value_array``, ``value_string`` (its runs'
text) and ``value_scalar`` (a JSON number or literal, else its text). The grammar here is a
scratch dialect unlike Gemma's, written to a temporary folder: ``<v f>a={x=1;y=[«s»]}</v>``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways, stream
from lark import Token, Tree

from callsieve import ArgumentsDelta, CallFinished, parse
from callsieve._blocks.value_nodes import MAX_VALUE_DEPTH, BadValue, read_value

#: Calls `<v NAME>key=value;…</v>`: strings between `«` and `»`, objects `{k=v;…}`, lists
#: `[v;…]`, any other word a scalar. A parameter's value is a value node itself.
VALS = r"""
vals: v_call
v_call: v_name (v_param (V_SEMI v_param)*)? V_END -> call
v_name: V_OPEN -> call_name
v_param: v_key _v_value -> param
v_key: V_KEY -> param_name
v_obj: V_LBRACE (v_member (V_SEMI v_member)*)? V_RBRACE -> value_object
v_member: v_mkey _v_value -> value_member
v_mkey: V_KEY -> value_key
v_list: V_LBRACKET (_v_value (V_SEMI _v_value)*)? V_RBRACKET -> value_array
_v_value: v_str | v_word | v_obj | v_list
v_str: V_QUOTE V_STR_RUN? V_QUOTE_CLOSE -> value_string
v_word: V_WORD -> value_scalar
V_OPEN: /<v (?P<v>[a-z_]{1,32})>/
V_END: "</v>"
V_KEY: /[ \t]{0,8}(?P<v>[a-z_]{1,32})=/
V_SEMI: ";"
V_LBRACE: "{"
V_RBRACE: "}"
V_LBRACKET: "["
V_RBRACKET: "]"
V_QUOTE: "«"
V_QUOTE_CLOSE: "»"
V_STR_RUN: /(?:(?!»)[\s\S])+/
V_WORD: /[A-Za-z0-9_.+\-]{1,64}(?=[;}\]<])/
"""


@pytest.fixture
def vals(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "vals.lark").write_text("// dialect: vals — a scratch dialect\n" + VALS)
    return {"grammar_dirs": [str(tmp_path)], "dialects": ["vals"]}


def calls(r: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.input) for c in r.calls]


def test_value_nodes_read_into_json_at_any_depth(vals: dict[str, Any]) -> None:
    text = "Hi <v f>a={x=1;y=[«s;}]»;true;null;-2.5e3;word;[]]};b=«»;c={}</v> bye"
    r = run_all_ways(text, **vals)
    assert calls(r) == [
        ("f", {"a": {"x": 1, "y": ["s;}]", True, None, -2500.0, "word", []]}, "b": "", "c": {}})
    ]
    assert r.text == "Hi  bye"


@pytest.mark.parametrize(
    ("word", "value"),
    [("7", 7), ("0.5", 0.5), ("false", False), ("01", "01"), ("1e999", "1e999"), ("NaN", "NaN")],
)
def test_a_scalar_is_a_json_number_or_literal_else_its_text(
    vals: dict[str, Any], word: str, value: Any
) -> None:
    assert calls(parse(f"<v f>a={word};b=[{word}]</v>", **vals)) == [
        ("f", {"a": value, "b": [value]})
    ]


def test_a_repeated_key_keeps_its_last_value(vals: dict[str, Any]) -> None:
    assert calls(parse("<v f>a={x=1;x=2}</v>", **vals)) == [("f", {"a": {"x": 2}})]


def test_a_malformed_value_fails_its_call_and_stays_text(vals: dict[str, Any]) -> None:
    for text in ("<v f>a=[1;2</v>", "<v f>a={x}</v>", "<v f>a={x=«s}</v>"):
        r = run_all_ways(text, **vals)
        assert (calls(r), r.text) == ([], text)


def test_values_nested_deeper_than_the_bound_fail_the_call(vals: dict[str, Any]) -> None:
    def nested(depth: int) -> str:
        return "<v f>a=" + "[" * depth + "1" + "]" * depth + "</v>"

    deepest = parse(nested(MAX_VALUE_DEPTH), **vals)
    value: Any = deepest.calls[0].input["a"]
    for _ in range(MAX_VALUE_DEPTH):
        value = value[0]
    assert value == 1
    too_deep = nested(MAX_VALUE_DEPTH + 1)
    assert parse(too_deep, **vals).text == too_deep
    hostile = nested(5000)  # (the walk stops at the bound: no recursion error)
    assert parse(hostile, **vals).text == hostile


def test_a_structured_value_streams_whole_and_exactly(vals: dict[str, Any]) -> None:
    text = "<v f>s=«plain»;o={k=«a b c»;l=[1;2]};n=3</v>"
    for chunks in ([text], list(text)):
        events = stream(chunks, early_emit="arguments", **vals)
        deltas = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
        (done,) = [e for e in events if isinstance(e, CallFinished)]
        assert (
            json.loads(deltas)
            == done.call.input
            == {
                "s": "plain",
                "o": {"k": "a b c", "l": [1, 2]},
                "n": 3,
            }
        )
        assert '"a b c"' in [e.delta for e in events if isinstance(e, ArgumentsDelta)][-3]


def test_a_member_needs_a_key_and_a_value() -> None:
    value = Tree("value_scalar", [Token("W", "1")])
    key = Tree("value_key", [Token("K", "k")])
    with pytest.raises(BadValue, match="needs a key"):
        read_value("value_object", [Tree("value_member", [value])])
    with pytest.raises(BadValue, match="needs a value"):
        read_value("value_object", [Tree("value_member", [key])])
    assert read_value("value_object", [Tree("value_member", [key, value])]) == {"k": 1}

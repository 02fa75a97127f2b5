"""Issue 36, item 1: what ``dialect_from_response_template`` refuses, and how it says so.

Each refusal is a ``ConfigurationError`` whose message starts with the spec's field, so a
user knows what to change. Two shapes the fixtures brought are checked on small specs too:
JSON with bare keys (Gemma 4's) and a run after an optional literal (Inkling's). The
fixtures' own compilations are in
``tests/families/test_response_template_dialects.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways

import callsieve
from callsieve import ConfigurationError

HERMES_LIKE: dict[str, Any] = {
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
    }
}


def _with(path: str, value: Any) -> dict[str, Any]:
    """HERMES_LIKE with the value at a dotted path set (``None`` removes it)."""
    spec: dict[str, Any] = {"fields": {k: dict(v) for k, v in HERMES_LIKE["fields"].items()}}
    *parents, last = path.split(".")
    node = spec
    for key in parents:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    return spec


def test_a_simple_spec_compiles_to_a_dialect_that_reads_its_calls(tmp_path: Path) -> None:
    d = callsieve.dialect_from_response_template(HERMES_LIKE, "mine")
    assert (d.name, d.reasoning) == ("mine", "tags")
    reply = (
        '<think>hm</think>Sure.\n<tool_call>\n{"name": "f", "arguments": {"a": [1]}}\n</tool_call>'
    )
    result = run_all_ways(reply, dialects=[d.name], grammar_dirs=[d.write(tmp_path)])
    assert [(c.name, c.input) for c in result.calls] == [("f", {"a": [1]})]
    assert (result.reasoning, result.text) == ("hm", "Sure.\n")


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("fields.answer", {"open": "<a>"}, "fields.answer"),
        ("fields.tool_calls.content", "kv-lines", "fields.tool_calls.content"),
        (
            "fields.tool_calls.content_args",
            {"unquoted_keys": True},
            "fields.tool_calls.content_args",
        ),
        ("fields.tool_calls.schema", {}, "fields.tool_calls.schema"),
        (
            "fields.tool_calls.transform",
            {"function": "{name}"},
            "fields.tool_calls.transform.function",
        ),
        ("fields.tool_calls.close", None, "fields.tool_calls.close"),
        ("fields.thinking.close", None, "fields.thinking.close"),
        ("fields.thinking.content", "json", "fields.thinking.content"),
        ("fields.thinking.join", "\n", "fields.thinking.join"),
        ("defaults.tool_calls", [], "defaults"),
    ],
)
def test_what_cannot_be_compiled_is_an_error_naming_its_field(
    path: str, value: Any, field: str
) -> None:
    with pytest.raises(ConfigurationError, match="^" + re.escape(field) + ":"):
        callsieve.dialect_from_response_template(_with(path, value))


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<=\n)<tool_call>",  # (a look-behind)
        r"^<tool_call>",  # (tied to the text's start)
        r"<tool_call>$",
        r"\b<tool_call>",
        r"[^<]*<tool_call>",  # (the engine's rule: an opener's first characters are a set)
        r"<tool_call(",  # (no regular expression)
        r"<(?P<other>x)>",  # (a group that means nothing here)
    ],
)
def test_a_pattern_the_engine_cannot_hold_names_its_field(pattern: str) -> None:
    spec = _with("fields.tool_calls.open", None)
    spec["fields"]["tool_calls"]["open_pattern"] = pattern
    with pytest.raises(ConfigurationError, match=r"^fields\.tool_calls\.open_pattern:"):
        callsieve.dialect_from_response_template(spec)


def test_an_xml_inline_tag_pattern_of_another_shape_names_its_field() -> None:
    spec = _with("fields.tool_calls.open", None)
    calls = spec["fields"]["tool_calls"]
    calls["open_pattern"] = r"<call name=(?P<name>\w+)>"
    calls["content"] = "xml-inline"
    calls["transform"] = {
        "type": "function",
        "function": {"name": "{name}", "arguments": "{content}"},
    }
    calls["content_args"] = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>[^<]*)</\w+>"}
    with pytest.raises(
        ConfigurationError, match=r"^fields\.tool_calls\.content_args\.tag_pattern:"
    ):
        callsieve.dialect_from_response_template(spec)


def test_a_spec_that_is_no_mapping_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="^response_template:"):
        callsieve.dialect_from_response_template([HERMES_LIKE])  # type: ignore[arg-type]


def test_a_name_that_is_no_dialect_name_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="^name:"):
        callsieve.dialect_from_response_template(HERMES_LIKE, "My-Model")


def test_a_file_with_no_template_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text('{"model_max_length": 4096}')
    with pytest.raises(ConfigurationError, match="holds no response_template"):
        callsieve.dialect_from_response_template(config)


def test_a_pattern_with_slashes_and_line_breaks_is_written_as_lark_holds_it(tmp_path: Path) -> None:
    spec = {
        "fields": {
            "tool_calls": {
                "open_pattern": "<a/b[/x]>\n\\/(?P<name>\\w+)>",
                "close": "</a/b>",
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            }
        }
    }
    d = callsieve.dialect_from_response_template(spec, "slashes")
    reply = 'x <a/b/>\n/fn>{"q": 1}</a/b> y'
    result = run_all_ways(reply, dialects=[d.name], grammar_dirs=[d.write(tmp_path)])
    assert [(c.name, c.input) for c in result.calls] == [("fn", {"q": 1})]
    assert result.text == "x  y"


# ---------------------------------------------------------------- JSON with bare keys


def _bare_keys(args: Any) -> dict[str, Any]:
    """A named opener whose arguments are JSON with bare keys (Gemma's shape)."""
    return {
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call:(?P<name>\w+)>",
                "close": "</call>",
                "content": "json",
                "content_args": args,
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            }
        }
    }


def test_bare_keys_and_delimited_strings_are_read_at_any_depth(tmp_path: Path) -> None:
    d = callsieve.dialect_from_response_template(
        _bare_keys({"unquoted_keys": True, "string_delims": [["«", "»"]]}), "lax"
    )
    reply = "Go.<call:f>{a:« 42 »,b:[1,«x»,{c:true}],e:{},n:null}</call>"
    result = run_all_ways(reply, dialects=[d.name], grammar_dirs=[d.write(tmp_path)])
    assert [(c.name, c.input) for c in result.calls] == [
        ("f", {"a": " 42 ", "b": [1, "x", {"c": True}], "e": {}, "n": None})
    ]
    assert result.text == "Go."


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"unquoted_keys": False, "string_delims": [["«", "»"]]}, "content_args.unquoted_keys"),
        ({"unquoted_keys": True}, "content_args.string_delims"),
        (
            {"unquoted_keys": True, "string_delims": [["«", "»"], ["<", ">"]]},
            "content_args.string_delims",
        ),
        ({"unquoted_keys": True, "string_delims": [["«", "»"]], "x": 1}, "content_args"),
    ],
)
def test_bare_key_json_callsieve_cannot_read_names_its_field(args: Any, field: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^fields\.tool_calls\." + re.escape(field) + ":"):
        callsieve.dialect_from_response_template(_bare_keys(args))


# ---------------------------------------------------------------- an optional literal, then a run


def test_a_run_after_an_optional_literal_is_read_only_after_it(tmp_path: Path) -> None:
    """``(?:<m>)?[^<]*<call>`` is read as ``(?:<m>[^<]{0,256})?<call>``: a marker begins
    with fixed characters. Text before ``<call>`` with no ``<m>`` stays text."""
    spec = _with("fields.tool_calls.open", None)
    spec["fields"]["tool_calls"]["open_pattern"] = r"(?:<m>)?[^<]*<call>"
    d = callsieve.dialect_from_response_template(spec, "ink")
    assert "(?:<m>[^<]{0,256})?<call>" in d.grammar_text
    body = '{"name": "f", "arguments": {}}</tool_call>'
    where = d.write(tmp_path)
    after = run_all_ways(f"<m>f<call>{body}", dialects=[d.name], grammar_dirs=[where])
    alone = run_all_ways(f"Hi f<call>{body}", dialects=[d.name], grammar_dirs=[where])
    assert [c.name for c in after.calls] == [c.name for c in alone.calls] == ["f"]
    assert (after.text, alone.text) == ("", "Hi f")

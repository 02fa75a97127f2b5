"""SPEC §9 Policy and schema-aware coercion (issue 15 items 1, 2).

"Given ``tools`` (names, optionally JSON Schemas), a call to an unknown tool or with arguments
that fail the schema is rejected: it is not executed, listed in ``rejected_tool_names``,
``rejected_by_policy=True``, and its text handled per the caller's choice
(``on_reject="drop"|"text"``)." Every case runs whole and streamed (``run_all_ways``, which
also demands the same rejections from every chunking), under each ``early_emit``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import (
    DSML_V4,
    INV,
    NATIVE_V31,
    P,
    X,
    canon_calls,
    check,
    drive,
    fed,
    rejections_of,
    run_all_ways,
    stream_sieve,
    table,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import doc_and_chunks, soak_settings

import callsieve
from callsieve import CallAborted, CallFinished, CallStarted, ConfigurationError, Sieve

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "s": {"type": "string"},
        "flag": {"type": "boolean"},
        "opts": {"type": "object"},
        "xs": {"type": "array", "items": {"type": "number"}},
    },
    "required": ["n"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": SCHEMA}},
    {
        "name": "read_file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
]
MODES = ("block", "invoke", "arguments")

GOOD = INV("f", P("n", "1"))
UNKNOWN = INV("rm", P("path", "/"))
BAD = INV("f", P("n", "<![CDATA[ten]]>"))  # not an integer, even coerced


# ---------------------------------------------------------------- item 1: definitions
def test_s9_malformed_definition_names_the_index() -> None:
    with pytest.raises(ConfigurationError, match=r"tools\[0\].*'name'"):
        callsieve.parse("x", tools=[{"bogus": 1}, 5])
    with pytest.raises(ConfigurationError, match=r"tools\[1\].*expected a dict.*int"):
        Sieve([{"name": "f"}, 5])


def test_s9_sdk_definitions_are_read(tmp_path: Any) -> None:
    from openai.types.chat import ChatCompletionToolParam  # noqa: F401  (a TypedDict: a dict)
    from openai.types.shared_params import FunctionDefinition

    fn: FunctionDefinition = {"name": "f", "parameters": SCHEMA}
    r = callsieve.parse(
        X(UNKNOWN + GOOD), tools=[{"type": "function", "function": fn}], policy="allowlist"
    )
    assert [c.name for c in r.calls] == ["f"] and r.rejected_tool_names == ("rm",)


def test_s9_policy_needs_tools_and_valid_values() -> None:
    with pytest.raises(ConfigurationError, match="needs tools"):
        Sieve(policy="allowlist")
    with pytest.raises(ConfigurationError, match="policy must be one of"):
        Sieve(TOOLS, policy="strict")
    with pytest.raises(ConfigurationError, match="on_reject must be one of"):
        Sieve(TOOLS, policy="allowlist", on_reject="keep")
    with pytest.raises(ConfigurationError, match="not a valid JSON Schema"):
        Sieve([{"name": "f", "parameters": {"type": 5}}], policy="schema")


def test_s9_cli_malformed_definition_exits_2(tmp_path: Any, capsys: Any) -> None:
    from callsieve.__main__ import main

    tools = tmp_path / "tools.json"
    tools.write_text('[{"bogus": 1}, 5]', encoding="utf-8")
    reply = tmp_path / "r.txt"
    reply.write_text("hi", encoding="utf-8")
    assert main(["parse", str(reply), "--tools", str(tools), "--policy", "allowlist"]) == 2
    err = capsys.readouterr().err
    assert "tools[0]" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- item 2: the policies
POLICY_ROWS = [
    # id, text, policy, on_reject, expected text, expected calls, rejected names
    ("allow-drop", "a " + X(UNKNOWN) + " b", "allowlist", "drop", "a  b", [], ("rm",)),
    (
        "allow-text",
        "a " + X(UNKNOWN) + " b",
        "allowlist",
        "text",
        "a " + X(UNKNOWN) + " b",
        [],
        ("rm",),
    ),
    ("allow-keeps-known", X(GOOD + UNKNOWN), "allowlist", "drop", "", [("f", {"n": 1})], ("rm",)),
    (
        "allow-text-middle",
        X(GOOD + UNKNOWN + GOOD),
        "allowlist",
        "text",
        UNKNOWN,
        [("f", {"n": 1}), ("f", {"n": 1})],
        ("rm",),
    ),
    (
        "allow-text-last",
        X(GOOD + UNKNOWN),
        "allowlist",
        "text",
        UNKNOWN + "</tool_calls>",
        [("f", {"n": 1})],
        ("rm",),
    ),
    (
        "allow-text-first",
        X(UNKNOWN + GOOD),
        "allowlist",
        "text",
        "<tool_calls>" + UNKNOWN,
        [("f", {"n": 1})],
        ("rm",),
    ),
    ("allow-ignores-schema", X(BAD), "allowlist", "drop", "", [("f", {"n": "ten"})], ()),
    ("schema-drop", X(BAD), "schema", "drop", "", [], ("f",)),
    ("schema-text", "x" + X(BAD), "schema", "text", "x" + X(BAD), [], ("f",)),
    ("schema-extra-key", X(INV("f", P("n", "1") + P("zz", "1"))), "schema", "drop", "", [], ("f",)),
    ("schema-missing-required", X(INV("f")), "schema", "drop", "", [], ("f",)),
    (
        "schema-accepts-coerced",
        X(INV("f", P("n", "<![CDATA[10]]>"))),
        "schema",
        "drop",
        "",
        [("f", {"n": 10})],
        (),
    ),
    ("schema-native", NATIVE_V31, "schema", "drop", "", [], ("search",)),
    ("no-policy", X(UNKNOWN), None, "drop", "", [("rm", {"path": "/"})], ()),
]


@pytest.mark.parametrize("early_emit", MODES)
@table(POLICY_ROWS)
def test_s9_policy(row: tuple[Any, ...], early_emit: str) -> None:
    text, policy, on_reject, want_text, want_calls, names = row
    r = check(
        text,
        want_text,
        want_calls,
        tools=TOOLS,
        policy=policy,
        on_reject=on_reject,
        early_emit=early_emit,
    )
    assert r.rejected_tool_names == names
    assert r.rejected_by_policy is bool(names)
    for rej in r.rejections:  # §Invariants 2: recorded with its raw span
        assert text[rej.span[0] : rej.span[1]] == rej.raw and rej.action == on_reject
        assert rej.name in rej.raw


def test_s9_reasons() -> None:
    r = run_all_ways(
        X(UNKNOWN + BAD + INV("f", P("n", "1") + P("s", "<![CDATA[x]]>") + P("flag", "maybe"))),
        tools=TOOLS,
        policy="schema",
    )
    reasons = [x.reason for x in r.rejections]
    assert reasons[0] == "unknown tool 'rm'"
    assert reasons[1].startswith("schema: /n: ") and "'ten'" in reasons[1]
    assert reasons[2].startswith("schema: /flag: ") and "'maybe'" in reasons[2]
    assert r.rejected_tool_names == ("rm", "f")


def test_s9_sieve_exposes_the_policy_results() -> None:
    sieve, _ = fed(["hi ", X(UNKNOWN)], tools=TOOLS, policy="allowlist")
    assert sieve.rejected_by_policy and sieve.rejected_tool_names == ("rm",)
    assert rejections_of(sieve) == rejections_of(
        callsieve.parse("hi " + X(UNKNOWN), tools=TOOLS, policy="allowlist")
    )


def test_s9_drop_conserves_the_input_through_block_spans() -> None:
    text = "a" + X(GOOD + UNKNOWN) + "b"
    sieve = Sieve(TOOLS, policy="allowlist")
    events = sieve.feed(text) + sieve.close()
    blocks = [e.block for e in events if isinstance(e, callsieve.ToolCalls)]
    assert [b.raw for b in blocks] == [X(GOOD + UNKNOWN)]
    assert sieve.rejections[0].span[1] == len("a" + X(GOOD + UNKNOWN)) - len("</tool_calls>")


# ---------------------------------------------------------------- argument streaming
def _events(text: str, **opts: Any) -> list[Any]:
    sieve = Sieve(TOOLS, early_emit="arguments", **opts)
    return [e for ch in text for e in sieve.feed(ch)] + sieve.close()


def test_s9_no_call_started_for_a_name_not_allowed() -> None:
    events = _events(X(UNKNOWN + GOOD), policy="allowlist")
    started = [e.name for e in events if isinstance(e, CallStarted)]
    assert started == ["f"] and not any(isinstance(e, CallAborted) for e in events)
    assert [e.call.name for e in events if isinstance(e, CallFinished)] == ["f"]


def test_s9_schema_failure_aborts_a_started_call() -> None:
    events = _events(X(INV("f", P("n", "1") + P("zz", "<![CDATA[long text]]>"))), policy="schema")
    kinds = [type(e).__name__ for e in events if not isinstance(e, callsieve.ArgumentsDelta)]
    assert kinds[:1] == ["CallStarted"] and "CallAborted" in kinds
    assert "CallFinished" not in kinds


# ---------------------------------------------------------------- coercion
COERCE_ROWS = [
    ("integer-cdata", P("n", "<![CDATA[10]]>"), {"n": 10}, ["/n: string -> integer"]),
    (
        "boolean",
        P("n", "1") + P("flag", "<![CDATA[true]]>"),
        {"n": 1, "flag": True},
        ["/flag: string -> boolean"],
    ),
    (
        "object-text",
        P("n", "1") + P("opts", '<![CDATA[{"a": [1]}]]>'),
        {"n": 1, "opts": {"a": [1]}},
        ["/opts: string -> object"],
    ),
    (
        "array-items",
        P("n", "1") + P("xs", '<![CDATA[["1", 2.5]]]>'),
        {"n": 1, "xs": [1, 2.5]},
        ["/xs: string -> array", "/xs/0: string -> number"],
    ),
    ("string-stays", P("n", "1") + P("s", "<![CDATA[10]]>"), {"n": 1, "s": "10"}, []),
    ("string-plain-stays", P("n", "1") + P("s", "true"), {"n": 1, "s": "true"}, []),
    ("not-a-number-stays", P("n", "<![CDATA[ten]]>"), {"n": "ten"}, []),
    ("float-for-integer-stays", P("n", "<![CDATA[1.5]]>"), {"n": "1.5"}, []),
]


@pytest.mark.parametrize("early_emit", MODES)
@table(COERCE_ROWS)
def test_s9_coercion(row: tuple[Any, ...], early_emit: str) -> None:
    params, want, coercions = row
    r = check(X(INV("f", params)), "", [("f", want)], tools=TOOLS, early_emit=early_emit)
    assert list(r.calls[0].coercions) == coercions


def test_s9_coercion_in_string_attribute_and_json_bodies() -> None:
    v4 = DSML_V4.replace("get_weather", "f").replace(
        '"location" string="true">杭州', '"n" string="true">7'
    )
    v4 = v4.replace('<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n', "")
    check(v4, "", [("f", {"n": 7})], tools=TOOLS)
    native = NATIVE_V31.replace("search", "f").replace('{"q": "lark", "n": 2}', '{"n": "3"}')
    r = check(native, "", [("f", {"n": 3})], tools=TOOLS)
    assert r.calls[0].coercions == ("/n: string -> integer",)


def test_s9_arguments_stream_the_coerced_value() -> None:
    events = _events(X(INV("f", P("n", "<![CDATA[10]]>"))))
    deltas = "".join(e.delta for e in events if isinstance(e, callsieve.ArgumentsDelta))
    assert json.loads(deltas) == {"n": 10}
    assert not any(isinstance(e, CallAborted) for e in events)


# ---------------------------------------------------------------- property
@soak_settings(60)
@given(doc_and_chunks(), st.sampled_from(["drop", "text"]), st.sampled_from(MODES))
def test_s9_policy_streamed_equals_whole(
    case: tuple[str, list[str]], on_reject: str, early_emit: str
) -> None:
    """Any generated reply, any chunking: the same text, calls and rejections as ``parse``
    (the generated tools have random names; ``f`` and ``read_file`` are the allowed ones)."""
    text, chunks = case
    opts: dict[str, Any] = {
        "tools": TOOLS,
        "policy": "allowlist",
        "on_reject": on_reject,
        "early_emit": early_emit,
    }
    whole = callsieve.parse(text, **opts)
    events, sieve = stream_sieve(chunks, **opts)
    assert drive(events) == (whole.text, canon_calls(whole.calls))
    assert rejections_of(sieve) == rejections_of(whole)
    assert all(c.name in ("f", "read_file") for c in whole.calls)

"""SPEC §Invariants 5: misuse raises a typed error (feed after close, a non-``str`` chunk,
a bad option), carrying the offset of the input so far; a ``str`` subclass is a ``str``.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    INV,
    X,
    calls_of,
    canon_calls,
    table,
    text_of,
)

import callsieve
from callsieve import (
    CallsieveError,
    ConfigurationError,
    InputTypeError,
    SieveClosedError,
)


def test_errors_feed_and_close_after_close() -> None:
    sieve = callsieve.Sieve()
    sieve.feed("x")
    sieve.close()
    for call in (lambda: sieve.feed("y"), sieve.close, lambda: sieve.feed("")):
        with pytest.raises(SieveClosedError) as info:
            call()
        assert isinstance(info.value, CallsieveError)


@pytest.mark.parametrize(
    "value",
    [b"x", None, 1, 1.5, ["x"], bytearray(b"x")],
    ids=["bytes", "none", "int", "float", "list", "bytearray"],
)
def test_errors_non_str_input(value: Any) -> None:
    with pytest.raises(InputTypeError) as info:
        callsieve.parse(value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, CallsieveError)
    with pytest.raises(TypeError):
        callsieve.Sieve().feed(value)


@pytest.mark.parametrize(
    "before",
    [
        "plain prose, nothing held",
        "prose then a possible opener <|DSML|tool_ca",
        '<tool_calls><invoke name="a"><parameter name="p"><![CDATA[inside an argument ]',
        '<tool_calls><invoke name="a"><parameter nam',
        '<tool_calls><invoke name="a"><parameter name="p"><![CDATA[x]]></parameter>',
    ],
    ids=["prose", "candidate", "argument-body", "cut-tag", "between-tags"],
)
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_errors_carry_the_offset_of_the_input_so_far(before: str, size: int) -> None:
    """Whatever mode the sieve is in (argument bodies count lazily), a typed error says how
    many characters were fed before it."""
    sieve = callsieve.Sieve()
    for k in range(0, len(before), size):
        sieve.feed(before[k : k + size])
    with pytest.raises(InputTypeError) as bad:
        sieve.feed(7)  # type: ignore[arg-type]
    assert bad.value.offset == len(before)
    sieve.feed("tail")
    sieve.close()
    with pytest.raises(SieveClosedError) as closed:
        sieve.feed("more")
    assert closed.value.offset == len(before) + len("tail")


def test_errors_str_subclass_is_accepted() -> None:
    class S(str):
        pass

    r = callsieve.parse(S(X(INV("a"))))
    assert canon_calls(r.calls) == [("a", "{}")]
    assert drive_sieve([S("x "), S(X(INV("a")))]) == ("x ", [("a", "{}")])


def drive_sieve(chunks: list[str]) -> tuple[str, list[tuple[str, str]]]:
    sieve = callsieve.Sieve()
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    return text_of(events), calls_of(events)


BAD_OPTIONS = [
    ("early-emit", {"early_emit": "sometimes"}),
    ("mode", {"mode": "maybe"}),
    ("max-block-chars-zero", {"max_block_chars": 0}),
    ("max-block-chars-negative", {"max_block_chars": -5}),
    ("max-block-chars-str", {"max_block_chars": "8MiB"}),
    ("unknown-dialect", {"dialects": ("no_such_dialect",)}),
    ("unknown-option", {"frobnicate": True}),
]


@table(BAD_OPTIONS)
def test_errors_bad_options_raise_configuration_error(row: tuple[Any, ...]) -> None:
    (opts,) = row
    with pytest.raises(ConfigurationError) as info:
        callsieve.Sieve(**opts)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CallsieveError)
    with pytest.raises(ConfigurationError):
        callsieve.parse("x", **opts)


def test_a_rejected_chunk_leaves_a_held_candidate_where_it_was() -> None:
    """Found by the renderers' property run: a non-str chunk while a tag candidate was held
    moved the candidate's text, and the next chunk came out before it."""
    sieve = callsieve.Sieve()
    assert sieve.feed("<![CDATA[|||||tool▁&#x000") == []
    with pytest.raises(callsieve.InputTypeError) as info:
        sieve.feed(None)  # type: ignore[arg-type]
    assert info.value.offset == 25
    assert sieve.feed("x") + sieve.close() == [callsieve.Text("<![CDATA[|||||tool▁&#x000x")]

"""The public values behave like values (issue 34, item 5): events and results are frozen,
equal values hash equal (or are unhashable by design), statuses and reasons are ``Literal``
types the package exports, a ``Sieve`` subclass keeps every option, and the options are
written once (``_config.options.OPTIONS``) and checked against the docs that list them."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from typing import Any

import pytest
from helpers import ROOT
from hypothesis import given
from hypothesis import strategies as st

import callsieve
from callsieve import (
    ABORT_REASONS,
    BLOCK_STATUSES,
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Reasoning,
    Rejection,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
    parse,
)
from callsieve._base.events import RESENT
from callsieve._config.options import OPTIONS, SieveOptions

CALL = ToolCall("f", {"x": 1, "y": [2]}, "call_1", "dsml")
BLOCK = Block((0, 5), "dsml", "complete", ("r",), ("d",), "<raw>", None)
#: One of each value the package hands out.
VALUES: list[Any] = [
    CALL,
    BLOCK,
    Text("t"),
    Reasoning("r", "<think>"),
    ToolCalls((CALL,), BLOCK),
    CallStarted(0, "call_1", "f"),
    ArgumentsDelta(0, "{"),
    CallFinished(0, CALL),
    CallAborted(0, "cut_off"),
    Rejection("f", "unknown tool", (0, 5), "<raw>", "drop", CALL),
]
#: The ones that hold a call's ``input`` dict: unhashable by design.
UNHASHABLE = (ToolCall, ToolCalls, CallFinished, Rejection)


# --------------------------------------------------------------------------- frozen
@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_assigning_or_deleting_a_field_raises(value: Any) -> None:
    for slot in type(value).__slots__:
        name = slot.removeprefix("_")
        before = getattr(value, name)
        with pytest.raises(AttributeError):
            setattr(value, name, before)
        with pytest.raises(AttributeError):
            delattr(value, name)
        assert getattr(value, name) is before
    with pytest.raises(AttributeError):
        value.not_a_field = 1


def test_a_parsed_result_is_frozen() -> None:
    r = parse(
        '<tool_calls><invoke name="f"><parameter name="p">1</parameter></invoke></tool_calls>'
    )
    for slot in type(r).__slots__:
        name = slot.removeprefix("_")
        with pytest.raises(AttributeError):
            setattr(r, name, getattr(r, name))
    with pytest.raises(AttributeError):
        r.calls[0].name = "g"  # type: ignore[misc]


# --------------------------------------------------------------------------- hashing
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), _json, min_size=2, max_size=5), st.randoms())
def test_equal_calls_are_equal_in_any_key_order_and_unhashable(
    args: dict[str, Any], rnd: Any
) -> None:
    keys = list(args)
    rnd.shuffle(keys)
    a, b = ToolCall("f", args), ToolCall("f", {k: args[k] for k in keys})
    assert a == b
    for value in (a, ToolCalls((a,), BLOCK), CallFinished(0, a)):
        with pytest.raises(TypeError, match="unhashable"):
            hash(value)
    assert len({id(a), id(b)}) == 2  # (two objects; a set of calls is not a thing to build)


@given(st.text(max_size=6), st.text(max_size=6) | st.none(), st.integers(0, 9))
def test_equal_values_hash_equal(text: str, raw: str | None, index: int) -> None:
    pairs = [
        (Text(text), Text(str(text))),
        (Reasoning(text, raw), Reasoning(text, raw)),
        (CallStarted(index, text, "f"), CallStarted(index, text, "f")),
        (ArgumentsDelta(index, text), ArgumentsDelta(index, text)),
        (CallAborted(index, "failed"), CallAborted(index, "failed")),
        (
            Block((index, index + 1), "xml", "failed", (), (text,), text),
            Block((index, index + 1), "xml", "failed", (), (text,), text),
        ),
    ]
    for a, b in pairs:
        assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_values_of_different_classes_are_unequal() -> None:
    assert Text("x") != Reasoning("x")
    assert Text("x") != "x"


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_each_value_is_hashable_or_unhashable_by_design(value: Any) -> None:
    if isinstance(value, UNHASHABLE):
        assert type(value).__hash__ is None
    else:
        assert hash(value) == hash(value)


# --------------------------------------------------------------------------- literals
def test_statuses_and_reasons_are_exported_literal_types() -> None:
    assert BLOCK_STATUSES == typing.get_args(callsieve.BlockStatus)
    assert set(BLOCK_STATUSES) == {"complete", "partial", "failed", "frame"}
    assert ABORT_REASONS == typing.get_args(callsieve.AbortReason)
    assert {"failed", "cut_off", "rejected"} | RESENT == set(ABORT_REASONS)
    assert {"failed", "cut_off", "rejected"}.isdisjoint(RESENT)
    assert CallAborted(0, "renamed").resent and not CallAborted(0, "failed").resent


def test_every_status_a_block_gets_is_a_block_status() -> None:
    texts = [
        '<tool_calls><invoke name="f"></invoke></tool_calls>',
        "<tool_calls><oops/></tool_calls>",
        '<tool_calls><invoke name="f"></invoke><invoke name="g">',
    ]
    for text in texts:
        for early in ("block", "invoke"):
            for b in parse(text, early_emit=early).blocks:
                assert b.status in BLOCK_STATUSES


# --------------------------------------------------------------------------- subclasses
class Counting(Sieve):
    """A user's subclass with slots and a method of its own."""

    __slots__ = ("chunks",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chunks = 0

    def feed(self, chunk: str) -> list[Any]:
        self.chunks += 1
        return super().feed(chunk)


@pytest.mark.parametrize("cls", [Sieve, Counting])
def test_a_subclass_keeps_every_option_sanitize_included(cls: type[Sieve]) -> None:
    leaked = ["ok <｜end▁of", "▁sentence｜> done"]  # (a special token the sanitizer removes)
    plain, sanitized = cls(), cls(sanitize=True)
    assert isinstance(sanitized, cls) and type(plain) is cls
    events = [e for c in leaked for e in sanitized.feed(c)] + sanitized.close()
    assert "".join(e.text for e in events) == "ok  done"
    events = [e for c in leaked for e in plain.feed(c)] + plain.close()
    assert "".join(e.text for e in events) == "".join(leaked)
    if isinstance(sanitized, Counting):
        assert sanitized.chunks >= len(leaked)  # (the subclass's own method ran)
    assert type(cls(sanitize=True)) is type(sanitized)  # (the twin is made once)


# --------------------------------------------------------------------------- options
def test_the_options_are_written_once() -> None:
    """``OPTIONS`` is the list: ``SieveOptions`` takes exactly those, ``Sieve``'s docstring
    and README's "Options" table list each, and an unknown option's error names them."""
    fields = [f.name for f in dataclasses.fields(SieveOptions) if f.init]
    assert [f for f in fields if f in OPTIONS] == list(OPTIONS)
    params = inspect.signature(SieveOptions).parameters
    assert [p for p in params if params[p].kind is not inspect.Parameter.VAR_KEYWORD] == list(
        OPTIONS
    )
    doc = Sieve.__doc__ or ""
    assert all(re.search(rf"\b{o}\b", doc) for o in OPTIONS), doc
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Options") :]
    rows = re.findall(r"^\| `(\w+)` \|", table[: table.index("\n## ", 3)], re.MULTILINE)
    assert rows == list(OPTIONS)
    with pytest.raises(callsieve.UnknownOptionError) as info:
        Sieve(sanitise=True)
    assert all(o in str(info.value) for o in OPTIONS)

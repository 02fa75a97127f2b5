"""``SieveOptions`` (``callsieve._config.options``): every option validated in one place, at
construction, with a ``CallsieveError`` that names the option — directly, and through
``Sieve`` and ``parse``, which build one."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import callsieve
from callsieve import CallsieveError, ConfigurationError, UnknownOptionError
from callsieve._config.options import (
    DEFAULT_MAX_BLOCK_CHARS,
    EARLY_EMIT,
    OPTIONS,
    SieveOptions,
    make_call_id,
)

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
OPENAI = {"type": "function", "function": {"name": "read", "parameters": SCHEMA}}
FLAT = {"name": "read", "parameters": SCHEMA}
ANTHROPIC = {"name": "read", "input_schema": SCHEMA}
CALL = '<tool_calls><invoke name="read"><parameter name="path">42</parameter></invoke></tool_calls>'


class Dumpable:
    """A stand-in for an SDK's pydantic tool type: ``model_dump(exclude_none=...)``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.calls: list[dict[str, Any]] = []

    def model_dump(self, *, exclude_none: bool = False) -> dict[str, Any]:
        self.calls.append({"exclude_none": exclude_none})
        if exclude_none:
            return {k: v for k, v in self.data.items() if v is not None}
        return dict(self.data)


class PlainDumpable:
    """``model_dump()`` without ``exclude_none``."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def model_dump(self) -> Any:
        return self.data


class BrokenDumpable:
    def model_dump(self) -> dict[str, Any]:
        raise RuntimeError("cannot dump\nsecond line")


# (label, options, exception class, words the message must hold)
BAD: list[tuple[str, dict[str, Any], type[CallsieveError], tuple[str, ...]]] = [
    # ---- README "Options" / unknown names
    (
        "unknown",
        {"frobnicate": True},
        UnknownOptionError,
        ("frobnicate", "early_emit", "id_factory"),
    ),
    (
        "unknown-close",
        {"earlyemit": "block"},
        UnknownOptionError,
        ("earlyemit", "did you mean 'early_emit'"),
    ),
    # ---- §7 streaming: early_emit, mode, max_block_chars
    ("early-emit-other", {"early_emit": "sometimes"}, ConfigurationError, ("early_emit", "block")),
    ("early-emit-none", {"early_emit": None}, ConfigurationError, ("early_emit", "None")),
    ("mode-other", {"mode": "maybe"}, ConfigurationError, ("mode", "'on'", "'off'")),
    ("mode-bool", {"mode": True}, ConfigurationError, ("mode",)),
    ("max-bool", {"max_block_chars": True}, ConfigurationError, ("max_block_chars", "int", "bool")),
    ("max-zero", {"max_block_chars": 0}, ConfigurationError, ("max_block_chars", "at least 1")),
    ("max-negative", {"max_block_chars": -5}, ConfigurationError, ("max_block_chars", "-5")),
    ("max-str", {"max_block_chars": "8MiB"}, ConfigurationError, ("max_block_chars", "str")),
    ("max-float", {"max_block_chars": 10.0}, ConfigurationError, ("max_block_chars", "float")),
    ("max-none", {"max_block_chars": None}, ConfigurationError, ("max_block_chars", "None")),
    # ---- §9 tools
    ("tools-int", {"tools": 5}, ConfigurationError, ("tools", "list", "int")),
    ("tools-str", {"tools": "abc"}, ConfigurationError, ("tools", "str")),
    ("tools-bytes", {"tools": b"abc"}, ConfigurationError, ("tools", "bytes")),
    (
        "tools-one-dict",
        {"tools": {"name": "f"}},
        ConfigurationError,
        ("tools", "single dict", "list"),
    ),
    (
        "tools-one-object",
        {"tools": Dumpable({"name": "f"})},
        ConfigurationError,
        ("tools", "single Dumpable"),
    ),
    (
        "tools-no-name",
        {"tools": [{"bogus": 1}, 5]},
        ConfigurationError,
        ("tools[0]", "'name'", "bogus"),
    ),
    (
        "tools-not-dict",
        {"tools": [FLAT, 5]},
        ConfigurationError,
        ("tools[1]", "expected a dict", "int"),
    ),
    ("tools-empty-name", {"tools": [{"name": ""}]}, ConfigurationError, ("tools[0]", "'name'")),
    ("tools-int-name", {"tools": [{"name": 5}]}, ConfigurationError, ("tools[0]", "'name'", "5")),
    (
        "tools-openai-no-name",
        {"tools": [{"type": "function", "function": {"parameters": {}}}]},
        ConfigurationError,
        ("tools[0]['function']", "'name'"),
    ),
    (
        "tools-function-str",
        {"tools": [{"type": "function", "function": "read"}]},
        ConfigurationError,
        ("tools[0]['function']", "dict", "str"),
    ),
    (
        "tools-parameters-str",
        {"tools": [FLAT, {"name": "f", "parameters": "{}"}]},
        ConfigurationError,
        ("tools[1]['parameters']", "'f'", "JSON Schema", "str"),
    ),
    (
        "tools-input-schema-list",
        {"tools": [{"name": "f", "input_schema": [1]}]},
        ConfigurationError,
        ("tools[0]['input_schema']", "list"),
    ),
    (
        "tools-openai-parameters",
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": 1}}]},
        ConfigurationError,
        ("tools[0]['function']['parameters']", "int"),
    ),
    (
        "tools-dump-not-dict",
        {"tools": [PlainDumpable([1])]},
        ConfigurationError,
        ("tools[0]", "model_dump()", "list"),
    ),
    (
        "tools-dump-raises",
        {"tools": [BrokenDumpable()]},
        ConfigurationError,
        ("tools[0]", "model_dump() raised RuntimeError", "cannot dump"),
    ),
    (
        "tools-dump-bad-definition",
        {"tools": [PlainDumpable({"title": "x"})]},
        ConfigurationError,
        ("tools[0]", "'name'"),
    ),
    # ---- §12 grammar: dialects, grammar_dirs
    ("dialects-int", {"dialects": (1,)}, ConfigurationError, ("dialects[0]", "str", "int")),
    (
        "dialects-str",
        {"dialects": "xml"},
        ConfigurationError,
        (
            "dialects must be a sequence of dialect names such as ('dsml', 'xml'), or 'all', not a str",
        ),
    ),
    ("dialects-bytes", {"dialects": b"xml"}, ConfigurationError, ("dialects", "bytes")),
    ("dialects-empty", {"dialects": ()}, ConfigurationError, ("dialects", "at least one")),
    ("dirs-none", {"grammar_dirs": None}, ConfigurationError, ("grammar_dirs", "None")),
    ("dirs-int", {"grammar_dirs": 5}, ConfigurationError, ("grammar_dirs", "int")),
    ("dirs-str", {"grammar_dirs": "/x"}, ConfigurationError, ("grammar_dirs", "not a str")),
    (
        "dirs-path",
        {"grammar_dirs": Path("/x")},
        ConfigurationError,
        ("grammar_dirs", "single", "tuple"),
    ),
    (
        "dirs-element",
        {"grammar_dirs": ("/x", 5)},
        ConfigurationError,
        ("grammar_dirs[1]", "os.PathLike", "int"),
    ),
    (
        "dirs-bytes-element",
        {"grammar_dirs": (b"/x",)},
        ConfigurationError,
        ("grammar_dirs[0]", "bytes"),
    ),
    # ---- README "Options": id_factory
    ("id-none", {"id_factory": None}, ConfigurationError, ("id_factory", "callable", "None")),
    ("id-int", {"id_factory": 5}, ConfigurationError, ("id_factory", "callable", "int")),
    (
        "id-takes-argument",
        {"id_factory": lambda n: str(n)},
        ConfigurationError,
        ("id_factory", "no arguments"),
    ),
]
BAD_IDS = [row[0] for row in BAD]


def check_refusal(
    build: Callable[[], object], cls: type[CallsieveError], needles: tuple[str, ...]
) -> None:
    with pytest.raises(CallsieveError) as info:
        build()
    exc = info.value
    assert type(exc) is cls, f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, ValueError)  # ConfigurationError, and UnknownOptionError too
    if cls is UnknownOptionError:
        assert isinstance(exc, TypeError)
        assert exc.expected == OPTIONS
    message = str(exc)
    for needle in needles:
        assert needle in message, message
    assert "\n" not in message or "cannot dump" in message


@pytest.mark.parametrize(("label", "opts", "cls", "needles"), BAD, ids=BAD_IDS)
def test_bad_option_refused_by_sieve_options(
    label: str, opts: dict[str, Any], cls: type[CallsieveError], needles: tuple[str, ...]
) -> None:
    check_refusal(lambda: SieveOptions(**opts), cls, needles)


@pytest.mark.parametrize("way", ["Sieve", "parse"])
@pytest.mark.parametrize(("label", "opts", "cls", "needles"), BAD, ids=BAD_IDS)
def test_bad_option_refused_by_sieve_and_parse(
    label: str, opts: dict[str, Any], cls: type[CallsieveError], needles: tuple[str, ...], way: str
) -> None:
    if way == "Sieve":
        check_refusal(lambda: callsieve.Sieve(**opts), cls, needles)
    else:
        check_refusal(lambda: callsieve.parse("x", **opts), cls, needles)


def test_dump_error_is_chained() -> None:
    with pytest.raises(ConfigurationError) as info:
        SieveOptions([BrokenDumpable()])
    assert isinstance(info.value.__cause__, RuntimeError)


def test_early_emit_error_lists_the_accepted_values() -> None:
    for value in ("argument", "sometimes"):
        with pytest.raises(ConfigurationError) as info:
            SieveOptions(early_emit=value)
        assert info.value.expected == EARLY_EMIT == ("block", "invoke", "arguments")


# ---------------------------------------------------------------------- the value object
def test_defaults() -> None:
    o = SieveOptions()
    assert o.tools == () and o.schemas == {}
    assert (o.early_emit, o.mode, o.max_block_chars) == ("block", "on", DEFAULT_MAX_BLOCK_CHARS)
    assert o.dialects == callsieve.DEFAULT_DIALECTS
    assert o.grammar_dirs == ()
    assert o.id_factory is callsieve.new_call_id


def test_frozen_slotted_and_comparable() -> None:
    o = SieveOptions([FLAT], dialects=["xml"], grammar_dirs=[Path("g")], max_block_chars=9)
    assert not hasattr(o, "__dict__")
    with pytest.raises(AttributeError):
        o.mode = "off"  # type: ignore[misc]
    same = SieveOptions([dict(FLAT)], dialects=("xml",), grammar_dirs=("g",), max_block_chars=9)
    assert o == same and hash(o) == hash(same)
    assert o != SieveOptions([FLAT], dialects=["xml"], max_block_chars=9)
    assert "SieveOptions(" in repr(o)


@pytest.mark.parametrize("value", ["block", "invoke"])
def test_early_emit_values(value: str) -> None:
    assert SieveOptions(early_emit=value).early_emit == value


@pytest.mark.parametrize("value", ["on", "off"])
def test_mode_values(value: str) -> None:
    assert SieveOptions(mode=value).mode == value


class Index:
    """An integer type that is not ``int`` (as numpy's are): taken through ``__index__``."""

    def __index__(self) -> int:
        return 64


def test_max_block_chars_values() -> None:
    assert SieveOptions(max_block_chars=1).max_block_chars == 1
    n = SieveOptions(max_block_chars=Index()).max_block_chars  # type: ignore[arg-type]
    assert n == 64 and type(n) is int


# ---------------------------------------------------------------------- §12 grammar options
def test_dialects_normalised() -> None:
    assert SieveOptions(dialects=["xml", "dsml"]).dialects == ("xml", "dsml")
    assert SieveOptions(dialects=iter(["xml", "xml", "dsml", "xml"])).dialects == ("xml", "dsml")


def test_grammar_dirs_normalised(tmp_path: Path) -> None:
    class Where(os.PathLike[str]):
        def __fspath__(self) -> str:
            return "custom"

    o = SieveOptions(grammar_dirs=[tmp_path, "plain", Where()])
    assert o.grammar_dirs == (str(tmp_path), "plain", "custom")


def test_repeated_dialect_compiles_once() -> None:
    assert callsieve.parse(CALL, dialects=("xml", "xml")).calls[0].name == "read"


def test_grammar_dirs_existence_is_not_checked_here(tmp_path: Path) -> None:
    # load_grammar decides about missing directories; the value object stays I/O-free.
    missing = str(tmp_path / "missing")
    assert SieveOptions(grammar_dirs=(missing,)).grammar_dirs == (missing,)


# ---------------------------------------------------------------------- §9 tool definitions
@pytest.mark.parametrize("tool", [OPENAI, FLAT, ANTHROPIC], ids=["openai", "flat", "anthropic"])
def test_tool_shapes(tool: dict[str, Any]) -> None:
    o = SieveOptions([tool])
    assert o.tools == (tool,) and o.tools[0] is tool  # a dict is kept as given
    assert o.schemas == {"read": SCHEMA}


def test_tools_any_iterable() -> None:
    def gen() -> Iterator[dict[str, Any]]:
        yield FLAT
        yield {"name": "bare"}

    o = SieveOptions(gen())
    assert o.tools == (FLAT, {"name": "bare"})
    assert o.schemas == {"read": SCHEMA, "bare": {}}
    assert SieveOptions([]).tools == () and SieveOptions(None).schemas == {}


def test_model_dump_object() -> None:
    obj = Dumpable({"name": "read", "description": None, "parameters": SCHEMA, "strict": None})
    o = SieveOptions([obj])
    assert obj.calls == [{"exclude_none": True}]
    assert o.tools == ({"name": "read", "parameters": SCHEMA},)
    assert o.schemas == {"read": SCHEMA}


def test_model_dump_without_exclude_none() -> None:
    o = SieveOptions([PlainDumpable({"name": "read", "input_schema": SCHEMA, "description": None})])
    assert o.schemas == {"read": SCHEMA}


def test_model_dump_openai_shape_with_none_fields() -> None:
    o = SieveOptions(
        [
            PlainDumpable(
                {
                    "type": "function",
                    "function": {"name": "read", "parameters": None, "input_schema": SCHEMA},
                }
            )
        ]
    )
    assert o.schemas == {"read": SCHEMA}


def test_mappings_become_dicts_without_touching_the_input() -> None:
    inner = MappingProxyType({"name": "read", "parameters": MappingProxyType(SCHEMA)})
    given = {"type": "function", "function": inner}
    o = SieveOptions([given, MappingProxyType(FLAT)])
    assert given["function"] is inner  # copied, never changed
    assert all(type(t) is dict for t in o.tools)
    assert type(o.tools[0]["function"]) is dict
    assert type(o.tools[0]["function"]["parameters"]) is dict
    assert o.schemas == {"read": SCHEMA}


@pytest.mark.parametrize(
    "tool",
    [OPENAI, FLAT, ANTHROPIC, Dumpable(ANTHROPIC)],
    ids=["openai", "flat", "anthropic", "model_dump"],
)
def test_tool_schema_reaches_the_parser(tool: Any) -> None:
    # A string-typed parameter stays a string (README "tools"): the schema was read.
    assert callsieve.parse(CALL).calls[0].input == {"path": 42}
    assert callsieve.parse(CALL, tools=[tool]).calls[0].input == {"path": "42"}
    sieve = callsieve.Sieve([tool])
    events = sieve.feed(CALL) + sieve.close()
    calls = [c for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls]
    assert [c.input for c in calls] == [{"path": "42"}]


def test_openai_sdk_type() -> None:
    shared = pytest.importorskip("openai.types.shared")
    definition = shared.FunctionDefinition(name="read", parameters=SCHEMA)
    assert SieveOptions([definition]).schemas == {"read": SCHEMA}


def test_anthropic_sdk_type() -> None:
    types = pytest.importorskip("anthropic.types")
    tool = types.ToolParam(name="read", input_schema=SCHEMA)  # (a TypedDict: a dict)
    assert SieveOptions([tool]).schemas["read"]["properties"] == SCHEMA["properties"]


# ---------------------------------------------------------------------- id_factory
def test_make_call_id() -> None:
    assert make_call_id(lambda: "call_1") == "call_1"
    assert make_call_id(callsieve.new_call_id).startswith("call_")
    with pytest.raises(ConfigurationError, match="id_factory must return a str, got int"):
        make_call_id(lambda: 5)
    boom = ValueError("boom")

    def raises() -> str:
        raise boom

    with pytest.raises(ConfigurationError, match="id_factory raised ValueError: boom") as info:
        make_call_id(raises)
    assert info.value.__cause__ is boom


def test_id_factory_kinds_accepted() -> None:
    counter = itertools.count(1)
    for factory in (callsieve.new_call_id, lambda: f"id{next(counter)}", str, counter.__next__):
        assert SieveOptions(id_factory=factory).id_factory is factory  # type: ignore[arg-type]


def test_id_factory_bad_result_raises_at_the_first_call() -> None:
    assert callsieve.parse("no calls", id_factory=lambda: 5).text == "no calls"
    with pytest.raises(ConfigurationError, match="id_factory must return a str, got int"):
        callsieve.parse(CALL, id_factory=lambda: 5)

"""Strategy: write tool calls in a family whose spelling is a template (hermes, qwen3_coder,
glm45, kimi_k2, minimax_m2, seed_oss, gpt_oss and the legacy element formats), so that the
parser reads back exactly the calls written (SPEC §16).

What it does: ``template_calls`` fills the dialect's spelling (``grammar/spelling/<d>.lark``):
``CALL_HEAD`` (its slots: the tool's name, then the call's index), the arguments as
``ARGS`` says — ``"envelope"`` (one JSON object ``{"name", "arguments"}``, the arguments'
key ``ARGS_KEY`` where the family's template writes another: Llama's ``"parameters"``),
``"json"`` (the arguments, one JSON object), ``"python"`` (Python keyword arguments,
``city='SF', days=3``: each value a Python literal), ``"raw"``, ``"markup"`` or ``"values"``
(``ARG_OPEN`` with the key's slot, the value, ``ARG_CLOSE``, for each argument, ``ARG_SEP``
between two; ``ARG_CLOSE`` may hold the key's slot too)
— and ``CALL_TAIL``; calls stand in one block (``BLOCK_OPEN`` … ``BLOCK_CLOSE``) or, where the
spelling has no ``BLOCK_OPEN``, each in a block of its own, joined by ``BLOCK_SEP``.
A markup value is read by SPEC §5. A string is written plain where that reads back. Else it
goes in CDATA: one holding ``<``, ``&`` or a line break, or one that reads as another value.
Any other value is JSON, ``<`` and ``&`` escaped.
A ``"values"`` value is written in the family's own value language (gemma4, read by the
contract's value nodes): a string as it is between ``STRING_OPEN`` and ``STRING_CLOSE``, an
object between ``OBJECT_OPEN`` and ``OBJECT_CLOSE`` (each member ``ARG_OPEN`` with its key,
then its value; ``ARG_SEP`` between two), a list between ``ARRAY_OPEN`` and ``ARRAY_CLOSE``,
anything else JSON.
A raw value is written as the families' templates write it: a string as it is, anything else
as JSON. Where the tool's schema (``schemas``, from ``format_calls(tools=)``) types the
parameter ``string``, the parser keeps its text as the string (``decode_raw``), so the string
is written as it is, always — ``"42"`` as ``42``. Elsewhere (no schema, or another type) a
string the parser would read as another JSON value (``"42"``, ``"true"``) is written as a JSON
string, every ``<`` in it as ``\\u003c`` (a raw value that is one JSON value is that value).
A family whose raw values are strings without a schema (``ValueReading.raw_strings``: its
reference parsers read them so) writes every string as it is; one that reads as ``null``, or
that its closing tag would end, is a ``FormatError`` there (no text gives it back); any
other value is its JSON, which a schemaless read gives back as that text.
A string holding a tag lead or white space at its ends is parsed alone in its place first;
one that does not read back between the template's tags is tried on lines of its own where
the spelling has ``ARG_OPEN_LINES``/``ARG_CLOSE_LINES`` (seed_oss's tags take a line break at
either end), then as a JSON string — except under a ``string`` schema, where nothing else
reads back: that, and a value that is no string in a string-typed parameter, is a
``FormatError`` naming the parameter.
What it guarantees: every call written is parsed back (``parse`` with the dialect alone, and
for a raw family the string-typed parameters' schema) and compared with what was asked for;
a call that does not read back — a name the dialect cannot carry, a key the format cannot
hold — is a ``FormatError`` naming it, never text that reads back different. JSON nested
deeper than the balanced run reads (``MAX_JSON_DEPTH``) is one too.
What it costs: one parse of each call written (linear in its text), one more for each raw
string with a tag lead or white space at its ends (the call with that argument alone), and
a second of the call for one whose raw strings had to be written as JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

from .._base.errors import FormatError
from .._base.values import RAW_NULL, _is_string_type, decode_raw
from .._blocks.assembler import param_schema, param_schema_type
from .._facade.results import parse
from .._grammar.spelling import SLOT, Spelling
from .._scan.balanced import MAX_JSON_DEPTH
from .write import _depth

__all__ = ["raw_strings", "template_calls", "templated"]

#: How a template dialect writes arguments (its spelling's ``ARGS``).
ARG_KINDS = ("envelope", "json", "python", "raw", "markup", "values")
#: What a ``"markup"`` string may hold and still be written plain (else it goes in CDATA).
_MARKUP_SPECIAL = frozenset("<＜〈&\r\n")


def templated(sp: Spelling) -> bool:
    """Is this dialect written from a call template (``ARGS`` says how its arguments are;
    ``CALL_HEAD``, the text before them, may be empty and then left out)?"""
    return "ARGS" in sp


def _fill(text: str, values: list[str]) -> str:
    """``text`` with its slots filled in order (a slot past ``values`` stays empty)."""
    parts = text.split(SLOT)
    out = parts[0]
    for k, part in enumerate(parts[1:]):
        out += (values[k] if k < len(values) else "") + part
    return out


def _json(value: Any, escape_lt: bool = False) -> str:
    if _depth(value) > MAX_JSON_DEPTH:
        raise FormatError(
            f"arguments nest deeper than {MAX_JSON_DEPTH}",
            expected=("JSON nested at most 64 deep",),
        )
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"argument is not JSON: {exc}", expected=("JSON values",)) from None
    return text.replace("<", "\\u003c") if escape_lt else text


#: The characters a raw value's run stops at (a tag may begin there): a string holding none
#: of them reads back as it is when ``decode_raw`` gives it back; one holding one is tried.
_TAG_LEADS = frozenset("<＜〈")


def _python(value: Any) -> str:
    """A JSON value as a Python literal (what ``call_kwargs`` reads back)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FormatError(
                "argument is not JSON: a number out of range", expected=("JSON values",)
            )
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python(str(k))}: {_python(v)}" for k, v in value.items()) + "}"
    raise FormatError(f"argument is not JSON: {type(value).__name__}", expected=("JSON values",))


def _in_values(sp: Spelling, value: Any, depth: int = 0) -> str:
    """A JSON value in the family's own value language (``"values"``, see the module's
    docstring); a value nested deeper than the parser reads is a ``FormatError``."""
    if isinstance(value, str):
        close = sp.get("STRING_CLOSE")
        if close in value:  # (the family's strings have no escape)
            raise FormatError(
                f"a string holding {close!r} cannot be written in {sp.dialect}: it would end there",
                expected=(f"strings without {close!r}",),
            )
        return sp.get("STRING_OPEN") + value + close
    if isinstance(value, (dict, list)) and depth >= MAX_JSON_DEPTH:
        raise FormatError(
            f"arguments nest deeper than {MAX_JSON_DEPTH}",
            expected=("values nested at most 64 deep",),
        )
    if isinstance(value, dict):
        members = (
            sp.fill("ARG_OPEN", str(k)) + _in_values(sp, v, depth + 1) for k, v in value.items()
        )
        return sp.get("OBJECT_OPEN") + sp.get("ARG_SEP").join(members) + sp.get("OBJECT_CLOSE")
    if isinstance(value, list):
        items = (_in_values(sp, v, depth + 1) for v in value)
        return sp.get("ARRAY_OPEN") + sp.get("ARG_SEP").join(items) + sp.get("ARRAY_CLOSE")
    return _json(value)


def _arguments(sp: Spelling, kind: str, name: str, args: dict[str, Any]) -> str:
    """The arguments of a call of an ``"envelope"``, ``"json"``, ``"python"`` or ``"values"``
    dialect."""
    if kind == "values":
        return sp.get("ARG_SEP").join(
            sp.fill("ARG_OPEN", key) + _in_values(sp, value) for key, value in args.items()
        )
    if kind == "envelope":
        return _json({"name": name, sp.get("ARGS_KEY") or "arguments": args})
    if kind == "json":
        return _json(args)
    if _depth(args) >= MAX_JSON_DEPTH:  # (the argument list's parenthesis is one level)
        raise FormatError(
            f"arguments nest deeper than {MAX_JSON_DEPTH - 1}",
            expected=("JSON nested less deep",),
        )
    return ", ".join(f"{key}={_python(value)}" for key, value in args.items())


def _markup(sp: Spelling, args: dict[str, Any], cdata: bool = False) -> str:
    """The arguments of a ``"markup"`` dialect: each between ``ARG_OPEN`` and ``ARG_CLOSE``,
    a string plain where it holds nothing SPEC §5 would read otherwise (``cdata``: never),
    else in CDATA (a ``]]>`` in it split across two sections); any other value JSON, ``<``
    and ``&`` escaped (a body's entities are decoded before its JSON is read)."""
    out = []
    for key, value in args.items():
        if not isinstance(value, str):
            body = _json(value, escape_lt=True).replace("&", "\\u0026")
        elif not cdata and _plain(value):
            body = value
        else:
            open_, close = sp.get("CDATA_OPEN"), sp.get("CDATA_CLOSE")
            body = open_ + value.replace(close, close[:-1] + close + open_ + close[-1:]) + close
        out.append(sp.fill("ARG_OPEN", key) + body + _arg_close(sp, "ARG_CLOSE", key))
    return sp.get("ARG_SEP").join(out)


def _plain(value: str) -> bool:
    """Does ``value``, written as it is, read back as this string (SPEC §5)?"""
    return (
        value != ""
        and value == value.strip()
        and _MARKUP_SPECIAL.isdisjoint(value)
        and decode_raw(value) == value
    )


def _block(sp: Spelling, calls: list[str]) -> str:
    if "BLOCK_OPEN" in sp:
        return sp["BLOCK_OPEN"] + sp.get("CALL_SEP").join(calls) + sp.get("BLOCK_CLOSE")
    return sp.get("BLOCK_SEP").join(calls)


def _reads_back(
    sp: Spelling,
    dirs: tuple[str, ...],
    text: str,
    name: str,
    args: Any,
    tools: list[dict[str, Any]] | None = None,
) -> bool:
    got = parse(text, dialects=(sp.dialect,), grammar_dirs=dirs, tools=tools).calls
    return len(got) == 1 and got[0].name == name and _same(got[0].input, args)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1`` is not ``True``, ``1.0`` is ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


#: The tags around a raw value, in the order tried: the template's own, then (where the
#: spelling has them) the same tags with the value on lines of its own, for a value whose
#: line break at either end the template's tags would take (seed_oss).
_ARG_TAGS = (("ARG_OPEN", "ARG_CLOSE"), ("ARG_OPEN_LINES", "ARG_CLOSE_LINES"))


class _RawCall(NamedTuple):
    """One call of a ``"raw"`` dialect being written: where it stands (``position``), its
    ``head`` and ``tail``, ``strings``, the keys its tool's schema types ``string`` (the
    parser keeps their text as the string, ``decode_raw``), ``raw_strings``, whether the
    family reads a raw value as its text where no schema speaks of its parameter, and
    ``typed``, the keys a schema speaks of."""

    sp: Spelling
    dirs: tuple[str, ...]
    position: int
    name: str
    head: str
    tail: str
    strings: frozenset[str]
    raw_strings: bool = False
    typed: frozenset[str] = frozenset()

    def tools(self) -> list[dict[str, Any]] | None:
        """The schema a read-back is parsed with: the string-typed keys alone (what decides
        how a raw value reads; coercing the other types is SPEC §9's, not the writer's)."""
        if not self.strings and not (self.raw_strings and self.typed):
            return None
        # (the other typed keys, where the family's raw values are strings: a schema that
        # speaks of them, so their values read as JSON, as under the tools' own schema)
        props: dict[str, Any] = {key: {} for key in self.typed} if self.raw_strings else {}
        props.update({key: {"type": "string"} for key in self.strings})
        return [{"name": self.name, "parameters": {"type": "object", "properties": props}}]

    def refuse(self, key: str, why: str, expected: str) -> FormatError:
        return FormatError(
            f"calls[{self.position}] ({self.name!r}) cannot be written in {self.sp.dialect}: "
            f"parameter {key!r} is typed string in the tool's schema, and {why}",
            expected=(expected,),
        )

    def read_back(self, args: dict[str, Any]) -> dict[str, Any]:
        """What the arguments read back as with ``tools()`` (``raw_strings``: a value that
        is no string, in a parameter not typed string, as the JSON text written)."""
        if not self.raw_strings:
            return args
        return {
            k: v if k in self.typed or v is None or isinstance(v, str) else _json(v, True)
            for k, v in args.items()
        }


def _raw_text(call: _RawCall, key: str, value: str) -> str | None:
    """``value`` as it is between the argument's tags: the first pair of ``_ARG_TAGS``
    whose text reads back as the value (parsed alone in the call, unless it holds no tag
    lead and no white space at its ends, which every family reads back), or None."""
    sp = call.sp
    for open_, close in _ARG_TAGS:
        if open_ not in sp:
            continue
        text = sp.fill(open_, key) + value + _arg_close(sp, close, key)
        if _TAG_LEADS.isdisjoint(value) and value == value.strip():
            return text
        one = _block(sp, [call.head + text + call.tail])
        if _reads_back(sp, call.dirs, one, call.name, {key: value}, call.tools()):
            return text
    return None


def _raw_arg(call: _RawCall, key: str, value: Any, as_json: bool) -> str:
    """One argument of a ``"raw"`` dialect: a string as it is where it reads back so (under
    a ``string`` schema always, or it is a ``FormatError``), else — and, unless the key is
    string-typed, for every value when ``as_json`` — JSON, ``<`` as ``\\u003c``."""
    if key in call.strings:
        if not isinstance(value, str):
            raise call.refuse(
                key,
                f"its value is {_kind(value)}: the family reads such a parameter's text as the "
                "string, so no text gives this value back",
                "a string for a parameter typed string",
            )
        text = _raw_text(call, key, value)
        if text is None:
            raise call.refuse(
                key,
                "its value holds text that would end it early (the family's closing tag): "
                "written as it is it would not read back, and under a string schema a JSON "
                "string reads back with its quotes",
                "a string that holds none of the family's closing tags",
            )
        return text
    if call.raw_strings and key not in call.typed and isinstance(value, str):
        text = None if value.lower() == RAW_NULL else _raw_text(call, key, value)
        if text is None:
            raise FormatError(
                f"calls[{call.position}] ({call.name!r}) cannot be written in "
                f"{call.sp.dialect} without a schema for parameter {key!r}: the family reads "
                "such a value as its text and null as null, and this string is null or holds "
                "text that would end it early",
                expected=("a string typed string in the tools, or another string",),
            )
        return text
    if isinstance(value, str) and not as_json and decode_raw(value) == value:
        text = _raw_text(call, key, value)
        if text is not None:
            return text
    value_text = _json(value, escape_lt=True)
    return call.sp.fill("ARG_OPEN", key) + value_text + _arg_close(call.sp, "ARG_CLOSE", key)


def _arg_close(sp: Spelling, name: str, key: str) -> str:
    """The tag that ends an argument: the spelling's ``name``, the key in its slot where it
    has one (minimax_m3's element, ``</city>``)."""
    return sp.fill(name, key) if name in sp else ""


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", list: "an array"}.get(
        type(value), "an object"
    )


def _raw_call(call: _RawCall, args: dict[str, Any]) -> str:
    """The call, its raw strings as they are where they read back so; if the call as a whole
    does not read back, again with every value JSON but the string-typed ones."""
    want = call.read_back(args)
    for as_json in (False, True):
        text = (
            call.head
            + call.sp.get("ARG_SEP").join(
                _raw_arg(call, key, value, as_json) for key, value in args.items()
            )
            + call.tail
        )
        if _reads_back(call.sp, call.dirs, _block(call.sp, [text]), call.name, want, call.tools()):
            return text
    raise _unwritable(call.sp, call.position, call.name)


def _unwritable(sp: Spelling, index: int, name: str) -> FormatError:
    return FormatError(
        f"calls[{index}] ({name!r}) cannot be written in {sp.dialect}: it would not "
        "read back the same (a name or a key the format cannot carry)",
        expected=("names and keys without the format's own delimiters",),
    )


def raw_strings(sp: Spelling) -> bool:
    """Whether the family reads a raw value without a schema as its text (its dialect file's
    ``//%raw_values_are_strings``)."""
    reading = sp.grammar.dialect_map.value_readings.get(sp.dialect)
    return reading is not None and reading.raw_strings


def template_calls(
    sp: Spelling,
    calls: list[tuple[str, dict[str, Any]]],
    dirs: tuple[str, ...] = (),
    schemas: dict[str, dict[str, Any]] | None = None,
) -> str:
    """The calls in the dialect's template, each checked to read back (see the module's
    docstring); ``schemas`` (tool name: its parameters' schema) says which parameters of a
    ``"raw"`` dialect are typed ``string``; ``""`` for no calls."""
    if not calls:
        return ""
    kind = sp["ARGS"]
    if kind not in ARG_KINDS:
        raise FormatError(f"{sp.path}: ARGS must be one of {ARG_KINDS}, not {kind!r}")
    written: list[str] = []
    for index, (name, args) in enumerate(calls):
        head = _fill(sp.get("CALL_HEAD"), [name, str(index)])
        tail = sp.get("CALL_TAIL")
        if kind == "raw":
            strings = frozenset(
                key for key in args if _is_string_type(param_schema_type(schemas or {}, name, key))
            )
            typed = frozenset(k for k in args if param_schema(schemas or {}, name, k) is not None)
            raw = _RawCall(sp, dirs, index, name, head, tail, strings, raw_strings(sp), typed)
            written.append(_raw_call(raw, args))
            continue
        if kind == "markup":
            text = head + _markup(sp, args) + tail
            if not _reads_back(sp, dirs, _block(sp, [text]), name, args):
                text = head + _markup(sp, args, cdata=True) + tail
        else:
            text = head + _arguments(sp, kind, name, args) + tail
        if not _reads_back(sp, dirs, _block(sp, [text]), name, args):
            raise _unwritable(sp, index, name)
        written.append(text)
    return _block(sp, written)

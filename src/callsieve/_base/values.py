"""Strategy: turn a parameter body into a JSON value (SPEC §5).

What it does: CDATA is verbatim (several sections concatenate, plain text between them in
its place); a plain text body is trimmed and its XML entities decoded; ``string="true"`` keeps the raw string, ``string="false"`` parses
JSON; otherwise a JSON literal becomes its value. Element children become arrays (all
``<item>``) or objects (repeated names collect into arrays), recursively; structured XML
inside CDATA is decoded the same way unless the parameter is a raw-text field or the
fragment is a single flat inline tag. A schema type of ``string`` keeps a string. Elements
nested deeper than ``MAX_XML_DEPTH`` keep the body a string: the fragment is read with a
pull parser in slices, and reading stops at the first element too deep, so a hostile body
of 100k nested elements costs one slice of elements, not 100k of them.
What it guarantees: pure functions, no exceptions escape for any input. What it costs:
linear in the body; XML is only parsed when the body contains ``<``.
"""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_XML_DEPTH",
    "RAW_NULL",
    "RAW_TEXT_FIELDS",
    "Structured",
    "decode_entities",
    "decode_param",
    "decode_raw",
    "escape_del",
    "json_literal",
    "load_json",
    "parse_argument_object",
]

#: Parameters whose CDATA is never read as XML, whatever it holds.
RAW_TEXT_FIELDS = frozenset(
    {"content", "command", "prompt", "old_string", "new_string", "code", "text"}
)

#: Elements nested deeper than this in a body keep it a string (real arguments nest a few
#: levels; the bound keeps the decoder's memory and recursion small on any input).
MAX_XML_DEPTH = 64
_XML_SLICE = 4096  # characters fed to the pull parser between two depth checks

_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _entity(m: re.Match[str]) -> str:
    body = m.group(1)
    if body[0] != "#":
        return _NAMED[body]
    try:
        code = int(body[2:], 16) if body[1] in "xX" else int(body[1:])  # noqa: FURB166
        return chr(code)
    except (ValueError, OverflowError):
        return m.group(0)


def decode_entities(text: str) -> str:
    """Decode the XML entities (``&lt; &gt; &amp; &quot; &apos; &#NN; &#xNN;``) only."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(number: str) -> float:
    value = float(number)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{number} is out of a float's range")
    return value


#: One decoder, made once (``json.loads`` with hooks builds a decoder per call).
_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def load_json(text: str) -> Any:
    """``json.loads`` for strict JSON: ``NaN``, ``Infinity`` and numbers out of a float's
    range (``1e999``) are not JSON (Python's ``json`` takes them, and then writes text that
    JSON clients refuse), so a value holding one is not a JSON value here: a string, or for
    arguments, not an object. Raises ``ValueError`` (or ``RecursionError``)."""
    return _STRICT.decode(text)


def json_literal(text: str) -> Any:
    """A JSON number, ``true``, ``false``, ``null``, array or object becomes its value;
    anything else stays the string it was."""
    if not text:
        return text
    c = text[0]
    if (
        c in "[{"
        or text in ("true", "false", "null")
        or ((c == "-" or c.isdigit()) and _NUMBER.fullmatch(text))
    ):
        try:
            return load_json(text)
        except (ValueError, RecursionError):
            return text
    return text


def _is_string_type(schema_type: Any) -> bool:
    if schema_type == "string":
        return True
    return (
        isinstance(schema_type, list)
        and "string" in schema_type
        and not (set(schema_type) - {"string", "null"})
    )


#: What a JSON value can begin with (``decode_raw`` reads no other text as JSON).
_JSON_STARTS = frozenset('-0123456789tfn["{')


#: A raw value read as null by the families whose raw values are strings (their parsers
#: compare it without case).
RAW_NULL = "null"


def decode_raw(
    text: str, string_attr: str | None = None, schema_type: Any = None, strings: bool = False
) -> Any:
    """A raw-text body (the contract's ``raw_value``: the families that write values as raw
    text, grammar/README.md): the text as written when the schema types it ``string`` or a
    ``string="true"`` attribute says so. Otherwise, where the family's raw values are
    ``strings`` (and no schema speaks of the parameter: the caller says), the text as written (``null``, in any case, is null:
    the family's reference parsers read it so, SPEC §19); else a body that is one JSON value,
    white space around it aside, is that value (a number, ``true``/``false``/``null``, an
    array, an object, a quoted string: what those templates write for anything but a
    string), and any other text stays the text as written — no trimming, no entities, no
    XML."""
    if string_attr == "true" or _is_string_type(schema_type):
        return text
    if strings:
        return None if text.lower() == RAW_NULL else text
    body = text.strip()
    if not body or body[0] not in _JSON_STARTS:
        return text
    try:
        return load_json(body)
    except (ValueError, RecursionError):
        return text


@dataclass(frozen=True, slots=True)
class Structured:
    """A parameter's value read from the contract's value nodes (a family's own value
    language, ``_blocks.value_nodes``): JSON already, never decoded again."""

    value: Any


def decode_param(
    name: str,
    parts: list[tuple[bool, str]] | Structured,
    string_attr: str | None,
    schema_type: Any = None,
    raw: bool = False,
    raw_strings: bool = False,
) -> Any:
    """Decode one parameter body. ``parts`` are ``(is_cdata, text)`` in order, or the value
    value nodes gave (``Structured``: it is the value); ``raw``: the body is a ``raw_value``
    (``decode_raw``, its family's raw values ``raw_strings`` or not)."""
    if isinstance(parts, Structured):
        return parts.value
    if raw:
        return decode_raw("".join(t for _, t in parts), string_attr, schema_type, raw_strings)
    force_string = _is_string_type(schema_type)
    if any(is_cdata for is_cdata, _ in parts):
        value = _with_cdata(parts, string_attr == "true")
        if string_attr == "true" or force_string:
            return value
        if string_attr == "false":
            return _json_or_string(value.strip())
        if name not in RAW_TEXT_FIELDS and "<" in value:
            ok, structured = _xml_fragment(value, from_cdata=True)
            if ok:
                return structured
        return value
    plain = "".join(t for _, t in parts)
    if string_attr == "true":
        return plain
    text = plain.strip()
    if string_attr == "false" and not force_string:
        return _json_or_string(decode_entities(text))
    if "<" in text and not force_string:
        ok, structured = _xml_fragment(text, from_cdata=False)
        if ok:
            return structured
    decoded = decode_entities(text)
    return decoded if force_string else json_literal(decoded)


def _with_cdata(parts: list[tuple[bool, str]], raw: bool) -> str:
    """A body that holds CDATA, read in the order written: CDATA verbatim, the plain text
    between as written (``raw``: ``string="true"``) or with its entities decoded and the
    body's plain white space trimmed at both ends (CDATA content is never trimmed). What
    argument streaming sends of a body is then always the start of its value, wherever the
    CDATA stands (``_blocks.argstream``)."""
    if raw:
        return "".join(t for _, t in parts)
    texts = [t for _, t in parts]
    k = 0
    while k < len(parts) and not parts[k][0]:  # plain white space before the first content
        texts[k] = texts[k].lstrip()
        if texts[k]:
            break
        k += 1
    k = len(parts) - 1
    while k >= 0 and not parts[k][0]:  # ... and after the last
        texts[k] = texts[k].rstrip()
        if texts[k]:
            break
        k -= 1
    return "".join(
        t if is_cdata else decode_entities(t) for (is_cdata, _), t in zip(parts, texts, strict=True)
    )


def _json_or_string(text: str) -> Any:
    try:
        return load_json(text)
    except (ValueError, RecursionError):
        return text


def _xml_fragment(text: str, *, from_cdata: bool) -> tuple[bool, Any]:
    """Elements-only XML → (True, array|object); anything else → (False, None)."""
    try:
        parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(("start", "end"))
        root: ET.Element | None = None
        depth = 0
        slices = (text[k : k + _XML_SLICE] for k in range(0, len(text), _XML_SLICE))
        for piece in itertools.chain(("<r>",), slices, ("</r>",)):
            parser.feed(piece)
            for event in parser.read_events():  # (start/end events: (name, Element))
                if root is None:
                    root = event[1]  # type: ignore[misc,assignment]
                depth += 1 if event[0] == "start" else -1
                if depth > MAX_XML_DEPTH + 1:  # (+ 1: the wrapper <r>)
                    return False, None
        parser.close()
        return (False, None) if root is None else _xml_tree(root, from_cdata)
    except Exception:  # noqa: BLE001 - expat rejects lone surrogates, …: not XML, a string
        return False, None


def _xml_tree(root: ET.Element, from_cdata: bool) -> tuple[bool, Any]:
    children = list(root)
    if not children or (root.text or "").strip() or any((c.tail or "").strip() for c in children):
        return False, None
    if from_cdata and len(children) == 1 and children[0].tag != "item" and not len(children[0]):
        return False, None  # a single flat inline tag (<b>urgent</b>) stays a string
    value = _element_children(root)
    return (value is not _MIXED), value


_MIXED = object()


def _element_children(el: ET.Element) -> Any:
    children = list(el)
    if all(c.tag == "item" for c in children):
        items = [_element_value(c) for c in children]
        return _MIXED if any(v is _MIXED for v in items) else items
    obj: dict[str, Any] = {}
    for c in children:
        v = _element_value(c)
        if v is _MIXED:
            return _MIXED
        if c.tag in obj:
            prev = obj[c.tag]
            if isinstance(prev, _Repeated):
                prev.append(v)
            else:
                obj[c.tag] = _Repeated([prev, v])
        else:
            obj[c.tag] = v
    return {k: (list(v) if isinstance(v, _Repeated) else v) for k, v in obj.items()}


class _Repeated(list):  # type: ignore[type-arg]
    """Marks a value collected from repeated element names (a real list value stays one)."""


def _element_value(el: ET.Element) -> Any:
    if not len(el):
        return json_literal((el.text or "").strip())
    if (el.text or "").strip() or any((c.tail or "").strip() for c in el):
        return _MIXED
    return _element_children(el)


def parse_argument_object(text: str) -> dict[str, Any] | None:
    """A JSON object of arguments; None if it is not one. Empty text is an empty object. (A
    fence around the JSON is the grammar's to read: ``call_args`` holds the JSON only.)"""
    body = text.strip()
    if not body:
        return {}
    try:
        value = load_json(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def escape_del(json_text: str) -> str:
    """JSON text with DEL written ``\\u007f``, as llguidance's JSON writes it, so a model
    under an exported constraint can write what the prompt writers write (``json.dumps``
    leaves DEL raw, and only in strings, so the same value reads back)."""
    return json_text.replace("\x7f", "\\u007f")

"""Strategy: write tool calls in a markup dialect (DSML, XML) from the grammar's spellings, so
that the parser reads back exactly the calls written (SPEC §16).

What it does: ``markup_calls`` writes one block: the wrapper, one invoke per call, one
parameter per argument, each with ``string="true"`` (a string) or ``string="false"`` (any
other JSON value, written as JSON), every tag spelled by ``grammar/spelling/<dialect>.lark``.
A body is written as the dialect's templates write it — plain — when the dialect's
spelling says ``STRING_BODY: "plain"`` (DeepSeek's) or the value is not a string, and only
if it holds none of the characters at which the plain body's run stops (a ``<``-like
character; the exported constraint's rule for a plain body too); otherwise, and for every
string in a ``"cdata"`` dialect, as CDATA, a
``]]>`` inside split across two sections (``]]]]><![CDATA[>``), which reads back verbatim.
A call whose argument names are not all ones ``name="…"`` can carry exactly (quotes, line
breaks, white space at either end, over 512 characters, empty) is written with a JSON object
as its invoke body instead (SPEC §4: every markup dialect reads one), which holds any key.
Under the tools' schemas so is a call whose value the exported constraint cannot hold in a
parameter line (``typed_body``): a null string, ``]]>`` in a constrained string, or a
length whose product with the section is past ``PRODUCT_STATES`` (``long_string``, the
one predicate the exporter asks too).
What it guarantees: every value reads back equal; what cannot — a tool name ``name="…"``
cannot carry, a value that is not JSON, a JSON body nested deeper than the balanced run
reads (``MAX_JSON_DEPTH``) — is a ``FormatError``, never a call that reads back different.
What it costs: a plain body is checked for the body run's stop characters, once; CDATA
costs one ``str.replace``. Linear in the values.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .._base.errors import FormatError
from .._base.values import _is_string_type, escape_del
from .._blocks.assembler import param_schema
from .._grammar.names import SPELLINGS, TEXT_RUN
from .._grammar.prefix import first_chars
from .._grammar.spelling import Spelling
from .._scan.balanced import MAX_JSON_DEPTH

__all__ = [
    "PRODUCT_STATES",
    "STRING_CONSTRAINTS",
    "constrained_string",
    "length_states",
    "long_string",
    "markup_calls",
    "name_attr",
    "typed_body",
]

_TRUE, _FALSE = "true", "false"  # the values of the string attribute (SPEC §5)
_ENTITY = "&"  # what XML character entities begin with (a plain body's are decoded)


def _attr(sp: Spelling, name: Any) -> str | None:
    """`` name="…"`` for ``name`` if the grammar's ``NAME_ATTR`` reads it back as ``name``."""
    text = sp.fill(SPELLINGS.NAME_ATTR, name) if isinstance(name, str) and name else ""
    m = sp.terminal(SPELLINGS.NAME_ATTR).fullmatch(text) if text else None
    value = None if m is None else (m.group("q") if m.group("q") is not None else m.group("v"))
    return text if value is not None and value.strip() == name else None


def name_attr(sp: Spelling, name: str, what: str) -> str:
    """`` name="…"`` for ``name``, checked against the grammar's ``NAME_ATTR``."""
    text = _attr(sp, name)
    if text is None:
        raise FormatError(
            f"{what} name {name!r} cannot be written in {sp.dialect}",
            expected=(
                (
                    "1-512 characters without quotes or line breaks, and no "
                    "white space at either end"
                ),
            ),
        )
    return text


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (iteratively: any depth is fine)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            stack += [(c, d + 1) for c in (v.values() if isinstance(v, dict) else v)]
    return deepest


def _json_body(sp: Spelling, arguments: dict[str, Any]) -> str:
    if _depth(arguments) > MAX_JSON_DEPTH:
        raise FormatError(
            f"arguments nest deeper than {MAX_JSON_DEPTH}, and an argument name "
            "cannot be a parameter name",
            expected=("parameter names of 1-512 characters",),
        )
    return _json(arguments)


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"argument is not JSON: {exc}", expected=("JSON values",)) from None
    return escape_del(text)


def _cdata(sp: Spelling, text: str) -> str:
    open_, close = sp[SPELLINGS.CDATA_OPEN], sp[SPELLINGS.CDATA_CLOSE]
    split = close[:-1] + close + open_ + close[-1:]
    return open_ + text.replace(close, split) + close


def _param(sp: Spelling, key: str, value: Any) -> str:
    is_str = isinstance(value, str)
    head = (
        sp[SPELLINGS.PARAM_OPEN]
        + name_attr(sp, key, "parameter")
        + sp.fill(SPELLINGS.ATTR, _TRUE if is_str else _FALSE)
        + sp[SPELLINGS.TAG_END]
    )
    text = value if is_str else _json(value)
    if not is_str or sp.get(SPELLINGS.STRING_BODY) != "cdata":
        plain = head + text + sp[SPELLINGS.PARAM_CLOSE]
        if _plain_reads_back(sp, text, is_str):
            return plain
    return head + _cdata(sp, text) + sp[SPELLINGS.PARAM_CLOSE]


def _plain_string(sp: Spelling, value: Any) -> bool:
    """Is ``value`` a string written plain (not in CDATA)?"""
    return (
        isinstance(value, str)
        and sp.get(SPELLINGS.STRING_BODY) != "cdata"
        and _plain_reads_back(sp, value, True)
    )


def _fits(sp: Spelling, value: Any) -> bool:
    """Can ``value`` be a parameter's body? A string always (CDATA takes any, in sections).
    JSON plain, or in one CDATA section (the parser reads JSON from one): not JSON whose
    strings hold both a tag lead (or ``&``) and ``]]>`` — that call is one JSON object."""
    if isinstance(value, str):
        return True
    text = _json(value)
    return _plain_reads_back(sp, text, False) or sp[SPELLINGS.CDATA_CLOSE] not in text


@functools.lru_cache(maxsize=64)
def _stops(sp: Spelling) -> frozenset[str] | None:
    """The characters at which the run that reads a plain body (``TEXT_RUN``) stops (None:
    the dialect has no such run, or its stop is no small fixed set)."""
    run = sp.grammar.terminals.get(TEXT_RUN)
    if run is None or not run.is_run or run.stop_source is None:
        return None
    chars = first_chars(run.stop_source)
    return frozenset(chars) if chars else None


def _plain_reads_back(sp: Spelling, text: str, is_str: bool) -> bool:
    """Is ``text`` written plain? Only where it holds none of the characters at which the
    plain body's run stops (a ``<``-like character): the run then takes the whole text, and
    the value rules give it back — ``string="true"`` the raw text, ``string="false"`` the
    JSON, which has no white space at its ends, when it holds no ``&`` (no entity to decode:
    the constraint's plain JSON keeps ``&`` out, so the writer does too). This is
    also what the exported constraint allows in a plain body (``constrain``'s ``Markup``), so
    every call written here is one the constraint accepts (SPEC §18)."""
    stops = _stops(sp)
    if stops is None or any(c in stops for c in text):
        return False
    return is_str or _ENTITY not in text


#: The keywords that constrain a string's text (the exported constraint writes such a
#: string in one CDATA section, which cannot hold ``]]>``).
STRING_CONSTRAINTS = ("pattern", "format", "minLength", "maxLength")
#: The most states of a constrained string's product with its context that every export
#: target writes out (``constrain._product``): a structural tag's, whose every body is a
#: grammar of its own. xgrammar compiles about 20 ms per state (docs/constrained-decoding.md).
PRODUCT_STATES = 256


def length_states(lo: int, hi: int | None, context: int) -> int:
    """The states of a length's product with a context of ``context`` states: one per
    count (``max(lo, hi) + 1``) times the context's."""
    return (max(lo, hi or 0) + 1) * context


def _branches(prop: Any) -> list[dict[str, Any]]:
    """``prop`` and its ``anyOf``/``oneOf`` branches, nested ones too (dicts only)."""
    if not isinstance(prop, dict):
        return []
    found = [prop]
    for key in ("anyOf", "oneOf"):
        branches = prop.get(key)
        if isinstance(branches, list):
            found += [b for branch in branches for b in _branches(branch)]
    return found


def constrained_string(prop: Any) -> bool:
    """Does a keyword of ``prop`` (or of a branch) constrain a string's text?"""
    return any(k in b for b in _branches(prop) for k in STRING_CONSTRAINTS)


def _nested(prop: Any) -> list[dict[str, Any]]:
    """``prop`` and every schema inside it: branches, items, properties (not ``$ref``)."""
    found: list[dict[str, Any]] = []
    todo = [prop]
    while todo:
        s = todo.pop()
        if not isinstance(s, dict):
            continue
        found.append(s)
        for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
            inner = s.get(key)
            todo += inner if isinstance(inner, list) else [inner]
        inner = s.get("properties")
        todo += list(inner.values()) if isinstance(inner, dict) else []
        todo.append(s.get("additionalProperties"))
    return found


def long_string(prop: Any, context: int) -> bool:
    """Does a length in ``prop`` (or in a schema inside it: a branch, items, properties)
    make a product past ``PRODUCT_STATES`` with a context of ``context`` states (a CDATA
    section: its end's length)? Then the writer writes a value of it that would go in CDATA
    in the JSON object body instead, and the constraint's CDATA forms of the parameter keep
    a narrower language (``constrain``'s ``Markup``): no value is written there."""
    for b in _nested(prop):
        lo, hi = b.get("minLength", 0), b.get("maxLength")
        if not isinstance(lo, int) or not (hi is None or isinstance(hi, int)):
            continue
        if (lo or hi is not None) and length_states(lo, hi, context) > PRODUCT_STATES:
            return True
    return False


def typed_body(prop: Any, value: Any, context: int = 3) -> bool:
    """Does this value of a parameter whose schema is ``prop`` need the JSON object body
    under that schema, where a string would go in CDATA (``context``: the states of the
    section's end)? A value that is no string where the schema types the parameter
    ``string`` (``null`` in ``["string", "null"]``: a parameter line reads as a string
    whatever its body); a string that holds ``]]>`` where the schema constrains its text
    (one section holds no ``]]>``); a string whose length bound is past the product's
    (``long_string``). The constraint offers the body for every tool that has such a
    parameter (``constrain``'s ``Markup``)."""
    if not isinstance(value, str):
        return isinstance(prop, dict) and _is_string_type(prop.get("type"))
    return ("]]>" in value and constrained_string(prop)) or long_string(prop, context)


def _needs_body(sp: Spelling, prop: Any, value: Any, states: int) -> bool:
    """Does this value need the JSON object body (``typed_body``), where it is not written
    plain? JSON of a parameter with a long string too, where it would go in CDATA: the
    constraint's JSON in a section takes no product past the bound there."""
    if _plain_string(sp, value):
        return False
    if typed_body(prop, value, states):
        return True
    return (
        not isinstance(value, str)
        and long_string(prop, states)
        and not _plain_reads_back(sp, _json(value), False)
    )


def markup_calls(
    sp: Spelling,
    calls: list[tuple[str, dict[str, Any]]],
    schemas: dict[str, dict[str, Any]] | None = None,
) -> str:
    """One block holding ``calls``, one tag per line; ``""`` for no calls. ``schemas``
    (tool name: its parameters' schema) say where a value needs the JSON object body
    (``typed_body``)."""
    if not calls:
        return ""
    lines = [sp[SPELLINGS.CALLS_OPEN]]
    states = len(sp[SPELLINGS.CDATA_CLOSE])  # (a section's matcher: one state per character)
    for name, arguments in calls:
        lines.append(
            sp[SPELLINGS.INVOKE_OPEN] + name_attr(sp, name, "tool") + sp[SPELLINGS.TAG_END]
        )
        typed = [
            k
            for k, v in arguments.items()
            if _needs_body(sp, param_schema(schemas or {}, name, k), v, states)
        ]
        if not typed and all(
            _attr(sp, key) is not None and _fits(sp, v) for key, v in arguments.items()
        ):
            lines += [_param(sp, key, value) for key, value in arguments.items()]
        else:
            lines.append(_json_body(sp, arguments))
        lines.append(sp[SPELLINGS.INVOKE_CLOSE])
    lines.append(sp[SPELLINGS.CALLS_CLOSE])
    return "\n".join(lines)

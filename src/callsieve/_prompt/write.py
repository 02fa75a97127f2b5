"""Strategy: write tool calls in a markup dialect (DSML, XML) from the grammar's spellings, so
that the parser reads back exactly the calls written (SPEC §16).

What it does: ``markup_calls`` writes one block: the wrapper, one invoke per call, one
parameter per argument, each with ``string="true"`` (a string) or ``string="false"`` (any
other JSON value, written as JSON), every tag spelled by ``grammar/spelling/<dialect>.lark``.
A body is written as the dialect's templates write it — plain — when the dialect's
spelling says ``STRING_BODY: "plain"`` (DeepSeek's) or the value is not a string, and only
if the parser reads that plain body back as the value (no terminal of the grammar matches
where the body's run would stop); otherwise, and for every string in a ``"cdata"``
dialect, as CDATA, a
``]]>`` inside split across two sections (``]]]]><![CDATA[>``), which reads back verbatim.
A call whose argument names are not all ones ``name="…"`` can carry exactly (quotes, line
breaks, white space at either end, over 512 characters, empty) is written with a JSON object
as its invoke body instead (SPEC §4: every markup dialect reads one), which holds any key.
What it guarantees: every value reads back equal; what cannot — a tool name ``name="…"``
cannot carry, a value that is not JSON, a JSON body nested deeper than the balanced run
reads (``MAX_JSON_DEPTH``) — is a ``FormatError``, never a call that reads back different.
What it costs: a plain body is checked with one regex search for the body run's stop (no
``<``-like character: the common case), and at each stop the few terminals that can start
with its character; CDATA costs one ``str.replace``. Linear in the values.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .._base.errors import FormatError
from .._base.values import decode_entities
from .._grammar.names import SPELLINGS, TEXT_RUN
from .._grammar.spelling import Spelling
from .._scan.balanced import MAX_JSON_DEPTH

__all__ = ["markup_calls", "name_attr"]

_TRUE, _FALSE = "true", "false"  # the values of the string attribute (SPEC §5)


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
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"argument is not JSON: {exc}", expected=("JSON values",)) from None


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


@functools.lru_cache(maxsize=64)
def _bounded(sp: Spelling) -> tuple[tuple[frozenset[str] | None, Any], ...]:
    """Every bounded terminal of the dialect's grammar: (its first characters, its pattern)."""
    return tuple(
        (t.first, t.pattern)
        for t in sp.grammar.terminals.values()
        if not t.is_run and t.source is not None
    )


def _plain_reads_back(sp: Spelling, text: str, is_str: bool) -> bool:
    """Does the parser read ``text``, as a plain body, back as it is? Where the run that
    reads a plain body (``TEXT_RUN``) would stop (a ``<``-like character), no terminal of
    the grammar may match (the text and the closing tag after it: a tag's context): then the
    run takes the whole text, and the value rules give it back — ``string="true"`` the raw
    text, ``string="false"`` the JSON, which has no white space at its ends, when no entity
    is there to decode. (A superset of the terminals a body can meet: a ``<b>`` passes, an
    ``<invoke`` does not.)"""
    run = sp.grammar.terminals.get(TEXT_RUN)
    if run is None or not run.is_run or run.stop is None:
        return False
    if not is_str and decode_entities(text) != text:
        return False
    context = text + sp[SPELLINGS.PARAM_CLOSE]
    bounded = _bounded(sp)
    for m in run.stop.finditer(text):
        i, c = m.start(), text[m.start()]
        if any(
            (first is None or c in first) and pattern.match(context, i)
            for first, pattern in bounded
        ):
            return False
    return True


def markup_calls(sp: Spelling, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """One block holding ``calls``, one tag per line; ``""`` for no calls."""
    if not calls:
        return ""
    lines = [sp[SPELLINGS.CALLS_OPEN]]
    for name, arguments in calls:
        lines.append(
            sp[SPELLINGS.INVOKE_OPEN] + name_attr(sp, name, "tool") + sp[SPELLINGS.TAG_END]
        )
        if all(_attr(sp, key) is not None for key in arguments):
            lines += [_param(sp, key, value) for key, value in arguments.items()]
        else:
            lines.append(_json_body(sp, arguments))
        lines.append(sp[SPELLINGS.INVOKE_CLOSE])
    lines.append(sp[SPELLINGS.CALLS_CLOSE])
    return "\n".join(lines)

"""Strategy: the markers of a tool-call format, read off differential renderings (``_probe``).

What it does: ``extract(probe)`` cuts each rendering into tokens (tags, white space, text,
JSON objects), finds the call unit (what a second call adds), the section around it, the
parameter unit (what a second parameter adds), and where the name, key and value stand.
The result is a ``Shape``: the block's tokens split at the slots, and the notes of what the
renderings could not tell (``Shape.notes``).
What it guarantees: a marker is only what the renderings wrote; a shape it cannot find is a
``DraftError`` saying which rendering fell short.
What it costs: linear in the renderings' length.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from ._probe import CALL_ID, KEY1, KEY2, NAME1, NAME2, THOUGHT, VAL1, VAL2, Probe
from ._render import DraftError

__all__ = ["Shape", "Token", "extract", "tokens"]

_TOKEN = re.compile(r"<[^<>\n]{1,200}>|\s+|[^<\s{]+|[<{]")
#: How the arguments are written: one JSON object, a JSON envelope, or one slot per key.
ARGS_JSON, ARGS_ENVELOPE, ARGS_MARKUP = "json", "envelope", "markup"


@dataclass(frozen=True)
class Token:
    """One piece of a rendering: ``kind`` is ``tag``, ``ws``, ``text`` or ``json``."""

    kind: str
    text: str


@dataclass(frozen=True)
class Shape:
    """A format as the renderings showed it. ``section`` and ``section_end`` wrap the calls
    (empty: each call is a block); ``head`` runs up to the arguments (it holds the name);
    ``param`` is one argument (key and value slots; empty unless ``args`` is markup);
    ``tail`` follows the arguments. ``separator`` stands between two calls."""

    section: tuple[Token, ...]
    section_end: tuple[Token, ...]
    head: tuple[Token, ...]
    param: tuple[Token, ...]
    tail: tuple[Token, ...]
    separator: str
    args: str
    envelope_keys: tuple[str, str] = ("name", "arguments")
    think: tuple[str, str] | None = None
    value_lines: bool = False
    notes: tuple[str, ...] = ()
    #: the rendering's own text around the calls, and between two parameters
    block_open: str = ""
    block_close: str = ""
    param_separator: str = ""
    #: the parameter's tag changes with the value's type (an attribute such as string="…")
    typed_tags: bool = False


def tokens(text: str) -> list[Token]:
    """``text`` as tokens; a JSON object that starts at a ``{`` is one ``json`` token."""
    out: list[Token] = []
    decoder = json.JSONDecoder()
    at = 0
    while at < len(text):
        if text[at] == "{":
            try:
                _, end = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                end = -1
            if end > at:
                out.append(Token("json", text[at:end]))
                at = end
                continue
        m = _TOKEN.match(text, at)
        assert m is not None  # (the last alternative takes any one character)
        piece = m.group()
        if piece.startswith("{") and len(piece) > 1:  # (a brace that opens no JSON: text)
            piece = "{"
        kind = "tag" if piece.startswith("<") and piece.endswith(">") else "text"
        out.append(Token("ws" if piece.isspace() else kind, piece))
        at += len(piece)
    return out


def _norm(t: Token) -> tuple[str, str]:
    text = t.text.replace(NAME2, NAME1).replace(KEY2, KEY1).replace(VAL2, VAL1)
    return t.kind, re.sub(r"\d+", "#", text.replace(CALL_ID + "1", CALL_ID))


def _strip_ws(ts: list[Token]) -> list[Token]:
    while ts and ts[0].kind == "ws":
        ts = ts[1:]
    while ts and ts[-1].kind == "ws":
        ts = ts[:-1]
    return ts


def _find(hay: list[Token], needle: list[Token]) -> int:
    keys, want = [_norm(t) for t in hay], [_norm(t) for t in needle]
    for i in range(len(keys) - len(want) + 1):
        if keys[i : i + len(want)] == want:
            return i
    return -1


@dataclass(frozen=True)
class _Unit:
    before: list[Token]
    unit: list[Token]
    after: list[Token]
    separator: str


def _unit(one: list[Token], two: list[Token], marker: str) -> _Unit:
    """The unit ``two`` repeats of ``one`` (it holds ``marker``), and what stands around it
    in ``one``."""
    lcp = 0
    while lcp < min(len(one), len(two)) and one[lcp] == two[lcp]:
        lcp += 1
    lcs = 0
    while lcs < min(len(one), len(two)) - lcp and one[-1 - lcs] == two[-1 - lcs]:
        lcs += 1
    inserted = two[lcp : len(two) - lcs]
    for size in range(len(inserted), 0, -1):
        for start in range(len(inserted) - size + 1):
            part = _strip_ws(inserted[start : start + size])
            if not any(marker in _norm(t)[1] for t in part):
                continue
            at = _find(one, part)
            if at >= 0:
                whole = "".join(t.text for t in inserted)
                sep = whole.replace("".join(t.text for t in part), "", 1)
                return _Unit(one[:at], one[at : at + len(part)], one[at + len(part) :], sep)
    raise DraftError(f"no repeated unit holding {marker!r} between the renderings")


def _envelope(t: Token) -> tuple[str, str] | None:
    try:
        value = json.loads(t.text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    name_key = next((k for k, v in value.items() if v == NAME1), None)
    args_key = next((k for k, v in value.items() if v == {KEY1: VAL1}), None)
    if name_key is None or args_key is None:
        return None
    return name_key, args_key


def _think(p: Probe) -> tuple[str, str] | None:
    if p.thought is None:
        return None
    at = p.thought.index(THOUGHT)
    before = [t for t in tokens(p.thought[:at]) if t.kind != "ws"]
    after = [t for t in tokens(p.thought[at + len(THOUGHT) :]) if t.kind != "ws"]
    if before and after and before[-1].kind == "tag" and after[0].kind == "tag":
        return before[-1].text, after[0].text
    return None


def _args(unit: list[Token]) -> tuple[str, tuple[str, str]]:
    for t in unit:
        if t.kind == "json":
            keys = _envelope(t)
            if keys is not None:
                return ARGS_ENVELOPE, keys
            if json.loads(t.text) == {KEY1: VAL1}:
                return ARGS_JSON, ("name", "arguments")
    return ARGS_MARKUP, ("name", "arguments")


def _notes(p: Probe, shape_args: str) -> list[str]:
    notes: list[str] = []
    if p.obj is not None and "{'deepkey'" in p.obj:
        notes.append(
            "values as Python repr: the template writes an object argument as Python's "
            "repr ({'k': 'v'}), which no JSON reader takes; the draft reads JSON values"
        )
    if (
        shape_args == ARGS_MARKUP
        and p.number is not None
        and p.number.replace("4242", VAL1) == p.one
    ):
        notes.append(
            "untyped values: a string and a number are written alike (4242), so without a "
            "tool schema the draft reads a value that looks like JSON as JSON; where the "
            "family's reference parsers keep such values strings, add "
            "//%raw_values_are_strings to the draft"
        )
    end = p.prompt_end.rstrip()
    think = _think(p) or ("<think>", "</think>")
    if end.endswith(think[0]):
        notes.append(
            f"a think tag forced open: the generation prompt ends with {think[0]!r}, so the "
            'reply starts inside reasoning (read it with reasoning="open")'
        )
    return notes


def extract(p: Probe) -> Shape:
    """The ``Shape`` of the calls ``p`` rendered (``DraftError``: no call rendered, or no
    structure found)."""
    if p.one is None:
        raise DraftError("no tool rendering: the template writes no tool calls")
    notes: list[str] = []
    one = tokens(p.one.strip())
    if not any(NAME1 in t.text for t in one):
        if p.id_named is None or NAME1 not in p.id_named:
            raise DraftError("no tool name rendered: the template writes neither name nor id")
        notes.append(
            "a name only in an id: the template writes the call's id, not its name; the "
            "draft assumes ids of the form functions.NAME:INDEX"
        )
        one = tokens(p.id_named.strip())
        p = replace(p, two_calls=p.id_named_two)
    if p.two_calls is None:
        notes.append(
            "one call per turn: the template refuses to write two calls, so the draft reads "
            "one call per block and nothing says how two would be joined"
        )
        call = _Unit([], one, [], "")
    else:
        call = _unit(one, tokens(p.two_calls.strip()), NAME1)
    if not call.before and all(t.kind in ("json", "ws") for t in call.unit):
        raise DraftError(
            "no marker: the template writes a bare JSON object; telling one from JSON in "
            "prose needs a hand-written dialect (as llama3_json)"
        )
    args, keys = _args(call.unit)
    if args == ARGS_MARKUP and f"'{KEY1}'" in "".join(t.text for t in call.unit):
        raise DraftError(
            "arguments as Python repr: the template writes the arguments object as "
            "Python's repr ({'k': 'v'}); no reader of JSON or markup takes that"
        )
    head, param, tail, param_sep = call.unit, list[Token](), list[Token](), ""
    if args == ARGS_MARKUP:
        head, param, tail, param_sep = _params(call, p)
    else:
        cut = next(i for i, t in enumerate(call.unit) if t.kind == "json")
        head, tail = call.unit[: cut + 1], call.unit[cut + 1 :]
    notes.extend(_notes(p, args))
    value_lines = bool(param) and _value_lines(param)
    return Shape(
        section=tuple(_last_tag_on(_strip_ws(call.before))),
        section_end=tuple(_strip_ws(call.after)),
        head=tuple(head),
        param=tuple(param),
        tail=tuple(tail),
        separator=call.separator,
        args=args,
        envelope_keys=keys,
        think=_think(p),
        value_lines=value_lines,
        notes=tuple(notes),
        block_open="".join(
            t.text
            for t in call.before[
                len(call.before)
                - len(_last_tag_on(_strip_ws(call.before)))
                - _trailing_ws(call.before) :
            ]
        ),
        block_close="".join(t.text for t in call.after),
        param_separator=param_sep,
        typed_tags=p.number is not None and p.number.replace("4242", VAL1) != p.one,
    )


def _trailing_ws(ts: list[Token]) -> int:
    return 1 if ts and ts[-1].kind == "ws" else 0


def _last_tag_on(ts: list[Token]) -> list[Token]:
    """The section's opener: from its last tag on (the turn's framing before it, such as
    an empty thought, is not the section's)."""
    tags = [i for i, t in enumerate(ts) if t.kind == "tag"]
    return ts[tags[-1] :] if tags else ts


def _params(call: _Unit, p: Probe) -> tuple[list[Token], list[Token], list[Token], str]:
    unit = call.unit
    if p.two_params is None or VAL1 not in "".join(t.text for t in unit):
        raise DraftError("no argument rendered: the template writes no key and value")
    two = tokens(p.two_params.strip())
    two = two[len(call.before) : len(two) - len(call.after)]
    param = _unit(unit, two, VAL1)
    return param.before, param.unit, param.after, param.separator


def _value_lines(param: list[Token]) -> bool:
    """Whether the value stands on lines of its own (one line break each side)."""
    at = next(i for i, t in enumerate(param) if VAL1 in t.text)
    return 0 < at < len(param) - 1 and param[at - 1].text == "\n" and param[at + 1].text == "\n"


def describe(shape: Shape) -> dict[str, Any]:
    """The shape as plain data (for the report)."""

    def text(ts: tuple[Token, ...]) -> str:
        return "".join(t.text for t in ts)

    return {
        "section": text(shape.section),
        "section_end": text(shape.section_end),
        "call_head": text(shape.head),
        "parameter": text(shape.param),
        "call_tail": text(shape.tail),
        "separator": shape.separator,
        "arguments": shape.args,
        "think": list(shape.think) if shape.think else None,
    }

"""Strategy: write tool calls in a family whose spelling is a template (hermes, qwen3_coder,
glm45, kimi_k2, minimax_m2, seed_oss, gpt_oss and the legacy element formats), so that the
parser reads back exactly the calls written (SPEC §16).

What it does: ``template_calls`` fills the dialect's spelling (``grammar/spelling/<d>.lark``):
``CALL_HEAD`` (its slots: the tool's name, then the call's index), the arguments as
``ARGS`` says — ``"envelope"`` (one JSON object ``{"name", "arguments"}``, the arguments'
key ``ARGS_KEY`` where the family's template writes another: Llama's ``"parameters"``),
``"json"`` (the arguments, one JSON object), ``"python"`` (Python keyword arguments,
``city='SF', days=3``: each value a Python literal) or ``"raw"`` (``ARG_OPEN`` with the key's
slot, the value, ``ARG_CLOSE``, for each argument) — and ``CALL_TAIL``; calls stand in one block
(``BLOCK_OPEN`` … ``BLOCK_CLOSE``) or, where the spelling has no ``BLOCK_OPEN``, each in a
block of its own, joined by ``BLOCK_SEP``. A raw value is a string written as it is, and
anything else as JSON; a string the parser would not read back as it is — one that reads
as JSON (``"42"``, ``"true"``), or that holds the family's own closing tags — is written as
a JSON string instead, every ``<`` in it as ``\\u003c`` (the families' raw values read a
JSON string back as the string, ``decode_raw``).
What it guarantees: every call written is parsed back (``parse`` with the dialect alone) and
compared with what was asked for; a call that does not read back — a name the dialect
cannot carry, a key the format cannot hold — is a ``FormatError`` naming it, never text that
reads back different. JSON nested deeper than the balanced run reads (``MAX_JSON_DEPTH``) is
one too.
What it costs: one parse of each call written (linear in its text), a second for a call
whose raw strings had to be written as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .._base.errors import FormatError
from .._base.values import decode_raw
from .._facade.results import parse
from .._grammar.spelling import SLOT, Spelling
from .._scan.balanced import MAX_JSON_DEPTH
from .write import _depth

__all__ = ["template_calls", "templated"]

#: How a template dialect writes arguments (its spelling's ``ARGS``).
ARG_KINDS = ("envelope", "json", "python", "raw")


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


def _raw(value: Any, as_json: bool) -> str:
    """A raw value's text: a string as it is (unless ``as_json``), else JSON."""
    if isinstance(value, str) and not as_json:
        return value
    return _json(value, escape_lt=True)


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


def _arguments(sp: Spelling, kind: str, name: str, args: dict[str, Any], probe: Any = None) -> str:
    if kind == "envelope":
        return _json({"name": name, sp.get("ARGS_KEY") or "arguments": args})
    if kind == "json":
        return _json(args)
    if kind == "python":
        if _depth(args) >= MAX_JSON_DEPTH:  # (the argument list's parenthesis is one level)
            raise FormatError(
                f"arguments nest deeper than {MAX_JSON_DEPTH - 1}",
                expected=("JSON nested less deep",),
            )
        return ", ".join(f"{key}={_python(value)}" for key, value in args.items())
    return "".join(
        sp.fill("ARG_OPEN", key)
        + _raw(value, probe is None or not probe(key, value))
        + sp.get("ARG_CLOSE")
        for key, value in args.items()
    )


def _block(sp: Spelling, calls: list[str]) -> str:
    if "BLOCK_OPEN" in sp:
        return sp["BLOCK_OPEN"] + sp.get("CALL_SEP").join(calls) + sp.get("BLOCK_CLOSE")
    return sp.get("BLOCK_SEP").join(calls)


def _reads_back(sp: Spelling, dirs: tuple[str, ...], text: str, name: str, args: Any) -> bool:
    got = parse(text, dialects=(sp.dialect,), grammar_dirs=dirs).calls
    return len(got) == 1 and got[0].name == name and _same(got[0].input, args)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1`` is not ``True``, ``1.0`` is ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _prober(
    sp: Spelling, dirs: tuple[str, ...], head: str, tail: str, name: str
) -> Callable[[str, Any], bool]:
    """Does a string read back as it is, written raw in this call's place? Only one holding a
    tag's lead character is tried (parsed alone in the call)."""

    def plain(key: str, value: Any) -> bool:
        if not isinstance(value, str) or decode_raw(value) != value:
            return False
        if _TAG_LEADS.isdisjoint(value):
            return True
        one = head + sp.fill("ARG_OPEN", key) + value + sp.get("ARG_CLOSE") + tail
        return _reads_back(sp, dirs, _block(sp, [one]), name, {key: value})

    return plain


def template_calls(
    sp: Spelling, calls: list[tuple[str, dict[str, Any]]], dirs: tuple[str, ...] = ()
) -> str:
    """The calls in the dialect's template, each checked to read back (see the module's
    docstring); ``""`` for no calls."""
    if not calls:
        return ""
    kind = sp["ARGS"]
    if kind not in ARG_KINDS:
        raise FormatError(f"{sp.path}: ARGS must be one of {ARG_KINDS}, not {kind!r}")
    written: list[str] = []
    for index, (name, args) in enumerate(calls):
        head = _fill(sp.get("CALL_HEAD"), [name, str(index)])
        tail = sp.get("CALL_TAIL")

        plain = _prober(sp, dirs, head, tail, name)
        text = head + _arguments(sp, kind, name, args, plain) + tail
        if not _reads_back(sp, dirs, _block(sp, [text]), name, args):
            text = head + _arguments(sp, kind, name, args) + tail  # (every value as JSON)
            if not _reads_back(sp, dirs, _block(sp, [text]), name, args):
                raise FormatError(
                    f"calls[{index}] ({name!r}) cannot be written in {sp.dialect}: it would not "
                    "read back the same (a name or a key the format cannot carry)",
                    expected=("names and keys without the format's own delimiters",),
                )
        written.append(text)
    return _block(sp, written)

"""A dialect's shape written as a transformers ``response_template`` (the reverse direction).

What it does: ``response_template_for(dialect)`` reads the dialect's spelling file (the shape
``callsieve.prompt`` writes calls in, grammar/README.md "Spellings") and says it in the
spec's terms. The call's head and tail become the ``tool_calls`` field's markers. The
arguments become ``json`` content, an envelope, a JSON list of envelopes, or ``xml-inline``
parameters. Text outside a call is the ``content`` field.

What it guarantees: a dialect whose shape the spec cannot say is a ``ConfigurationError``
saying why (no writer, Python-style arguments, markup values, a closing tag naming its
key). Nothing is guessed: the markers are the spellings the grammar is checked against.
Not exported: the reasoning tags (a spelling file holds no spelling of them).
"""

from __future__ import annotations

import re
from typing import Any

from .._base.errors import ConfigurationError
from .._grammar.compiled import load_grammar
from .._grammar.spelling import SLOT, Spelling, spelling

__all__ = ["response_template_for"]

#: What a name slot may hold in a pattern (the tool names the spec's placeholders carry).
NAME_GROUP = r"(?P<name>[\w.\-]+)"
#: A JSON key followed by a slot (``"tool_name": "{}"``) and the key that ends a head.
_SLOT_KEY = re.compile(r'"(?P<key>\w+)"\s*:\s*"\{\}"')
_LAST_KEY = re.compile(r'"(?P<key>\w+)"\s*:\s*$')


def response_template_for(
    dialect: str, start_anchor: str, extra_dirs: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The ``response_template`` of ``dialect``'s written shape, or a ``ConfigurationError``
    saying why the spec cannot express it. ``start_anchor`` is the chat template's text just
    before a reply (``"<|im_start|>assistant\n"``): the spec needs it, and no dialect knows it."""
    if not isinstance(start_anchor, str) or not start_anchor:
        raise ConfigurationError("start_anchor: the chat template's text before a reply is needed")
    sp = spelling(dialect, extra_dirs)
    if "CALL_HEAD" not in sp:
        raise ConfigurationError(
            f"dialect {dialect!r}: its spelling file has no call template (CALL_HEAD): its "
            "calls are markup or a shape of their own, which no content kind reads"
        )
    kind = sp["ARGS"]
    if not sp.get("CALL_TAIL").strip() and "BLOCK_OPEN" not in sp:
        raise ConfigurationError(
            f"dialect {dialect!r}: a call has no closing marker (it ends where its value ends), "
            "and a field needs one"
        )
    if "BLOCK_OPEN" in sp:
        calls = _list(sp, dialect)
    elif kind == "envelope":
        calls = _envelope(sp)
    elif kind == "json":
        calls = _named(sp, dialect, {"content": "json"})
    elif kind == "raw":
        calls = _named(sp, dialect, _xml_inline(sp, dialect, extra_dirs))
    else:
        raise ConfigurationError(
            f"dialect {dialect!r}: its arguments are {kind!r}, which no content kind reads as "
            "callsieve does"
        )
    if not calls.get("transform_each"):  # (a list is all the block's calls at once)
        calls["repeats"] = True
    return {
        "defaults": {"role": "assistant"},
        "start_anchor": start_anchor,
        "fields": {"content": {"content": "text"}, "tool_calls": calls},
    }


def _pattern(text: str) -> str:
    """A spelling as a regex: literal, its white space any white space (``\\s*``)."""
    return "".join(
        r"\s*" if part.isspace() else re.escape(part) for part in re.split(r"(\s+)", text) if part
    )


def _close(tail: str) -> dict[str, str]:
    """A closing marker: literal, or a pattern where white space stands inside it."""
    tail = tail.strip()
    return {"close_pattern": _pattern(tail)} if re.search(r"\s", tail) else {"close": tail}


def _function(name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _envelope(sp: Spelling) -> dict[str, Any]:
    """One JSON envelope a call: ``{"name": …, "arguments": …}`` (or ``ARGS_KEY``'s key)."""
    head = sp["CALL_HEAD"]
    out: dict[str, Any] = {**_close(sp["CALL_TAIL"]), "content": "json"}
    if SLOT in head:  # (the name also stands in the head: matched, not read)
        out["open_pattern"] = r"[\w.\-]+".join(_pattern(p.strip()) for p in head.split(SLOT))
    else:
        out["open"] = head.strip()
    args = sp.get("ARGS_KEY")
    out["transform"] = (
        _function("{content.name}", "{content." + args + "}")
        if args
        else {"type": "function", "function": "{content}"}
    )
    return out


def _named(sp: Spelling, dialect: str, content: dict[str, Any]) -> dict[str, Any]:
    """A head that names the call (its first slot), the arguments after it."""
    head = sp["CALL_HEAD"]
    if head.count(SLOT) != 1:
        raise ConfigurationError(f"dialect {dialect!r}: its call head has no single name slot")
    before, after = head.split(SLOT)
    return {
        "open_pattern": _pattern(before.lstrip()) + NAME_GROUP + _pattern(after.rstrip()),
        **_close(sp["CALL_TAIL"]),
        **content,
        "transform": _function("{name}", "{content}"),
    }


def _xml_inline(sp: Spelling, dialect: str, extra_dirs: tuple[str, ...]) -> dict[str, Any]:
    """Parameters as elements: ``ARG_OPEN`` with the key's slot, the value, ``ARG_CLOSE``."""
    arg_open, arg_close = sp["ARG_OPEN"], sp["ARG_CLOSE"]
    if arg_open.count(SLOT) != 1 or SLOT in arg_close or "ARG_SEP" in sp:
        raise ConfigurationError(
            f"dialect {dialect!r}: its parameters are not elements a tag pattern can read "
            "(a key in the closing tag, or values joined by a separator)"
        )
    before, after = arg_open.split(SLOT)
    pattern = (
        _pattern(before.strip())
        + r"(?P<key>[^\s<>=]+)"
        + _pattern(after.strip())
        + r"\s*(?P<value>.*?)\s*"
        + _pattern(arg_close.strip())
    )
    args: dict[str, Any] = {"tag_pattern": pattern}
    if not load_grammar((dialect,), extra_dirs).dialect_map.value_readings[dialect].raw_strings:
        args["value_parser"] = {"name": "json", "args": {"allow_non_json": True}}
    return {"content": "xml-inline", "content_args": args}


def _list(sp: Spelling, dialect: str) -> dict[str, Any]:
    """A JSON list of envelopes between two markers (Command R7B's action list)."""
    block_open, block_close = sp["BLOCK_OPEN"].rstrip(), sp["BLOCK_CLOSE"].lstrip()
    head, tail = sp["CALL_HEAD"], sp["CALL_TAIL"]
    name_key = _SLOT_KEY.search(head)
    args_key = _LAST_KEY.search(head)
    if sp["ARGS"] != "json" or not block_open.endswith("["):
        raise ConfigurationError(
            f"dialect {dialect!r}: its calls stand inside a wrapper (BLOCK_OPEN) that no "
            "field can say around repeated calls"
        )
    if (
        not block_open.endswith("[")
        or not block_close.startswith("]")
        or not head.startswith("{")
        or tail != "}"
        or name_key is None
        or args_key is None
    ):
        raise ConfigurationError(
            f"dialect {dialect!r}: its block is not one JSON list of envelopes between two markers"
        )
    return {
        "open": block_open[:-1].strip(),
        "close": block_close[1:].strip(),
        "content": "json",
        "transform_each": True,
        "transform": _function("{" + name_key["key"] + "}", "{" + args_key["key"] + "}"),
    }

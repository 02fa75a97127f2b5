"""Strategy: a chat template's dialect, told by rendering a sample call and reading it back.

What it does: ``by_rendering(sources)`` renders an assistant turn with one call and with two
in jinja2's sandbox (``_render``). The reply is what the turn adds after the generation
prompt. Each dialect reads the reply alone. A dialect fits when it gives exactly the calls,
and the text it leaves is part of the turn without calls (its end-of-turn token, say). Of
several that fit, the most specific wins: the one whose own writing of the same calls
(``format_calls``) is nearest the template's (difflib's ratio, white space aside). Markers come from the grammar and
spelling files only: Python names no tag.
What it guarantees: ``None`` when no template renders a call, or no dialect reads it; a
``ConfigurationError`` naming the candidates when the nearest are equally near.
What it costs: a few renders, and one parse of two short texts per dialect (under a second).
Needs the ``draft`` extra (jinja2).
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._base.errors import CallsieveError, ConfigurationError
from .._config.model_dir import ModelDirDialect
from .._facade.results import parse
from .._grammar.files import dialects as listed_dialects
from ..prompt import format_calls
from ._probe import KEY1, NAME1, NAME2, VAL1, VAL2, trim_tags
from ._render import DraftError, Template

__all__ = ["Reply", "by_rendering", "replies"]

_USER = {"role": "user", "content": "Hi"}
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A tool.",
            "parameters": {"type": "object", "properties": {KEY1: {"type": "string"}}},
        },
    }
    for name in (NAME1, NAME2)
]
_ONE = ((NAME1, {KEY1: VAL1}),)
_TWO = ((NAME1, {KEY1: VAL1}), (NAME2, {KEY1: VAL2}))
#: Call ids: Kimi's ``functions.NAME:I`` (a template that writes only the id names the call
#: so), else nine letters and digits (Mistral's templates refuse other ids).
_IDS = ("functions.{}:{}", "call{1}abcd")

Calls = tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True)
class Reply:
    """A template's replies: ``bare`` without calls, ``one`` and ``two`` with them (``two`` is
    ``None`` where the template writes only the first call)."""

    bare: str
    one: str
    two: str | None


def _message(calls: Calls, ids: str, as_text: bool) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": ids.format(name, i),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args) if as_text else args},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def _after(prompt: str, full: str) -> str:
    """What ``full`` adds after the generation ``prompt`` (never from inside a tag)."""
    prefix, _ = trim_tags(len(os.path.commonprefix([prompt, full])), 0, full)
    return full[prefix:]


def _render(t: Template, calls: Calls, prompt: str) -> str | None:
    """The reply holding ``calls``: arguments as a mapping, else as JSON text (the template
    decides which it takes)."""
    for ids in _IDS:
        for as_text in (False, True):
            try:
                full = t.render([_USER, _message(calls, ids, as_text)], _TOOLS)
            except DraftError:
                continue
            reply = _after(prompt, full)
            if NAME1 in reply:
                return reply
    return None


def replies(source: str) -> Reply | None:
    """The template's replies, or ``None`` where it fails or writes no call."""
    try:
        t = Template(source)
        prompt = t.render([_USER], _TOOLS, add_generation_prompt=True)
        bare = _after(prompt, t.render([_USER, {"role": "assistant", "content": ""}], _TOOLS))
    except DraftError:
        return None
    one = _render(t, _ONE, prompt)
    if one is None:
        return None
    two = _render(t, _TWO, prompt)
    return Reply(bare, one, two if two is not None and NAME2 in two else None)


def _reads(text: str, dialect: str, grammar_dirs: tuple[str, ...]) -> tuple[Calls, str] | None:
    """The calls ``dialect`` alone reads in ``text``, and the text it leaves."""
    try:
        got = parse(text, dialects=[dialect], grammar_dirs=list(grammar_dirs))
    except CallsieveError:
        return None
    return tuple((c.name, c.input) for c in got.calls), got.text


def _fits(reply: Reply, dialect: str, grammar_dirs: tuple[str, ...]) -> bool:
    """Whether ``dialect`` reads the replies as exactly their calls, leaving only what the
    turn without calls writes (white space aside)."""
    bare = re.sub(r"\s", "", reply.bare)
    for text, calls in ((reply.one, _ONE), (reply.two, _TWO)):
        if text is None:
            continue
        read = _reads(text, dialect, grammar_dirs)
        if read is None or read[0] != calls or re.sub(r"\s", "", read[1]) not in bare:
            return False
    return True


def _writes(dialect: str, calls: Calls, grammar_dirs: tuple[str, ...]) -> str | None:
    try:
        return format_calls(
            [{"name": n, "arguments": a} for n, a in calls],
            dialect=dialect,
            grammar_dirs=grammar_dirs,
        )
    except CallsieveError:
        return None


def _nearness(reply: Reply, dialect: str, grammar_dirs: tuple[str, ...]) -> float:
    """How near the dialect's own writing of the calls is to the template's (difflib's
    ratio, white space aside, the turn's end left out); 0 where it writes nothing."""
    text = reply.two if reply.two is not None else reply.one
    written = _writes(dialect, _TWO if reply.two is not None else _ONE, grammar_dirs)
    if written is None:
        return 0.0
    text = text.removesuffix(reply.bare) if reply.bare.strip() else text
    a, b = re.sub(r"\s+", "", text), re.sub(r"\s+", "", written)
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 3)


def by_rendering(
    sources: Sequence[str], grammar_dirs: tuple[str, ...] = ()
) -> ModelDirDialect | None:
    """The dialect that reads the first template's rendering of a sample call (see the
    module docstring), or None."""
    reply = next((r for s in sources if (r := replies(s)) is not None), None)
    if reply is None:
        return None
    names = list(listed_dialects(grammar_dirs))
    fits = [d for d in names if _fits(reply, d, grammar_dirs)]
    if not fits:
        return None
    near = {d: _nearness(reply, d, grammar_dirs) for d in fits}
    fits.sort(key=lambda d: near[d], reverse=True)
    if len(fits) > 1 and near[fits[0]] == near[fits[1]]:
        raise ConfigurationError(
            "its chat template's rendering of a sample call reads back with several "
            f"dialects, none writing the calls nearer the template than the others: "
            f"{', '.join(d for d in fits if near[d] == near[fits[0]])}"
        )
    best = fits[0]
    why = (
        f"dialect {best}: it reads the chat template's rendering of a sample call back as that call"
    )
    others = [d for d in fits if d != best]
    if others:
        why += f"; also read, less specific: {', '.join(others)}"
    return ModelDirDialect((best,), why=why)

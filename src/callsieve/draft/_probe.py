"""Strategy: differential renderings of a chat template — the same conversation with and
without a tool call, with two calls, another name, another key, and values of every type.

What it does: ``probe(template)`` renders the assistant turn of each variant and keeps the
text the calls add (``Probe``): what differs from the turn with no call, cut at tag borders.
It also renders a turn with reasoning (the think tags) and the generation prompt (a think
tag it leaves open). Placeholders are words no template holds (``fnalpha``, ``keyone``, …).
What it guarantees: the renderings are plain strings; nothing of the template runs after.
What it costs: about ten renders of the template.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._render import DraftError, Template

__all__ = [
    "CALL_ID",
    "KEY1",
    "KEY2",
    "NAME1",
    "NAME2",
    "THOUGHT",
    "VAL1",
    "VAL2",
    "Probe",
    "probe",
    "trim_tags",
]

NAME1, NAME2 = "fnalpha", "fnbeta"
KEY1, KEY2 = "keyone", "keytwo"
VAL1, VAL2 = "valone", "valtwo"
CALL_ID = "callidzero"
THOUGHT = "thoughtzz"
NUMBER = 4242
OBJECT = {"deepkey": "deepval"}

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A tool.",
            "parameters": {
                "type": "object",
                "properties": {KEY1: {"type": "string"}, KEY2: {"type": "string"}},
            },
        },
    }
    for name in (NAME1, NAME2)
]
_USER = {"role": "user", "content": "Hi"}


@dataclass(frozen=True)
class Probe:
    """The text the calls add to an assistant turn, for each variant (None: no tool call
    rendered), and what the reasoning and the generation prompt showed."""

    one: str | None
    two_params: str | None
    no_params: str | None
    two_calls: str | None
    number: str | None
    obj: str | None
    id_named: str | None
    id_named_two: str | None
    thought: str | None
    prompt_end: str


def _call(name: str, args: Mapping[str, Any], call_id: str = CALL_ID) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def trim_tags(prefix: int, suffix: int, a: str) -> tuple[int, int]:
    """``prefix`` and ``suffix`` lengths of ``a`` moved back so that neither cuts a tag: a
    prefix does not end inside ``<…``/``[…``, a suffix does not start inside ``…>``/``…]``."""
    head = a[:prefix]
    lt = max(head.rfind(c) for c in "<＜[")
    gt = max(head.rfind(c) for c in ">＞]")
    if lt > gt:
        prefix = lt
    tail = a[len(a) - suffix :]
    firsts = [i for i in (tail.find(c) for c in ">＞]") if i >= 0]
    opens = [i for i in (tail.find(c) for c in "<＜[") if i >= 0]
    if firsts and (not opens or min(firsts) < min(opens)):
        suffix = len(tail) - min(firsts) - 1
    return prefix, suffix


def _added(base: str, with_calls: str) -> str:
    """What ``with_calls`` adds to ``base``: the middle after their common ends."""
    prefix, _ = trim_tags(len(os.path.commonprefix([base, with_calls])), 0, with_calls)
    suffix = len(os.path.commonprefix([base[prefix:][::-1], with_calls[prefix:][::-1]]))
    _, suffix = trim_tags(0, suffix, with_calls)
    return with_calls[prefix : len(with_calls) - suffix]


class _Renderer:
    def __init__(self, template: Template) -> None:
        self.template = template
        self.base = self._turn({"role": "assistant", "content": ""})
        answered = self._turn({"role": "assistant", "content": THOUGHT})
        self.turn_end = answered[answered.rfind(THOUGHT) + len(THOUGHT) :].strip()

    def _turn(self, message: Mapping[str, Any]) -> str:
        return self.template.render([_USER, message], _TOOLS)

    def calls(self, *calls: dict[str, Any]) -> str | None:
        for content in ("", None):
            try:
                text = self._turn({"role": "assistant", "content": content, "tool_calls": calls})
            except DraftError:
                continue
            added = _added(self.base, text).strip()
            if self.turn_end and added.endswith(self.turn_end):
                added = added[: -len(self.turn_end)].rstrip()
            return added or None
        return None

    def thought(self) -> str | None:
        for key in ("reasoning_content", "reasoning", "thinking"):
            message = {"role": "assistant", "content": "Answer.", key: THOUGHT}
            try:
                text = self._turn(message)
            except DraftError:
                continue
            if THOUGHT in text:
                return text
        return None


def probe(template: Template) -> Probe:
    """Every rendering the extraction reads (``DraftError``: the template fails on a plain
    turn)."""
    r = _Renderer(template)
    prompt = template.render([_USER], _TOOLS, add_generation_prompt=True)
    return Probe(
        one=r.calls(_call(NAME1, {KEY1: VAL1})),
        two_params=r.calls(_call(NAME1, {KEY1: VAL1, KEY2: VAL2})),
        no_params=r.calls(_call(NAME1, {})),
        two_calls=r.calls(_call(NAME1, {KEY1: VAL1}), _call(NAME2, {KEY1: VAL1}, CALL_ID + "1")),
        number=r.calls(_call(NAME1, {KEY1: NUMBER})),
        obj=r.calls(_call(NAME1, {KEY1: OBJECT})),
        id_named=r.calls(_call(NAME1, {KEY1: VAL1}, f"functions.{NAME1}:0")),
        id_named_two=r.calls(
            _call(NAME1, {KEY1: VAL1}, f"functions.{NAME1}:0"),
            _call(NAME2, {KEY1: VAL1}, f"functions.{NAME2}:1"),
        ),
        thought=r.thought(),
        prompt_end=prompt[-64:],
    )

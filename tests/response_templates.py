"""What the tests of transformers' ``response_template`` share: the fixtures in
``../shared/templates/response`` (none where that folder is absent), a ``ParseResult`` as the
message ``parse_response`` builds, ``parse_response`` itself, and random calls to write."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import ROOT
from hypothesis import strategies as st

FIXTURES = ROOT.parent / "shared" / "templates" / "response"


def fixtures() -> list[str]:
    """The fixtures' names (``qwen3``, ``cohere``, …), or none where the folder is absent."""
    if not FIXTURES.is_dir():
        return []
    return sorted(p.name.removesuffix(".cases.json") for p in FIXTURES.glob("*.cases.json"))


def template(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")))


def markers(value: Any) -> list[str]:
    """A template's marker: one string, a list of them, or none."""
    return [value] if isinstance(value, str) else list(value or [])


def _last(text: str, found: list[str]) -> int:
    return max((text.rfind(m) for m in found), default=-1)


def thought_open(spec: dict[str, Any], prompt: str) -> bool:
    """Whether the prompt's last turn leaves the template's thinking field open: the reply
    then starts inside the thought (what a server passes as ``reasoning="open"``, SPEC §15)."""
    thinking = spec["fields"].get("thinking", {})
    at = _last(prompt, markers(spec.get("start_anchor")))
    turn = prompt if at < 0 else prompt[at:]
    opened = _last(turn, markers(thinking.get("open")))
    return opened >= 0 and opened > _last(turn, markers(thinking.get("close")))


def message(result: Any) -> dict[str, Any]:
    """A ``ParseResult`` as the message ``parse_response`` builds (outer white space off)."""
    out: dict[str, Any] = {"role": "assistant"}
    if result.reasoning.strip():
        out["thinking"] = result.reasoning.strip()
    if result.text.strip():
        out["content"] = result.text.strip()
    if result.calls:
        out["tool_calls"] = [
            {"type": "function", "function": {"name": c.name, "arguments": c.input}}
            for c in result.calls
        ]
    return out


def oracle(spec: dict[str, Any], reply: str, prompt: str = "") -> dict[str, Any]:
    """transformers' ``parse_response`` of ``reply``, its text fields' outer white space off
    (a test skips where transformers is absent)."""
    parser = pytest.importorskip("transformers.utils.chat_parsing.response_parser")
    got = dict(parser.parse_response(reply, spec, prefix=prompt))
    for key in ("thinking", "content"):
        if isinstance(got.get(key), str):
            got[key] = got[key].strip()
            if not got[key]:
                del got[key]
    return got


#: Random calls to write: names, and arguments of strings, numbers, booleans, lists, objects.
NAMES = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
_scalars = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    st.integers(-1000, 1000),
    st.booleans(),
)
VALUES = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)


def calls(min_size: int = 0) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    return st.lists(
        st.tuples(NAMES, st.dictionaries(NAMES, VALUES, max_size=3)),
        min_size=min_size,
        max_size=3,
    )

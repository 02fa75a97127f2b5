"""SPEC §18 Constrained decoding, the third form: the ``structural_tag`` object vLLM and
SGLang take as ``response_format``, "with the dialect's opener as the trigger".

Its shape is checked everywhere; where xgrammar is importable (not in the test extra: its
wheel pulls a GPU stack) the tags compile there and accept and reject what the grammars do,
and where vLLM is importable its own request validation takes them. ``.ci/run`` runs this
file again in its vLLM environment, which has both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from engines import xgrammar, xgrammar_accepts
from hypothesis import given
from hypothesis import strategies as st
from schema_values import SCHEMAS, TOOLS, breaking
from strategies import soak_settings
from test_s18_constrain import LONG, PROSE, calls_for

from callsieve import DEFAULT_DIALECTS
from callsieve._grammar.spelling import spelling
from callsieve.constrain import structural_tag
from callsieve.prompt import format_calls

DIALECTS = DEFAULT_DIALECTS
CHOICES = ["auto", "required", "none", {"name": "search"}]


def _walk(fmt: Any) -> list[dict[str, Any]]:
    """Every format object in ``fmt``, nested ones included."""
    out = [fmt]
    for value in fmt.values():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict) and "type" in v:
                out += _walk(v)
    return out


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("choice", CHOICES)
@pytest.mark.parametrize("free_text", ["engine", "checked"])
def test_the_shape_is_the_response_format(dialect: str, choice: Any, free_text: str) -> None:
    tag = structural_tag(TOOLS, dialect, choice, free_text=free_text)
    assert tag["type"] == "structural_tag" and json.loads(json.dumps(tag)) == tag
    objects = _walk(tag["format"])
    opener = spelling(dialect)["CALLS_OPEN"]
    triggered = [o for o in objects if o["type"] == "triggered_tags"]
    if choice == "auto" and free_text == "engine":
        assert [t["triggers"] for t in triggered] == [[opener]]
        assert triggered[0]["stop_after_first"] and not triggered[0]["at_least_one"]
        assert "```" in triggered[0]["excludes"] and opener not in triggered[0]["excludes"]
    else:
        assert not triggered
    blocks = [o for o in objects if o["type"] == "tag" and o.get("begin") == opener]
    assert len(blocks) == (
        0 if choice == "none" or choice != "auto" and free_text == "engine" else 1
    )
    assert structural_tag(TOOLS, dialect, choice, free_text=free_text) is not tag  # a copy


def test_a_single_call_stops_after_the_first() -> None:
    tag = structural_tag(TOOLS, "xml", parallel_tool_calls=False)
    inner = [o for o in _walk(tag["format"]) if o["type"] == "tags_with_separator"]
    assert inner and all(o["stop_after_first"] for o in inner)


needs_xgrammar = pytest.mark.skipif(xgrammar() is None, reason="xgrammar is not importable")


@needs_xgrammar
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("free_text", ["engine", "checked"])
@soak_settings(15)
@given(data=st.data())
def test_xgrammar_accepts_written_calls_and_rejects_broken_ones(
    dialect: str, free_text: str, data: st.DataObject
) -> None:
    calls = data.draw(st.lists(calls_for(dialect), min_size=1, max_size=3))
    prose = data.draw(PROSE)
    if free_text == "engine":  # (the engine's free text excludes fences and openers, even
        prose = "".join(c for c in prose if c not in "<`")  # in code)
    good = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    name = data.draw(st.sampled_from(sorted(n for n in SCHEMAS if SCHEMAS[n]["properties"])))
    bad = "Sure.\n" + format_calls([(name, data.draw(breaking(SCHEMAS[name])))], dialect=dialect)
    unknown = format_calls([("delete_all", {})], dialect=dialect)
    auto = structural_tag(TOOLS, dialect, free_text=free_text)
    assert xgrammar_accepts(auto, [good, "Just text.", bad, unknown]) == [
        True,
        True,
        False,
        False,
    ], (good, bad)
    required = structural_tag(TOOLS, dialect, "required", free_text=free_text)
    assert xgrammar_accepts(required, [good, "Just text."]) == [True, False], good


#: Strings of ``LONG``'s call: tags, ``>``, ``]]>`` and the longest values its bounds allow.
LONG_VALUES = ["a > b", "<b>x</b>", "a]]>b", "a`b ``` c", "x" * 120, ">" * 120, "ok"]


@needs_xgrammar
@pytest.mark.parametrize("dialect", DIALECTS)
def test_xgrammar_takes_long_strings_as_they_are_written(dialect: str) -> None:
    """A string whose length's product is past a structural tag's bound is written in the
    JSON object body (in the native fence, its backticks escaped), which the tag takes: no
    value the writer writes is refused (a body that kept ``>`` out once did)."""
    texts = [
        format_calls(
            [("post", {"body": v, "title": v, "tag": v[:80], "alt": v, "tags": [v, "<"]})],
            dialect=dialect,
            tools=LONG,
        )
        for v in LONG_VALUES
    ]
    tag = structural_tag(LONG, dialect, "required", free_text="checked")
    assert xgrammar_accepts(tag, texts) == [True] * len(texts), texts
    too_long = format_calls([("post", {"body": "x", "tag": "y" * 81})], dialect, tools=LONG)
    assert xgrammar_accepts(tag, [too_long]) == [False]


def _vllm_validate() -> Any:
    try:
        from vllm.entrypoints.generate.base.protocol import (
            validate_structural_tag_response_format,
        )
    except ImportError:
        return None
    return validate_structural_tag_response_format


@pytest.mark.skipif(_vllm_validate() is None, reason="vLLM is not importable")
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("choice", CHOICES)
def test_vllm_takes_the_response_format(dialect: str, choice: Any) -> None:
    _vllm_validate()(structural_tag(TOOLS, dialect, choice))

"""SPEC §19 (issue 32, item 4): a vendor's own parser as the oracle — transformers'
``parse_response`` with the ``response_template`` fixtures its tests ship.

Each fixture in ``../shared/templates/response/`` is a model's template and the replies its
tests assert. For each one whose family is built here, two checks:

- the fixture's replies: callsieve reads each (whole, per character, at random splits) as
  ``parse_response`` does;
- a property: calls our writer puts into the family's shape (``callsieve.prompt.format_calls``;
  these vendors ship no encoder), after some text where the template has a place for it, are
  read by both alike, under every chunking. ``parse_response`` keeps one stretch of content,
  so where it drops the text before two calls, only the calls and the thinking are compared.

"Alike" compares the message ``parse_response`` builds: the calls (names and arguments,
exactly), the thinking and the content. Those two are compared without their outer white
space: ``parse_response`` strips it, while callsieve releases every character (SPEC §1).
Where the two differ by design, the case is in ``DIFFERENCES`` with the reason (an
``xfail(strict=True)``: if the difference goes, the test says so). The fixtures are data from
their vendors; they are read where they are and skipped cleanly when absent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import ROOT, run_all_ways
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from response_templates import FIXTURES, fixtures, message, oracle, thought_open
from response_templates import calls as call_lists
from response_templates import template as fixture_template

import callsieve
from callsieve import FormatError
from callsieve._grammar.compiled import load_grammar
from callsieve.prompt import format_calls

pytest.importorskip("transformers.utils.chat_parsing.response_parser")


CALLS = call_lists()

#: Each fixture's family: the dialect that reads what its template describes.
DIALECT = {
    "cohere": "command_r7b",
    "ernie": "ernie45",
    "gemma4": "gemma4",
    "gpt_oss": "gpt_oss",
    "inkling": "inkling",
    "qwen3": "qwen3_coder",  # (the fixture's shape is Qwen3-Coder's XML calls)
    "smollm": "hermes",
}

#: Why a Qwen3-Coder value reads otherwise: with no tools, parse_response's template reads JSON.
_RAW_TEXT = (
    "with no schema for a parameter, qwen3_coder reads a raw value as its text, as vLLM's, "
    "SGLang's and ollama's parsers do (SPEC §19, //%raw_values_are_strings); the fixture's "
    "template tries JSON"
)

#: Where callsieve reads a fixture's reply otherwise than ``parse_response``, and why.
_ERNIE_FRAMING = (
    "the Thinking model's reply starts inside its thought: a server reads it with "
    'reasoning="open" (test_ernie45.py does, and agrees), this fixture\'s empty prompt says "tags"'
)
_INKLING_FRAMING = (
    "Inkling's answer message keeps its `<|end_message|>` before the call message: it is the "
    "thought's close tag too, so no frame may have that spelling (docs/families.md); the head "
    "`<|content_text|>` and the end `<|content_model_end_sampling|>` are dropped, and the "
    "calls and the thinking agree"
)
DIFFERENCES = {
    ("ernie", "test_ernie_with_tools"): _ERNIE_FRAMING,
    ("ernie", "test_ernie_no_tools"): _ERNIE_FRAMING,
    ("ernie", "streaming 0"): (
        "parse_response keeps `<think>` in the thinking (its "
        "open pattern's `^` matches before `<think>` does), callsieve reads the tag as a tag"
    ),
    ("inkling", "test_inkling_multi_block_message"): _INKLING_FRAMING,
    ("inkling", "streaming 0"): _INKLING_FRAMING,
    ("gpt_oss", "test_gpt_oss_with_tool_call"): (
        "the reply ends after the call's JSON with no <|call|> (a server that strips stop "
        "tokens); callsieve never makes a call whose block did not end (docs/families.md)"
    ),
    ("gpt_oss", "streaming 0"): (
        "a final channel right after the analysis channel's <|end|>, with no <|start|>assistant "
        "header, is not read as the answer's header (docs/families.md, gpt-oss)"
    ),
    ("qwen3", "test_coercion_never_reworks_already_typed_values"): (
        "a block with no </function> before </tool_call> does not parse, so it is text (SPEC §4)"
    ),
    ("qwen3", "test_qwen3_tool_calls"): _RAW_TEXT,
    ("qwen3", "test_qwen3_tools_coerces_strings_left_by_value_parser"): _RAW_TEXT,
    ("qwen3", "test_prefix_partial_pattern_at_boundary"): (
        "the prompt ends inside a tag (`<thi`) that the reply finishes (`nk>`): callsieve reads "
        "the reply, not the prompt, so it cannot join them"
    ),
}


def _replies(name: str) -> list[tuple[str, str, str]]:
    """Each of the fixture's replies: (its test's name, the reply, the prompt before it)."""
    data = json.loads((FIXTURES / f"{name}.cases.json").read_text(encoding="utf-8"))
    out = [(c["test"].split(".")[-1], c["input"], c.get("prefix", "")) for c in data["cases"]]
    for i, s in enumerate(data.get("streaming_fixtures", [])):
        out.append((f"streaming {i}", s if isinstance(s, str) else s["input"], ""))
    return out


def _built(name: str) -> str:
    dialect = DIALECT.get(name)
    if dialect is None or dialect not in callsieve.dialects():
        pytest.skip(f"fixture {name!r}: its family ({dialect}) has no dialect here")
    return dialect


def _reasoning(template: dict[str, Any], prompt: str) -> str:
    """What a server passes for a prompt (SPEC §15): "open" when the prompt's last turn leaves
    the template's thinking field open (the reply starts inside the thought), else "tags"."""
    return "open" if thought_open(template, prompt) else "tags"


def _cases() -> list[Any]:
    out = []
    for name in fixtures():
        for test, _, _ in _replies(name):
            why = DIFFERENCES.get((name, test))
            marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
            out.append(pytest.param(name, test, id=f"{name}-{test}", marks=marks))
    return out


# ------------------------------------------------------------------ the fixtures' replies


@pytest.mark.parametrize(("name", "test"), _cases())
def test_a_fixture_reply_is_read_as_the_vendor_reads_it(name: str, test: str) -> None:
    dialect = _built(name)
    template = fixture_template(name)
    reply, prompt = next((r, p) for t, r, p in _replies(name) if t == test)
    result = run_all_ways(reply, dialects=(dialect,), reasoning=_reasoning(template, prompt))
    assert message(result) == oracle(template, reply, prompt)


def test_every_difference_names_a_reply_of_its_fixture() -> None:
    for name, test in DIFFERENCES:
        if (FIXTURES / f"{name}.cases.json").is_file():
            assert test in [t for t, _, _ in _replies(name)], (name, test)


# ------------------------------------------------------------------ written calls, both readers

#: The dialects ``format_calls`` writes: those with a spelling file.
WRITTEN = {p.stem for p in (ROOT / "grammar" / "spelling").glob("*.lark")}


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (list, "array"), (dict, "object"))


def _raw_tools(dialect: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """Where the family reads a raw value without a schema as its text (SPEC §19), the tools
    that type the calls' other values as they are: callsieve reads them typed, and
    ``parse_response``'s template reads JSON. A string that reads as JSON is no case: the
    template would read it as that value, callsieve as the string it is. Nor is one with
    white space at its ends, which the template's value pattern trims."""
    g = load_grammar((dialect,))
    if not g.dialect_map.value_readings[dialect].raw_strings:
        return None
    props: dict[str, dict[str, dict[str, str]]] = {}
    for name, args in calls:
        for key, value in args.items():
            if isinstance(value, str):
                # (nor does white space at a string's ends: the template's value pattern,
                # `\s*(?P<value>.*?)\s*`, trims all of it; the family trims one line break)
                assume(not _reads_as_json(value) and value == value.strip())
                continue
            kind = next(t for k, t in _JSON_TYPES if isinstance(value, k))
            known = props.setdefault(name, {}).setdefault(key, {"type": kind})
            assume(known["type"] == kind)
    return [
        {"name": n, "parameters": {"type": "object", "properties": p}} for n, p in props.items()
    ]


def _reads_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return text.strip().lower() == "null"
    return True


def _plain_text_is_content(template: dict[str, Any]) -> bool:
    """Whether text outside every field is the answer: the template's content field opens
    implicitly (it has no ``open``). Elsewhere ``parse_response`` drops such text."""
    content = template["fields"].get("content")
    return content is not None and not content.get("open") and not content.get("open_pattern")


@pytest.mark.parametrize("name", [n for n in fixtures() if n in DIALECT])
@settings(max_examples=40, deadline=None)
@given(calls=CALLS, before=st.sampled_from(["", "Checking.\n", "Sure.\n\n"]))
def test_written_calls_are_read_by_both_alike(
    name: str, calls: list[tuple[str, dict[str, Any]]], before: str
) -> None:
    dialect = _built(name)
    if dialect not in WRITTEN:
        pytest.skip(f"{dialect} has no writer (docs/families.md)")
    template = fixture_template(name)
    if not _plain_text_is_content(template):
        before = ""
    tools = _raw_tools(dialect, calls)
    try:
        reply = before + (format_calls(calls, dialect, tools=tools) if calls else "")
    except FormatError:  # (a raw-strings family: a string no text carries, _raw_tools)
        assume(False)
    result = run_all_ways(reply, dialects=(dialect,), tools=tools)
    assert [(c.name, c.input) for c in result.calls] == calls
    ours, theirs = message(result), oracle(template, reply)
    if "content" not in theirs:
        # parse_response keeps one stretch of content: text before two calls is dropped
        # ("Checking.\n<tool_call>…<tool_call>…" gives no content). callsieve loses none.
        ours.pop("content", None)
    assert ours == theirs

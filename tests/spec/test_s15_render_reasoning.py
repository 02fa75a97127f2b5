"""SPEC §15 with §10 — reasoning rendered as each API carries it, checked by the SDKs: OpenAI
Chat ``reasoning_content`` (an extra field the SDK keeps, joined by its accumulator), OpenAI
Responses ``reasoning`` items with one summary part, Anthropic ``thinking`` blocks, Gemini
``thought`` parts. Each renderer's own checks (its ``test_s10_render_<api>`` module: the
SDK's types, its accumulator, the stream equal to the whole response, both equal to what
``parse()`` found by ``render_cases.reply_runs``, or the SDK raising where a call aborted:
``render_cases.check_doc`` with each module's ``API``) run here over ``render_cases.REASONING``:
reasoning then text, then calls, reasoning only (cut off), ``reasoning="open"``, calls
inside reasoning both ways, at the shared chunkings for every ``early_emit`` and, for some,
at every chunk size. Then the documented objects, the white-space choices,
``include_reasoning=False`` and the options.

Groups: the shared cases; the documented wire objects; white space; leaving reasoning out;
options.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

import test_s10_render_anthropic as anthropic_t
import test_s10_render_gemini as gemini_t
import test_s10_render_openai_chat as chat_t
import test_s10_render_openai_responses as responses_t
from render_cases import (
    REASONING,
    call_block,
    check_doc,
    chunkings,
    every_size,
    render_stream,
    sieve_run,
)
from strategies import REASONING_DOCS, REASONING_OPTIONS, doc_and_chunks, soak_settings

import callsieve
from callsieve import ConfigurationError, Reasoning, Text
from callsieve._config.options import EARLY_EMIT
from callsieve.render import (
    Reply,
    anthropic,
    gemini,
    openai_chat,
    openai_responses,
    reply_events,
)

CASES = [pytest.param(doc, opts, id=i) for i, doc, opts in REASONING]
EVERY_SIZE = [
    pytest.param(doc, opts, id=i)
    for i, doc, opts in REASONING
    if i
    in ("reasoning text and a call", "a call in reasoning is a call", "reasoning only (cut off)")
]


APIS = (chat_t.API, responses_t.API, anthropic_t.API, gemini_t.API)


def check_all(doc: str, chunkings: list[list[str]], **opts: Any) -> None:
    """Every renderer's check (stream equals whole equals parse, or the SDK raises where a
    call aborted), at each chunking."""
    for api in APIS:
        check_doc(api, doc, chunkings, **opts)


# ---------------------------------------------------------------------------- the shared cases
@pytest.mark.parametrize("mode", EARLY_EMIT)
@pytest.mark.parametrize(("doc", "opts"), CASES)
def test_reasoning_streams_as_the_whole_response(doc: str, opts: dict[str, Any], mode: str) -> None:
    check_all(doc, chunkings(doc), early_emit=mode, **opts)


@pytest.mark.parametrize(("doc", "opts"), EVERY_SIZE)
def test_reasoning_chunked_at_every_size(doc: str, opts: dict[str, Any]) -> None:
    check_all(doc, every_size(doc), **opts)


@soak_settings(40)
@given(dc=doc_and_chunks(REASONING_DOCS), opts=REASONING_OPTIONS, mode=st.sampled_from(EARLY_EMIT))
def test_property_any_thinking_reply_streams_as_the_whole_response(
    dc: tuple[str, list[str]], opts: dict[str, Any], mode: str
) -> None:
    doc, chunks = dc
    check_all(doc, [chunks], early_emit=mode, **opts)


# ---------------------------------------------------------------------------- the wire objects
DOC = (
    "<think>I need the file.</think>\n\nLet me look.\n"
    '<tool_calls><invoke name="read"><parameter name="path">a.py</parameter></invoke>'
    "</tool_calls>"
)
PIECES = ["<think>I need", " the file.</think>\n\nLet me look.\n", DOC[46:]]
ARGS = '{"path":"a.py"}'


def stream(renderer: Any, pieces: list[str] = PIECES, **sieve_opts: Any) -> list[dict[str, Any]]:
    sieve = callsieve.Sieve(id_factory=lambda: "call_1", **sieve_opts)
    out = [o for p in pieces for o in renderer.feed(sieve.feed(p))]
    return out + renderer.feed(sieve.close()) + renderer.close()


def test_pieces_are_the_doc() -> None:
    assert "".join(PIECES) == DOC


def test_openai_chat_sends_reasoning_content_first() -> None:
    chunks = stream(openai_chat.StreamRenderer(**chat_t.RENDER))
    assert [(c["choices"][0]["delta"], c["choices"][0]["finish_reason"]) for c in chunks] == [
        ({"role": "assistant", "content": None, "reasoning_content": ""}, None),
        ({"reasoning_content": "I need"}, None),
        ({"reasoning_content": " the file."}, None),
        ({"content": "Let me look."}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 0, "function": {"arguments": ARGS}}]}, None),
        ({}, "tool_calls"),
    ]
    final, _ = chat_t.accumulate(chunks)
    assert chat_t.thought(final) == "I need the file."
    whole = openai_chat.render_response(
        callsieve.parse(DOC, id_factory=lambda: "call_1"), **chat_t.RENDER
    )
    assert whole["choices"][0]["message"] == {
        "role": "assistant",
        "content": "Let me look.",
        "reasoning_content": "I need the file.",
        "refusal": None,
        "annotations": [],
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": ARGS}}
        ],
    }


def test_openai_responses_sends_a_reasoning_item_before_the_others() -> None:
    events = stream(openai_responses.StreamRenderer(**responses_t.opts()))
    summary = {"item_id": "rs_0", "output_index": 0, "summary_index": 0}
    assert [(e["type"], e.get("output_index")) for e in events] == [
        ("response.created", None),
        ("response.in_progress", None),
        ("response.output_item.added", 0),
        ("response.reasoning_summary_part.added", 0),
        ("response.reasoning_summary_text.delta", 0),
        ("response.reasoning_summary_text.delta", 0),
        ("response.reasoning_summary_text.done", 0),
        ("response.reasoning_summary_part.done", 0),
        ("response.output_item.done", 0),
        ("response.output_item.added", 1),
        ("response.content_part.added", 1),
        ("response.output_text.delta", 1),
        ("response.output_text.done", 1),
        ("response.content_part.done", 1),
        ("response.output_item.done", 1),
        ("response.output_item.added", 2),
        ("response.function_call_arguments.delta", 2),
        ("response.function_call_arguments.done", 2),
        ("response.output_item.done", 2),
        ("response.completed", None),
    ]
    assert events[2]["item"] == {
        "id": "rs_0",
        "type": "reasoning",
        "status": "in_progress",
        "summary": [],
    }
    assert events[3]["part"] == {"type": "summary_text", "text": ""}
    assert [e["delta"] for e in events[4:6]] == ["I need", " the file."]
    assert all({k: e[k] for k in summary} == summary for e in events[3:8])
    assert events[6]["text"] == "I need the file."
    reasoning = {
        "id": "rs_0",
        "type": "reasoning",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": "I need the file."}],
    }
    assert events[8]["item"] == reasoning
    assert events[-1]["response"]["output"][0] == reasoning
    final, _, _ = responses_t.accumulate(events)
    assert [i[0] for i in responses_t.items(final)] == ["reasoning", "message", "function_call"]


def test_anthropic_sends_a_thinking_block_first() -> None:
    events = stream(anthropic.StreamRenderer(**anthropic_t.options()))
    assert events[1:5] == [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "I need"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": " the file."},
        },
        {"type": "content_block_stop", "index": 0},
    ]
    assert [(e["type"], e.get("index")) for e in events[5:]] == [
        ("content_block_start", 1),
        ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("content_block_start", 2),
        ("content_block_delta", 2),
        ("content_block_stop", 2),
        ("message_delta", None),
        ("message_stop", None),
    ]
    message = anthropic_t.accumulate(events)
    assert message.content[0].type == "thinking"
    assert (message.content[0].thinking, message.content[0].signature) == ("I need the file.", "")
    whole = anthropic.render_response(callsieve.parse(DOC), **anthropic_t.options())
    assert whole["content"][0] == {
        "type": "thinking",
        "thinking": "I need the file.",
        "signature": "",
    }
    assert anthropic_t.same_message(message, whole)


def test_gemini_sends_thought_parts() -> None:
    chunks = stream(gemini.StreamRenderer(**gemini_t.options()))
    assert [c["candidates"][0]["content"]["parts"] for c in chunks] == [
        [{"text": "I need", "thought": True}],
        [{"text": " the file.", "thought": True}, {"text": "Let me look."}],
        [{"functionCall": {"name": "read", "args": {"path": "a.py"}, "id": "fc0000"}}],
        [{"text": ""}],
    ]
    whole = gemini_t.validate(gemini.render_response(callsieve.parse(DOC), **gemini_t.options()))
    assert whole.text == "Let me look."  # (the SDK's .text leaves thoughts out)
    assert [(p.thought, p.text) for p in whole.candidates[0].content.parts[:2]] == [
        (True, "I need the file."),
        (None, "Let me look."),
    ]


def test_responses_reasoning_cut_off_is_incomplete() -> None:
    doc = "<think>Let me think about"
    events = render_stream(responses_t.API, [doc], "length")
    final, _, _ = responses_t.accumulate(events)
    assert responses_t.items(final) == [("reasoning", "rs_0", "incomplete", "Let me think about")]
    assert final.status == "incomplete"
    assert responses_t.items(responses_t.whole(doc, finish_reason="length")) == responses_t.items(
        final
    )


# ---------------------------------------------------------------------------- white space
def coalesce(events: list[Any]) -> list[Any]:
    """Adjacent text, and adjacent reasoning, joined (how a client reads them)."""
    out: list[Any] = []
    for e in events:
        if out and type(out[-1]) is type(e) and isinstance(e, Text | Reasoning):
            out[-1] = type(e)(out[-1].text + e.text)
        else:
            out.append(e)
    return out


@pytest.mark.parametrize(
    ("trim", "want"),
    [
        (True, [Reasoning("a b"), Text("x"), Reasoning("c"), Text("y")]),
        (False, [Reasoning("a b"), Text("x"), Reasoning("c"), Text(" \n y")]),
    ],
)
def test_reasoning_runs_are_trimmed_and_text_meets_them(trim: bool, want: list[Any]) -> None:
    # (the tags' own events, with empty text, go nowhere)
    events = [
        Reasoning("", "<think>"),
        Reasoning("\n a"),
        Reasoning(" "),
        Reasoning("b \n"),
        Reasoning("", "</think>"),
        Text("\n\nx "),
        Reasoning(" c "),
        Text("\n y \n"),
    ]
    reply = Reply(trim_around_calls=trim)
    out = [o for e in events for o in reply.feed([e])] + reply.close()
    assert coalesce(out) == want
    assert (
        coalesce(
            reply_events(
                callsieve.ParseResult(
                    "\n\nx \n y \n",
                    (),
                    (),
                    False,
                    parts=(Reasoning("\n a b \n"), "\n\nx ", Reasoning(" c "), "\n y \n"),
                ),
                trim_around_calls=trim,
            )
        )
        == want
    )


def test_white_space_only_reasoning_is_as_if_it_were_not_there() -> None:
    reply = Reply(trim_around_calls=True)
    out = reply.feed([Text("x"), Text(" "), Reasoning("\n \n"), Text(" y")]) + reply.close()
    assert coalesce(out) == [Text("x  y")]


def test_after_think_the_answer_starts_at_its_first_non_space() -> None:
    assert chat_t.whole("<think>r</think>\n\n  Hi").choices[0].message.content == "Hi"
    assert responses_t.items(responses_t.whole("<think>r</think>\n\n  Hi"))[1][3] == "Hi"


# ---------------------------------------------------------------------------- leaving it out
LEAVE_OUT = [DOC, "<think>only reasoning", call_block("a") + "<think>x</think>done"]


@pytest.mark.parametrize("doc", LEAVE_OUT)
def test_include_reasoning_false_is_the_reply_without_it(doc: str) -> None:
    """Each renderer's check with ``include_reasoning=False`` (which drops reasoning from
    what ``parse()`` found), and no reasoning anywhere on any wire."""
    check_all(doc, [[doc], list(doc)], include_reasoning=False)
    run = sieve_run(list(doc))
    for api in APIS:
        renderer = api.module.StreamRenderer(**api.options(include_reasoning=False))
        objs = [o for b in run.batches for o in renderer.feed(b)] + renderer.close()
        whole = api.module.render_response(
            callsieve.parse(doc), **api.options(include_reasoning=False)
        )
        for wire in (*objs, whole):
            text = json.dumps(wire)
            assert "reasoning_content" not in text and '"thought": true' not in text
            assert '"thinking"' not in text and '"reasoning"' not in text


# ---------------------------------------------------------------------------- options
def test_the_reasoning_field_may_take_vllms_name() -> None:
    check_doc(chat_t.API, DOC, [[DOC], PIECES], reasoning_field="reasoning")
    final, _ = chat_t.accumulate(render_stream(chat_t.API, PIECES, reasoning_field="reasoning"))
    assert chat_t.thought(final, "reasoning") == "I need the file."
    assert chat_t.thought(final) is None


def test_an_unknown_reasoning_field_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="reasoning_field"):
        openai_chat.StreamRenderer(reasoning_field="thoughts")
    with pytest.raises(ConfigurationError, match="reasoning_field"):
        openai_chat.render_response(callsieve.parse(DOC), reasoning_field="thoughts")

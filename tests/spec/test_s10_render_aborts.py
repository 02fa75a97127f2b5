"""SPEC §7 and §17 with §10 — a call that began to stream and then aborts never reaches a
client as a call.

The core says why a started call aborted (``CallAborted.reason``); each renderer, under its
default ``on_abort="error"``, then ends the reply with its API's own error signal, and the
SDK's own client raises on it — tried here on the replies issue 23 names, as a sieve streams
them: a reply cut off inside a call, a call failing its schema under ``policy="schema"``, a
call sent again (a parameter name that repeats), a block that breaks after its call began.
Under ``on_abort="continue"`` the reply goes on as before, and a cut-off reply's finish
reason says so. A whole reply (``render_response``) whose last call was cut off carries no
such call and says why: its finish reason, and Responses' ``incomplete_details``.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

import test_s10_render_anthropic as anthropic_t
import test_s10_render_gemini as gemini_t
import test_s10_render_openai_chat as chat_t
import test_s10_render_openai_responses as responses_t
from helpers import random_chunkings
from render_cases import Api, parsed, render_stream, sieve_run

import callsieve
from callsieve import CallAborted, ConfigurationError, Sieve
from callsieve.render import cut_off

APIS = [
    pytest.param(chat_t.API, id="openai_chat"),
    pytest.param(responses_t.API, id="openai_responses"),
    pytest.param(anthropic_t.API, id="anthropic"),
    pytest.param(gemini_t.API, id="gemini"),
]

INVOKE = '<tool_calls><invoke name="read_file">'
#: A reply cut off by the token limit inside a call, after its path began to stream.
CUT = "Let me read it.\n" + INVOKE + '<parameter name="path">READ'
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
#: A call that fails its schema once it is complete ("three" is no integer).
BAD_SCHEMA = (
    '<tool_calls><invoke name="get_weather"><parameter name="city">Paris</parameter>'
    '<parameter name="days">three</parameter></invoke></tool_calls>'
)
#: A parameter name that repeats: the call is sent again, whole, under the next index.
REPEATED = (
    INVOKE + '<parameter name="path">a</parameter><parameter name="path">b</parameter>'
    "</invoke></tool_calls>"
)
#: A block that breaks after its call began.
BROKEN = INVOKE + '<parameter name="path">a</parameter><oops>no</tool_calls> and on.'


def aborts(doc: str, chunks: list[str], **opts: Any) -> list[CallAborted]:
    sieve = Sieve(early_emit="arguments", **opts)
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    return [e for e in events if isinstance(e, CallAborted)]


# ---------------------------------------------------------------------------- why (the core)
@pytest.mark.parametrize(
    ("doc", "opts", "reason"),
    [
        (CUT, {}, "cut_off"),
        (BAD_SCHEMA, {"tools": WEATHER, "policy": "schema"}, "rejected"),
        (REPEATED, {}, "repeated_name"),
        (BROKEN, {}, "failed"),
        # (text before CDATA and a CDATA the loose-CDATA repair closes no longer abort:
        # tests/spec/test_s07_argument_streaming.py)
        ('<tool_calls><invoke name="f">{"a": 1, "a": 2}</invoke></tool_calls>', {}, "repeated_key"),
    ],
)
def test_an_abort_says_why(doc: str, opts: dict[str, Any], reason: str) -> None:
    for chunks in (list(doc), *random_chunkings(doc, seeds=(0, 2))):
        got = aborts(doc, chunks, **opts)
        assert [(e.index, e.reason) for e in got] == [(0, reason)], chunks
        assert got[0].resent == (
            reason in ("repeated_name", "text_before_cdata", "loose_cdata", "repeated_key")
        )


def test_the_reason_defaults_to_failed() -> None:
    assert CallAborted(3) == CallAborted(3, "failed") and not CallAborted(3).resent


# ---------------------------------------------------------------------------- the SDKs raise
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("doc", "opts", "finish_reason"),
    [
        pytest.param(CUT, {}, "length", id="cut-off"),
        pytest.param(CUT, {}, None, id="cut-off-close-inside"),
        pytest.param(BAD_SCHEMA, {"tools": WEATHER, "policy": "schema"}, None, id="schema"),
        pytest.param(REPEATED, {}, None, id="sent-again"),
        pytest.param(BROKEN, {}, None, id="broken-block"),
    ],
)
def test_no_client_holds_an_aborted_call(
    api: Api, doc: str, opts: dict[str, Any], finish_reason: str | None
) -> None:
    for chunks in ([doc], list(doc), *random_chunkings(doc, seeds=(1, 2))):
        run = sieve_run(chunks, early_emit="arguments", **opts)
        abort = next(e for b in run.batches for e in b if isinstance(e, CallAborted))
        renderer = api.module.StreamRenderer(**api.options())
        objs = [o for b in run.batches for o in renderer.feed(b)]
        objs += renderer.close(finish_reason, blocks=run.blocks)
        if not api.signals(abort):  # (Gemini: a call sent again was never sent the first time)
            assert renderer.aborted is None
            continue
        assert renderer.aborted is not None and renderer.aborted.reason == abort.reason
        api.check_wire(objs, True)
        api.client_raises(objs)


def test_a_call_sent_again_is_one_call_where_calls_go_whole() -> None:
    """Gemini sends calls whole: the call sent again is the reply's one call (the other APIs
    streamed its first try, so their replies end in an error, above)."""
    parts, _ = gemini_t.joined(render_stream(gemini_t.API, list(REPEATED), early_emit="arguments"))
    assert gemini_t.without_ids(gemini_t.items(parts)) == [
        ("call", 'read_file {"path": ["a", "b"]}')
    ]


# ---------------------------------------------------------------------------- continue, cut off
def finish_of(api: Api, objs: list[dict[str, Any]]) -> Any:
    """The finish reason a client reads off a stream (and that it holds no complete call
    for the cut-off one)."""
    if api is chat_t.API:
        final, _ = chat_t.accumulate(objs)
        return final.choices[0].finish_reason
    if api is responses_t.API:
        final, _, _ = responses_t.accumulate(objs)
        assert final.incomplete_details is not None
        assert all(i.type != "function_call" for i in final.output)
        return (final.status, final.incomplete_details.reason)
    if api is anthropic_t.API:
        return anthropic_t.accumulate(objs).stop_reason
    _, last = gemini_t.joined(objs)
    return last.candidates[0].finish_reason.value


CUT_FINISH = {
    "openai_chat": "length",
    "openai_responses": ("incomplete", "max_output_tokens"),
    "anthropic": "max_tokens",
    "gemini": "MAX_TOKENS",
}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("early_emit", ["arguments", "invoke", "block"])
def test_a_cut_off_reply_says_so_when_the_reply_goes_on(api: Api, early_emit: str) -> None:
    """``on_abort="continue"`` (and any ``early_emit`` whose call never started): the reply
    goes on and its finish reason says it was cut off, whatever the engine said."""
    name = api.module.__name__.rsplit(".", 1)[1]
    for chunks in ([CUT], list(CUT)):
        objs = render_stream(api, chunks, None, early_emit=early_emit, on_abort="continue")
        assert finish_of(api, objs) == CUT_FINISH[name]


@pytest.mark.parametrize("api", APIS)
def test_a_whole_reply_cut_off_in_a_call_has_no_call_and_says_why(api: Api) -> None:
    name = api.module.__name__.rsplit(".", 1)[1]
    result = parsed(CUT)
    assert cut_off(result.blocks) and not result.calls
    whole = api.module.render_response(result, **api.options())
    if name == "openai_chat":
        choice = whole["choices"][0]
        assert choice["finish_reason"] == "length" and "tool_calls" not in choice["message"]
    elif name == "openai_responses":
        assert (whole["status"], whole["incomplete_details"]) == (
            "incomplete",
            {"reason": "max_output_tokens"},
        )
        assert [o["type"] for o in whole["output"]] == ["message"]
    elif name == "anthropic":
        assert whole["stop_reason"] == "max_tokens"
        assert [b["type"] for b in whole["content"]] == ["text"]
    else:
        candidate = whole["candidates"][0]
        assert candidate["finishReason"] == "MAX_TOKENS"
        assert all("functionCall" not in p for p in candidate["content"]["parts"])
    # the caller's other reasons stand
    kept = api.module.render_response(result, finish_reason="content_filter", **api.options())
    assert kept != whole


@pytest.mark.parametrize(
    ("doc", "opts", "cut"),
    [
        (CUT, {}, True),
        ("<tool_calls>", {}, True),
        ("Hi " + INVOKE + "</invoke></tool_calls>", {}, False),
        ("Hi <tool_calls><invoke", {}, False),  # (a tag cut off: never a block)
        ("<think>maybe " + CUT, {}, False),  # (a block in reasoning is reasoning text)
        ("<think>maybe " + CUT, {"calls_in_reasoning": "call"}, True),
        (BROKEN, {}, False),
    ],
)
def test_cut_off_reads_the_blocks(doc: str, opts: dict[str, Any], cut: bool) -> None:
    assert cut_off(callsieve.parse(doc, **opts).blocks) == cut
    assert cut_off(sieve_run(list(doc), **opts).blocks) == cut


@pytest.mark.parametrize("api", APIS)
def test_an_unknown_on_abort_is_refused(api: Api) -> None:
    with pytest.raises(ConfigurationError, match="on_abort"):
        api.module.StreamRenderer(on_abort="ignore")

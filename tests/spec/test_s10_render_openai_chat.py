"""SPEC §10 and §17 Rendering — OpenAI Chat Completions (``callsieve.render.openai_chat``),
checked by the ``openai`` SDK itself: every object validates as ``ChatCompletion`` /
``ChatCompletionChunk``, and a rendered stream fed chunk by chunk to the SDK's own
accumulator (``openai.lib.streaming.chat.ChatCompletionStreamState``: ``handle_chunk``, then
``get_final_completion()``) gives the message ``render_response(parse(doc))`` gives, and the
text and calls ``parse(doc)`` found (content: the text with its leading and trailing white
space gone, ``Reply``'s rule for one-string content). A stream in which a started call
aborts ends with an ``error`` chunk, on which the SDK's own client raises ``APIError``
(``openai._streaming.Stream.__stream__``). Ids are deterministic: counters passed to the
sieve (``id_factory``) and to the renderer. The drivers and checks are
``render_cases``' (``API`` is this API's side of them).

Groups: the wire objects; the accumulator on the conformance cases (several chunkings, every
``early_emit``); a property over generated documents; argument streaming and aborts from
hand-built events; finish reasons, content, ids and usage; the module contract.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from helpers import conformance_cases
from hypothesis import given
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from render_cases import (
    Api,
    Replay,
    check_doc,
    chunkings,
    counter,
    reasoning_of,
    render_events,
    render_stream,
    render_whole,
    sse,
)
from strategies import doc_and_chunks, soak_settings

import callsieve
from callsieve import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    ConfigurationError,
    ParseResult,
    Text,
    ToolCall,
    ToolCalls,
)
from callsieve._config.options import EARLY_EMIT
from callsieve.render import openai_chat

CASES = conformance_cases()
SETTINGS = soak_settings(60)  # (CALLSIEVE_EXAMPLES: a longer soak)
Message = tuple[str | None, list[tuple[str, str, str]], str]

RENDER: dict[str, Any] = {
    "model": "m",
    "created": 7,
    "completion_id_factory": lambda: "chatcmpl-test",
}


# ---------------------------------------------------------------------------- the checks
def check_wire(chunks: list[dict[str, Any]], aborted: bool = False) -> None:
    """What a client relies on besides the types: every chunk a ``ChatCompletionChunk``; one
    id, created and model on every chunk; the role first; the finish reason once, on the last
    choice chunk; a call's first delta has its id, type and name, and calls are numbered 0,
    1, 2, … in order. ``aborted``: the last object is instead the error, and no chunk
    carries a finish reason."""
    assert chunks, "a stream has at least its final chunk"
    if aborted:
        error = chunks[-1]
        assert set(error) == {"error"} and set(error["error"]) == {
            "message",
            "type",
            "param",
            "code",
        }
        assert error["error"]["code"].startswith("tool_call_")
        chunks = chunks[:-1]
    for c in chunks:
        ChatCompletionChunk.model_validate(c)
    assert {(c["id"], c["created"], c["model"]) for c in chunks} == {
        (chunks[0]["id"], chunks[0]["created"], chunks[0]["model"])
    }
    choices = [c["choices"][0] for c in chunks if c["choices"]]
    assert choices[0]["delta"]["role"] == "assistant"
    assert all("role" not in ch["delta"] for ch in choices[1:])
    if aborted:
        assert all(ch["finish_reason"] is None for ch in choices)
    else:
        assert [ch["finish_reason"] is not None for ch in choices] == [False] * (
            len(choices) - 1
        ) + [True]
        assert choices[-1]["delta"] == {}
    seen = -1
    for ch in choices:
        for tc in ch["delta"].get("tool_calls", ()):
            if tc["index"] > seen:
                assert tc["index"] == seen + 1, "calls are numbered in order"
                assert tc["type"] == "function" and tc["id"] and "name" in tc["function"]
                assert tc["function"]["arguments"] == ""
                seen = tc["index"]
            else:
                assert set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"}


def accumulate(chunks: list[dict[str, Any]]) -> tuple[ChatCompletion, dict[int, str]]:
    """Every chunk checked (``check_wire``), then fed to the SDK's accumulator; the final
    completion and the arguments its ``tool_calls.function.arguments.done`` events
    reported."""
    check_wire(chunks)
    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    done: dict[int, str] = {}
    for raw in chunks:
        for event in state.handle_chunk(ChatCompletionChunk.model_validate(raw)):
            if event.type == "tool_calls.function.arguments.done":
                done[event.index] = event.arguments
    if state.current_completion_snapshot.choices[0].finish_reason in ("length", "content_filter"):
        # get_final_completion() refuses these (LengthFinishReasonError, ...): the snapshot
        # is the accumulated completion.
        return state.current_completion_snapshot, done
    return state.get_final_completion(), done


def message(completion: ChatCompletion) -> Message:
    """``(content, [(id, name, arguments)], finish_reason)`` of a completion."""
    choice = completion.choices[0]
    calls = [
        (t.id, t.function.name, t.function.arguments)
        for t in choice.message.tool_calls or ()
        if t.type == "function"
    ]
    return choice.message.content, calls, choice.finish_reason


def thought(completion: ChatCompletion, field: str = "reasoning_content") -> Any:
    """The message's reasoning: the extra field the SDK keeps (None when it is not there)."""
    return (completion.choices[0].message.model_extra or {}).get(field)


REPLAY = Replay()
CLIENT = openai.OpenAI(
    api_key="unused", base_url="http://sdk.test/v1", max_retries=0, http_client=REPLAY.client
)


def client_stream(chunks: list[dict[str, Any]]) -> ChatCompletion:
    """The chunks as the API streams them (``data:`` frames, then ``[DONE]``), read by the
    SDK's own client (``client.chat.completions.stream``): its final completion."""
    REPLAY.answer(sse(chunks, named=False, done=True))
    request = CLIENT.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    with request as stream:
        return stream.get_final_completion()


class ChatApi(Api):
    module = openai_chat

    def options(self, **extra: Any) -> dict[str, Any]:
        return {**RENDER, **extra}

    def check_wire(self, objs: list[dict[str, Any]], aborted: bool) -> None:
        check_wire(objs, aborted)

    def agrees(
        self,
        objs: list[dict[str, Any]],
        whole: dict[str, Any],
        result: ParseResult,
        **render_opts: Any,
    ) -> Any:
        final, done = accumulate(objs)
        rendered = ChatCompletion.model_validate(whole)
        got = message(final)
        assert got == message(rendered)
        field = render_opts.get("reasoning_field", "reasoning_content")
        assert thought(final, field) == thought(rendered, field)
        if render_opts.get("include_reasoning", True):
            assert thought(final, field) == reasoning_of(result)
        else:
            assert thought(final, field) is None
        assert got[0] == (result.text.strip() or None)
        assert [(i, n, json.loads(a)) for i, n, a in got[1]] == [
            (c.id, c.name, c.input) for c in result.calls
        ]
        assert done == {k: a for k, (_, _, a) in enumerate(got[1])}
        return final

    def client_raises(self, objs: list[dict[str, Any]]) -> BaseException:
        with pytest.raises(openai.APIError) as info:
            client_stream(objs)
        assert info.value.code == objs[-1]["error"]["code"]
        assert info.value.message == objs[-1]["error"]["message"]
        return info.value


API = ChatApi()


def whole(doc: str, finish_reason: str | None = None, **opts: Any) -> ChatCompletion:
    return ChatCompletion.model_validate(render_whole(API, doc, finish_reason, **opts))


# ---------------------------------------------------------------------------- the wire objects
DOC = (
    'Let me look.\n<tool_calls><invoke name="read_file"><parameter name="path">a.py'
    '</parameter></invoke><invoke name="ls"></invoke></tool_calls>\nDone. '
)


def test_the_stream_is_what_the_api_sends() -> None:
    chunks = render_stream(API, [DOC])
    deltas = [(c["choices"][0]["delta"], c["choices"][0]["finish_reason"]) for c in chunks]
    assert deltas == [
        ({"role": "assistant", "content": ""}, None),
        ({"content": "Let me look."}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": ""},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":"a.py"}'}}]}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "ls", "arguments": ""},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}, None),
        ({"content": "\n\nDone."}, None),
        ({}, "tool_calls"),
    ]
    assert chunks[0] == {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": ""},
                "logprobs": None,
                "finish_reason": None,
            }
        ],
    }
    for c in chunks:
        ChatCompletionChunk.model_validate(c)


def test_the_whole_response_is_what_the_api_sends() -> None:
    result = callsieve.parse(DOC, id_factory=counter("call_"))
    rendered = openai_chat.render_response(result, **RENDER)
    assert rendered == {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 7,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Let me look.\n\nDone.",
                    "refusal": None,
                    "annotations": [],
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
                        },
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{}"},
                        },
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    ChatCompletion.model_validate(rendered)


def test_a_call_first_carries_the_role_with_null_content() -> None:
    chunks = render_stream(API, ['<tool_calls><invoke name="f"></invoke></tool_calls>'])
    first = chunks[0]["choices"][0]["delta"]
    assert first["role"] == "assistant" and first["content"] is None
    assert first["tool_calls"][0]["function"] == {"name": "f", "arguments": ""}
    final, _ = accumulate(chunks)
    assert message(final) == (None, [("call_0", "f", "{}")], "tool_calls")


# ---------------------------------------------------------------------------- conformance
@pytest.mark.skipif(not CASES, reason="no conformance cases (../shared/conformance)")
@pytest.mark.parametrize("early_emit", EARLY_EMIT)
@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in CASES])
def test_conformance_case_streams_as_it_renders_whole(
    case: dict[str, Any], early_emit: str
) -> None:
    check_doc(
        API, case["input"], chunkings(case["input"]), early_emit=early_emit, tools=case.get("tools")
    )


# ---------------------------------------------------------------------------- the property
@pytest.mark.parametrize("early_emit", EARLY_EMIT)
@SETTINGS
@given(dc=doc_and_chunks())
def test_any_document_any_chunking_accumulates_to_the_whole_response(
    dc: tuple[str, list[str]], early_emit: str
) -> None:
    """No call aborted: the SDK accumulates the stream to the whole response; one did: the
    reply ends in an error chunk and the SDK's client raises (``check_stream``)."""
    doc, chunks = dc
    check_doc(API, doc, [chunks], early_emit=early_emit)


# ---------------------------------------------------------------------------- argument streaming
CALL = ToolCall("get_weather", {"city": "Paris", "days": 2}, id="call_w")
BLOCK = Block((0, 1), "xml", "complete")
FRAGMENTS = ['{"city"', ':"Paris"', ',"days":', "2}"]


def test_argument_fragments_are_separate_chunks_and_accumulate_to_the_call() -> None:
    assert "".join(FRAGMENTS) == CALL.arguments
    batches: list[list[Any]] = [[Text("Checking. ")], [CallStarted(0, "call_w", CALL.name)]]
    batches += [[ArgumentsDelta(0, f)] for f in FRAGMENTS]
    batches += [[CallFinished(0, CALL)], [ToolCalls((CALL,), BLOCK)]]
    chunks = render_events(API, batches)
    fragments = [
        tc["function"]["arguments"]
        for c in chunks
        for tc in c["choices"][0]["delta"].get("tool_calls", ())
        if "id" not in tc
    ]
    assert fragments == FRAGMENTS
    final, done = accumulate(chunks)
    assert message(final) == (
        "Checking.",
        [("call_w", "get_weather", CALL.arguments)],
        "tool_calls",
    )
    assert done == {0: CALL.arguments}


def test_the_settling_tool_calls_adds_no_second_call() -> None:
    streamed = render_events(
        API,
        [
            [
                CallStarted(0, "call_w", CALL.name),
                ArgumentsDelta(0, "{}"),
                CallFinished(0, CALL),
                ToolCalls((CALL,), BLOCK),
            ]
        ],
    )
    assert len([c for c in streamed if "tool_calls" in c["choices"][0]["delta"]]) == 2
    final, _ = accumulate(streamed)
    assert [name for _, name, _ in message(final)[1]] == ["get_weather"]


RAW = '<tool_calls><invoke name="f"><parameter name="p">x'
STARTED: list[list[Any]] = [
    [Text("Hi ")],
    [CallStarted(0, "call_a", "f")],
    [ArgumentsDelta(0, '{"p":')],
]


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("failed", "tool_call_failed"),
        ("cut_off", "tool_call_cut_off"),
        ("rejected", "tool_call_rejected"),
        ("repeated_name", "tool_call_resent"),
    ],
)
def test_an_aborted_call_ends_the_reply_with_an_error_the_sdk_raises(
    reason: str, code: str
) -> None:
    renderer = openai_chat.StreamRenderer(**RENDER)
    chunks = [c for batch in STARTED for c in renderer.feed(batch)]
    chunks += renderer.feed([CallAborted(0, reason), Text(RAW)])
    assert chunks[-1] == {
        "error": {
            "message": chunks[-1]["error"]["message"],
            "type": "server_error",
            "param": None,
            "code": code,
        }
    }
    assert "'f' (call 0 of the reply)" in chunks[-1]["error"]["message"]
    assert renderer.aborted == CallAborted(0, reason)
    # the reply is over: nothing more, whatever comes
    assert renderer.feed([Text("more"), CallStarted(1, "call_b", "g")]) == []
    assert renderer.close("stop", usage={"input_tokens": 1}) == []
    check_wire(chunks, aborted=True)
    error = API.client_raises(chunks)
    assert error.code == code and not any(
        "content" in c["choices"][0]["delta"] for c in chunks[2:-1]
    )


def test_a_call_open_at_close_is_cut_off() -> None:
    renderer = openai_chat.StreamRenderer(**RENDER)
    chunks = renderer.feed([CallStarted(0, "call_a", "f"), ArgumentsDelta(0, "{")])
    chunks += renderer.close()
    assert chunks[-1]["error"]["code"] == "tool_call_cut_off"
    assert renderer.aborted == CallAborted(0, "cut_off")
    API.client_raises(chunks)


def test_on_abort_continue_keeps_the_reply_going() -> None:
    """Today's wire, kept by ``on_abort="continue"``: the aborted call gets no more
    fragments, ``finish_reason`` counts only finished calls, the text goes on, and the
    client keeps what it was sent — the started call, with its partial arguments."""
    chunks = render_events(API, [*STARTED, [CallAborted(0)], [Text(RAW)]], on_abort="continue")
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[-2:] == [{"content": " " + RAW}, {}]  # (white space before a call stays)
    after_abort = deltas[
        deltas.index({"tool_calls": [{"index": 0, "function": {"arguments": '{"p":'}}]}) + 1 :
    ]
    assert not any("tool_calls" in d for d in after_abort)
    final, _ = accumulate(chunks)
    assert message(final) == ("Hi " + RAW, [("call_a", "f", '{"p":')], "stop")
    assert message(client_stream(chunks)) == message(final)  # (the client reads the same)


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        (None, "length"),
        ("stop", "length"),
        ("tool_calls", "length"),
        ("content_filter", "content_filter"),
    ],
)
def test_on_abort_continue_a_cut_off_reply_finishes_length(given: str | None, reason: str) -> None:
    for batches in ([*STARTED, [CallAborted(0, "cut_off"), Text(RAW)]], STARTED):
        chunks = render_events(API, batches, given, on_abort="continue")
        assert chunks[-1]["choices"][0]["finish_reason"] == reason


def test_on_abort_continue_a_call_after_an_aborted_one_takes_the_next_index() -> None:
    chunks = render_events(
        API,
        [
            [CallStarted(0, "call_a", "f"), CallAborted(0), Text("<oops> ")],
            [
                CallStarted(1, "call_w", CALL.name),
                ArgumentsDelta(1, CALL.arguments),
                CallFinished(1, CALL),
            ],
            [ToolCalls((CALL,), BLOCK)],
        ],
        on_abort="continue",
    )
    final, _ = accumulate(chunks)
    content, calls, reason = message(final)
    assert content == "<oops>" and reason == "tool_calls"
    assert calls == [("call_a", "f", ""), ("call_w", "get_weather", CALL.arguments)]


# ---------------------------------------------------------------------------- finish reasons
BLOCKS3 = (
    'One.<tool_calls><invoke name="a"></invoke></tool_calls> Two. '
    '<|DSML|tool_calls><|DSML|invoke name="b"></|DSML|invoke></|DSML|tool_calls>'
    '<tool_calls><invoke name="c"><parameter name="n">3</parameter></invoke>'
    "</tool_calls>"
)


@pytest.mark.parametrize(
    ("doc", "given_reason", "reason"),
    [
        (DOC, None, "tool_calls"),
        (DOC, "stop", "tool_calls"),
        (DOC, "tool_calls", "tool_calls"),
        (DOC, "length", "length"),
        (DOC, "content_filter", "content_filter"),
        ("Just text.", None, "stop"),
        ("Just text.", "tool_calls", "stop"),
        ("Just text.", "length", "length"),
        ("", None, "stop"),
    ],
)
def test_finish_reason(doc: str, given_reason: str | None, reason: str) -> None:
    final, _ = accumulate(render_stream(API, [doc], finish_reason=given_reason))
    assert final.choices[0].finish_reason == reason
    assert whole(doc, finish_reason=given_reason).choices[0].finish_reason == reason


def test_an_unknown_finish_reason_is_refused() -> None:
    renderer = openai_chat.StreamRenderer()
    with pytest.raises(ConfigurationError, match="finish_reason"):
        renderer.close("eos")
    renderer.close("stop")  # (the refused close() did not close it)
    with pytest.raises(ConfigurationError):
        openai_chat.render_response(callsieve.parse("x"), finish_reason="eos")


def test_content_is_null_when_there_are_only_calls() -> None:
    doc = '  \n<tool_calls><invoke name="f"></invoke></tool_calls>\n  '
    final, _ = accumulate(render_stream(API, list(doc)))
    assert message(final) == (None, [("call_0", "f", "{}")], "tool_calls")
    assert message(whole(doc)) == message(final)


def test_a_text_only_reply_has_no_tool_calls() -> None:
    result = callsieve.parse("  Hello there.\n")
    rendered = openai_chat.render_response(result)
    assert "tool_calls" not in rendered["choices"][0]["message"]
    assert rendered["choices"][0]["message"]["content"] == "Hello there."
    final, _ = accumulate(render_stream(API, list("  Hello there.\n")))
    assert message(final) == ("Hello there.", [], "stop")


@pytest.mark.parametrize("doc", ["", "  \n\t "])
def test_an_empty_reply(doc: str) -> None:
    chunks = render_stream(API, [doc])
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": None},
        {},
    ]
    final, _ = accumulate(chunks)
    assert message(final) == (None, [], "stop") == message(whole(doc))


def test_calls_over_several_blocks_are_numbered_over_the_reply() -> None:
    for chunks in chunkings(BLOCKS3):
        streamed = render_stream(API, chunks)
        starts = [
            tc["index"]
            for c in streamed
            for tc in c["choices"][0]["delta"].get("tool_calls", ())
            if "id" in tc
        ]
        assert starts == [0, 1, 2]
        final, _ = accumulate(streamed)
        assert message(final) == (
            "One. Two.",
            [("call_0", "a", "{}"), ("call_1", "b", "{}"), ("call_2", "c", '{"n":3}')],
            "tool_calls",
        )
        assert message(final) == message(whole(BLOCKS3))


# ---------------------------------------------------------------------------- ids, created, usage
def test_default_ids_and_created() -> None:
    before = int(time.time())
    renderer = openai_chat.StreamRenderer()
    chunks = renderer.feed(callsieve.Sieve().feed(DOC)) + renderer.close()
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{28}", renderer.id)
    assert {c["id"] for c in chunks} == {renderer.id}
    assert before <= chunks[0]["created"] <= int(time.time())
    assert chunks[0]["model"] == "callsieve"
    ids = [
        tc["id"]
        for c in chunks
        for tc in c["choices"][0]["delta"].get("tool_calls", ())
        if "id" in tc
    ]
    assert len(ids) == 2 and all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)


def test_a_call_id_factory_overrides_the_sieves_ids() -> None:
    chunks = render_stream(API, [DOC], call_id_factory=counter("tool-"))
    final, _ = accumulate(chunks)
    assert [i for i, _, _ in message(final)[1]] == ["tool-0", "tool-1"]
    result = callsieve.parse(DOC)
    rendered = openai_chat.render_response(result, call_id_factory=counter("tool-"))
    assert [t["id"] for t in rendered["choices"][0]["message"]["tool_calls"]] == [
        "tool-0",
        "tool-1",
    ]


def test_usage() -> None:
    renderer = openai_chat.StreamRenderer(**RENDER)
    chunks = renderer.feed([Text("Hi")]) + renderer.close(
        usage={"input_tokens": 3, "output_tokens": 5}
    )
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 5,
        "total_tokens": 8,
    }
    final, _ = accumulate(chunks)
    assert final.usage is not None and final.usage.total_tokens == 8
    rendered = openai_chat.render_response(
        callsieve.parse("Hi"), usage={"input_tokens": 1, "output_tokens": 2}
    )
    assert ChatCompletion.model_validate(rendered).usage.total_tokens == 3  # type: ignore[union-attr]


def test_an_id_factory_that_returns_no_str_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="completion_id_factory"):
        openai_chat.StreamRenderer(completion_id_factory=lambda: 5)  # type: ignore[arg-type,return-value]

"""SPEC §10 and §17 Rendering — Anthropic Messages (``callsieve.render.anthropic``), checked
by the official SDK itself, no mocks.

1. Every object validates with the SDK's types: the whole response with
   ``anthropic.types.Message``, each stream event with ``RawMessageStreamEvent`` (a pydantic
   ``TypeAdapter``), an error with ``ErrorResponse``; no field the SDK does not know, and the
   SDK's ``to_dict()`` gives back exactly what was rendered.
2. The stream, fed to the SDK's own accumulator (``accumulate_event``, what ``MessageStream``
   runs over a live stream), gives the message ``render_response`` builds — and that message's
   text blocks and calls are ``parse()``'s, text trimmed where it meets a call. A stream in
   which a started call aborts ends with an ``error`` event, on which the SDK's own client
   (``client.messages.stream``) raises ``APIStatusError``.
3. The same on every public conformance case, streamed whole, per character and in
   LLM-token-sized chunks, for every ``early_emit``.
4. A property over generated documents and chunkings, for every ``early_emit``.
5. Hand-built argument streaming: ``CallStarted``, several ``ArgumentsDelta``,
   ``CallFinished``, then the ``ToolCalls`` for the same call; and aborts, both ways
   (``on_abort``).
6. ``stop_reason``, replies with only calls, only text, nothing, many calls; ids, usage and
   misuse.

The drivers and checks are ``render_cases``' (``API`` is this API's side of them).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from helpers import CASES_PATH, as_argument_stream, canon_value, conformance_cases, random_chunkings
from hypothesis import given
from hypothesis import strategies as st
from render_cases import (
    EXAMPLES,
    READ,
    READ_BATCHES,
    READ_BLOCK,
    READ_DELTAS,
    READ_RESULT,
    Api,
    Replay,
    SieveRun,
    call_block,
    check_doc,
    check_stream,
    counter,
    parsed,
    render_events,
    reply_runs,
    sieve_run,
    sse,
    wire,
)
from strategies import doc_and_chunks, soak_settings

import callsieve
from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    ConfigurationError,
    Event,
    ParseResult,
    Text,
    ToolCall,
    ToolCalls,
)
from callsieve._config.options import EARLY_EMIT
from callsieve.render import anthropic as render

pydantic = pytest.importorskip("pydantic")
anthropic_sdk = pytest.importorskip("anthropic")
sdk = pytest.importorskip("anthropic.types")
sdk_stream = pytest.importorskip("anthropic.lib.streaming._messages")

EVENT = pydantic.TypeAdapter(sdk.RawMessageStreamEvent)
SETTINGS = soak_settings(60)  # (CALLSIEVE_EXAMPLES: a longer soak)


# ---------------------------------------------------------------------------- the checks
def options(**extra: Any) -> dict[str, Any]:
    """Deterministic id factories (fresh counters: a stream and a whole response built with
    ``options()`` each get the same ids)."""
    return {
        "message_id_factory": counter("msg_test", 4),
        "tool_use_id_factory": counter("toolu_test", 4),
        **extra,
    }


def no_extra(obj: Any, where: str) -> None:
    """No pydantic model in ``obj`` kept a field its class does not declare."""
    if isinstance(obj, pydantic.BaseModel):
        assert not obj.model_extra, f"{where}: fields the SDK does not know: {obj.model_extra}"
        for name in type(obj).model_fields:
            no_extra(getattr(obj, name), f"{where}.{name}")
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            no_extra(item, f"{where}[{i}]")


def validate_message(message: dict[str, Any]) -> Any:
    parsed_message = sdk.Message.model_validate(wire(message))
    no_extra(parsed_message, "message")
    assert canon_value(parsed_message.to_dict()) == canon_value(message)
    return parsed_message


def validate_events(events: Sequence[dict[str, Any]]) -> list[Any]:
    out = []
    for i, event in enumerate(events):
        parsed_event = EVENT.validate_python(wire(event))
        no_extra(parsed_event, f"event {i} ({event['type']})")
        assert canon_value(parsed_event.to_dict()) == canon_value(event)
        out.append(parsed_event)
    return out


def validate_error(event: dict[str, Any]) -> Any:
    """An ``error`` event, as the SDK reads the body of one (``ErrorResponse``)."""
    error = sdk.ErrorResponse.model_validate(wire(event))
    no_extra(error, "error")
    assert error.to_dict(exclude_none=True) == event
    return error


def check_shape(events: Sequence[dict[str, Any]], aborted: bool = False) -> None:
    """The stream's grammar: ``message_start``, blocks numbered 0, 1, … each started,
    fed and stopped before the next starts, no empty text block, ``message_delta``,
    ``message_stop`` — or, when ``aborted``, the ``error`` event where the reply ended (a
    ``tool_use`` block may be left open there)."""
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    if aborted:
        assert kinds[-1] == "error" and "message_delta" not in kinds
        validate_error(events[-1])
        validate_events(events[:-1])
        body = events[1:-1]
    else:
        assert kinds[-2:] == ["message_delta", "message_stop"]
        validate_events(events)
        body = events[1:-2]
    assert events[0]["message"]["content"] == [] and events[0]["message"]["stop_reason"] is None
    open_index, next_index, kind, text = -1, 0, "", ""
    for e in body:
        if e["type"] == "content_block_start":
            assert open_index < 0 and e["index"] == next_index, kinds
            open_index, next_index, text = e["index"], next_index + 1, ""
            block = e["content_block"]
            kind = block["type"]
            assert block == (
                {"type": "text", "text": ""}
                if kind == "text"
                else {"type": "thinking", "thinking": "", "signature": ""}
                if kind == "thinking"
                else {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            )
        elif e["type"] == "content_block_delta":
            assert e["index"] == open_index
            assert e["delta"]["type"] == {"text": "text_delta", "thinking": "thinking_delta"}.get(
                kind, "input_json_delta"
            )
            text += e["delta"].get("text", e["delta"].get("thinking", ""))
        else:
            assert e["type"] == "content_block_stop" and e["index"] == open_index, kinds
            assert kind == "tool_use" or text.strip(), f"an empty or white-space-only {kind}"
            open_index = -1
    assert open_index < 0 or (aborted and kind == "tool_use")


def accumulate(events: Sequence[dict[str, Any]]) -> Any:
    """The message the SDK's stream accumulator ends with."""
    snapshot, bufs = None, {}
    for event in validate_events(events):
        snapshot = sdk_stream.accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=bufs
        )
    assert snapshot is not None
    return sdk.Message.model_validate(snapshot.to_dict())


def same_message(message: Any, whole: dict[str, Any]) -> bool:
    """The accumulated ``message`` is ``whole`` (fields the accumulator sets to ``None``
    on its own, such as ``stop_details``, aside)."""
    want = sdk.Message.model_validate(whole).to_dict(exclude_none=True)
    return canon_value(message.to_dict(exclude_none=True)) == canon_value(want)


def blocks(message: Any) -> list[tuple[str, str]]:
    """A message's content as ``(kind, text or "name input")``, ids left out."""
    return [
        ("text", b.text)
        if b.type == "text"
        else ("thinking", b.thinking)
        if b.type == "thinking"
        else ("tool_use", f"{b.name} {canon_value(b.input)}")
        for b in message.content
    ]


def parsed_blocks(result: ParseResult) -> list[tuple[str, str]]:
    """What ``parse()`` says the content is: its parts, text and reasoning runs stripped
    (every run meets a call, a run of the other kind or an end of the reply), white-space-only
    ones gone (``render_cases.reply_runs``)."""
    return [
        ("tool_use", f"{r.name} {canon_value(r.input)}")
        if isinstance(r, ToolCall)
        else ("thinking" if r[0] == "reasoning" else "text", r[1])
        for r in reply_runs(result)
    ]


REPLAY = Replay()
CLIENT = anthropic_sdk.Anthropic(
    api_key="unused", base_url="http://sdk.test", max_retries=0, http_client=REPLAY.client
)


def client_message(events: list[dict[str, Any]]) -> Any:
    """The events as the API streams them (``event:`` and ``data:``), read by the SDK's own
    client (``client.messages.stream``): its final message."""
    REPLAY.answer(sse(events, named=True))
    with CLIENT.messages.stream(
        model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        return stream.get_final_message()


class AnthropicApi(Api):
    module = render

    def options(self, **extra: Any) -> dict[str, Any]:
        return options(**extra)

    def check_wire(self, objs: list[dict[str, Any]], aborted: bool) -> None:
        check_shape(objs, aborted)

    def agrees(
        self,
        objs: list[dict[str, Any]],
        whole: dict[str, Any],
        result: ParseResult,
        **render_opts: Any,
    ) -> Any:
        validate_message(whole)
        message = accumulate(objs)
        assert same_message(message, whole)
        want = parsed_blocks(result)
        if not render_opts.get("include_reasoning", True):
            want = [b for b in want if b[0] != "thinking"]
        assert blocks(message) == want
        return message

    def client_raises(self, objs: list[dict[str, Any]]) -> BaseException:
        with pytest.raises(anthropic_sdk.APIStatusError) as info:
            client_message(objs)
        assert info.value.body == objs[-1]
        return info.value


API = AnthropicApi()


# ---------------------------------------------------------------------------- 1 and 2: examples
@pytest.mark.parametrize("mode", EARLY_EMIT)
@pytest.mark.parametrize("doc", [pytest.param(d, id=i) for i, d in EXAMPLES])
def test_examples_validate_and_accumulate_to_the_whole_response(doc: str, mode: str) -> None:
    chunkings = [[doc], list(doc), *random_chunkings(doc, seeds=(1, 2))]
    check_doc(API, doc, chunkings, early_emit=mode)


def test_whole_response_is_the_documented_object() -> None:
    doc = (
        "Reading it.\n" + '<tool_calls><invoke name="read_file"><parameter name="path">'
        "README.md</parameter></invoke></tool_calls>"
    )
    got = render.render_response(callsieve.parse(doc), **options(model="m"))
    assert got == {
        "id": "msg_test0000",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [
            {"type": "text", "text": "Reading it."},
            {
                "type": "tool_use",
                "id": "toolu_test0000",
                "name": "read_file",
                "input": {"path": "README.md"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    validate_message(got)


def test_stream_is_the_documented_events() -> None:
    doc = (
        "Hi " + '<tool_calls><invoke name="f"><parameter name="a">1</parameter></invoke>'
        "</tool_calls>"
    )
    events = render_events(
        API, sieve_run([doc]).batches, model="m", usage={"input_tokens": 7, "output_tokens": 9}
    )
    assert events == [
        {
            "type": "message_start",
            "message": {
                "id": "msg_test0000",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 7, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_test0000", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"a":1}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"input_tokens": 7, "output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    validate_events(events)


# ---------------------------------------------------------------------------- 3: conformance
def _cases() -> list[Any]:
    cases = conformance_cases()
    return [pytest.param(c, id=c["id"]) for c in cases] or [pytest.param(None, id="no-cases")]


@pytest.mark.parametrize("mode", EARLY_EMIT)
@pytest.mark.parametrize("case", _cases())
def test_conformance_cases_stream_as_the_whole_response(
    case: dict[str, Any] | None, mode: str
) -> None:
    if case is None:
        pytest.skip(f"conformance cases not found at {CASES_PATH}")
    doc = case["input"]
    opts: dict[str, Any] = {"early_emit": mode}
    if case.get("tools") is not None:
        opts["tools"] = case["tools"]
    check_doc(API, doc, ([doc], list(doc), *random_chunkings(doc, seeds=(2, 5))), **opts)


# ---------------------------------------------------------------------------- 4: property
@pytest.mark.parametrize("mode", EARLY_EMIT)
@SETTINGS
@given(doc_and_chunks())
def test_property_stream_accumulates_to_the_whole_response(
    mode: str,
    doc_chunks: tuple[str, list[str]],
) -> None:
    """No call aborted: the SDK accumulates the stream to the whole response; one did: the
    reply ends in an ``error`` event and the SDK's client raises (``check_stream``)."""
    doc, chunks = doc_chunks
    check_doc(API, doc, [chunks], early_emit=mode)


@SETTINGS
@given(doc_and_chunks(), st.lists(st.integers(1, 8), min_size=1, max_size=4))
def test_property_streamed_arguments_accumulates_to_the_whole_response(
    doc_chunks: tuple[str, list[str]], sizes: list[int]
) -> None:
    """Argument streaming as ``early_emit="arguments"`` shapes it (each call's arguments in
    1-8 character fragments, then its ``ToolCalls``), whether or not the sieve builds it."""
    doc, chunks = doc_chunks
    run = sieve_run(chunks)
    check_stream(API, parsed(doc), SieveRun(as_argument_stream(run.batches, sizes), run.blocks))


# ---------------------------------------------------------------------------- 5: hand-built


def test_arguments_stream_as_input_json_deltas() -> None:
    assert "".join(READ_DELTAS) == READ.arguments
    events = render_events(API, READ_BATCHES)
    check_shape(events)
    fragments = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["index"] == 1
    ]
    assert fragments == READ_DELTAS
    message = accumulate(events)
    assert [b.type for b in message.content] == ["text", "tool_use"]  # (ToolCalls: no second)
    assert message.content[1].input == READ.input and message.stop_reason == "tool_use"
    assert same_message(message, render.render_response(READ_RESULT, **options()))


def test_snapshot_input_grows_with_the_deltas() -> None:
    """The SDK parses the JSON so far after each delta (partial mode): a client sees the
    input fill in."""
    events = render_events(
        API,
        [
            [CallStarted(0, "c", "read")],
            *[[ArgumentsDelta(0, d)] for d in READ_DELTAS],
            [CallFinished(0, READ)],
        ],
    )
    snapshot, bufs, inputs = None, {}, []
    for event in validate_events(events):
        snapshot = sdk_stream.accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=bufs
        )
        if event.type == "content_block_delta":
            inputs.append(snapshot.content[0].input)
    assert inputs[-1] == READ.input and inputs[0] == {}


@pytest.mark.parametrize(
    ("batches", "fragments"),
    [
        ([[CallStarted(0, "c", "now")], [CallFinished(0, ToolCall("now", {}))]], []),
        ([[ToolCalls((ToolCall("now", {}),), READ_BLOCK)]], ["{}"]),
    ],
)
def test_call_without_arguments_accumulates_to_empty_input(
    batches: list[list[Event]], fragments: list[str]
) -> None:
    """The accumulator starts from ``content_block_start``'s ``input: {}`` and parses only a
    non-empty buffer: a call streamed with no delta, or with its arguments ``{}``, ends as
    ``input == {}``."""
    events = render_events(API, batches)
    assert [
        e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
    ] == fragments
    message = accumulate(events)
    assert message.content[0].input == {} and message.stop_reason == "tool_use"


ABORTED_TEXT = '<tool_calls><invoke name="f"><parameter name="a">1'


STARTED: list[list[Event]] = [[Text("Hi "), CallStarted(0, "c", "f"), ArgumentsDelta(0, '{"a":1')]]


@pytest.mark.parametrize("reason", ["failed", "cut_off", "rejected", "text_before_cdata"])
def test_abort_ends_the_reply_with_an_error_event_the_sdk_raises(reason: str) -> None:
    renderer = render.StreamRenderer(**options())
    events = [e for batch in STARTED for e in renderer.feed(batch)]
    events += renderer.feed([CallAborted(0, reason), Text(ABORTED_TEXT)])
    # right after what was sent: the tool_use block is left open, nothing else follows
    assert events[-2] == {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"a":1'},
    }
    assert events[-1] == {
        "type": "error",
        "error": {"type": "api_error", "message": events[-1]["error"]["message"]},
    }
    assert "'f' (call 0 of the reply)" in events[-1]["error"]["message"]
    assert renderer.aborted == CallAborted(0, reason)
    assert renderer.feed([Text("more")]) == [] and renderer.close("end_turn") == []
    check_shape(events, aborted=True)
    API.client_raises(events)


def test_call_open_at_close_is_cut_off() -> None:
    renderer = render.StreamRenderer(**options())
    events = renderer.feed([Text("x"), CallStarted(0, "c", "f"), ArgumentsDelta(0, "{")])
    events += renderer.close()
    assert events[-1]["type"] == "error" and "cut off" in events[-1]["error"]["message"]
    API.client_raises(events)


def test_on_abort_continue_stops_the_tool_use_block_and_it_does_not_count() -> None:
    batches = [*STARTED, [CallAborted(0), Text(ABORTED_TEXT)]]
    events = render_events(API, batches, on_abort="continue")
    check_shape(events)
    stop = events.index({"type": "content_block_stop", "index": 1})
    assert events[stop + 1]["type"] == "content_block_start"  # stopped at the abort
    message = accumulate(events)
    # what a client then holds: the tool_use block with the input parsed so far
    assert blocks(message) == [("text", "Hi"), ("tool_use", 'f {"a": 1}'), ("text", ABORTED_TEXT)]
    assert message.stop_reason == "end_turn"
    assert blocks(client_message(events)) == blocks(message)  # (the client reads the same)


@pytest.mark.parametrize(
    ("finish_reason", "stop"),
    [
        (None, "max_tokens"),
        ("stop", "max_tokens"),
        ("end_turn", "end_turn"),
        ("content_filter", "refusal"),
    ],
)
def test_on_abort_continue_a_cut_off_reply_stops_max_tokens(
    finish_reason: str | None, stop: str
) -> None:
    for batches in ([*STARTED, [CallAborted(0, "cut_off"), Text(ABORTED_TEXT)]], STARTED):
        events = render_events(API, batches, finish_reason, on_abort="continue")
        check_shape(events)
        assert accumulate(events).stop_reason == stop


def test_on_abort_continue_an_abort_after_a_finished_call_keeps_tool_use() -> None:
    g = ToolCall("g", {})
    events = render_events(
        API,
        [
            [
                CallStarted(0, "a", "read"),
                ArgumentsDelta(0, READ.arguments),
                CallFinished(0, READ),
                CallStarted(1, "b", "g"),
                CallAborted(1),
            ],
            [ToolCalls((READ,), READ_BLOCK)],
            [CallFinished(2, g)],
        ],
        on_abort="continue",
    )
    check_shape(events)
    message = accumulate(events)
    assert [b.name for b in message.content] == ["read", "g", "g"]
    assert message.stop_reason == "tool_use"


# ---------------------------------------------------------------------------- 6: stop reasons
TEXT, CALL = "Some text.", "ok " + call_block("f")


@pytest.mark.parametrize(
    ("doc", "finish_reason", "stop"),
    [
        (TEXT, None, "end_turn"),
        (CALL, None, "tool_use"),
        ("", None, "end_turn"),
        (TEXT, "stop", "end_turn"),
        (CALL, "stop", "tool_use"),
        (TEXT, "tool_calls", "end_turn"),
        (CALL, "tool_calls", "tool_use"),
        (TEXT, "length", "max_tokens"),
        (CALL, "length", "max_tokens"),
        (TEXT, "content_filter", "refusal"),
        (CALL, "end_turn", "end_turn"),
        (TEXT, "pause_turn", "pause_turn"),
    ],
)
def test_stop_reason(doc: str, finish_reason: str | None, stop: str) -> None:
    result = callsieve.parse(doc)
    whole = render.render_response(result, finish_reason=finish_reason)
    assert validate_message(whole).stop_reason == stop
    events = render_events(API, sieve_run(list(doc)).batches, finish_reason)
    assert accumulate(events).stop_reason == stop


def test_stop_reasons_are_the_sdks() -> None:
    assert set(render.STOP_REASONS) == set(typing.get_args(sdk.StopReason))


def test_unknown_finish_reason_is_refused_and_the_stream_goes_on() -> None:
    renderer = render.StreamRenderer(**options())
    renderer.feed([Text("hi")])
    with pytest.raises(ConfigurationError):
        renderer.close("finished")
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse("x"), finish_reason="STOP")
    events = renderer.feed([Text(" there")]) + renderer.close("length")
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"


@pytest.mark.parametrize(
    ("doc", "kinds"),
    [
        (call_block("read"), ["tool_use"]),
        ("\n" + call_block("a", "b") + "\n", ["tool_use", "tool_use"]),
        (TEXT, ["text"]),
        ("", []),
        ("\n \n", []),
        (
            "A " + call_block("a", "b") + " B " + call_block("c") + call_block("d") + " C",
            ["text", "tool_use", "tool_use", "text", "tool_use", "tool_use", "text"],
        ),
    ],
)
def test_content_blocks(doc: str, kinds: list[str]) -> None:
    for mode in EARLY_EMIT:
        result = callsieve.parse(doc, early_emit=mode)
        assert [b["type"] for b in render.render_response(result)["content"]] == kinds
        message = check_stream(API, result, sieve_run([doc], early_emit=mode))
        assert [b.type for b in message.content] == kinds
    if not kinds:
        events = render_events(API, sieve_run(list(doc)).batches)
        assert [e["type"] for e in events] == ["message_start", "message_delta", "message_stop"]


# ---------------------------------------------------------------------------- ids, usage, misuse
def test_default_ids_are_shaped_as_the_apis() -> None:
    message = render.render_response(callsieve.parse(call_block("a", "b")))
    assert re.fullmatch(r"msg_01[0-9A-Za-z]{22}", message["id"])
    ids = [b["id"] for b in message["content"]]
    assert len(set(ids)) == 2
    for ident in ids:
        assert re.fullmatch(r"toolu_01[0-9A-Za-z]{22}", ident)
        assert re.fullmatch(r"^[a-zA-Z0-9_-]+$", ident)
    events = render.StreamRenderer().feed([CallFinished(0, ToolCall("a", {}))])
    assert re.fullmatch(r"toolu_01[0-9A-Za-z]{22}", events[1]["content_block"]["id"])


def _boom() -> str:
    raise RuntimeError("no ids today")


@pytest.mark.parametrize("factory", [lambda: "bad id!", lambda: 7, lambda: "", _boom])
def test_bad_tool_use_ids_are_refused(factory: Callable[[], Any]) -> None:
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse(call_block("a")), tool_use_id_factory=factory)
    with pytest.raises(ConfigurationError):
        render.StreamRenderer(tool_use_id_factory=factory).feed([CallStarted(0, "c", "a")])


def test_usage() -> None:
    usage = {"input_tokens": 11, "output_tokens": 5}
    whole = render.render_response(callsieve.parse(TEXT), usage=usage)
    assert validate_message(whole).usage.input_tokens == 11 and whole["usage"] == usage
    renderer = render.StreamRenderer(usage={"input_tokens": 11})
    events = renderer.feed([Text(TEXT)]) + renderer.close(usage=usage)
    assert events[0]["message"]["usage"] == {"input_tokens": 11, "output_tokens": 0}
    message = accumulate(events)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 5)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 1},
        {"input_tokens": -1},
        {"output_tokens": True},
        {"input_tokens": 1.5},
        [1, 2],
    ],
)
def test_bad_usage_is_refused(usage: Any) -> None:
    with pytest.raises(ConfigurationError):
        render.StreamRenderer(usage=usage)
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse(TEXT), usage=usage)
    with pytest.raises(ConfigurationError):
        render.StreamRenderer().close(usage=usage)

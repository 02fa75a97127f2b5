"""SPEC §10 and §17 Rendering — OpenAI Responses (``callsieve.render.openai_responses``),
checked by the ``openai`` SDK itself: every stream event validates against the SDK's
``ResponseStreamEvent`` union (a pydantic ``TypeAdapter``), every response as ``Response``,
and a rendered stream fed event by event to the SDK's own accumulator (``openai.lib.streaming
.responses.ResponseStreamState.handle_event``) gives the response ``render_response(parse(doc))``
gives — both the final response it hands out with ``response.completed`` and what it built
from the deltas (the ``snapshot`` of its ``output_text.delta`` and
``function_call_arguments.delta`` events) — and the text and calls ``parse(doc)`` found
(each text part a message with its white space trimmed where it meets the reply's ends or a
call: ``Reply``'s rule). A stream in which a started call aborts ends with
``response.failed``, and the SDK's own client (``client.responses.stream``) has no final
response to give (``ResponseStream.get_final_response`` raises). Ids are deterministic:
counters passed to the sieve and renderer. The drivers and checks are ``render_cases``'
(``API`` is this API's side of them).

Groups: the wire objects; the accumulator on the conformance cases (several chunkings, every
``early_emit``); a property over generated documents; argument streaming and aborts from
hand-built events; finish reasons, empty and text-only replies, ids, tools and usage.
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
from openai import omit
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter
from render_cases import (
    Api,
    Replay,
    check_doc,
    chunkings,
    counter,
    render_events,
    render_stream,
    render_whole,
    reply_runs,
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
from callsieve.render import openai_responses

CASES = conformance_cases()
SETTINGS = soak_settings(60)  # (CALLSIEVE_EXAMPLES: a longer soak)
EVENT = TypeAdapter(ResponseStreamEvent)
Item = tuple[Any, ...]
ENDS = ("response.completed", "response.incomplete")


def opts(**more: Any) -> dict[str, Any]:
    """Deterministic renderer options (fresh counters each time)."""
    return {
        "model": "m",
        "created": 7,
        "response_id_factory": lambda: "resp_test",
        "message_id_factory": counter("msg_"),
        "function_call_id_factory": counter("fc_"),
        "reasoning_id_factory": counter("rs_"),
        **more,
    }


# ---------------------------------------------------------------------------- the checks
def check_wire(events: list[dict[str, Any]], aborted: bool = False) -> None:
    """What a client relies on besides the types: every event a ``ResponseStreamEvent``;
    sequence numbers 0, 1, 2, …; created and in_progress first, completed or incomplete last
    (``response.failed`` when ``aborted``), one response id; items added at output_index 0,
    1, 2, …, each event of an item naming its id and index while it is open, each item done
    once."""
    for e in events:
        EVENT.validate_python(e)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] in (("response.failed",) if aborted else ENDS)
    assert {e["response"]["id"] for e in events if "response" in e} == {"resp_test"}
    open_items: dict[int, str] = {}
    added = 0
    for e in events[2:-1]:
        index = e["output_index"]
        if e["type"] == "response.output_item.added":
            assert index == added and e["item"]["status"] == "in_progress"
            open_items[index] = e["item"]["id"]
            added += 1
            continue
        assert index in open_items, f"{e['type']} for an item not open"
        if e["type"] == "response.output_item.done":
            assert e["item"]["id"] == open_items.pop(index)
        else:
            assert e["item_id"] == open_items[index]
            assert e.get("content_index", 0) == 0
    assert not open_items, "every item is done before the response ends"


def accumulate(events: list[dict[str, Any]]) -> tuple[Response, dict[int, str], dict[int, str]]:
    """Every event checked (``check_wire``), then fed to the SDK's accumulator: the final
    response it hands out, and the text and arguments it accumulated per output_index from
    the deltas."""
    check_wire(events)
    state: ResponseStreamState[None] = ResponseStreamState(input_tools=omit, text_format=omit)
    texts: dict[int, str] = {}
    arguments: dict[int, str] = {}
    final: Response | None = None
    for raw in events:
        for out in state.handle_event(EVENT.validate_python(raw)):
            if out.type == "response.output_text.delta":
                texts[out.output_index] = out.snapshot
            elif out.type == "response.function_call_arguments.delta":
                arguments[out.output_index] = out.snapshot
            elif out.type in ENDS:
                final = out.response
    assert final is not None
    return final, texts, arguments


def items(response: Response) -> list[Item]:
    """The output as ``("message", id, status, text)`` and ``("function_call", id, status,
    call_id, name, arguments)``."""
    out: list[Item] = []
    for item in response.output:
        if item.type == "message":
            assert len(item.content) == 1 and item.content[0].type == "output_text"
            out.append(("message", item.id, item.status, item.content[0].text))
        elif item.type == "reasoning":
            assert len(item.summary) == 1 and item.summary[0].type == "summary_text"
            out.append(("reasoning", item.id, item.status, item.summary[0].text))
        else:
            assert item.type == "function_call"
            out.append(
                ("function_call", item.id, item.status, item.call_id, item.name, item.arguments)
            )
    return out


def expected(result: ParseResult, include_reasoning: bool = True) -> list[Item]:
    """What ``parse()`` found, in order: each text or reasoning run trimmed (dropped when
    only white space, ``render_cases.reply_runs``), each call as ``(call_id, name, input)``."""
    out: list[Item] = []
    for run in reply_runs(result):
        if isinstance(run, ToolCall):
            out.append(("function_call", run.id, run.name, run.input))
        elif run[0] == "text":
            out.append(("message", run[1]))
        elif include_reasoning:
            out.append(("reasoning", run[1]))
    return out


def _plain(item: Item) -> Item:
    if item[0] in ("message", "reasoning"):
        return (item[0], item[3])
    return ("function_call", item[3], item[4], json.loads(item[5]))


REPLAY = Replay()
CLIENT = openai.OpenAI(
    api_key="unused", base_url="http://sdk.test/v1", max_retries=0, http_client=REPLAY.client
)


class ResponsesApi(Api):
    module = openai_responses

    def options(self, **extra: Any) -> dict[str, Any]:
        return opts(**extra)

    def check_wire(self, objs: list[dict[str, Any]], aborted: bool) -> None:
        check_wire(objs, aborted)

    def agrees(
        self,
        objs: list[dict[str, Any]],
        whole: dict[str, Any],
        result: ParseResult,
        **render_opts: Any,
    ) -> Any:
        final, texts, arguments = accumulate(objs)
        rendered = Response.model_validate(whole)
        got = items(final)
        assert got == items(rendered)
        assert (final.status, final.incomplete_details) == (
            rendered.status,
            rendered.incomplete_details,
        )
        for index, item in enumerate(got):  # what the SDK built from the deltas
            if item[0] == "message":
                assert texts.get(index) == item[3]
            elif item[0] == "function_call":
                assert arguments.get(index, "") == item[5]
        assert [_plain(i) for i in got] == expected(
            result, render_opts.get("include_reasoning", True)
        )
        return final

    def client_raises(self, objs: list[dict[str, Any]]) -> BaseException:
        failed = objs[-1]["response"]
        REPLAY.answer(sse(objs, named=True))
        with CLIENT.responses.stream(model="m", input="hi") as stream:
            seen = list(stream)
            with pytest.raises(RuntimeError, match="response.completed") as info:
                stream.get_final_response()
        # what a client that reads the events sees last: the failure, with its error
        assert seen[-1].type == "response.failed"
        assert seen[-1].response.status == "failed"
        assert seen[-1].response.error is not None
        assert seen[-1].response.error.message == failed["error"]["message"]
        return info.value


API = ResponsesApi()


def whole(doc: str, finish_reason: str | None = None, **kw: Any) -> Response:
    return Response.model_validate(render_whole(API, doc, finish_reason, **kw))


# ---------------------------------------------------------------------------- the wire objects
DOC = (
    'Let me look.\n<tool_calls><invoke name="read_file"><parameter name="path">a.py'
    '</parameter></invoke><invoke name="ls"></invoke></tool_calls>\nDone. '
)
READ_ARGS = '{"path":"a.py"}'


def _message(ident: str, status: str, text: str | None) -> dict[str, Any]:
    content = (
        []
        if text is None
        else [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}]
    )
    return {
        "id": ident,
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    }


def _call(ident: str, status: str, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


WHOLE_OUTPUT = [
    _message("msg_0", "completed", "Let me look."),
    _call("fc_0", "completed", "call_0", "read_file", READ_ARGS),
    _call("fc_1", "completed", "call_1", "ls", "{}"),
    _message("msg_1", "completed", "Done."),
]
USAGE0 = {
    "input_tokens": 0,
    "output_tokens": 0,
    "total_tokens": 0,
    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
    "output_tokens_details": {"reasoning_tokens": 0},
}


def _response(status: str, output: list[dict[str, Any]], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 7,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": "m",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }


def test_the_stream_is_what_the_api_sends() -> None:
    events = render_stream(API, [DOC])
    strip = [{k: v for k, v in e.items() if k != "sequence_number"} for e in events]
    text_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}

    def text_event(kind: str, item: str, index: int, **more: Any) -> dict[str, Any]:
        return {"type": kind, "item_id": item, "output_index": index, "content_index": 0, **more}

    assert strip == [
        {"type": "response.created", "response": _response("in_progress", [], None)},
        {"type": "response.in_progress", "response": _response("in_progress", [], None)},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": _message("msg_0", "in_progress", None),
        },
        text_event("response.content_part.added", "msg_0", 0, part=text_part),
        text_event("response.output_text.delta", "msg_0", 0, delta="Let me look.", logprobs=[]),
        text_event("response.output_text.done", "msg_0", 0, text="Let me look.", logprobs=[]),
        text_event(
            "response.content_part.done", "msg_0", 0, part={**text_part, "text": "Let me look."}
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": WHOLE_OUTPUT[0]},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": _call("fc_0", "in_progress", "call_0", "read_file", ""),
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_0",
            "output_index": 1,
            "delta": READ_ARGS,
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_0",
            "name": "read_file",
            "output_index": 1,
            "arguments": READ_ARGS,
        },
        {"type": "response.output_item.done", "output_index": 1, "item": WHOLE_OUTPUT[1]},
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": _call("fc_1", "in_progress", "call_1", "ls", ""),
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 2,
            "delta": "{}",
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "name": "ls",
            "output_index": 2,
            "arguments": "{}",
        },
        {"type": "response.output_item.done", "output_index": 2, "item": WHOLE_OUTPUT[2]},
        {
            "type": "response.output_item.added",
            "output_index": 3,
            "item": _message("msg_1", "in_progress", None),
        },
        text_event("response.content_part.added", "msg_1", 3, part=text_part),
        text_event("response.output_text.delta", "msg_1", 3, delta="Done.", logprobs=[]),
        text_event("response.output_text.done", "msg_1", 3, text="Done.", logprobs=[]),
        text_event("response.content_part.done", "msg_1", 3, part={**text_part, "text": "Done."}),
        {"type": "response.output_item.done", "output_index": 3, "item": WHOLE_OUTPUT[3]},
        {"type": "response.completed", "response": _response("completed", WHOLE_OUTPUT, USAGE0)},
    ]
    for e in events:
        EVENT.validate_python(e)


def test_the_whole_response_is_what_the_api_sends() -> None:
    result = callsieve.parse(DOC, id_factory=counter("call_"))
    rendered = openai_responses.render_response(result, **opts())
    assert rendered == _response("completed", WHOLE_OUTPUT, USAGE0)
    assert Response.model_validate(rendered).output_text == "Let me look.Done."


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
    reply ends with ``response.failed`` and the SDK's client has no final response."""
    doc, chunks = dc
    check_doc(API, doc, [chunks], early_emit=early_emit)


# ---------------------------------------------------------------------------- argument streaming
CALL = ToolCall("get_weather", {"city": "Paris", "days": 2}, id="call_w")
BLOCK = Block((0, 1), "xml", "complete")
FRAGMENTS = ['{"city"', ':"Paris"', ',"days":', "2}"]


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == f"response.{kind}"]


def test_argument_fragments_are_separate_events_and_accumulate_to_the_call() -> None:
    assert "".join(FRAGMENTS) == CALL.arguments
    batches: list[list[Any]] = [[Text("Checking. ")], [CallStarted(0, "call_w", CALL.name)]]
    batches += [[ArgumentsDelta(0, f)] for f in FRAGMENTS]
    batches += [[CallFinished(0, CALL)], [ToolCalls((CALL,), BLOCK)]]
    events = render_events(API, batches)
    assert [e["delta"] for e in _of(events, "function_call_arguments.delta")] == FRAGMENTS
    assert [e["arguments"] for e in _of(events, "function_call_arguments.done")] == [CALL.arguments]
    final, _, arguments = accumulate(events)
    assert arguments == {1: CALL.arguments}
    assert items(final) == [
        ("message", "msg_0", "completed", "Checking."),
        ("function_call", "fc_0", "completed", "call_w", "get_weather", CALL.arguments),
    ]


def test_the_settling_tool_calls_adds_no_second_call() -> None:
    events = render_events(
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
    assert len(_of(events, "output_item.added")) == 1
    final, _, _ = accumulate(events)
    assert [i[4] for i in items(final)] == ["get_weather"]


RAW = '<tool_calls><invoke name="f"><parameter name="p">x'
STARTED: list[list[Any]] = [
    [Text("Hi ")],
    [CallStarted(0, "call_a", "f")],
    [ArgumentsDelta(0, '{"p":')],
]


@pytest.mark.parametrize(
    ("reason", "cut"),
    [("failed", False), ("cut_off", True), ("rejected", False), ("repeated_key", False)],
)
def test_an_aborted_call_ends_the_reply_with_response_failed(reason: str, cut: bool) -> None:
    renderer = openai_responses.StreamRenderer(**opts())
    events = [e for batch in STARTED for e in renderer.feed(batch)]
    events += renderer.feed([CallAborted(0, reason), Text(RAW)])
    # the call's item is done, incomplete, as under "continue"; then the failure, at once
    assert [e["type"] for e in events[-2:]] == ["response.output_item.done", "response.failed"]
    assert events[-2]["item"] == _call("fc_0", "incomplete", "call_a", "f", '{"p":')
    response = events[-1]["response"]
    assert response["status"] == "failed"
    assert response["error"] == {"code": "server_error", "message": response["error"]["message"]}
    assert "'f' (call 0 of the reply)" in response["error"]["message"]
    assert response["incomplete_details"] == ({"reason": "max_output_tokens"} if cut else None)
    assert [o["type"] for o in response["output"]] == ["message"]  # (what completed)
    assert renderer.aborted == CallAborted(0, reason)
    assert renderer.feed([Text("more")]) == [] and renderer.close("stop") == []
    check_wire(events, aborted=True)
    assert Response.model_validate(response).error is not None
    API.client_raises(events)


def test_a_call_open_at_close_is_cut_off() -> None:
    renderer = openai_responses.StreamRenderer(**opts())
    events = renderer.feed([CallStarted(0, "call_a", "f"), ArgumentsDelta(0, "{")])
    events += renderer.close()
    assert events[-1]["type"] == "response.failed"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    API.client_raises(events)


def test_on_abort_continue_closes_the_call_incomplete_and_leaves_it_out() -> None:
    events = render_events(API, [*STARTED, [CallAborted(0)], [Text(RAW)]], on_abort="continue")
    done = _of(events, "output_item.done")
    assert done[1] == {
        "type": "response.output_item.done",
        "sequence_number": done[1]["sequence_number"],
        "output_index": 1,
        "item": _call("fc_0", "incomplete", "call_a", "f", '{"p":'),
    }
    assert _of(events, "function_call_arguments.done") == []
    final, texts, arguments = accumulate(events)
    assert final.status == "completed"
    assert items(final) == [
        ("message", "msg_0", "completed", "Hi"),
        ("message", "msg_1", "completed", RAW),
    ]
    assert texts == {0: "Hi", 2: RAW} and arguments == {1: '{"p":'}


def test_on_abort_continue_a_cut_off_reply_is_incomplete() -> None:
    for batches in ([*STARTED, [CallAborted(0, "cut_off")], [Text(RAW)]], STARTED):
        events = render_events(API, batches, on_abort="continue")
        final, _, _ = accumulate(events)
        assert final.status == "incomplete"
        assert final.incomplete_details is not None
        assert final.incomplete_details.reason == "max_output_tokens"


def test_on_abort_continue_a_call_after_an_aborted_one_is_a_call() -> None:
    events = render_events(
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
    final, _, _ = accumulate(events)
    assert items(final) == [
        ("message", "msg_0", "completed", "<oops>"),
        ("function_call", "fc_1", "completed", "call_w", "get_weather", CALL.arguments),
    ]
    assert [e["output_index"] for e in _of(events, "output_item.added")] == [0, 1, 2]


# ---------------------------------------------------------------------------- finish reasons
BLOCKS3 = (
    'One.<tool_calls><invoke name="a"></invoke></tool_calls> Two. '
    '<|DSML|tool_calls><|DSML|invoke name="b"></|DSML|invoke></|DSML|tool_calls>'
    '<tool_calls><invoke name="c"><parameter name="n">3</parameter></invoke>'
    "</tool_calls>"
)


@pytest.mark.parametrize(
    ("given_reason", "status", "reason"),
    [
        (None, "completed", None),
        ("stop", "completed", None),
        ("tool_calls", "completed", None),
        ("length", "incomplete", "max_output_tokens"),
        ("content_filter", "incomplete", "content_filter"),
    ],
)
@pytest.mark.parametrize("doc", [DOC, "Just text.", BLOCKS3])
def test_finish_reason(doc: str, given_reason: str | None, status: str, reason: str | None) -> None:
    events = render_stream(API, list(doc), finish_reason=given_reason)
    assert events[-1]["type"] == f"response.{status}"
    final, _, _ = accumulate(events)
    for response in (final, whole(doc, finish_reason=given_reason)):
        assert response.status == status
        assert (response.incomplete_details and response.incomplete_details.reason) == reason
        statuses = [i[2] for i in items(response)]
        # a message still open when the reply was cut off is incomplete; the rest completed
        last = "incomplete" if reason and items(response)[-1][0] == "message" else "completed"
        assert statuses == ["completed"] * (len(statuses) - 1) + [last]
    assert items(final) == items(whole(doc, finish_reason=given_reason))


def test_an_unknown_finish_reason_is_refused() -> None:
    renderer = openai_responses.StreamRenderer()
    with pytest.raises(ConfigurationError, match="finish_reason"):
        renderer.close("eos")
    renderer.close("stop")  # (the refused close() did not close it)
    with pytest.raises(ConfigurationError):
        openai_responses.render_response(callsieve.parse("x"), finish_reason="eos")


def test_a_text_only_reply_is_one_message() -> None:
    final, _, _ = accumulate(render_stream(API, list("  Hello\n there.\n")))
    assert items(final) == [("message", "msg_0", "completed", "Hello\n there.")]
    assert items(whole("  Hello\n there.\n")) == items(final)


@pytest.mark.parametrize("doc", ["", "  \n\t "])
def test_an_empty_reply_has_no_output(doc: str) -> None:
    events = render_stream(API, [doc])
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.completed",
    ]
    final, _, _ = accumulate(events)
    assert final.output == [] and whole(doc).output == []


def test_only_calls_make_no_message() -> None:
    doc = '  \n<tool_calls><invoke name="f"></invoke></tool_calls>\n  '
    final, _, _ = accumulate(render_stream(API, list(doc)))
    assert items(final) == [("function_call", "fc_0", "completed", "call_0", "f", "{}")]


def test_calls_over_several_blocks_take_their_places_in_the_output() -> None:
    for chunks in chunkings(BLOCKS3):
        events = render_stream(API, chunks)
        assert [e["output_index"] for e in _of(events, "output_item.added")] == [0, 1, 2, 3, 4]
        final, _, _ = accumulate(events)
        assert items(final) == [
            ("message", "msg_0", "completed", "One."),
            ("function_call", "fc_0", "completed", "call_0", "a", "{}"),
            ("message", "msg_1", "completed", "Two."),
            ("function_call", "fc_1", "completed", "call_1", "b", "{}"),
            ("function_call", "fc_2", "completed", "call_2", "c", '{"n":3}'),
        ]
        assert items(final) == items(whole(BLOCKS3))


# ---------------------------------------------------------------------------- ids, request fields
def test_default_ids_and_created() -> None:
    before = int(time.time())
    renderer = openai_responses.StreamRenderer()
    events = renderer.feed(callsieve.Sieve().feed(DOC)) + renderer.close()
    assert re.fullmatch(r"resp_[0-9a-f]{48}", renderer.id)
    response = events[-1]["response"]
    assert response["id"] == renderer.id and response["model"] == "callsieve"
    assert before <= response["created_at"] <= int(time.time())
    kinds = [(o["type"], o["id"], o.get("call_id")) for o in response["output"]]
    assert [k for k, _, _ in kinds] == ["message", "function_call", "function_call", "message"]
    for kind, ident, call_id in kinds:
        assert re.fullmatch((r"msg_" if kind == "message" else r"fc_") + "[0-9a-f]{48}", ident)
        assert call_id is None or re.fullmatch(r"call_[0-9a-f]{24}", call_id)
    Response.model_validate(response)


def test_a_call_id_factory_overrides_the_sieves_ids() -> None:
    final, _, _ = accumulate(render_stream(API, [DOC], call_id_factory=counter("tool-")))
    assert [i[3] for i in items(final) if i[0] == "function_call"] == ["tool-0", "tool-1"]
    rendered = openai_responses.render_response(
        callsieve.parse(DOC), call_id_factory=counter("tool-")
    )
    assert [o["call_id"] for o in rendered["output"] if o["type"] == "function_call"] == [
        "tool-0",
        "tool-1",
    ]


def test_the_requests_tool_settings_are_echoed() -> None:
    tools = [
        {
            "type": "function",
            "name": "read_file",
            "strict": False,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    settings_ = {"tools": tools, "tool_choice": "required", "parallel_tool_calls": False}
    renderer = openai_responses.StreamRenderer(**opts(**settings_))
    events = renderer.feed(callsieve.Sieve().feed(DOC)) + renderer.close()
    for e in events:
        if "response" in e:
            assert {k: e["response"][k] for k in settings_} == settings_
    final, _, _ = accumulate(events)
    assert final.tool_choice == "required" and final.tools[0].type == "function"
    Response.model_validate(openai_responses.render_response(callsieve.parse(DOC), **settings_))


def test_usage() -> None:
    renderer = openai_responses.StreamRenderer(**opts())
    events = renderer.feed([Text("Hi")]) + renderer.close(
        usage={"input_tokens": 3, "output_tokens": 5}
    )
    final, _, _ = accumulate(events)
    assert final.usage is not None and final.usage.total_tokens == 8
    assert final.usage.output_tokens_details.reasoning_tokens == 0
    rendered = openai_responses.render_response(
        callsieve.parse("Hi"), usage={"input_tokens": 1, "output_tokens": 2}
    )
    assert Response.model_validate(rendered).usage.total_tokens == 3  # type: ignore[union-attr]

"""SPEC §10 and §17 Rendering — Gemini (``callsieve.render.gemini``), checked by google-genai
itself, no mocks.

1. Every object validates with the SDK's types: ``GenerateContentResponse.model_validate``
   (camelCase aliases, unknown fields forbidden), gives back exactly what was rendered, and
   reads the same through the SDK's own response path (the Gemini API converter, then
   ``_from_response``), with the right ``.text``, ``.function_calls`` and finish reason.
2. The streamed responses, joined as google-genai's chat joins them (each chunk's
   ``candidates[0].content`` in turn; every chunk valid by the chat's own
   ``_validate_response``, so the turn is kept in its history), give the parts of the whole
   response ``render_response`` builds — which are ``parse()``'s text and calls. A stream in
   which a call did not come through (its block failed, the reply was cut off inside it, the
   policy rejected it) ends with an error chunk, on which the SDK's own client
   (``client.models.generate_content_stream``) raises ``ServerError``.
3. The same on every public conformance case, streamed whole, per character and in
   LLM-token-sized chunks, for every ``early_emit``.
4. A property over generated documents and chunkings, for every ``early_emit`` (a call sent
   again needs nothing said: Gemini sends calls whole, so its first try was never sent).
5. Hand-built argument streaming and aborts, both ways (``on_abort``).
6. Finish reasons, replies with only calls, only text, nothing, many calls; ids, usage and
   misuse.

The drivers and checks are ``render_cases``' (``API`` is this API's side of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
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
from callsieve.render import Reply
from callsieve.render import gemini as render

genai = pytest.importorskip("google.genai")
genai_types = pytest.importorskip("google.genai.types")
genai_models = pytest.importorskip("google.genai.models")
genai_chats = pytest.importorskip("google.genai.chats")
genai_errors = pytest.importorskip("google.genai.errors")

SETTINGS = soak_settings(60)  # (CALLSIEVE_EXAMPLES: a longer soak)


# ---------------------------------------------------------------------------- the checks
def options(**extra: Any) -> dict[str, Any]:
    """Deterministic id factories (fresh counters: a stream and a whole response built with
    ``options()`` each get the same ids)."""
    return {"response_id_factory": counter("resp", 4), "call_id_factory": counter("fc", 4), **extra}


def validate(response: dict[str, Any]) -> Any:
    """The response as google-genai reads it, checked both ways the SDK reads JSON."""
    parsed_response = genai_types.GenerateContentResponse.model_validate(wire(response))
    dumped = parsed_response.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert canon_value(dumped) == canon_value(response)
    converted = genai_models._GenerateContentResponse_from_mldev(wire(response))
    assert (
        genai_types.GenerateContentResponse._from_response(response=converted, kwargs={})
        == parsed_response
    )
    return parsed_response


def items(parts: Iterable[Any]) -> list[tuple[str, str]]:
    """Parts as ``(kind, text or "id name args")``, kind ``"thought"`` for a text part with
    ``thought: true``: adjacent text (and adjacent thoughts) merged, empty text gone."""
    out: list[tuple[str, str]] = []
    for part in parts:
        if part.function_call is not None:
            call = part.function_call
            out.append(("call", f"{call.id} {call.name} {canon_value(call.args)}"))
        elif part.text:
            kind = "thought" if part.thought else "text"
            if out and out[-1][0] == kind:
                out[-1] = (kind, out[-1][1] + part.text)
            else:
                out.append((kind, part.text))
    return out


def parsed_items(result: ParseResult) -> list[tuple[str, str]]:
    """What ``parse()`` says the parts are: text and reasoning runs stripped (every run meets
    a call, a run of the other kind or an end of the reply), white-space-only ones gone
    (``render_cases.reply_runs``); calls by name and arguments."""
    return [
        ("call", f"{r.name} {canon_value(r.input)}")
        if isinstance(r, ToolCall)
        else ("thought" if r[0] == "reasoning" else "text", r[1])
        for r in reply_runs(result)
    ]


def without_ids(its: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v.split(" ", 1)[1] if k == "call" else v) for k, v in its]


def joined(chunks: Sequence[dict[str, Any]], aborted: bool = False) -> tuple[list[Any], Any]:
    """The streamed responses read by the SDK and joined as its chat does: each chunk's
    content in turn, every chunk valid for the chat's history; returns (all parts, the last
    response). ``aborted``: the last chunk is the error instead (and no chunk has a finish
    reason)."""
    if aborted:
        error = chunks[-1]
        assert list(error) == ["error"] and error["error"]["code"] == 500
        assert error["error"]["status"] == "INTERNAL" and error["error"]["message"]
        chunks = chunks[:-1]
    parts: list[Any] = []
    last = None
    for i, chunk in enumerate(chunks):
        response = validate(chunk)
        assert genai_chats._validate_response(response), f"chunk {i} would drop the turn"
        candidate = response.candidates[0]
        assert candidate.content.role == "model" and candidate.index == 0
        assert response.response_id == chunks[0]["responseId"]
        final = i == len(chunks) - 1 and not aborted
        assert (candidate.finish_reason is None) != final
        assert (response.usage_metadata is None) != final
        parts += candidate.content.parts
        last = response
    return parts, last


REPLAY = Replay()
CLIENT = genai.Client(
    api_key="unused",
    http_options=genai_types.HttpOptions(base_url="http://sdk.test", httpx_client=REPLAY.client),
)


def client_chunks(chunks: list[dict[str, Any]]) -> list[Any]:
    """The chunks as the API streams them (``data:`` frames, ``alt=sse``), read by the SDK's
    own client (``client.models.generate_content_stream``): the responses it yields."""
    REPLAY.answer(sse(chunks, named=False))
    return list(CLIENT.models.generate_content_stream(model="m", contents="hi"))


class GeminiApi(Api):
    module = render

    def options(self, **extra: Any) -> dict[str, Any]:
        return options(**extra)

    def signals(self, abort: CallAborted) -> bool:
        return not abort.resent  # (the call follows whole; its first try was never sent)

    def check_wire(self, objs: list[dict[str, Any]], aborted: bool) -> None:
        joined(objs, aborted)

    def agrees(
        self,
        objs: list[dict[str, Any]],
        whole: dict[str, Any],
        result: ParseResult,
        **render_opts: Any,
    ) -> Any:
        response = validate(whole)
        parts, last = joined(objs)
        assert items(parts) == items(response.candidates[0].content.parts)
        want = parsed_items(result)
        if not render_opts.get("include_reasoning", True):
            want = [i for i in want if i[0] != "thought"]
        assert without_ids(items(parts)) == want
        assert last.candidates[0].finish_reason == response.candidates[0].finish_reason
        assert last.candidates[0].finish_message == response.candidates[0].finish_message
        assert last.usage_metadata == response.usage_metadata
        # what a client reads off the chunks: the text, and the calls as they arrive
        streamed_text = "".join(validate(c).text or "" for c in objs)
        assert streamed_text == (response.text or "")
        streamed_calls = [fc for c in objs for fc in (validate(c).function_calls or [])]
        assert streamed_calls == (response.function_calls or [])
        return response

    def client_raises(self, objs: list[dict[str, Any]]) -> BaseException:
        with pytest.raises(genai_errors.ServerError) as info:
            client_chunks(objs)
        assert info.value.code == 500 and info.value.message == objs[-1]["error"]["message"]
        return info.value


API = GeminiApi()


# ---------------------------------------------------------------------------- 1 and 2: examples
@pytest.mark.parametrize("mode", EARLY_EMIT)
@pytest.mark.parametrize("doc", [pytest.param(d, id=i) for i, d in EXAMPLES])
def test_examples_validate_and_join_to_the_whole_response(doc: str, mode: str) -> None:
    chunkings = [[doc], list(doc), *random_chunkings(doc, seeds=(1, 2))]
    check_doc(API, doc, chunkings, early_emit=mode)


def test_whole_response_is_the_documented_object() -> None:
    doc = (
        "Reading it.\n" + '<tool_calls><invoke name="read_file"><parameter name="path">'
        "README.md</parameter></invoke></tool_calls>"
    )
    got = render.render_response(callsieve.parse(doc), **options(model="gemini-test"))
    assert got == {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Reading it."},
                        {
                            "functionCall": {
                                "name": "read_file",
                                "args": {"path": "README.md"},
                                "id": "fc0000",
                            }
                        },
                    ],
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
        "modelVersion": "gemini-test",
        "responseId": "resp0000",
    }
    response = validate(got)
    assert response.text == "Reading it."
    assert [(c.name, c.args, c.id) for c in response.function_calls] == [
        ("read_file", {"path": "README.md"}, "fc0000")
    ]
    assert response.candidates[0].finish_reason == genai_types.FinishReason.STOP


def test_stream_is_the_documented_chunks() -> None:
    doc = (
        "Hi " + '<tool_calls><invoke name="f"><parameter name="a">1</parameter></invoke>'
        "</tool_calls>"
    )
    chunks = render_events(
        API,
        sieve_run(["Hi <tool", doc[8:]]).batches,
        model="m",
        usage={"input_tokens": 7, "output_tokens": 9},
    )

    def chunk(parts: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
        candidate = {"content": {"role": "model", "parts": parts}, **more, "index": 0}
        return {
            "candidates": [candidate],
            **(
                {
                    "usageMetadata": {
                        "promptTokenCount": 7,
                        "candidatesTokenCount": 9,
                        "totalTokenCount": 16,
                    }
                }
                if more
                else {}
            ),
            "modelVersion": "m",
            "responseId": "resp0000",
        }

    assert chunks == [
        chunk([{"text": "Hi"}]),
        chunk([{"functionCall": {"name": "f", "args": {"a": 1}, "id": "fc0000"}}]),
        chunk([{"text": ""}], finishReason="STOP"),
    ]
    joined(chunks)


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
    opts: dict[str, Any] = {"early_emit": mode}
    if case.get("tools") is not None:
        opts["tools"] = case["tools"]
    doc = case["input"]
    check_doc(API, doc, [[doc], list(doc), *random_chunkings(doc, seeds=(2, 5))], **opts)


# ---------------------------------------------------------------------------- 4: property
@pytest.mark.parametrize("mode", EARLY_EMIT)
@SETTINGS
@given(doc_and_chunks())
def test_property_stream_joins_to_the_whole_response(
    mode: str, doc_chunks: tuple[str, list[str]]
) -> None:
    """No call aborted (or only one sent again): the joined stream is the whole response; a
    call did not come through: the reply ends in an error chunk and the SDK's client raises
    (``check_stream``)."""
    doc, chunks = doc_chunks
    check_doc(API, doc, [chunks], early_emit=mode)


@SETTINGS
@given(doc_and_chunks(), st.lists(st.integers(1, 8), min_size=1, max_size=4))
def test_property_streamed_arguments_joins_to_the_whole_response(
    doc_chunks: tuple[str, list[str]], sizes: list[int]
) -> None:
    """Argument streaming as ``early_emit="arguments"`` shapes it (each call's arguments in
    1-8 character fragments, then its ``ToolCalls``), whether or not the sieve builds it."""
    doc, chunks = doc_chunks
    run = sieve_run(chunks)
    check_stream(API, parsed(doc), SieveRun(as_argument_stream(run.batches, sizes), run.blocks))


# ---------------------------------------------------------------------------- 5: hand-built


def test_streamed_arguments_give_one_whole_function_call() -> None:
    assert "".join(READ_DELTAS) == READ.arguments
    chunks = render_events(API, READ_BATCHES)
    # nothing is sent for the call until it finishes, then the call whole, once
    assert len(chunks) == 3
    parts, _ = joined(chunks)
    assert items(parts) == [("text", "Reading"), ("call", 'fc0000 read {"n": 2, "path": "a.txt"}')]
    assert items(parts) == items(
        validate(render.render_response(READ_RESULT, **options())).candidates[0].content.parts
    )


ABORTED = '<tool_calls><invoke name="f"><parameter name="a">1'


@pytest.mark.parametrize("reason", ["failed", "cut_off", "rejected"])
def test_a_call_that_did_not_come_through_ends_the_reply_with_an_error(reason: str) -> None:
    renderer = render.StreamRenderer(**options())
    chunks = renderer.feed([Text("Hi "), CallStarted(0, "c", "f"), ArgumentsDelta(0, '{"a":1')])
    chunks += renderer.feed([CallAborted(0, reason), Text(ABORTED)])
    # nothing of the call was sent (calls go whole); the text before it, then the error
    assert [c["candidates"][0]["content"]["parts"] for c in chunks[:-1]] == [[{"text": "Hi"}]]
    assert chunks[-1] == {
        "error": {"code": 500, "message": chunks[-1]["error"]["message"], "status": "INTERNAL"}
    }
    assert "'f' (call 0 of the reply)" in chunks[-1]["error"]["message"]
    assert renderer.aborted == CallAborted(0, reason)
    assert renderer.feed([Text("more")]) == [] and renderer.close() == []
    joined(chunks, aborted=True)
    API.client_raises(chunks)


def test_a_call_sent_again_needs_nothing_said() -> None:
    """The first try of a call sent again was never sent: the reply goes on, and the call
    comes whole, once."""
    again = ToolCall("f", {"a": [1, 2]})
    chunks = render_events(
        API,
        [
            [Text("Hi "), CallStarted(0, "c", "f"), ArgumentsDelta(0, '{"a":1')],
            [
                CallAborted(0, "repeated_name"),
                CallStarted(1, "c", "f"),
                ArgumentsDelta(1, again.arguments),
                CallFinished(1, again),
            ],
        ],
    )
    parts, last = joined(chunks)
    assert without_ids(items(parts)) == [("text", "Hi"), ("call", 'f {"a": [1, 2]}')]
    assert last.candidates[0].finish_reason == genai_types.FinishReason.STOP


def test_a_call_open_at_close_is_cut_off() -> None:
    renderer = render.StreamRenderer(**options())
    chunks = renderer.feed([Text("x "), CallStarted(0, "c", "f")]) + renderer.close()
    assert "cut off" in chunks[-1]["error"]["message"]
    API.client_raises(chunks)


@pytest.mark.parametrize(
    "batches",
    [
        [
            [Text("Hi "), CallStarted(0, "c", "f"), ArgumentsDelta(0, '{"a":1')],
            [CallAborted(0), Text(ABORTED)],
        ],
        [[Text("Hi"), Text(" "), CallStarted(0, "c", "f")], [CallAborted(0)], [Text(ABORTED)]],
    ],
)
def test_on_abort_continue_sends_nothing_and_gives_the_white_space_back(
    batches: list[list[Event]],
) -> None:
    chunks = render_events(API, batches, on_abort="continue")
    parts, last = joined(chunks)
    assert items(parts) == [("text", "Hi " + ABORTED)]
    # the same as the whole response for the text the sieve then holds
    whole = validate(render.render_response(callsieve.parse("Hi " + ABORTED)))
    assert items(parts) == items(whole.candidates[0].content.parts)
    assert last.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert [r.text for r in client_chunks(chunks)] == [validate(c).text for c in chunks]


def test_on_abort_continue_a_cut_off_reply_ends_max_tokens() -> None:
    for batches in (
        [[Text("x "), CallStarted(0, "c", "f")], [CallAborted(0, "cut_off")]],
        [[Text("x "), CallStarted(0, "c", "f")]],
    ):
        parts, last = joined(render_events(API, batches, on_abort="continue"))
        assert items(parts) == [("text", "x")]
        assert last.candidates[0].finish_reason == genai_types.FinishReason.MAX_TOKENS


def test_on_abort_continue_an_abort_after_a_finished_call() -> None:
    g = ToolCall("g", {})
    chunks = render_events(
        API,
        [
            [
                Text("a "),
                CallStarted(0, "a", "read"),
                ArgumentsDelta(0, READ.arguments),
                CallFinished(0, READ),
                Text(" "),
                CallStarted(1, "b", "g"),
                CallAborted(1),
                Text(" tail"),
            ],
            [ToolCalls((READ,), READ_BLOCK)],
            [CallFinished(2, g)],
        ],
        on_abort="continue",
    )
    parts, _ = joined(chunks)
    assert without_ids(items(parts)) == [
        ("text", "a"),
        ("call", 'read {"n": 2, "path": "a.txt"}'),
        ("text", "tail"),
        ("call", "g {}"),
    ]


@pytest.mark.parametrize(("seen", "text"), [(True, ["Hi", "<x"]), (False, ["Hi", " <x"])])
def test_reply_aborted_calls_seen(seen: bool, text: list[str]) -> None:
    """``Reply``: an aborted call is a call where text meets it (Anthropic shows it), or,
    with ``aborted_calls_seen=False``, was never there (Gemini never sent it)."""
    reply = Reply(aborted_calls_seen=seen)
    events = reply.feed([Text("Hi "), CallStarted(0, "c", "f"), CallAborted(0), Text("<x")])
    assert [e.text for e in events + reply.close() if isinstance(e, Text)] == text


# ---------------------------------------------------------------------------- 6: finish reasons
TEXT, CALL = "Some text.", "ok " + call_block("f")


@pytest.mark.parametrize(
    ("doc", "finish_reason", "want"),
    [
        (TEXT, None, "STOP"),
        (CALL, None, "STOP"),
        ("", None, "STOP"),
        (CALL, "stop", "STOP"),
        (CALL, "tool_calls", "STOP"),
        (TEXT, "length", "MAX_TOKENS"),
        (CALL, "length", "MAX_TOKENS"),
        (TEXT, "content_filter", "SAFETY"),
        (TEXT, "RECITATION", "RECITATION"),
    ],
)
def test_finish_reason(doc: str, finish_reason: str | None, want: str) -> None:
    whole = validate(render.render_response(callsieve.parse(doc), finish_reason=finish_reason))
    assert whole.candidates[0].finish_reason == genai_types.FinishReason(want)
    _, last = joined(render_events(API, sieve_run(list(doc)).batches, finish_reason))
    assert last.candidates[0].finish_reason == genai_types.FinishReason(want)


@pytest.mark.parametrize("reason", render.FINISH_REASONS)
def test_finish_reasons_are_the_sdks(reason: str) -> None:
    assert genai_types.FinishReason(reason).value == reason
    validate(render.render_response(callsieve.parse(TEXT), finish_reason=reason))


def test_unknown_finish_reason_is_refused_and_the_stream_goes_on() -> None:
    renderer = render.StreamRenderer(**options())
    renderer.feed([Text("hi")])
    with pytest.raises(ConfigurationError):
        renderer.close("end_turn")
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse("x"), finish_reason="stop_sequence")
    chunks = renderer.feed([Text(" there")]) + renderer.close("length")
    assert chunks[-1]["candidates"][0]["finishReason"] == "MAX_TOKENS"


@pytest.mark.parametrize(
    ("doc", "kinds"),
    [
        (call_block("read"), ["call"]),
        ("\n" + call_block("a", "b") + "\n", ["call", "call"]),
        (TEXT, ["text"]),
        ("", []),
        ("\n \n", []),
        (
            "A " + call_block("a", "b") + " B " + call_block("c") + call_block("d") + " C",
            ["text", "call", "call", "text", "call", "call", "text"],
        ),
    ],
)
def test_parts(doc: str, kinds: list[str]) -> None:
    for mode in EARLY_EMIT:
        result = callsieve.parse(doc, early_emit=mode)
        whole = check_stream(API, result, sieve_run([doc], early_emit=mode))
        parts = render.render_response(result)["candidates"][0]["content"]["parts"]
        assert [k for k, _ in items(whole.candidates[0].content.parts)] == kinds
        if kinds:  # no empty text part but in an empty reply
            assert len(parts) == len(kinds) and all(p.get("text", "x") for p in parts)
        else:
            assert parts == [{"text": ""}] and whole.text == ""
            assert genai_chats._validate_response(whole)


# ---------------------------------------------------------------------------- ids, usage, misuse
def test_default_ids_are_shaped_as_the_apis() -> None:
    response = render.render_response(callsieve.parse(call_block("a", "b")))
    assert re.fullmatch(r"[A-Za-z0-9_-]{23}", response["responseId"])
    ids = [p["functionCall"]["id"] for p in response["candidates"][0]["content"]["parts"]]
    assert len(set(ids)) == 2 and all(re.fullmatch(r"[a-z0-9]{8}", i) for i in ids)


def test_calls_without_ids() -> None:
    doc = call_block("a")
    response = render.render_response(callsieve.parse(doc), call_id_factory=None)
    assert response["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "a", "args": {"q": "a 0"}}}
    ]
    chunks = render_events(API, sieve_run([doc]).batches, call_id_factory=None)
    assert [fc.id for fc in validate(chunks[0]).function_calls] == [None]


def _boom() -> str:
    raise RuntimeError("no ids today")


@pytest.mark.parametrize("factory", [lambda: 7, _boom])
def test_bad_ids_are_refused(factory: Callable[[], Any]) -> None:
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse(call_block("a")), call_id_factory=factory)
    with pytest.raises(ConfigurationError):
        render.StreamRenderer(response_id_factory=factory)
    with pytest.raises(ConfigurationError):
        render.StreamRenderer(call_id_factory=factory).feed([CallFinished(0, READ)])


def test_usage() -> None:
    usage = {"input_tokens": 11, "output_tokens": 5}
    whole = validate(render.render_response(callsieve.parse(TEXT), usage=usage))
    assert (
        whole.usage_metadata.prompt_token_count,
        whole.usage_metadata.candidates_token_count,
        whole.usage_metadata.total_token_count,
    ) == (11, 5, 16)
    renderer = render.StreamRenderer(usage={"input_tokens": 11})
    chunks = renderer.feed([Text(TEXT)]) + renderer.close(usage=usage)
    _, last = joined(chunks)
    assert last.usage_metadata == whole.usage_metadata


@pytest.mark.parametrize(
    "usage", [{"prompt_tokens": 1}, {"input_tokens": -1}, {"output_tokens": True}, [1, 2]]
)
def test_bad_usage_is_refused(usage: Any) -> None:
    with pytest.raises(ConfigurationError):
        render.StreamRenderer(usage=usage)
    with pytest.raises(ConfigurationError):
        render.render_response(callsieve.parse(TEXT), usage=usage)
    with pytest.raises(ConfigurationError):
        render.StreamRenderer().close(usage=usage)

"""A whole (non-streamed) reply is fed to the sieve as it arrives and its long runs of text
are written into the response only as it is sent (``_respond.Collected``,
``_json.Deferred``): the response is still exactly what ``render_response(parse(text))``
gives, for every API, every chunking, white space at the edges of text and calls."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from callsieve import Sieve, parse
from callsieve.server._json import SLICE, Deferred, dumps_sliced, loads_sliced
from callsieve.server._read.turns import ModelRequest, Turn
from callsieve.server._reply.apis import CHAT, GEMINI, MESSAGES, RESPONSES, Api
from callsieve.server._reply.respond import Collected, ReplyEvents

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
]
CALL = (
    '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|parameter name="a"><![CDATA[x]]>'
    "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
)
LONG = "  \n" + "ab c" * 75_000 + " " + CALL + "   " + "d e " * 70_000 + " \n" + CALL + "  "
_IDS = ("call_", "toolu_", "fc_", "msg_", "resp_", "chatcmpl", "rs_")


def without_ids(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: without_ids(v)
            for k, v in obj.items()
            if k not in ("id", "created", "created_at", "responseId", "call_id")
        }
    if isinstance(obj, list):
        return [without_ids(v) for v in obj]
    if isinstance(obj, str) and obj.startswith(_IDS):
        return "ID"
    return obj


@pytest.mark.parametrize("api", [CHAT, RESPONSES, MESSAGES, GEMINI], ids=lambda a: a.name)
@pytest.mark.parametrize("size", [997, SLICE, 10**6])
def test_a_whole_reply_is_what_parse_gives(api: Api, size: int) -> None:
    events, collected = ReplyEvents(Sieve(TOOLS)), Collected()
    for i in range(0, len(LONG), size):
        collected.add(events.feed(LONG[i : i + size]))
    collected.add(events.close([]))
    req = ModelRequest(model="m", turns=[Turn("user", "x")], tools=TOOLS)
    response = api.whole(collected.result(events.sieve), req, "stop", {})
    sent = "".join(dumps_sliced(response, collected.deferred))
    expected = api.whole(parse(LONG, tools=TOOLS), req, "stop", {})
    assert without_ids(json.loads(sent)) == without_ids(expected)
    assert len(json.dumps(response)) < len(LONG) / 2  # (the long runs were deferred)


def test_deferred_text_keeps_the_ends_a_renderer_trims() -> None:
    deferred = Deferred()
    pieces = ["   ", " \n", "x" * SLICE, "y" * SLICE, "z" * SLICE, "w" * SLICE, " end ", "  "]
    text = deferred.text(pieces)
    assert text.startswith("    \n" + "x" * SLICE) and text.endswith(" end   ")
    assert "".join(deferred.encode(text)) == json.dumps("".join(pieces))[1:-1]
    assert deferred.text(["short", " text"]) == "short text"


# --- an upstream's whole body, parsed a slice at a time (``_json.loads_sliced``) ---------
_PIECES = ["a", "é", "😀", "\n", '"', "\\", "\ud800", "\udc00", "\u2028", "\x01", "z" * 7]


@pytest.mark.parametrize("seed", range(6))
def test_a_body_parsed_in_slices_is_what_json_loads_gives(seed: int) -> None:
    """Escapes, surrogate pairs and lone surrogates at every distance from a cut."""
    rng = random.Random(seed)
    for shift in range(14):
        text = "x" * (SLICE - shift) + "".join(rng.choice(_PIECES) for _ in range(30_000))
        body = {"choices": [{"message": {"content": text, "reasoning_content": text[-99:]}}]}
        raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        for data in (json.dumps(body).encode(), raw):
            try:
                expected = json.loads(data.decode("utf-8"))
            except UnicodeDecodeError:  # (a lone surrogate written raw is not UTF-8)
                with pytest.raises(ValueError):
                    loads_sliced(data)
                continue
            assert loads_sliced(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": "' + b"x" * (3 * SLICE),
        b'{"a": "' + b"x" * (2 * SLICE) + b'\x01"}',
        b'{"a": "' + b"x" * (2 * SLICE) + b"\\",
        b'{"a": "' + b"x" * (2 * SLICE) + b'\\u12"}',
        b'{"a": 1,}',
        b"\xff",
    ],
    ids=["unterminated", "control", "lone backslash", "short escape", "comma", "not utf-8"],
)
def test_a_body_parsed_in_slices_fails_as_json_loads_does(data: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(data)
    with pytest.raises(ValueError):
        loads_sliced(data)

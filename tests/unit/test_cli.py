"""The command line (``callsieve parse`` / ``callsieve stream``), run in-process through
``main(argv)`` and once as ``python -m callsieve``."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

import callsieve
import callsieve._config.options as options_module
from callsieve import Block, Event, Text, ToolCall, ToolCalls
from callsieve.__main__ import main
from callsieve._cli_output import StreamWriter, json_line, sse_frame
from callsieve._config.options import EARLY_EMIT

EXAMPLE = ROOT / "examples" / "transcript.txt"
TOOLS = ROOT / "examples" / "tools.json"
FENCED_EXAMPLE = (
    '```xml\n<|DSML|tool_calls>\n  <|DSML|invoke name="read_file">\n'
    '    <|DSML|parameter name="path"><![CDATA[docs/example.md]]></|DSML|parameter>\n'
    "  </|DSML|invoke>\n</|DSML|tool_calls>\n```"
)
EXPECTED_CALLS = [
    ("read_file", {"path": "README.md"}, "dsml"),
    ("get_weather", {"location": "Tokyo"}, "deepseek_native"),
]
CALL_KEYS = {"id", "name", "input", "dialect", "repairs", "coercions"}
BLOCK_KEYS = {"span", "dialect", "status", "repairs", "diagnostics"}


def example_text() -> str:
    with open(EXAMPLE, encoding="utf-8", newline="") as f:
        return f.read()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def stream_events(out: str) -> list[dict[str, Any]]:
    lines = out.splitlines()
    assert lines, "stream printed nothing"
    return [json.loads(line) for line in lines]


def summary(calls: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    return [(c["name"], c["input"], c["dialect"]) for c in calls]


def streamed(events: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    text = "".join(e["text"] for e in events if e["event"] == "text")
    calls = [c for e in events if e["event"] == "tool_calls" for c in e["calls"]]
    return text, calls


# ---------------------------------------------------------------------- parse
def test_parse_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "parse", str(EXAMPLE))
    assert code == 0, err
    assert err == ""
    result = json.loads(out)
    assert set(result) == {
        "reasoning",
        "text",
        "calls",
        "blocks",
        "saw_tool_call_syntax",
        "rejected_by_policy",
        "rejected_tool_names",
        "rejections",
    }
    assert summary(result["calls"]) == EXPECTED_CALLS
    assert all(set(c) == CALL_KEYS for c in result["calls"])
    assert all(c["id"] and c["repairs"] == [] for c in result["calls"])
    # The fenced example and the inline mention are text, untouched.
    assert FENCED_EXAMPLE in result["text"]
    assert "`<tool_calls>`" in result["text"]
    assert '<|DSML|parameter name="path"><![CDATA[README.md]]>' not in result["text"]
    assert "tool▁calls▁begin" not in result["text"]
    assert result["saw_tool_call_syntax"] is True
    # Blocks: both complete; their spans index the exact input, and conservation holds.
    text = example_text()
    blocks = result["blocks"]
    assert [(b["dialect"], b["status"]) for b in blocks] == [
        ("dsml", "complete"),
        ("deepseek_native", "complete"),
    ]
    assert all(set(b) == BLOCK_KEYS for b in blocks)
    assert text[blocks[0]["span"][0] :].startswith("<|DSML|tool_calls>")
    assert text[: blocks[1]["span"][1]].endswith("<｜tool▁calls▁end｜>")
    rebuilt, last = [], 0
    for b in blocks:
        start, end = b["span"]
        rebuilt.append(text[last:start])
        last = end
    rebuilt.append(text[last:])
    assert "".join(rebuilt) == result["text"]


def test_parse_output_is_the_library_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "parse", str(EXAMPLE))
    assert code == 0
    result = json.loads(out)
    lib = callsieve.parse(example_text())
    assert result["text"] == lib.text
    assert summary(result["calls"]) == [(c.name, c.input, c.dialect) for c in lib.calls]
    assert [tuple(b["span"]) for b in result["blocks"]] == [b.span for b in lib.blocks]


def test_parse_with_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "parse", str(EXAMPLE), "--tools", str(TOOLS))
    assert code == 0, err
    assert summary(json.loads(out)["calls"]) == EXPECTED_CALLS


def test_tools_schema_keeps_strings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Without schemas a JSON-literal body becomes a number; a string-typed schema keeps it.
    reply = tmp_path / "reply.txt"
    reply.write_text(
        '<tool_calls><invoke name="read_file"><parameter name="path">42'
        "</parameter></invoke></tool_calls>",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "parse", str(reply))
    assert code == 0
    assert json.loads(out)["calls"][0]["input"] == {"path": 42}
    code, out, _ = run(capsys, "parse", str(reply), "--tools", str(TOOLS))
    assert code == 0
    assert json.loads(out)["calls"][0]["input"] == {"path": "42"}


@pytest.mark.parametrize("mode", EARLY_EMIT)
def test_parse_takes_early_emit(capsys: pytest.CaptureFixture[str], mode: str) -> None:
    # The options are Sieve's; a whole parse gives the same result under every mode.
    code, out, err = run(capsys, "parse", str(EXAMPLE), "--early-emit", mode)
    assert code == 0, err
    result = json.loads(out)
    assert summary(result["calls"]) == EXPECTED_CALLS
    assert result["text"] == callsieve.parse(example_text()).text


def test_early_emit_choices_are_the_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A mode added to _options.EARLY_EMIT is offered by both commands with no CLI change.
    modes = (*EARLY_EMIT, "later")
    monkeypatch.setattr(options_module, "EARLY_EMIT", modes)
    for command in ("parse", "stream"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0
        assert "{" + ",".join(modes) + "}" in out


# ---------------------------------------------------------------------- stream
def merge_adjacent_text(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for e in events:
        if e["event"] == "text" and merged and merged[-1]["event"] == "text":
            merged[-1] = {"event": "text", "text": merged[-1]["text"] + e["text"]}
        else:
            merged.append(e)
    return merged


def without_ids(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with the call ids (random per run) taken out."""

    def strip(call: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in call.items() if k != "id"}

    return [
        {**e, "calls": [strip(c) for c in e["calls"]]} if e["event"] == "tool_calls" else e
        for e in events
    ]


def test_stream_example_merges_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stream", str(EXAMPLE))
    assert code == 0, err
    assert err == ""
    events = stream_events(out)
    # One text line between calls: the reply reads at a glance.
    assert [e["event"] for e in events] == ["text", "tool_calls", "text", "tool_calls", "text"]
    assert events[0]["text"].startswith("Sure — let me look at the project")
    assert all(line.startswith('{"event":') for line in out.splitlines())
    text, calls = streamed(events)
    assert summary(calls) == EXPECTED_CALLS
    assert text == callsieve.parse(example_text()).text


@pytest.mark.parametrize("chunk_size", ["1", "3", "64"])
def test_merged_is_raw_with_adjacent_text_joined(
    capsys: pytest.CaptureFixture[str], chunk_size: str
) -> None:
    code, out, _ = run(capsys, "stream", str(EXAMPLE), "--chunk-size", chunk_size, "--raw-events")
    assert code == 0
    raw = stream_events(out)
    code, out, _ = run(capsys, "stream", str(EXAMPLE), "--chunk-size", chunk_size)
    assert code == 0
    merged = stream_events(out)
    assert len(merged) < len(raw)
    assert without_ids(merged) == without_ids(merge_adjacent_text(raw))


def test_stream_raw_events(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stream", str(EXAMPLE), "--raw-events")
    assert code == 0, err
    assert err == ""
    events = stream_events(out)
    assert {e["event"] for e in events} == {"text", "tool_calls"}
    tool_events = [e for e in events if e["event"] == "tool_calls"]
    assert len(tool_events) == 2
    for e in tool_events:
        assert set(e) == {"event", "calls", "block"}
        assert set(e["block"]) == BLOCK_KEYS
        assert e["block"]["status"] == "complete"
        assert all(set(c) == CALL_KEYS for c in e["calls"])
    for e in events:
        if e["event"] == "text":
            assert set(e) == {"event", "text"}
            assert e["text"]
    # Text events are printed as they come, not coalesced: default chunks are 4 characters.
    assert sum(e["event"] == "text" for e in events) > 50
    assert events[0] == {"event": "text", "text": "Sure"}
    # Compact: one object per line, no indentation.
    assert all(line.startswith('{"event":') for line in out.splitlines())
    text, calls = streamed(events)
    assert summary(calls) == EXPECTED_CALLS
    assert text == callsieve.parse(example_text()).text


@pytest.mark.parametrize("chunk_size", ["1", "2", "3", "7", "64", "100000"])
def test_stream_any_chunk_size_matches_parse(
    capsys: pytest.CaptureFixture[str], chunk_size: str
) -> None:
    code, out, _ = run(capsys, "parse", str(EXAMPLE))
    assert code == 0
    whole = json.loads(out)
    code, out, _ = run(capsys, "stream", str(EXAMPLE), "--chunk-size", chunk_size)
    assert code == 0
    text, calls = streamed(stream_events(out))
    assert summary(calls) == summary(whole["calls"]) == EXPECTED_CALLS
    assert text == whole["text"]


def test_stream_chunk_size_1_releases_prose_per_character(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "stream", str(EXAMPLE), "--chunk-size", "1", "--raw-events")
    assert code == 0
    events = stream_events(out)
    # Plain prose goes out a character at a time.
    assert events[0] == {"event": "text", "text": "S"}


def test_stream_early_emit_invoke(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "stream",
        str(EXAMPLE),
        "--early-emit",
        "invoke",
        "--chunk-size",
        "1",
        "--tools",
        str(TOOLS),
    )
    assert code == 0, err
    text, calls = streamed(stream_events(out))
    assert summary(calls) == EXPECTED_CALLS
    assert text == callsieve.parse(example_text()).text


def test_stream_call_aborted_says_why(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"  # the reply ends inside the first call's argument
    text = example_text()
    cut.write_text(text[: text.index("[CDATA[README") + 10], encoding="utf-8")
    code, out, err = run(capsys, "stream", str(cut), "--early-emit", "arguments")
    assert code == 0, err
    aborted = [e for e in stream_events(out) if e["event"] == "call_aborted"]
    assert aborted == [{"event": "call_aborted", "index": 0, "reason": "cut_off"}]


@pytest.mark.parametrize("extra", [[], ["--raw-events"], ["--early-emit", "invoke"]])
def test_stream_sse(capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    code, out, _ = run(capsys, "stream", str(EXAMPLE), *extra)
    assert code == 0
    lines = stream_events(out)
    code, sse, err = run(capsys, "stream", str(EXAMPLE), "--sse", *extra)
    assert code == 0, err
    assert err == ""
    # Each event is one frame: a single `data:` line of compact JSON, then a blank line.
    assert sse.endswith("\n\n")
    frames = sse[:-2].split("\n\n")
    assert all(f.startswith("data: {") and "\n" not in f for f in frames)
    events = [json.loads(f.removeprefix("data: ")) for f in frames]
    assert without_ids(events) == without_ids(lines)


class _Renderer:
    """The shape of ``render.<api>.StreamRenderer``: records per event, more at close."""

    def __init__(self) -> None:
        self.fed: list[list[Event]] = []

    def feed(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        batch = list(events)
        self.fed.append(batch)
        return [
            {"text": e.text} if isinstance(e, Text) else {"kind": type(e).__name__} for e in batch
        ]

    def close(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        return [{"finish_reason": finish_reason or "stop"}]


def test_stream_writer_takes_a_renderer_as_encoder() -> None:
    # Where --format plugs in: any StreamRenderer-shaped encoder, after the text merger and
    # before the frame.
    call = ToolCall("f", {}, id="call_1", dialect="dsml", repairs=())
    block = Block((3, 9), "dsml", "complete", (), ())
    renderer, out = _Renderer(), io.StringIO()
    writer = StreamWriter(out, renderer, merge_text=True, frame=sse_frame)
    writer.feed([Text("a"), Text("b")])
    writer.feed([Text("c"), ToolCalls((call,), block), Text("d")])
    writer.pause()
    writer.close([Text("e")])
    merged = [
        [e.text if isinstance(e, Text) else "calls" for e in batch]
        for batch in renderer.fed
        if batch
    ]
    assert merged == [["abc", "calls"], ["d"], ["e"]]
    frames = out.getvalue().split("\n\n")
    assert frames[-1] == ""
    assert [json.loads(f.removeprefix("data: ")) for f in frames[:-1]] == [
        {"text": "abc"},
        {"kind": "ToolCalls"},
        {"text": "d"},
        {"text": "e"},
        {"finish_reason": "stop"},
    ]
    raw = io.StringIO()
    writer = StreamWriter(raw, _Renderer(), merge_text=False, frame=json_line)
    writer.close([Text("a"), Text("b")])
    assert len(raw.getvalue().splitlines()) == 3


# ---------------------------------------------------------------------- stdin
def test_parse_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(example_text()))
    code, out, err = run(capsys, "parse", "-")
    assert code == 0, err
    assert summary(json.loads(out)["calls"]) == EXPECTED_CALLS


def test_stream_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(example_text()))
    code, out, err = run(capsys, "stream", "-", "--chunk-size", "3")
    assert code == 0, err
    text, calls = streamed(stream_events(out))
    assert summary(calls) == EXPECTED_CALLS
    assert text == callsieve.parse(example_text()).text


class _Trickle(io.RawIOBase):
    """A byte stream that hands out a few bytes per read, like a pipe from a slow model."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = data
        self._pos = 0
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        piece = self._data[self._pos : self._pos + min(self._step, len(b))]
        b[: len(piece)] = piece
        self._pos += len(piece)
        return len(piece)


@pytest.mark.parametrize("step", [1, 5, 4096])
def test_stream_stdin_bytes_are_decoded_as_utf8(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    # Multi-byte characters (｜, ▁, —) split across reads must decode whole, and CRLF stays.
    text = example_text().replace("\n", "\r\n")
    raw = io.BufferedReader(_Trickle(text.encode("utf-8"), step), buffer_size=step)
    stdin = io.TextIOWrapper(raw, encoding="latin-1")  # the declared encoding is ignored
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run(capsys, "stream", "-", "--chunk-size", "5")
    assert code == 0, err
    streamed_text, calls = streamed(stream_events(out))
    assert [c["name"] for c in calls] == ["read_file", "get_weather"]
    assert streamed_text == callsieve.parse(text).text
    assert "\r\n" in streamed_text


class _Watched(io.RawIOBase):
    """Standard input handing out one piece per read, noting at each read what the output
    stream has been given so far (only what was flushed reaches ``sink``)."""

    def __init__(self, pieces: list[str], sink: io.BytesIO) -> None:
        self._pieces = [p.encode("utf-8") for p in pieces]
        self._sink = sink
        self.seen: list[list[dict[str, Any]]] = []

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        printed = self._sink.getvalue().decode("utf-8")
        self.seen.append([json.loads(line) for line in printed.splitlines()])
        if not self._pieces:
            return 0
        piece = self._pieces.pop(0)
        assert len(piece) <= len(b)
        b[: len(piece)] = piece
        return len(piece)


@pytest.mark.parametrize("extra", [[], ["--raw-events"]])
@pytest.mark.parametrize("chunk_size", ["1", "4"])
def test_stream_stdin_prints_text_before_waiting(
    monkeypatch: pytest.MonkeyPatch, extra: list[str], chunk_size: str
) -> None:
    # A reader piping a model in sees the text released so far before the next read blocks:
    # each read is fed whole (its last chunk shorter: 13 characters at N=4 are 4+4+4+1), and
    # merged text is printed, and the output flushed, once it has been fed.
    pieces = [
        "Hello there, ",
        "this is plain prose ",
        'and a call: <tool_calls><invoke name="f"></invoke></tool_calls>',
        " done.",
    ]
    sink = io.BytesIO()
    out = io.TextIOWrapper(sink, encoding="utf-8", newline="")
    stdin = _Watched(pieces, sink)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(stdin)))
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["stream", "-", "--chunk-size", chunk_size, *extra]) == 0
    seen = [merge_adjacent_text(s) for s in stdin.seen]
    assert seen[1] == [{"event": "text", "text": "Hello there, "}]
    assert seen[2] == [{"event": "text", "text": "Hello there, this is plain prose "}]
    assert [e["event"] for e in seen[3]] == ["text", "tool_calls"]
    assert seen[3][0]["text"].endswith("and a call: ")
    printed = [json.loads(line) for line in sink.getvalue().decode("utf-8").splitlines()]
    text, calls = streamed(printed)
    assert text == "Hello there, this is plain prose and a call:  done."
    assert [c["name"] for c in calls] == ["f"]
    if not extra:  # merged: one text line per read, and one before the call
        assert [e["event"] for e in printed] == ["text", "text", "text", "tool_calls", "text"]


def test_input_line_endings_are_kept(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(example_text().replace("\n", "\r\n").encode("utf-8"))
    code, out, _ = run(capsys, "parse", str(crlf))
    assert code == 0
    result = json.loads(out)
    assert "\r\n" in result["text"]
    assert [c["name"] for c in result["calls"]] == ["read_file", "get_weather"]


def test_output_falls_back_to_ascii_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    # A terminal that cannot encode "｜" or "—" still gets valid JSON, never a crash.
    sink = io.BytesIO()
    out = io.TextIOWrapper(sink, encoding="ascii", newline="")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["parse", str(EXAMPLE)]) == 0
    assert main(["stream", str(EXAMPLE)]) == 0
    out.flush()
    data = sink.getvalue().decode("ascii")
    whole, _, lines = data.partition("\n}\n")
    assert json.loads(whole + "\n}")["text"] == callsieve.parse(example_text()).text
    text, calls = streamed(stream_events(lines))
    assert summary(calls) == EXPECTED_CALLS
    assert text == callsieve.parse(example_text()).text


# ---------------------------------------------------------------------- errors
def assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("callsieve: error: ")
    for needle in needles:
        assert needle in err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    for command in ("parse", "stream"):
        code, out, err = run(capsys, command, str(missing))
        assert_one_line_error(code, out, err, "nope.txt")


def test_directory_instead_of_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "parse", str(tmp_path))
    assert_one_line_error(code, out, err)


def test_missing_tools_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "parse", str(EXAMPLE), "--tools", str(tmp_path / "t.json"))
    assert_one_line_error(code, out, err, "t.json")


@pytest.mark.parametrize("content", ["[{", "", "not json", '{"name": "f"}', "42"])
def test_bad_tools_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(content, encoding="utf-8")
    for command in ("parse", "stream"):
        code, out, err = run(capsys, command, str(EXAMPLE), "--tools", str(tools))
        assert_one_line_error(code, out, err, "tools.json")


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ('[{"bogus": 1}, 5]', ("tools[0]", "'name'")),
        ('[{"name": "f"}, 5]', ("tools[1]", "expected a dict", "int")),
        ('[{"name": "f", "parameters": "{}"}]', ("tools[0]['parameters']", "JSON Schema")),
        ('[{"type": "function", "function": {"name": ""}}]', ("tools[0]['function']", "'name'")),
    ],
)
def test_malformed_tool_definition(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, needles: tuple[str, ...]
) -> None:
    tools = tmp_path / "bad.json"
    tools.write_text(content, encoding="utf-8")
    for command in ("parse", "stream"):
        code, out, err = run(capsys, command, str(EXAMPLE), "--tools", str(tools))
        assert_one_line_error(code, out, err, "bad.json", *needles)


class _Unread(io.StringIO):
    def read(self, size: int | None = -1) -> str:
        raise AssertionError("standard input was read before the options were checked")


def test_tools_checked_before_stdin_is_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tools = tmp_path / "bad.json"
    tools.write_text('[{"bogus": 1}]', encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", _Unread())
    for command in ("parse", "stream"):
        code, out, err = run(capsys, command, "-", "--tools", str(tools))
        assert_one_line_error(code, out, err, "bad.json", "tools[0]")


def test_configuration_error_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CallsieveError whose message spans lines (e.g. quoting a multi-line exception).
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise callsieve.ConfigurationError("first line\n  second line")

    monkeypatch.setattr("callsieve.__main__.SieveOptions", refuse)
    code, out, err = run(capsys, "parse", str(EXAMPLE))
    assert_one_line_error(code, out, err, "first line second line")


def test_invalid_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 <tool_calls>".encode("latin-1"))
    code, out, err = run(capsys, "parse", str(bad))
    assert_one_line_error(code, out, err, "UTF-8")


@pytest.mark.parametrize(
    "argv",
    [
        ["frobnicate", "x"],
        ["parse"],
        ["stream", str(EXAMPLE), "--chunk-size", "0"],
        ["stream", str(EXAMPLE), "--chunk-size", "four"],
        ["stream", str(EXAMPLE), "--early-emit", "sometimes"],
        ["parse", str(EXAMPLE), "--early-emit", "sometimes"],
        ["parse", str(EXAMPLE), "--sse"],
        ["parse", str(EXAMPLE), "--raw-events"],
        ["parse", str(EXAMPLE), "--no-such-option"],
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert_one_line_error(code, out, err)


def test_help_returns_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "parse" in out and "stream" in out
    code, out, _ = run(capsys, "stream", "--help")
    assert code == 0
    for option in ("--chunk-size", "--early-emit", "--tools", "--raw-events", "--sse"):
        assert option in out
    code, out, _ = run(capsys, "parse", "--help")
    assert code == 0
    assert "--early-emit" in out and "--tools" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, f"callsieve {callsieve.__version__}\n", "")


def test_bare_command_prints_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bare `callsieve` is a request for help, not an error: the help on stdout, exit 0.
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys)
    assert code == 0
    assert err == ""
    assert out.startswith("usage: callsieve")
    # (a command longer than argparse's column, check-grammar, has its help on the next line)
    listing = re.sub(r"\n {6,}", " ", out.split("COMMAND\n", 1)[1])
    commands = [line.split(None, 1) for line in listing.splitlines() if line.startswith("    ")]
    assert [c[0] for c in commands] == [
        "parse",
        "stream",
        "serve",
        "dialects",
        "check-grammar",
        "export-response-template",
        "grammar",
        "draft-dialect",
    ]
    assert all(len(c) == 2 for c in commands)
    assert run(capsys, "--help") == (0, out, "")


# ---------------------------------------------------------------------- as a program
def child_env() -> dict[str, str]:
    """The environment for running the same callsieve this test imported (installed, or a
    source tree on sys.path)."""
    env = dict(os.environ)
    package_parent = str(Path(callsieve.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def test_python_dash_m_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "callsieve", "--version"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"callsieve {callsieve.__version__}\n"
    assert proc.stderr == ""


def test_python_dash_m(tmp_path: Path) -> None:
    env = child_env()
    proc = subprocess.run(
        [sys.executable, "-m", "callsieve", "parse", "examples/transcript.txt"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    result = json.loads(proc.stdout)
    assert summary(result["calls"]) == EXPECTED_CALLS
    assert FENCED_EXAMPLE in result["text"]

    proc = subprocess.run(
        [sys.executable, "-m", "callsieve", "parse", str(tmp_path / "missing.txt")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


# ---------------------------------------------------------------------- --format (SPEC §10)
@pytest.mark.parametrize("early_emit", EARLY_EMIT)
def test_stream_format_openai_accumulates_to_the_calls(
    capsys: pytest.CaptureFixture[str], early_emit: str
) -> None:
    """``stream --format openai`` prints chat.completion.chunk objects, one per line, that
    the openai SDK's own stream state accumulates into the example's text and calls."""
    chat = pytest.importorskip("openai.lib.streaming.chat")
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    code, out, err = run(
        capsys, "stream", str(EXAMPLE), "--format", "openai", "--early-emit", early_emit
    )
    assert code == 0, err
    state = chat.ChatCompletionStreamState()
    for line in out.splitlines():
        state.handle_chunk(chunk_type.model_validate(json.loads(line)))
    message = state.get_final_completion().choices[0].message
    assert [
        (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
    ] == [(n, i) for n, i, _ in EXPECTED_CALLS]
    assert message.content == callsieve.parse(example_text()).text.strip()


def test_parse_format_anthropic_is_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    types = pytest.importorskip("anthropic.types")
    code, out, err = run(capsys, "parse", str(EXAMPLE), "--format", "anthropic")
    assert code == 0, err
    message = types.Message.model_validate(json.loads(out))
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == [
        (n, i) for n, i, _ in EXPECTED_CALLS
    ]
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic", "gemini"])
def test_every_format_streams_its_apis_event_stream(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``--sse`` with ``--format`` frames the objects as each API's event stream does, read
    here by the openai SDK's own SSE decoder: OpenAI Chat's ``data:`` lines closed by
    ``data: [DONE]``, events named after their ``type`` (Responses, Anthropic), Gemini's
    ``data:`` lines."""
    streaming = pytest.importorskip("openai._streaming")
    code, out, err = run(capsys, "stream", str(EXAMPLE), "--format", fmt, "--sse")
    assert code == 0, err
    events = list(streaming.SSEDecoder().iter_bytes(iter([out.encode("utf-8")])))
    if fmt == "openai":
        assert events[-1].data == "[DONE]"
        events = events[:-1]
    records = [json.loads(e.data) for e in events]
    assert records and all(isinstance(r, dict) for r in records)
    if fmt in ("responses", "anthropic"):
        assert [e.event for e in events] == [r["type"] for r in records]
    else:
        assert all(e.event is None for e in events)
    code, out, err = run(capsys, "parse", str(EXAMPLE), "--format", fmt)
    assert code == 0 and isinstance(json.loads(out), dict), err


# ---------------------------------------------------------------------- reasoning (SPEC §15)
THOUGHT = (
    "<think>\nThe user wants the file.\n</think>\n\nLet me read it.\n"
    '<tool_calls><invoke name="read_file"><parameter name="path">a.py</parameter>'
    "</invoke></tool_calls>"
)
#: Reads three ways: "inside" is reasoning and the white space before the tag text (tags),
#: that white space is reasoning too (open: the reply starts inside reasoning), or it is all
#: text (off).
MODES_DOC = " <think>inside</think> after"


def reply_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "reply.txt"
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def merge_adjacent(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Raw events as the merged view shows them: the tags' own events (``raw``, no text)
    gone, adjacent text joined, adjacent reasoning joined."""
    merged: list[dict[str, Any]] = []
    for e in events:
        if e["event"] == "reasoning" and "raw" in e:
            assert e["text"] == "" and e["raw"] in ("<think>", "</think>")
            continue
        if e["event"] in ("text", "reasoning") and merged and merged[-1]["event"] == e["event"]:
            merged[-1] = {"event": e["event"], "text": merged[-1]["text"] + e["text"]}
        else:
            merged.append(e)
    return merged


def test_parse_shows_reasoning_as_its_own_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "parse", reply_file(tmp_path, THOUGHT))
    assert code == 0, err
    result = json.loads(out)
    lib = callsieve.parse(THOUGHT)
    assert result["reasoning"] == lib.reasoning == "\nThe user wants the file.\n"
    assert result["text"] == lib.text and "think" not in result["text"]
    assert [c["name"] for c in result["calls"]] == ["read_file"]


@pytest.mark.parametrize("mode", options_module.REASONING)
def test_reasoning_flag_picks_the_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str
) -> None:
    path = reply_file(tmp_path, MODES_DOC)
    code, out, err = run(capsys, "parse", path, "--reasoning", mode)
    assert code == 0, err
    lib = callsieve.parse(MODES_DOC, reasoning=mode)
    result = json.loads(out)
    assert (result["reasoning"], result["text"]) == (lib.reasoning, lib.text)
    code, out, err = run(capsys, "stream", path, "--reasoning", mode, "--chunk-size", "1")
    assert code == 0, err
    events = stream_events(out)
    assert "".join(e["text"] for e in events if e["event"] == "reasoning") == lib.reasoning
    assert "".join(e["text"] for e in events if e["event"] == "text") == lib.text


def test_the_three_reasoning_modes_differ() -> None:
    views = {
        (r.reasoning, r.text)
        for r in (callsieve.parse(MODES_DOC, reasoning=m) for m in options_module.REASONING)
    }
    assert len(views) == len(options_module.REASONING)


@pytest.mark.parametrize(("choice", "calls"), [("text", []), ("call", ["f"])])
def test_calls_in_reasoning_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, choice: str, calls: list[str]
) -> None:
    doc = '<think>try <tool_calls><invoke name="f"></invoke></tool_calls></think>ok'
    path = reply_file(tmp_path, doc)
    for command in ("parse", "stream"):
        code, out, err = run(capsys, command, path, "--calls-in-reasoning", choice)
        assert code == 0, err
        if command == "parse":
            names = [c["name"] for c in json.loads(out)["calls"]]
        else:
            names = [
                c["name"]
                for e in stream_events(out)
                if e["event"] == "tool_calls"
                for c in e["calls"]
            ]
        assert names == calls


def test_reasoning_choices_are_the_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(options_module, "REASONING", (*options_module.REASONING, "later"))
    monkeypatch.setattr(
        options_module, "CALLS_IN_REASONING", (*options_module.CALLS_IN_REASONING, "both")
    )
    for command in ("parse", "stream"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0
        assert "{" + ",".join(options_module.REASONING) + "}" in out
        assert "{" + ",".join(options_module.CALLS_IN_REASONING) + "}" in out


@pytest.mark.parametrize("chunk_size", ["1", "3", "64"])
def test_stream_merges_reasoning_and_raw_events_show_the_tags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, chunk_size: str
) -> None:
    path = reply_file(tmp_path, THOUGHT)
    code, out, err = run(capsys, "stream", path, "--chunk-size", chunk_size, "--raw-events")
    assert code == 0, err
    raw = stream_events(out)
    assert [e["raw"] for e in raw if "raw" in e] == ["<think>", "</think>"]
    code, out, err = run(capsys, "stream", path, "--chunk-size", chunk_size)
    assert code == 0, err
    merged = stream_events(out)
    assert [e["event"] for e in merged] == ["reasoning", "text", "tool_calls"]
    assert merged[0] == {"event": "reasoning", "text": callsieve.parse(THOUGHT).reasoning}
    assert without_ids(merged) == without_ids(merge_adjacent(raw))


def test_format_renders_reasoning_and_can_leave_it_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chat = pytest.importorskip("openai.lib.streaming.chat")
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    types = pytest.importorskip("anthropic.types")
    path = reply_file(tmp_path, THOUGHT)
    for extra, want in (([], "The user wants the file."), (["--no-reasoning-output"], None)):
        code, out, err = run(capsys, "stream", path, "--format", "openai", *extra)
        assert code == 0, err
        state = chat.ChatCompletionStreamState()
        for line in out.splitlines():
            state.handle_chunk(chunk_type.model_validate(json.loads(line)))
        message = state.get_final_completion().choices[0].message
        assert (message.model_extra or {}).get("reasoning_content") == want
        assert message.content == "Let me read it."
        code, out, err = run(capsys, "parse", path, "--format", "anthropic", *extra)
        assert code == 0, err
        blocks = types.Message.model_validate(json.loads(out)).content
        assert [b.type for b in blocks] == ["thinking"] * (want is not None) + ["text", "tool_use"]

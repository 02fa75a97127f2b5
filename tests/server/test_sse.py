"""The SSE reader (``callsieve.server._reply.sse``) against the format's own examples (the WHATWG
HTML standard, "Server-sent events", 9.2.6), at every split of the stream into two chunks,
and its limits."""

from __future__ import annotations

import pytest

from callsieve.server._reply.sse import SSEDecoder, SSEError, SSEEvent


def events(stream: bytes, **limits: int) -> list[SSEEvent]:
    """The events of ``stream`` read whole — and checked to be the same at every split."""
    whole = SSEDecoder(**limits)
    out = whole.feed(stream) + whole.close()
    for cut in range(len(stream) + 1):
        d = SSEDecoder(**limits)
        assert d.feed(stream[:cut]) + d.feed(stream[cut:]) + d.close() == out, cut
    d = SSEDecoder(**limits)
    assert [e for i in range(len(stream)) for e in d.feed(stream[i : i + 1])] == out
    return out


def test_multi_line_data_joins_with_newlines() -> None:
    assert events(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [SSEEvent("message", "YHOO\n+2\n10")]


def test_comments_ids_and_the_space_after_the_colon() -> None:
    stream = (
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n\n"
    )
    assert events(stream) == [
        SSEEvent("message", "first event", "1"),
        SSEEvent("message", "second event", ""),
        SSEEvent("message", " third event", ""),
    ]


def test_empty_data_lines_and_an_unfinished_event() -> None:
    """``data`` alone is a line of empty data; an event without its blank line is dropped."""
    assert events(b"data\n\ndata\ndata\n\ndata:") == [
        SSEEvent("message", ""),
        SSEEvent("message", "\n"),
    ]


def test_the_same_event_with_and_without_the_space() -> None:
    assert events(b"data:test\n\ndata: test\n\n") == [SSEEvent("message", "test")] * 2


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(end: bytes) -> None:
    stream = end.join([b"event: add", b"data: 73857293", b"", b"data: x", b"", b""])
    assert events(stream) == [SSEEvent("add", "73857293"), SSEEvent("message", "x")]


def test_a_bom_at_the_start_is_skipped_and_retry_is_kept() -> None:
    d = SSEDecoder()
    assert d.feed(b"\xef\xbb\xbfretry: 1500\nretry: soon\ndata: a\n\n") == [
        SSEEvent("message", "a")
    ]
    assert d.retry == 1500


def test_an_event_without_data_dispatches_nothing_and_resets_its_type() -> None:
    assert events(b"event: ping\n\ndata: x\n\n") == [SSEEvent("message", "x")]


def test_comments_are_counted() -> None:
    d = SSEDecoder()
    d.feed(b": ping\n\n: ping\n\n")
    assert d.comments == 2


def test_a_line_over_the_limit_raises_as_soon_as_it_is_seen() -> None:
    d = SSEDecoder(max_line=100, max_event=1000)
    d.feed(b"data: " + b"x" * 90)
    with pytest.raises(SSEError) as info:
        d.feed(b"x" * 20)
    assert info.value.kind == "line"


def test_an_event_over_the_limit_raises() -> None:
    d = SSEDecoder(max_line=100, max_event=150)
    with pytest.raises(SSEError) as info:
        d.feed(b"data: " + b"x" * 80 + b"\ndata: " + b"x" * 80 + b"\n")
    assert info.value.kind == "event"


def test_data_that_is_not_utf8_raises() -> None:
    with pytest.raises(SSEError) as info:
        SSEDecoder().feed(b"data: \xff\n\n")
    assert info.value.kind == "encoding"


def test_multi_byte_characters_split_across_chunks() -> None:
    assert events("data: é日本\n\n".encode()) == [SSEEvent("message", "é日本")]

"""Strategy: Server-Sent Events read as the format says (the WHATWG HTML standard, "Parsing
an event stream"), sans-IO and bounded — bytes in, events out, no buffer that a peer can
grow without limit.

What it does: ``SSEDecoder(max_line, max_event).feed(data)`` takes the next bytes of a stream
and returns the ``SSEEvent``s they complete (``event`` type, ``data``, last ``id``). Lines end
at CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next are one
line end); a BOM at the start of the stream is skipped. A line ``field:value`` (one space
after the colon dropped) sets ``data`` (several ``data`` lines join with ``\\n``; an empty
``data:`` is an empty line of data), ``event``, ``id`` (ignored if it holds NUL) or
``retry`` (digits only, kept in ``retry``); a line without a colon is a field with an empty
value; a line that starts with a colon is a comment (counted in ``comments``, nothing else);
other fields are ignored. An empty line dispatches the event, unless no ``data`` line came
(then the event type is reset and nothing is dispatched). ``close()`` drops an event the
stream left unfinished, as the format says.
What it guarantees: a line longer than ``max_line`` bytes, an event whose data passes
``max_event`` bytes, or data that is not UTF-8 raises ``SSEError`` (``kind`` ``"line"``,
``"event"`` or ``"encoding"``) as soon as it is seen: the decoder never holds more than
``max_line`` bytes of an unfinished line plus ``max_event`` bytes of an event's data.
What it costs: one ``find`` per line end and one UTF-8 decode per event; bytes are copied
only when a line spans chunks.
"""

from __future__ import annotations

__all__ = ["SSEDecoder", "SSEError", "SSEEvent"]

_BOM = b"\xef\xbb\xbf"


class SSEError(Exception):
    """The stream broke a limit or is not text: ``kind`` is ``line``, ``event`` or
    ``encoding``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class SSEEvent:
    """One dispatched event: its type (``"message"`` unless an ``event:`` line named it), its
    data (the ``data:`` lines joined with ``\\n``) and the last event id seen."""

    __slots__ = ("event", "data", "id")

    def __init__(self, event: str, data: str, id: str = "") -> None:
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return f"SSEEvent(event={self.event!r}, data={self.data!r}, id={self.id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SSEEvent) and (self.event, self.data, self.id) == (
            other.event,
            other.data,
            other.id,
        )

    __hash__ = None  # type: ignore[assignment]


class SSEDecoder:
    __slots__ = (
        "_max_line",
        "_max_event",
        "_partial",
        "_after_cr",
        "_started",
        "_data",
        "_size",
        "_event",
        "_id",
        "retry",
        "comments",
    )

    def __init__(self, max_line: int = 1 << 22, max_event: int = 1 << 22) -> None:
        self._max_line = max_line
        self._max_event = max_event
        self._partial = bytearray()  # the unfinished line
        self._after_cr = False  # the last chunk ended with CR: a leading LF is its pair
        self._started = False  # past the BOM check
        self._data: list[memoryview] = []
        self._size = 0
        self._event = b""
        self._id = ""
        #: The reconnection time the stream asked for (milliseconds), if any.
        self.retry: int | None = None
        #: Comment lines seen (keep-alive pings, say).
        self.comments = 0

    def feed(self, data: bytes) -> list[SSEEvent]:
        if not self._started:
            if len(self._partial) + len(data) < len(_BOM) and _BOM.startswith(
                bytes(self._partial) + data
            ):
                self._partial += data  # (too short to tell yet)
                return []
            data = bytes(self._partial) + data
            self._partial.clear()
            self._started = True
            data = data.removeprefix(_BOM)
        if self._after_cr:
            self._after_cr = False
            if data[:1] == b"\n":
                data = data[1:]
        out: list[SSEEvent] = []
        start, n = 0, len(data)
        cr = data.find(b"\r")  # (the next CR; -1 for none, as in most streams)
        while start < n:
            nl = data.find(b"\n", start)
            if cr != -1 and cr < start:
                cr = data.find(b"\r", start)
            if cr != -1 and (nl == -1 or cr < nl):
                end, start_next = cr, cr + 1
                if cr + 1 < n:
                    if data[cr + 1] == 0x0A:
                        start_next = cr + 2
                else:
                    self._after_cr = True
            elif nl != -1:
                end, start_next = nl, nl + 1
            else:
                break
            line: bytes | bytearray
            if self._partial:  # (the line's start came earlier: take the buffer itself)
                self._partial += memoryview(data)[start:end]
                line, self._partial = self._partial, bytearray()
            else:
                line = data[start:end]
            if len(line) > self._max_line:
                raise SSEError(
                    "line", f"a line of the event stream is longer than {self._max_line} bytes"
                )
            self._line(line, out)
            start = start_next
        if start < n:
            if len(self._partial) + n - start > self._max_line:
                raise SSEError(
                    "line", f"a line of the event stream is longer than {self._max_line} bytes"
                )
            self._partial += memoryview(data)[start:]
        return out

    def close(self) -> list[SSEEvent]:
        """End of the stream: an unfinished event is dropped (no event)."""
        self._partial.clear()
        self._data = []
        self._size = 0
        return []

    def _line(self, line: bytes | bytearray, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == 0x3A:  # ":" a comment
            self.comments += 1
            return
        colon = line.find(b":")
        if colon == -1:
            name, at = line, len(line)
        else:
            name, at = line[:colon], colon + 1
            if line[at : at + 1] == b" ":
                at += 1
        value = memoryview(line)[at:]  # (no copy: a data line may be megabytes)
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self._max_event + 1:
                raise SSEError(
                    "event", f"an event of the event stream is larger than {self._max_event} bytes"
                )
            self._data.append(value)
        elif name == b"event":
            self._event = bytes(value)
        elif name == b"id":
            if b"\0" not in bytes(value):
                self._id = _text(value)
        elif name == b"retry" and bytes(value).isdigit():
            self.retry = int(bytes(value))

    def _dispatch(self, out: list[SSEEvent]) -> None:
        event, self._event = self._event, b""
        if not self._data:
            return
        data = self._data[0] if len(self._data) == 1 else memoryview(b"\n".join(self._data))
        self._data = []
        self._size = 0
        out.append(SSEEvent(_text(event) if event else "message", _text(data), self._id))


def _text(raw: bytes | memoryview) -> str:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as exc:
        raise SSEError(
            "encoding", f"the event stream is not UTF-8 (byte {exc.start} of an event)"
        ) from None

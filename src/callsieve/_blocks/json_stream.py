"""Strategy: a JSON object's text, as it arrives, rewritten the way ``ToolCall.arguments``
writes it (``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``) — for argument
streaming of JSON bodies (DeepSeek's native calls, a ``call_json``).

What it does: ``JsonStream.feed(text)`` returns the compact JSON that ``text`` settles:
structure at once, white space between tokens dropped, a string's characters as they arrive
(escapes decoded, then escaped as ``json.dumps`` escapes them), a number or literal once it
ends (then written as ``json.dumps`` writes its value: ``1e5`` is ``100000.0``). A key
goes out once it is whole. The value of a top-level key the caller asks to ``hold`` (one a
tool's schema types, which coercion may change: ``_blocks.argstream``) goes out when it ends, as
``settle(key, its compact text)`` writes it. It raises ``NotStreamable`` where the text is
no JSON object, or holds what it does not rewrite exactly (``NaN``, an escape it cannot
read), and ``RepeatedKey`` at a key an object already has (its last value wins, at the first
one's place, which went out); the caller then holds the rest back.
What it guarantees: what it returned is what ``json.dumps`` of the parsed object, its held
values settled, starts with.
What it costs: a few operations per token; inside a string, one search per run of plain
characters; each object's keys, kept to tell a repeated one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .._base.values import load_json
from .._grammar.directives import DEFAULT_ENVELOPE, EnvelopeKeys
from .._scan.balanced import MAX_JSON_DEPTH

__all__ = ["EnvelopeStream", "JsonStream", "NotStreamable", "RepeatedKey"]

_PLAIN = re.compile(r'[^"\\\x00-\x1f]+')  # string characters that need nothing done
#: String content that comes out as it is: plain characters, and the escapes ``json.dumps``
#: writes the same (not ``\/`` nor ``\u``).
_AS_IS = re.compile(r'[^"\\\x00-\x1f]*(?:\\["\\bfnrt][^"\\\x00-\x1f]*)*')
_SPACE = " \t\n\r"
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "/",
    "b": "\\b",
    "f": "\\f",
    "n": "\\n",
    "r": "\\r",
    "t": "\\t",
}

# Where the reader stands.
_VALUE = 0  # a value comes
_KEY = 1  # a key or "}" comes (just after "{")
_COLON = 2
_AFTER = 3  # "," or the closer comes
_STRING = 4
_ESCAPE = 5  # after a backslash in a string
_UNICODE = 6  # reading \uXXXX
_ATOM = 7  # a number or a literal
_DONE = 8  # the object closed


class NotStreamable(Exception):
    """The text is no JSON object, or not one this rewrites exactly."""


class RepeatedKey(NotStreamable):
    """A key an object already has: its last value wins, at the first one's place."""


class JsonStream:
    """One JSON object's text, fed in pieces (see the module's docstring)."""

    __slots__ = (
        "state",
        "stack",
        "atom",
        "hexes",
        "high",
        "is_key",
        "keys",
        "out",
        "mark",
        "holding",
        "hold",
        "settle",
    )

    def __init__(
        self,
        hold: Callable[[str], bool] | None = None,
        settle: Callable[[str, str], str] | None = None,
    ) -> None:
        self.state = _VALUE
        self.stack: list[str] = []  # "{" or "[" per open container
        self.keys: list[set[str] | None] = []  # per open container: an object's keys so far
        self.atom: list[str] = []  # a number or literal so far
        self.hexes = ""  # the hex digits of a \u escape so far
        self.high = ""  # a high surrogate waiting for its low half
        self.is_key = False  # the string being read is an object key
        # What the steps settled and ``feed`` did not return yet: from ``mark`` on (-1: none)
        # a key not yet whole, or a held value (``holding``: its key) not yet ended.
        self.out: list[str] = []
        self.mark = -1
        self.holding: str | None = None
        self.hold = hold  # hold(key): hold this top-level key's value until it ends?
        self.settle = settle  # settle(key, compact text) -> the text that goes out for it

    def feed(self, text: str) -> str:
        """The compact JSON that ``text``, the object's next piece, settles; ``NotStreamable``
        where it is no JSON object (text after the object's end included)."""
        settled, used = self.feed_part(text)
        if text[used:].strip(_SPACE):
            raise NotStreamable("text after the object")
        return settled

    def feed_part(self, text: str) -> tuple[str, int]:
        """As ``feed``, but reading stops where the object ends: ``(the compact JSON, how
        much of text was read)`` (an envelope's arguments end before the envelope does).
        Each character (a run of plain string characters at once) is read by the step of
        the state the reader stands in (``_STEPS``), which says where to go on."""
        out = self.out
        i = 0
        n = len(text)
        while i < n and self.state != _DONE:
            i = _STEPS[self.state](self, text, i, out)
        mark = self.mark
        if mark < 0:
            settled = "".join(out)
            out.clear()
        else:  # (a key or a held value goes on in the next piece)
            settled = "".join(out[:mark])
            del out[:mark]
            self.mark = 0
        return settled, i

    def as_is(self, text: str) -> bool:
        """Whether ``text``, read next, is string content that comes out as it is (``_AS_IS``:
        no quote, control character or cut escape; no surrogate half waiting, no key or held
        value being read): reading it would change nothing but append it, so the caller may
        send it itself (the sieve's hot half)."""
        return (
            self.state == _STRING
            and self.mark < 0
            and not self.high
            and _AS_IS.fullmatch(text) is not None
        )

    # ------------------------------------------------------------------ the steps
    # Each reads ``text`` at ``i``, appends what it settles to ``out``, and returns where
    # the next step reads (the same ``i`` when the character is to be read again).
    def _at_value(self, text: str, i: int, out: list[str]) -> int:
        c = text[i]
        if c not in _SPACE:
            if not self.stack and c != "{":
                raise NotStreamable("not a JSON object")
            self._value(c, out)
        return i + 1

    def _at_key(self, text: str, i: int, out: list[str]) -> int:
        """Just after ``{`` or a ``,`` in an object: a key or ``}``."""
        c = text[i]
        if c == "}":
            self._close(c, out)
        elif c == '"':
            self.mark = len(out)  # (a key goes out whole: it may repeat)
            out.append('"')
            self.is_key = True
            self.state = _STRING
        elif c not in _SPACE:
            raise NotStreamable("no key")
        return i + 1

    def _at_colon(self, text: str, i: int, out: list[str]) -> int:
        c = text[i]
        if c == ":":
            out.append(":")
            self.state = _VALUE
        elif c not in _SPACE:
            raise NotStreamable("no colon after a key")
        return i + 1

    def _after_value(self, text: str, i: int, out: list[str]) -> int:
        """After a value: ``,`` or the container's closer."""
        c = text[i]
        if c == ",":
            out.append(",")
            self.state = _KEY if self.stack[-1] == "{" else _VALUE
        elif c in "}]":
            self._close(c, out)
        elif c not in _SPACE:
            raise NotStreamable(f"{c!r} after a value")
        return i + 1

    def _in_string(self, text: str, i: int, out: list[str]) -> int:
        m = _PLAIN.match(text, i)
        if m is not None:
            self._flush_high(out)
            out.append(m.group())
            return m.end()
        c = text[i]
        if c == '"':
            self._flush_high(out)
            out.append('"')
            if self.is_key:
                self._key_read(out)
            else:
                self._value_ends(out)
        elif c == "\\":
            self.state = _ESCAPE
        else:  # a raw control character: json.loads refuses it
            raise NotStreamable("a control character in a string")
        return i + 1

    def _in_escape(self, text: str, i: int, out: list[str]) -> int:
        """After a backslash in a string."""
        c = text[i]
        if c == "u":
            self.state = _UNICODE
            self.hexes = ""
        elif c in _ESCAPES:
            self._flush_high(out)
            out.append(_ESCAPES[c])
            self.state = _STRING
        else:
            raise NotStreamable(f"the escape \\{c}")
        return i + 1

    def _in_unicode(self, text: str, i: int, out: list[str]) -> int:
        """Reading the four hex digits of ``\\uXXXX``."""
        self.hexes += text[i]
        if len(self.hexes) == 4:
            self._unicode(out)
        return i + 1

    def _in_atom(self, text: str, i: int, out: list[str]) -> int:
        """A number or a literal: it ends at the first character that cannot be in one,
        which is then read again in the state after it."""
        c = text[i]
        if c in _NUMBER_CHARS or c.isalpha():
            self.atom.append(c)
            return i + 1
        self._end_atom(out)
        return i

    def _at_done(self, text: str, i: int, out: list[str]) -> int:
        if text[i] not in _SPACE:
            raise NotStreamable("text after the object")
        return i + 1

    def _key_read(self, out: list[str]) -> None:
        """A key is whole (from ``mark`` on in ``out``): refused if its object has it
        already; the value of a top-level one the caller holds is held from here on."""
        key = json.loads("".join(out[self.mark :]))
        seen = self.keys[-1]
        assert seen is not None
        if key in seen:
            raise RepeatedKey(f"the key {key!r} repeats")
        seen.add(key)
        self.state = _COLON
        if len(self.stack) == 1 and self.hold is not None and self.hold(key):
            self.holding = key
            self.mark = len(out)
        else:
            self.mark = -1

    def _value_ends(self, out: list[str]) -> None:
        """A value ended: a held top-level one goes out as ``settle`` writes it."""
        self.state = _AFTER
        key = self.holding
        if key is not None and len(self.stack) == 1:
            assert self.settle is not None
            held = "".join(out[self.mark :])  # (":" and the value)
            del out[self.mark :]
            out.append(":" + self.settle(key, held[1:]))
            self.holding = None
            self.mark = -1

    def _value(self, c: str, out: list[str]) -> None:
        if c in "{[":
            if len(self.stack) >= MAX_JSON_DEPTH:  # (the state stays small on any input)
                raise NotStreamable(f"nested deeper than {MAX_JSON_DEPTH}")
            self.stack.append(c)
            self.keys.append(set() if c == "{" else None)
            out.append(c)
            self.state = _KEY if c == "{" else _VALUE
        elif c == '"':
            out.append('"')
            self.is_key = False
            self.state = _STRING
        elif c == "]" and self.stack and self.stack[-1] == "[":
            self._close(c, out)  # (an empty array)
        elif c in _NUMBER_CHARS or c.isalpha():
            self.atom = [c]
            self.state = _ATOM
        else:
            raise NotStreamable(f"{c!r} where a value goes")

    def _close(self, c: str, out: list[str]) -> None:
        if not self.stack or self.stack.pop() != ("{" if c == "}" else "["):
            raise NotStreamable(f"{c!r} closes nothing open")
        self.keys.pop()
        out.append(c)
        if self.stack:
            self._value_ends(out)
        else:
            self.state = _DONE

    def _end_atom(self, out: list[str]) -> None:
        text = "".join(self.atom)
        try:
            value = load_json(text)
        except (ValueError, RecursionError):
            raise NotStreamable(f"{text!r} is no JSON value") from None
        out.append(json.dumps(value))
        self._value_ends(out)

    def _unicode(self, out: list[str]) -> None:
        try:
            code = int(self.hexes, 16)
        except ValueError:
            raise NotStreamable(f"the escape \\u{self.hexes}") from None
        self.state = _STRING
        if 0xD800 <= code < 0xDC00:  # a high surrogate: its low half may follow
            self._flush_high(out)
            self.high = chr(code)
            return
        if 0xDC00 <= code < 0xE000 and self.high:
            pair = self.high + chr(code)
            self.high = ""
            out.append(pair.encode("utf-16", "surrogatepass").decode("utf-16"))
            return
        self._flush_high(out)
        out.append(json.dumps(chr(code), ensure_ascii=False)[1:-1])

    def _flush_high(self, out: list[str]) -> None:
        if self.high:  # (no low half followed: the lone surrogate, as json.loads keeps it)
            out.append(self.high)
            self.high = ""


#: The step of each state, in the states' order (``JsonStream.feed``).
_STEPS = (
    JsonStream._at_value,
    JsonStream._at_key,
    JsonStream._at_colon,
    JsonStream._after_value,
    JsonStream._in_string,
    JsonStream._in_escape,
    JsonStream._in_unicode,
    JsonStream._in_atom,
    JsonStream._at_done,
)


# Where an envelope's reader stands (``EnvelopeStream``).
_E_OPEN = 0  # before the object's `{`
_E_KEY = 1  # a key, a comma or the closing `}` comes
_E_KEY_STR = 2  # in a key
_E_COLON = 3
_E_VALUE = 4  # a value comes
_E_NAME_STR = 5  # in the name's string
_E_ARGS = 6  # in the arguments object (its ``JsonStream``)
_E_SKIP = 7  # in a value that does not matter
_E_AFTER = 8  # after a value: a comma or `}`
_E_DONE = 9


class EnvelopeStream:
    """A call envelope's JSON text as it arrives — ``{"name": "f", "arguments": {…}}``, or
    that inside ``"function"``, read by ``keys`` (its dialect's, as ``call_json`` reads them:
    grammar/README.md) — for argument streaming of calls whose name is in their JSON:
    ``feed`` gives the name once its string closes, and then, if the arguments come after it
    and are an object, their compact JSON as it arrives (a ``JsonStream``). Anything else
    (the arguments first, as a string, text that is no JSON) streams nothing: the call sends
    its arguments whole when it is built, and the argument stream checks what went out."""

    __slots__ = (
        "state",
        "level",
        "buf",
        "key",
        "name",
        "args",
        "skip",
        "named_at",
        "dead",
        "escape",
        "ident",
        "repeated",
        "on_name",
        "hold",
        "settle",
        "keys",
    )

    def __init__(
        self,
        on_name: Callable[[str], None] | None = None,
        hold: Callable[[str], bool] | None = None,
        settle: Callable[[str, str], str] | None = None,
        keys: EnvelopeKeys = DEFAULT_ENVELOPE,
    ) -> None:
        self.keys = keys
        self.state = _E_OPEN
        self.level = 0  # 1: the envelope; 2: the envelope inside "function"
        self.buf: list[str] = []  # a key's or the name's raw text so far
        self.key = ""
        self.name: str | None = None
        self.args: JsonStream | None = None
        self.skip: list[Any] = []  # a skipped value: its brackets open, and string state
        self.named_at = 0  # the level whose "name" gave the name
        self.dead = False  # no more to stream (text that is no envelope, or the args done)
        self.escape = False  # a key's or the name's string: just after a backslash
        self.ident: str | None = None  # the envelope's "id", once read
        self.repeated = False  # the arguments repeat a key (``RepeatedKey``): stopped there
        #: told the name the moment its string closes, before the arguments are read (which
        #: may hold a value by the tool's schema: ``hold``, ``settle``, the ``JsonStream``'s)
        self.on_name = on_name
        self.hold, self.settle = hold, settle

    def feed(self, text: str) -> str:
        """Read ``text``: the arguments' compact JSON it settles (the name goes to
        ``on_name`` when its string closes). The arguments are read by their own
        ``JsonStream`` (``_in_args``), a key's or the name's string by ``_string``, a skipped
        value by ``_skip``, and the envelope's own punctuation by ``_structural``."""
        out: list[str] = []
        i, n = 0, len(text)
        while i < n and not self.dead:
            state = self.state
            if state == _E_ARGS:
                i = self._in_args(text, i, out)
            elif state in (_E_KEY_STR, _E_NAME_STR):
                had = self.name
                i = self._string(text, i)
                if self.name is not None and had is None and self.on_name is not None:
                    self.on_name(self.name)
                if self.state == state:  # (the string goes on in the next text)
                    break
            elif state == _E_SKIP:
                i = self._skip(text, i)
            elif text[i] in " \t\r\n":
                i += 1
            else:
                i = self._structural(state, text[i], i)
        return "".join(out)

    def as_is(self, text: str) -> bool:
        """As ``JsonStream.as_is``: ``text`` is string content inside the arguments."""
        return self.state == _E_ARGS and self.args is not None and self.args.as_is(text)

    def _in_args(self, text: str, i: int, out: list[str]) -> int:
        """The arguments object's text from ``text[i]``: its compact JSON to ``out``; where
        reading goes on (past the object: the rest does not matter)."""
        assert self.args is not None
        try:
            piece, used = self.args.feed_part(text[i:])
        except NotStreamable as exc:
            self.repeated = isinstance(exc, RepeatedKey)
            self.dead = True
            return len(text)
        out.append(piece)
        if self.args.state == _DONE:
            self.dead = True  # (the arguments are out; the rest does not matter)
        return i + used

    def _structural(self, state: int, c: str, i: int) -> int:
        """The envelope's own punctuation ``c`` (at ``i``, not white space): where reading
        goes on (``i`` again where a value's first character is read by its reader)."""
        if state == _E_OPEN:
            if c != "{":
                self.dead = True
                return i
            self.level, self.state = 1, _E_KEY
        elif state == _E_KEY:
            if c == '"':
                self.state = _E_KEY_STR
                self.buf = []
            elif c == "}":
                self._close()
            elif c != ",":
                self.dead = True
        elif state == _E_COLON:
            if c != ":":
                self.dead = True
            self.state = _E_VALUE
        elif state == _E_VALUE:
            self._value(c)
            if self.state in (_E_SKIP, _E_ARGS):
                return i  # (the character is read again: by the skipper, the arguments')
        elif state == _E_AFTER:
            if c == ",":
                self.state = _E_KEY
            elif c == "}":
                self._close()
            else:
                self.dead = True
        return i + 1

    def _string(self, text: str, i: int) -> int:
        """Read a key's or the name's string from ``text[i]`` (its body, escapes and all; a
        backslash that ends the text is remembered): where it ends, its value decides the
        state. Returns the index after what was read."""
        n = len(text)
        buf = self.buf
        while i < n:
            c = text[i]
            i += 1
            if self.escape:
                self.escape = False
            elif c == "\\":
                self.escape = True
            elif c == '"':
                value = _json_string("".join(buf))
                self.buf = []
                if self.state == _E_KEY_STR:
                    self.key = value if value is not None else "\0"
                    self.state = _E_COLON
                else:
                    if value is None:
                        pass
                    elif self.key in self.keys.ident:
                        self.ident = self.ident or value.strip()
                    elif self.name is None:
                        self.name = value.strip()
                        self.named_at = self.level
                    self.state = _E_AFTER
                return i
            buf.append(c)
        return n

    def _value(self, c: str) -> None:
        """A value begins with ``c``: the name's string, the arguments object, the envelope
        inside ``"function"``, or a value to skip."""
        key, keys = self.key, self.keys
        if (key in keys.name or key in keys.ident) and c == '"':
            self.state = _E_NAME_STR
            self.buf = []
        elif (
            key in keys.arguments
            and c == "{"
            and self.name is not None
            and (self.named_at == self.level)
        ):
            self.args = JsonStream(self.hold, self.settle)
            self.state = _E_ARGS
        elif key == keys.function and c == "{" and self.level == 1 and self.name is None:
            self.level, self.state = 2, _E_KEY
        else:
            self.skip = [False, False, 0]  # (in a string, after a backslash, depth)
            self.state = _E_SKIP

    def _close(self) -> None:
        if self.level == 2:
            self.level, self.state = 1, _E_AFTER
        else:
            self.state, self.dead = _E_DONE, True

    def _skip(self, text: str, i: int) -> int:
        """Skip a value that does not matter; where it ends, the state is ``_E_AFTER`` and
        the index that of the character after it (a `,` or `}` that ends a scalar is not
        taken)."""
        in_string, escaped, depth = self.skip
        n = len(text)
        while i < n:
            c = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_string = False
                    if depth == 0:
                        self.state = _E_AFTER
                        return i + 1
            elif c == '"':
                in_string = True
            elif c in "{[":
                depth += 1
            elif c in "}]":
                if depth == 0:  # (a scalar ended at the object's end)
                    self.state = _E_AFTER
                    return i
                depth -= 1
                if depth == 0:
                    self.state = _E_AFTER
                    return i + 1
            elif c == "," and depth == 0:
                self.state = _E_AFTER
                return i
            i += 1
        self.skip = [in_string, escaped, depth]
        return n


def _json_string(raw: str) -> str | None:
    """A JSON string's value from its body's text (None: no valid string)."""
    try:
        value = json.loads('"' + raw + '"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None

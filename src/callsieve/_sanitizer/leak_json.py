"""Strategy: find where a leaked JSON value ends, chunk by chunk, and say whether it is a
leak (SPEC §13: wire-format tool-call arrays and tool-result blobs).

What it does: a ``JsonScan`` follows the structure of a JSON value that begins at a
candidate (``[`` or ``{``): brackets on a stack, strings (with their escapes) skipped with one
``re`` search per quote or backslash, and between them only what JSON allows outside strings
(white space, ``,:``, numbers, ``true``/``false``/``null``). ``feed(text, start)`` reads
``text[start:]`` and answers ``DONE`` (the value ends at the returned index), ``FAIL`` (at the
returned index the text is not JSON, a bracket does not match, the value nests deeper than
``MAX_DEPTH`` or grows past ``MAX_CHARS``) or ``MORE`` (it goes on in the next text).
``is_leak(value, patterns)`` says whether a parsed value is a leak: a non-empty list whose
every element is a call object (its call key, ``LEAK_CALL_KEY``, holding an object with a name,
``LEAK_CALL_NAME_KEY``) or a tool result (an object with a ``LEAK_RESULT_KEY``), or one such
result object.
What it guarantees: every character is read once, whatever the chunking (the state — stack,
in a string, after a backslash — goes from text to text), so finding the end is linear.
What it costs: one regex call per token of structure; strings cost one search each.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .leak_patterns import LeakPatterns

__all__ = ["DONE", "FAIL", "MAX_CHARS", "MAX_DEPTH", "MORE", "JsonScan", "is_leak"]

DONE, FAIL, MORE = 0, 1, 2
#: A leaked value nests at most this deep and is at most this long; past either it is text.
MAX_DEPTH = 64
MAX_CHARS = 256 * 1024

_STRUCT = re.compile(r"[\s,:0-9eE.+\-truefalsn]*")
_IN_STRING = re.compile(r'["\\]')
_CLOSES = {"]": "[", "}": "{"}


class JsonScan:
    """The structure of one JSON value read so far (see the module docstring)."""

    __slots__ = ("stack", "in_string", "escape", "length")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.in_string = False
        self.escape = False  # a backslash ended the last text, inside a string
        self.length = 0

    def feed(self, text: str, start: int = 0) -> tuple[int, int]:
        """``(DONE, end)``, ``(FAIL, where)`` or ``(MORE, len(text))``."""
        p, n = start, len(text)
        stack = self.stack
        while p < n:
            if self.escape:
                self.escape = False
                p += 1
                continue
            if self.in_string:
                m = _IN_STRING.search(text, p)
                if m is None:
                    p = n
                    break
                j = m.start()
                if text[j] == '"':
                    self.in_string = False
                    p = j + 1
                elif j + 1 < n:
                    p = j + 2
                else:
                    self.escape = True
                    p = n
                continue
            m2 = _STRUCT.match(text, p)
            p = m2.end() if m2 is not None else p
            if p >= n:
                break
            c = text[p]
            if c == '"':
                self.in_string = True
            elif c == "[" or c == "{":
                stack.append(c)
                if len(stack) > MAX_DEPTH:
                    return FAIL, p
            elif c in _CLOSES and stack and stack[-1] == _CLOSES[c]:
                stack.pop()
                if not stack:
                    return DONE, p + 1
            else:
                return FAIL, p
            p += 1
        self.length += n - start
        if self.length > MAX_CHARS:
            return FAIL, n
        return MORE, n


def _is_call(item: Any, pats: LeakPatterns) -> bool:
    return isinstance(item, dict) and any(
        pats.call_key.fullmatch(key)
        and isinstance(value, dict)
        and any(pats.call_name_key.fullmatch(k) for k in value)
        for key, value in item.items()
    )


def _is_result(item: Any, pats: LeakPatterns) -> bool:
    return isinstance(item, dict) and any(pats.result_key.fullmatch(key) for key in item)


def is_leak(value: Any, pats: LeakPatterns) -> bool:
    """Whether a parsed JSON value is a leaked call array or tool result."""
    if isinstance(value, list):
        return bool(value) and all(_is_call(x, pats) or _is_result(x, pats) for x in value)
    return _is_result(value, pats)

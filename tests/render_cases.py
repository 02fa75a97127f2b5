"""What the four renderers' tests share (``spec/test_s10_render_<api>.py``): the example
replies, the chunkings a reply is streamed at, and whether a stream aborts a call (a wire
cannot take one back, so the stream-versus-whole checks leave those out: ``without_aborted``
in ``helpers``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from helpers import random_chunkings

from callsieve import CallAborted, Sieve


def call_block(*names: str) -> str:
    return "<tool_calls>" + "".join(
        f'<invoke name="{n}"><parameter name="q">{n} {i}</parameter></invoke>'
        for i, n in enumerate(names)) + "</tool_calls>"


EXAMPLES = [
    ("text and a call", "Let me look.\n" + call_block("read")),
    ("call then text", call_block("read") + "\n\nIt says hi."),
    ("text call text", "First:\n" + call_block("a", "b") + "\nthen:\n" + call_block("c") + " ok"),
    ("only a call", "  \n" + call_block("read") + "\n  "),
    ("only text", "Just words, <b>bold</b> and 1 < 2."),
    ("empty", ""),
    ("white space", " \n\t "),
    ("no arguments", '<tool_calls><invoke name="now"></invoke></tool_calls>'),
    ("unicode", "你好 💥\n" + '<tool_calls><invoke name="say"><parameter name="t">é"\\\n'
                "</parameter></invoke></tool_calls>"),
    ("failed block is text", "see <tool_calls><invoke name=\"f\">broken"),
    ("native", ("x <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"n\": [1, 2.5]}"
                "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
]


def chunkings(text: str) -> list[list[str]]:
    """Whole, per character, a few random cuts and two 1-8-character splits."""
    return [[text], list(text), *random_chunkings(text, seeds=(0, 2, 5))]


def stream_aborts(chunks: Iterable[str], **opts: Any) -> bool:
    """Whether a ``Sieve`` over ``chunks`` aborts a call."""
    sieve = Sieve(**opts)
    events: Sequence[Any] = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    return any(isinstance(e, CallAborted) for e in events)

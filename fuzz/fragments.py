#!/usr/bin/env python
"""Strategy: differential fragment fuzzing — every chunking of a document must give the events
of the one-chunk run.

What it does: a document is a concatenation of small fragments (prose, look-alike markup,
fences and inline code, valid and broken tool blocks in every default dialect, alias spellings
of the wrapper, zero-width characters, tags cut into several fragments). For each document and
each mode — ``early_emit`` "block", "invoke", "arguments", and the reasoning modes (SPEC §15)
"open" (``reasoning="open"``) and "call" (``calls_in_reasoning="call"`` under argument
streaming), ``MODE_OPTIONS`` — it runs ``Sieve`` on the whole document as one chunk
(the reference), then one character at a time, in random pieces of 1-8 characters (sometimes
with empty chunks in between), in random pieces of 1-40, and one fragment per chunk; and it runs
``parse()``. A failure found from the command line is shrunk (fragments, then characters, then
the chunking) and printed as a repro.
What it guarantees: for every document and mode it checks that
  1. nothing raises;
  2. every run conserves the input: its Text and the ``block.raw`` of its ToolCalls, in event
     order, rebuild the document, each raw is ``document[span]`` and starts where the released
     text ended;
  3. every chunking gives the reference's *coalesced* events: adjacent Text merged, empty Text
     dropped, ToolCalls compared by call names, inputs (type-exact JSON), call dialect and
     repairs, block raw, span and status, and — unless ``--loose`` — block dialect, repairs
     and diagnostics. With ``early_emit="invoke"`` a "partial" ToolCalls event is merged with
     the event that continues its block (contiguous span; diagnostics add up): how a block's
     calls are cut into events depends on where the chunks end, by design (``--no-merge``
     compares the events one by one);
  4. ``parse(document, **MODE_OPTIONS[mode])`` has the reference's text, reasoning and calls.
Reasoning events are coalesced like text (by what they stand for, tags included) and count in
the conservation check by ``Reasoning.source``; a third of the documents think first.
Everything is seeded: a document and its chunkings depend on its ``doc_seed`` only, and the
doc seeds on the run seed, so ``check_documents(seed, count)`` and ``--seed S --docs COUNT``
check the same documents, and ``--doc-seed D`` re-runs one of them.
What it costs: per document and mode, five ``Sieve`` runs and one ``parse()`` over about 250
characters on average (the per-character run dominates): a few hundred documents a second per
process. Shrinking a failure takes up to ``--min-seconds`` (plus up to 20 s for the chunking).

A tool, not a test: the test suite runs a fixed, seeded part of it
(``tests/invariants/test_fuzz_fragments.py``, through ``check_documents``); see
``fuzz/README.md``.

Usage (from a checkout, ``src/`` is put first on ``sys.path``):
  python fuzz/fragments.py [--seconds N] [--docs N] [--seed S] [--jobs J] [--doc-seed D]
                           [--strict | --loose] [--no-merge] [--hot-budget B]
                           [--no-minimize] [--min-seconds M]
Exit status: 0 no failure; 1 failure (shrunk repro printed); 2 fuzzer-internal error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import queue
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if __name__ == "__main__":  # run as a script: test this checkout's source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import callsieve
from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
    ToolCalls,
)
from callsieve._scan import cursor as callsieve_cursor

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

__all__ = [
    "MODES",
    "Failure",
    "Finding",
    "Options",
    "check_doc",
    "check_documents",
    "check_seed",
    "fuzz",
    "gen_fragments",
    "main",
    "minimize",
]

MODES = ("block", "invoke", "arguments", "open", "call")
#: The Sieve options of each mode: an ``early_emit`` mode, or a reasoning one (SPEC §15) —
#: "open" reads the reply as starting inside reasoning, "call" makes blocks inside reasoning
#: calls, under argument streaming.
MODE_OPTIONS: dict[str, dict[str, str]] = {
    "block": {"early_emit": "block"},
    "invoke": {"early_emit": "invoke"},
    "arguments": {"early_emit": "arguments"},
    "open": {"early_emit": "block", "reasoning": "open"},
    "call": {"early_emit": "arguments", "calls_in_reasoning": "call"},
}

Generator = Callable[[random.Random], list[str]]
#: Failure class: (category, early_emit mode, detail...) — see ``same_kind``.
Kind = tuple[str, ...]


@dataclass(frozen=True)
class Options:
    """What the comparison covers (set once, passed explicitly).

    ``strict``: also compare block dialect, repairs and diagnostics. ``merge_partial``: merge
    a "partial" ToolCalls event with the event that continues its block before comparing.
    """

    strict: bool = True
    merge_partial: bool = True

    def cli_flags(self) -> str:
        """The command-line flags that select these options."""
        return ("" if self.strict else " --loose") + ("" if self.merge_partial else " --no-merge")


# ============================================================================ fragments

WORDS = (
    "Hello",
    "world",
    "the",
    "file",
    "I",
    "will",
    "call",
    "now",
    "ok",
    "done",
    "你好",
    "世界",
    "héllo",
    "emoji💥",
    "a<b",
    "c>d",
    "x",
    "y",
    "foo_bar",
    "1",
    "2.5",
    "&amp;",
    "&lt;",
    "then",
    "Let",
    "me",
    "check",
    "tool",
    "calls",
    "invoke",
    "DSML",
    "function",
)
PUNCT = (". ", ", ", "! ", "? ", ": ", "; ", "。", "，", " - ")
SPACES = (" ", "  ", "   ", "    ", "\t", "\n", "\n\n", "\r\n", "\n   ", "\n    ")
ZW = ("\u200b", "\u200c", "\u200d", "\ufeff", "\u2060")

LOOKALIKES = (
    "<b>",
    "</b>",
    "<b>bold</b>",
    "x < y",
    "x<y",
    "1 < 2",
    "a > b",
    "<",
    ">",
    "<<",
    "<>",
    "</",
    "<|",
    "<｜",
    "＜",
    "＞",
    "〈",
    "〉",
    "／",
    "<tool_calls> ",
    "I will use <tool_calls> now. ",
    "the <tool_calls> tag",
    "</tool_calls>",
    "<|DSML|invoke",
    '<|DSML|invoke name="f">',
    "</|DSML|invoke>",
    "<|DSML|",
    "<|DSML",
    "<｜DSML｜",
    "<｜DSM",
    "<DSML",
    "<DSML|",
    "<tool_",
    "<tool_calls",
    "<tool_calls_extra>",
    "</tool_calls_extra>",
    "<ToolCallsExtra>",
    "<tool-calls>",
    "</tool-calls>",
    '<invοke name="f">',
    "</invοke>",
    "<invoke",
    '<invoke name="f">',
    "</invoke>",
    '<parameter name="p">',
    "</parameter>",
    "<parameter",
    "]]>",
    "]]",
    "]",
    "<![CDATA[",
    "<![CDATA",
    "<!CDATA[",
    "<！[CDATA[",
    "<!-- c -->",
    "<|tool▁calls",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool",
    "▁",
    "｜",
    "\x02",
    "␂",
    "‖",
    "<|tool_calls_begin|>",
    "<｜end▁of▁sentence｜>",
    "<think>",
    "</think>",
    "<tool_call>",
    "<function_calls>",
    "<|DSML|function_calls>",
    "<｜DSML｜function_calls>",
    "<<|DSML|tool_calls>",
    "<proto💥tool_calls>",
    "<DSMLtool_calls",
    "<|DSML tool_calls",
    "<item>",
    "</item>",
    "&",
    "&#",
    "&#x41;",
    '"',
    "'",
    "“",
    "”",
    "/>",
    "=",
    '<|DSML|parameter name="p">',
    "</|DSML|parameter>",
    "</|DSML|tool_calls>",
)

FENCES = (
    "```",
    "````",
    "~~~",
    "~~~~",
    "```xml",
    "```json",
    "~~~ md",
    "````md",
    "``",
    "`",
    "\n```\n",
    "\n~~~\n",
    "\n```xml\n",
    "\n````\n",
    "   ```",
    "    ```",
    "\n```json\n",
    "`x`",
    "``a`b``",
    "`<tool_calls>`",
    "`<|DSML|tool_calls>`",
    "`</tool_calls>`",
    "``<tool_calls>``",
    "` `",
    "```` ``` ````",
)

NAMES = (
    "f",
    "g",
    "read_file",
    "get_weather",
    "a",
    "search",
    "run",
    "x1",
    "do_it",
    "Ab",
    "tool.name",
    "名前",
)
PNAMES = ("p", "path", "q", "content", "command", "n", "o", "items", "x", "text", "b")

CDATA_INNER = (
    "",
    "abc",
    "README.MD",
    "  x < y  ",
    "a ＜b＞ 〈c〉 \u200b",
    "<b>urgent</b>",
    "<a>1</a><b>2</b>",
    "<item>1</item><item>2</item>",
    "```\ncode\n```",
    "~~~",
    "`x`",
    "</parameter>",
    '<tool_calls><invoke name="x"></invoke></tool_calls>',
    '<|DSML|invoke name="y">',
    "line1\nline2",
    "]",
    "]]",
    "] ]>",
    "]]]",
    "[CDATA[",
    "<![CDATA[nested",
    "你好",
    '{"k": 1}',
    '<invoke name="z">',
    "</|DSML|parameter>",
    "\n```xml\n",
)
PLAIN_VALUES = (
    "v",
    "hello",
    "  x &lt; y &amp; z  ",
    "10",
    "-3.5",
    "true",
    "false",
    "null",
    "[1,2]",
    '{"k":1}',
    '["a", {"b": null}]',
    "",
    "   ",
    "杭州",
    "&#65;&#x42;",
    "a b c",
    "<item>1</item><item>2</item>",
    "<a>1</a><b>x</b>",
    "<item><q>x</q></item>",
    "1e3",
    '"quoted"',
    "x\ny",
    "`code`",
    "~~~",
)
NATIVE_ARGS = (
    '{"q": "lark"}',
    '{"location": "Tokyo"}',
    "{}",
    '{"a": [1, 2, {"b": null}]}',
    '{"s": "x}y"}',
    '{"n": 1.5, "t": true}',
    '{"c": "```"}',
    '{"u": "杭州"}',
)


class Dialect(NamedTuple):
    """How one markup dialect spells its tags: ``lt``/``lts`` open an opener/closer tag."""

    lt: str
    lts: str
    gt: str
    wrapper: str
    inv: str = "invoke"
    par: str = "parameter"
    string_attr: bool = False


MARKUP = {
    "dsml": Dialect("<|DSML|", "</|DSML|", ">", "tool_calls"),
    "dsml_v4": Dialect("<｜DSML｜", "</｜DSML｜", ">", "tool_calls", string_attr=True),
    "dsml_v32": Dialect("<｜DSML｜", "</｜DSML｜", ">", "function_calls", string_attr=True),
    "dsml_v41": Dialect("<｜DSML｜ ", "</｜DSML｜ ", ">", "calls", string_attr=True),
    "xml": Dialect("<", "</", ">", "tool_calls"),
}
MARKUP_NAMES = tuple(sorted(MARKUP))

#: Alias spellings of the wrapper opener and closer (SPEC §3).
WRAPPER_OPEN_ALIASES = (
    "<DSML|tool_calls>",
    "<|DSML tool_calls>",
    "<DSMLtool_calls>",
    "<<|DSML|tool_calls>",
    "<｜｜DSML｜｜tool_calls>",
    "<|DSML|tool_calls|",
    "＜|DSML|tool_calls＞",
    "<！DSML！tool_calls>",
    "<DSML|DSML|tool_calls>",
    "<dsml-tool-calls>",
    "<|DSML|ToolCalls>",
    "<\u200b|DSML|tool_calls>",
    "<|DSML|tool\u200b_calls>",
    "<|DSML|tool_calls\ufeff>",
    "<proto💥tool_calls>",
    "〈|DSML|tool_calls〉",
    "<‖DSML‖tool_calls>",
    "<、DSML、tool_calls>",
    "<␂DSML␂tool_calls>",
    "<\x02DSML\x02tool_calls>",
    "<|DSML|tool—calls>",
    "<DSML|tool_calls※>",
)
WRAPPER_CLOSE_ALIASES = (
    "</|DSML|tool_calls>",
    "〈/DSM|tool_calls〉",
    "＜／|DSML|tool_calls＞",
    "</tool_calls>",
    "</｜DSML｜tool_calls>",
    "</DSML|tool_calls>",
    "</|DSML|tool_calls|>",
    "</\u200b|DSML|tool_calls>",
    "</dsml-tool-calls>",
    "</|DSML|ToolCalls>",
)


def ws(r: random.Random) -> str:
    """Whitespace between tags (often none)."""
    return r.choice(("", "", "\n", "  ", "\n  ", " ", "\n\n"))


def quote(r: random.Random, v: str) -> str:
    """An attribute value in straight double, single or curly quotes."""
    q = r.random()
    if q < 0.8:
        return f'"{v}"'
    if q < 0.9:
        return f"'{v}'"
    return f"“{v}”"


def zw_in(r: random.Random, tag: str) -> str:
    """Maybe put a zero-width character inside a tag shell (after the '<')."""
    if r.random() < 0.08 and len(tag) > 2:
        i = r.randint(1, len(tag) - 1)
        return tag[:i] + r.choice(ZW) + tag[i:]
    return tag


def pick_dialect(r: random.Random) -> Dialect:
    return MARKUP[r.choice(MARKUP_NAMES)]


def param_body(r: random.Random, d: Dialect) -> tuple[str, str]:
    """A parameter's ``(attributes, body)``: CDATA sections, a plain value or a look-alike."""
    attr = ""
    if d.string_attr and r.random() < 0.6:
        attr = r.choice((' string="true"', ' string="false"'))
    k = r.random()
    if k < 0.4:
        n = 1 if r.random() < 0.8 else 2
        body = "".join(f"<![CDATA[{r.choice(CDATA_INNER)}]]>" for _ in range(n))
        if r.random() < 0.1:
            body = ws(r) + body + ws(r)
    elif k < 0.95:
        body = r.choice(PLAIN_VALUES)
    else:
        body = "<！[CDATA[" + r.choice(CDATA_INNER) + "]]>"
    return attr, body


def maybe_split(r: random.Random, body: str) -> list[str]:
    """A body as one fragment, or sometimes as two."""
    if len(body) > 3 and r.random() < 0.3:
        c = r.randint(1, len(body) - 1)
        return [body[:c], body[c:]]
    return [body]


def parameter(r: random.Random, d: Dialect, *, loose_cdata: bool) -> list[str]:
    """One parameter; with ``loose_cdata`` its body is a CDATA section that never closes."""
    lead = ws(r)
    attr, body = param_body(r, d)
    opener = zw_in(r, f"{d.lt}{d.par} name={quote(r, r.choice(PNAMES))}{attr}{d.gt}")
    if loose_cdata:
        body = "<![CDATA[" + r.choice(CDATA_INNER).replace("]]>", "")
    return [lead, opener, *maybe_split(r, body), f"{d.lts}{d.par}{d.gt}"]


def invoke(r: random.Random, d: Dialect, *, loose_cdata: bool) -> list[str]:
    """One invoke, mostly in the wrapper's dialect (mixed spellings happen), maybe self-closed;
    with ``loose_cdata`` its last parameter's CDATA never closes."""
    di = d if r.random() < 0.85 else pick_dialect(r)
    name = r.choice(NAMES)
    if r.random() < 0.12 and not loose_cdata:
        return [f"{di.lt}{di.inv} name={quote(r, name)}/>", ws(r)]
    pieces = [zw_in(r, f"{di.lt}{di.inv} name={quote(r, name)}{di.gt}")]
    n_par = r.choice((0, 1, 1, 1, 2, 3))
    if loose_cdata:
        n_par = max(n_par, 1)
    for j in range(n_par):
        pieces += parameter(r, di, loose_cdata=loose_cdata and j == n_par - 1)
    pieces += [ws(r), f"{di.lts}{di.inv}{di.gt}"]
    if r.random() < 0.08:
        pieces.append(" stray text ")
    pieces.append(ws(r))
    return pieces


def wrapper_opener(r: random.Random, d: Dialect) -> str:
    if r.random() < 0.15:
        return r.choice(WRAPPER_OPEN_ALIASES)
    return zw_in(r, f"{d.lt}{d.wrapper}{d.gt}")


def wrapper_closer(r: random.Random, d: Dialect) -> str:
    if r.random() < 0.1:
        return r.choice(WRAPPER_CLOSE_ALIASES)
    return zw_in(r, f"{d.lts}{d.wrapper}{d.gt}")


def markup_block(
    r: random.Random, *, loose_cdata: bool = False, missing_opener: bool = False
) -> list[str]:
    """A (mostly) valid markup block as a list of tag-sized pieces."""
    d = pick_dialect(r)
    pieces = [] if missing_opener else [wrapper_opener(r, d), ws(r)]
    n_inv = r.choice((1, 1, 1, 1, 2, 2, 3))
    loose_at = r.randrange(n_inv) if loose_cdata else -1
    for i in range(n_inv):
        pieces += invoke(r, d, loose_cdata=i == loose_at)
    pieces.append(wrapper_closer(r, d))
    return [p for p in pieces if p]


def markup_block_missing_opener(r: random.Random) -> list[str]:
    return markup_block(r, missing_opener=True)


def markup_block_loose_cdata(r: random.Random) -> list[str]:
    return markup_block(r, loose_cdata=True)


def native_block(r: random.Random) -> list[str]:
    """A DeepSeek native block (full-width bars and '▁' mostly; ASCII spellings sometimes)."""
    bar = "｜" if r.random() < 0.85 else "|"
    sp = "▁" if r.random() < 0.85 else r.choice(("_", " "))

    def tag(words: str) -> str:
        return f"<{bar}{words.replace(' ', sp)}{bar}>"

    pieces = [tag("tool calls begin")]
    for i in range(r.choice((1, 1, 2))):
        if i:
            pieces.append(r.choice(("", "\n")))
        name = r.choice(NAMES[:8])
        args = r.choice(NATIVE_ARGS)
        if r.random() < 0.5:
            pieces += [
                tag("tool call begin"),
                "function",
                tag("tool sep"),
                name,
                "\n```json\n",
                args,
                "\n```",
                tag("tool call end"),
            ]
        else:
            pieces += [tag("tool call begin"), name, tag("tool sep"), args, tag("tool call end")]
    pieces.append(tag("tool calls end"))
    return [p for p in pieces if p]


def _truncated(r: random.Random, name: str) -> list[str]:
    b = "".join(markup_block(r))
    return [b[: r.randint(1, len(b) - 1)]]


def _native_truncated(r: random.Random, name: str) -> list[str]:
    b = "".join(native_block(r))
    return [b[: r.randint(1, len(b) - 1)]]


def _unclosed_cdata_tail(r: random.Random, name: str) -> list[str]:
    """An unclosed CDATA at the very end of a block without closers."""
    return [
        "<tool_calls>",
        f'<invoke name="{name}">',
        '<parameter name="p">',
        "<![CDATA[",
        r.choice(CDATA_INNER),
    ]


def _fixed(*pieces: str) -> Callable[[random.Random, str], list[str]]:
    """A broken block made of fixed pieces; ``{name}`` in them is the drawn call name."""
    return lambda r, name: [p.replace("{name}", name) for p in pieces]


#: Broken blocks by kind (the order matters: it is the order ``broken_block`` draws from).
BROKEN: dict[str, Callable[[random.Random, str], list[str]]] = {
    "truncated": _truncated,
    "param": _fixed(
        "<tool_calls>",
        '<invoke name="{name}">',
        '<param name="p">v</param>',
        "</invoke>",
        "</tool_calls>",
    ),
    "noname": _fixed(
        "<|DSML|tool_calls>",
        "<|DSML|invoke>",
        '<|DSML|parameter name="p">v',
        "</|DSML|parameter>",
        "</|DSML|invoke>",
        "</|DSML|tool_calls>",
    ),
    "bare": _fixed('<invoke name="{name}">', '<parameter name="p">v</parameter>', "</invoke>"),
    "bare_unfinished": _fixed('<invoke name="{name}">', "not a real call"),
    "mention": _fixed("I will use ", "<tool_calls>", " now."),
    "stray": _fixed(
        "<tool_calls>",
        '<invoke name="{name}"></invoke>',
        " stray ",
        '<invoke name="g"/>',
        "</tool_calls>",
    ),
    "text_before_invoke": _fixed(
        "<|DSML|tool_calls>",
        " hmm ",
        '<|DSML|invoke name="{name}">',
        "</|DSML|invoke>",
        "</|DSML|tool_calls>",
    ),
    "no_invoke": _fixed("<tool_calls>", "\n", "</tool_calls>"),
    "wrong_close": _fixed(
        "<tool_calls>", '<invoke name="{name}">', "</parameter>", "</tool_calls>"
    ),
    "loose_mid": _fixed(
        "<tool_calls>",
        '<invoke name="{name}">',
        '<parameter name="p">',
        "<![CDATA[abc",
        "</parameter>",
        "</invoke>",
        "</tool_calls>",
    ),
    "native_truncated": _native_truncated,
    "unclosed_cdata_tail": _unclosed_cdata_tail,
}
BROKEN_KINDS = tuple(BROKEN)


def broken_block(r: random.Random) -> list[str]:
    """A block that must fail (or be repaired): truncated, misspelled, unfinished..."""
    kind = r.choice(BROKEN_KINDS)
    name = r.choice(NAMES)
    return BROKEN[kind](r, name)


def prose(r: random.Random) -> list[str]:
    out = []
    for _ in range(r.randint(1, 4)):
        k = r.random()
        if k < 0.6:
            out.append(r.choice(WORDS))
        elif k < 0.8:
            out.append(r.choice(SPACES))
        else:
            out.append(r.choice(PUNCT))
    return out


def fenced(r: random.Random) -> list[str]:
    """A fenced code block holding a block or prose; its closer may be longer, shorter or
    missing. The opener may be indented (four spaces: not a fence) and a blank line may
    stand inside (where a fence taken for an inline span would end)."""
    ch = r.choice(("`", "~"))
    n = r.choice((3, 3, 3, 4, 5))
    info = r.choice(("", "", "xml", "json", " md", "python"))
    indent = r.choice(("", "", "", " ", "  ", "   ", "    "))
    inner = r.choice((markup_block, native_block, broken_block, prose))(r)
    closer = r.choice(("", indent)) + ch * r.choice((n, n, n + 1, max(3, n - 1)))
    blank = ["\n"] if r.random() < 0.3 else []
    pieces = [r.choice(("\n", "", "\n\n")), indent, ch * n + info, "\n", *blank, *inner, "\n"]
    if r.random() < 0.85:
        pieces += [closer, r.choice(("\n", "", " "))]
    return pieces


def nested_fence(r: random.Random) -> list[str]:
    b = markup_block(r)
    return ["\n````md\n", "```xml\n", *b, "\n```\n", *markup_block(r), "\n````\n"]


def lookalike(r: random.Random) -> list[str]:
    return [r.choice(LOOKALIKES)]


def inline_code(r: random.Random) -> list[str]:
    tick = r.choice(("`", "``"))
    inner = r.choice((markup_block, native_block, lookalike))(r)
    pieces = [tick, *inner]
    if r.random() < 0.85:
        pieces.append(tick)
    return pieces


def fence_marker(r: random.Random) -> list[str]:
    return [r.choice(FENCES)]


def whitespace(r: random.Random) -> list[str]:
    return [r.choice(SPACES)]


def zero_width(r: random.Random) -> list[str]:
    return [r.choice(ZW)]


def wrapper_open_alias(r: random.Random) -> list[str]:
    return [r.choice(WRAPPER_OPEN_ALIASES)]


def wrapper_close_alias(r: random.Random) -> list[str]:
    return [r.choice(WRAPPER_CLOSE_ALIASES)]


#: Reasoning tags (SPEC §15) as the grammar spells them, look-alikes and cut-short ones.
THINK_OPENS = (
    "<think>",
    "<Think>",
    "＜think＞",
    "<think >",
    "<\u200bthink>",
    "<think|>",
    "<thinking>",
    "<|DSML|think>",
    "<think",
)
THINK_CLOSES = (
    "</think>",
    "</Think>",
    "＜/think＞",
    "< /think>",
    "</think\n>",
    "</thinking>",
    "</think",
    "</",
)


def think_open(r: random.Random) -> list[str]:
    return [r.choice(THINK_OPENS)]


def think_close(r: random.Random) -> list[str]:
    return [r.choice(THINK_CLOSES)]


def split_some(r: random.Random, pieces: Iterable[str]) -> list[str]:
    """Split some pieces (tags included) into sub-fragments at random points."""
    out = []
    for p in pieces:
        if len(p) > 1 and r.random() < 0.15:
            cuts = sorted(r.sample(range(1, len(p)), min(len(p) - 1, r.randint(1, 2))))
            out += [p[a:b] for a, b in itertools.pairwise([0, *cuts, len(p)])]
        else:
            out.append(p)
    return out


#: Fragment generators and their weights.
GENERATORS: tuple[tuple[Generator, float], ...] = (
    (prose, 8),
    (lookalike, 6),
    (fence_marker, 3),
    (whitespace, 3),
    (markup_block, 6),
    (markup_block_missing_opener, 1.5),
    (markup_block_loose_cdata, 1.5),
    (native_block, 2.5),
    (broken_block, 3),
    (fenced, 2),
    (nested_fence, 0.4),
    (inline_code, 1.5),
    (zero_width, 0.5),
    (wrapper_open_alias, 1),
    (wrapper_close_alias, 0.7),
    (think_open, 1),
    (think_close, 1.5),
)
_GEN_FUNCS = tuple(g for g, _ in GENERATORS)
_GEN_WEIGHTS = tuple(w for _, w in GENERATORS)


def gen_fragments(r: random.Random) -> list[str]:
    """A document's fragments (non-empty), about 10 to 250 characters in all."""
    target = r.choice((10, 30, 60, 100, 160, 250))
    frags: list[str] = []
    if r.random() < 0.3:  # a reply that thinks first (SPEC §15): white space, then <think>
        frags += [r.choice(("", " ", "\n")), *think_open(r)]
    total = sum(map(len, frags))
    while total < target:
        g = r.choices(_GEN_FUNCS, _GEN_WEIGHTS)[0]
        ps = split_some(r, g(r))
        frags += ps
        total += sum(map(len, ps))
    # occasionally end with an unclosed CDATA block (loose CDATA repair at close())
    if r.random() < 0.07:
        frags += split_some(r, markup_block(r, loose_cdata=True))
    return [f for f in frags if f]


# ============================================================================ chunkings


def canon_value(value: Any) -> str:
    """A type-exact, order-independent spelling of a JSON value (as ``tests/helpers.py``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def chunk_at(text: str, cuts: Iterable[int]) -> list[str]:
    """Split ``text`` at the given offsets (out of range and repeated offsets are ignored)."""
    points = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def random_sizes(r: random.Random, text: str, lo: int, hi: int) -> list[str]:
    cuts, pos = [], 0
    while pos < len(text):
        pos += r.randint(lo, hi)
        cuts.append(pos)
    return chunk_at(text, cuts)


def chunkings(
    r: random.Random, doc: str, frags: Sequence[str] | None
) -> list[tuple[str, list[str]]]:
    """``(label, chunks)`` for every chunking ``doc`` is checked under."""
    small = random_sizes(r, doc, 1, 8)
    label = "random 1-8"
    if r.random() < 0.25:  # empty chunks anywhere must change nothing
        small = [p for x in small for p in (("", x) if r.random() < 0.3 else (x,))] + [""]
        label += " (with empty chunks)"
    out = [("per-char", list(doc)), (label, small), ("random 1-40", random_sizes(r, doc, 1, 40))]
    if frags is not None:
        out.append(("fragments", list(frags)))
    return out


# ============================================================================ comparing

#: A call as compared: (name, canonical JSON input, dialect, repairs).
CallKey = tuple[str, str, str, tuple[str, ...]]


class TextItem(NamedTuple):
    text: str


class BlockItem(NamedTuple):
    """A ToolCalls event as compared; the last three are None unless ``Options.strict``."""

    calls: tuple[CallKey, ...]
    raw: str
    span: tuple[int, int]
    status: str
    dialect: str | None
    repairs: tuple[str, ...] | None
    diagnostics: tuple[str, ...] | None


class OtherItem(NamedTuple):
    """Any other event (compared by type and repr)."""

    event_type: str
    event_repr: str


class ReasoningItem(NamedTuple):
    """Adjacent Reasoning events as compared: what they stand for, tags included."""

    source: str


Item = TextItem | ReasoningItem | BlockItem | OtherItem


def block_item(e: ToolCalls, options: Options) -> BlockItem:
    b = e.block
    calls = tuple((c.name, canon_value(c.input), c.dialect, tuple(c.repairs)) for c in e.calls)
    span = (b.span[0], b.span[1])
    if not options.strict:
        return BlockItem(calls, b.raw, span, b.status, None, None, None)
    return BlockItem(
        calls, b.raw, span, b.status, b.dialect, tuple(b.repairs), tuple(b.diagnostics)
    )


def merge_blocks(first: BlockItem, then: BlockItem) -> BlockItem:
    """One item for a "partial" event and the event that continues its block: calls, raw and
    diagnostics add up; status, dialect and repairs are the continuation's."""
    diagnostics = None
    if first.diagnostics is not None and then.diagnostics is not None:
        diagnostics = first.diagnostics + then.diagnostics
    return BlockItem(
        first.calls + then.calls,
        first.raw + then.raw,
        (first.span[0], then.span[1]),
        then.status,
        then.dialect,
        then.repairs,
        diagnostics,
    )


def continues(last: Item, e: ToolCalls) -> bool:
    """Does ``e`` continue the block of ``last``, a "partial" event?"""
    return (
        isinstance(last, BlockItem) and last.status == "partial" and last.span[1] == e.block.span[0]
    )


def coalesce(events: Iterable[Event], options: Options) -> list[Item]:
    """The events as compared: adjacent Text merged, empty Text dropped, and (with
    ``merge_partial``) a block cut into several events by early_emit="invoke" as one."""
    out: list[Item] = []
    for e in events:
        if isinstance(e, Text):
            if not e.text:
                continue
            if out and isinstance(out[-1], TextItem):
                out[-1] = TextItem(out[-1].text + e.text)
            else:
                out.append(TextItem(e.text))
        elif isinstance(e, Reasoning):
            if out and isinstance(out[-1], ReasoningItem):
                out[-1] = ReasoningItem(out[-1].source + e.source)
            else:
                out.append(ReasoningItem(e.source))
        elif isinstance(e, ToolCalls):
            last = out[-1] if out else None
            if options.merge_partial and last is not None and continues(last, e):
                assert isinstance(last, BlockItem)
                out[-1] = merge_blocks(last, block_item(e, options))
            else:
                out.append(block_item(e, options))
        elif not isinstance(e, _STREAM_EVENTS):  # (those: ``stream_error``)
            out.append(OtherItem(type(e).__name__, repr(e)))
    return out


_STREAM_EVENTS = (CallStarted, ArgumentsDelta, CallFinished, CallAborted)


def stream_error(events: Sequence[Event]) -> str | None:
    """Why argument streaming's events break their rules (None if they keep them): indexes
    0, 1, 2, ...; deltas only for an open call; every started call finished or aborted; a
    finished call's deltas join to its arguments, and it is the next call ToolCalls gives."""
    state: dict[int, str] = {}
    joined: dict[int, str] = {}
    finished = []
    for e in events:
        if isinstance(e, CallStarted):
            if e.index != len(state):
                return f"CallStarted index {e.index}, expected {len(state)}"
            state[e.index] = "open"
        elif isinstance(e, (ArgumentsDelta, CallFinished, CallAborted)):
            if state.get(e.index) != "open":
                return f"{type(e).__name__} for call {e.index}, which is not open"
            if isinstance(e, ArgumentsDelta):
                joined[e.index] = joined.get(e.index, "") + e.delta
            elif isinstance(e, CallFinished):
                if joined.get(e.index, "") != e.call.arguments:
                    return f"call {e.index}: deltas {joined.get(e.index)!r} != arguments"
                state[e.index] = "finished"
                finished.append(e.call)
            else:
                state[e.index] = "aborted"
    if "open" in state.values():
        return "a started call never ended"
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    if len(calls) != len(finished) or any(a is not b for a, b in zip(calls, finished)):
        return "CallFinished calls are not the ToolCalls calls"
    return None


def conservation_error(doc: str, events: Iterable[Event]) -> str | None:
    """Why Text and block raws, in event order, do not rebuild ``doc`` (None if they do)."""
    pos = 0
    parts = []
    for e in events:
        if isinstance(e, Text | Reasoning):
            piece = e.text if isinstance(e, Text) else e.source
            parts.append(piece)
            pos += len(piece)
        elif isinstance(e, ToolCalls):
            a, b = e.block.span
            if e.block.raw != doc[a:b]:
                return f"block.raw {e.block.raw!r} != doc[{a}:{b}] {doc[a:b]!r}"
            if a != pos:
                return f"block span {e.block.span} starts at {a}, released text ended at {pos}"
            parts.append(e.block.raw)
            pos += len(e.block.raw)
    rebuilt = "".join(parts)
    if rebuilt == doc:
        return None
    i = next(
        (k for k, (x, y) in enumerate(zip(rebuilt, doc)) if x != y), min(len(rebuilt), len(doc))
    )
    return (
        f"Text+raw rebuild differs at offset {i}: rebuilt={rebuilt!r} "
        f"(len {len(rebuilt)}), doc len {len(doc)}"
    )


def diff_aspects(ref: Sequence[Item], got: Sequence[Item]) -> str:
    """Which aspects differ ("text", "names", "inputs", "blocks"): keeps the minimizer from
    wandering from one bug to another."""

    def parts(co: Sequence[Item]) -> dict[str, Any]:
        blocks = [x for x in co if isinstance(x, BlockItem)]
        return {
            "text": "".join(x.text for x in co if isinstance(x, TextItem)),
            "names": [c[0] for x in blocks for c in x.calls],
            "inputs": [c[1:] for x in blocks for c in x.calls],
            "blocks": [x[1:] for x in blocks],
        }

    a, b = parts(ref), parts(got)
    return "+".join(k for k in a if a[k] != b[k]) or "events"


def format_diff(ref: Sequence[Item], got: Sequence[Item]) -> str:
    lines = ["reference (one chunk) coalesced events:"]
    lines += [f"    {x!r}" for x in ref]
    lines.append("chunked coalesced events:")
    lines += [f"    {x!r}" for x in got]
    for i, (a, b) in enumerate(itertools.zip_longest(ref, got)):
        if a != b:
            lines.append(f"first difference at event #{i}:\n    ref: {a!r}\n    got: {b!r}")
            break
    return "\n".join(lines)


# ============================================================================ checking


class Failure(Exception):
    """A violated property: ``kind`` (see ``same_kind``), what was seen, and the chunking."""

    def __init__(self, kind: Kind, detail: str, chunks: Sequence[str] | None = None) -> None:
        super().__init__(kind, detail)
        self.kind = kind
        self.detail = detail
        self.chunks = None if chunks is None else list(chunks)


def same_kind(k1: Kind, k2: Kind) -> bool:
    """Same failure class: exceptions by mode, conservation by mode, mismatches by mode and
    differing aspects, parse disagreement by mode."""
    return k1[:2] == k2[:2] and (k1[0] != "mismatch" or k1[2:] == k2[2:])


def run_sieve(chunks: Iterable[str], mode: str) -> list[Event]:
    s = callsieve.Sieve(**MODE_OPTIONS[mode])
    events: list[Event] = []
    for c in chunks:
        events.extend(s.feed(c))
    events.extend(s.close())
    return events


def check_run(
    doc: str,
    chunks: Sequence[str],
    mode: str,
    label: str,
    options: Options,
    ref: Sequence[Item] | None = None,
) -> tuple[list[Event], list[Item]]:
    """Run one chunking; check it raises nothing, conserves ``doc`` and (if ``ref`` is given)
    has the reference's coalesced events. Returns the events and their coalesced form."""
    try:
        events = run_sieve(chunks, mode)
    except Exception:  # noqa: BLE001 - no str input may raise (§Invariants): a finding
        raise Failure(("exception", mode, label), traceback.format_exc(), chunks) from None
    err = conservation_error(doc, events)
    if err:
        raise Failure(("conservation", mode), f"[{label}] {err}\nevents: {events!r}", chunks)
    err = stream_error(events) if MODE_OPTIONS[mode]["early_emit"] == "arguments" else None
    if err:
        raise Failure(("stream", mode), f"[{label}] {err}\nevents: {events!r}", chunks)
    co = coalesce(events, options)
    if ref is not None and co != ref:
        raise Failure(("mismatch", mode, diff_aspects(ref, co)), format_diff(ref, co), chunks)
    return events, co


def check_parse(doc: str, mode: str, events: Sequence[Event]) -> None:
    """``parse()`` must give the one-chunk run's text and calls."""
    try:
        res = callsieve.parse(doc, **MODE_OPTIONS[mode])
    except Exception:  # noqa: BLE001 - no str input may raise (§Invariants): a finding
        raise Failure(("exception", mode, "parse"), traceback.format_exc(), [doc]) from None
    text = "".join(e.text for e in events if isinstance(e, Text))
    thought = "".join(e.text for e in events if isinstance(e, Reasoning))
    calls = [
        (c.name, canon_value(c.input)) for e in events if isinstance(e, ToolCalls) for c in e.calls
    ]
    pcalls = [(c.name, canon_value(c.input)) for c in res.calls]
    if res.text != text or pcalls != calls or res.reasoning != thought:
        raise Failure(
            ("parse", mode),
            f"parse().text={res.text!r}\nsieve text  ={text!r}\n"
            f"parse().reasoning={res.reasoning!r}\nsieve reasoning={thought!r}\n"
            f"parse calls={pcalls!r}\nsieve calls={calls!r}",
            [doc],
        )


def check_doc(
    doc: str,
    frags: Sequence[str] | None,
    r: random.Random,
    options: Options,
    modes: Sequence[str] = MODES,
    extra: Sequence[tuple[str, list[str]]] = (),
) -> None:
    """Raise ``Failure`` on the first violated property (chunkings drawn from ``r``)."""
    ways = chunkings(r, doc, frags) + list(extra)
    for mode in modes:
        events, ref = check_run(doc, [doc], mode, "one chunk", options)
        check_parse(doc, mode, events)
        for label, chunks in ways:
            check_run(doc, chunks, mode, label, options, ref)


@dataclass(frozen=True)
class Finding:
    """A failure on the document of ``doc_seed``, with what it takes to reproduce it."""

    doc_seed: int
    document: str
    fragments: tuple[str, ...]
    failure: Failure
    options: Options

    def describe(self) -> str:
        f = self.failure
        rerun = f"python fuzz/fragments.py --doc-seed {self.doc_seed}"
        lines = [
            f"doc_seed={self.doc_seed} (re-run: {rerun}{self.options.cli_flags()})",
            f"kind: {f.kind}",
            f"document ({len(self.document)} chars): {self.document!r}",
        ]
        if f.chunks is not None and len(f.chunks) <= 120:
            lines.append(f"chunking: {f.chunks!r}")
        elif f.chunks is not None:
            each = "one char each" if all(len(c) == 1 for c in f.chunks) else "mixed"
            lines.append(f"chunking: {len(f.chunks)} chunks ({each})")
        lines.append(f"detail:\n{f.detail}")
        return "\n".join(lines)


def doc_seeds(seed: int | str) -> Iterator[int]:
    """The endless, deterministic sequence of document seeds of a run seed."""
    master = random.Random(seed)
    while True:
        yield master.randrange(2**63)


def check_seed(doc_seed: int, options: Options) -> tuple[str, Finding | None]:
    """Generate the document of ``doc_seed`` and check it: ``(document, finding or None)``."""
    r = random.Random(doc_seed)
    frags = gen_fragments(r)
    doc = "".join(frags)
    try:
        check_doc(doc, frags, r, options)
    except Failure as f:
        return doc, Finding(doc_seed, doc, tuple(frags), f, options)
    return doc, None


def check_documents(
    seed: int | str, count: int, *, strict: bool = True, merge_partial: bool = True
) -> list[Finding]:
    """Check the first ``count`` documents of ``seed`` (no time limit, no shrinking) and return
    the failures found, at most one per document. Fuzzer-internal errors propagate."""
    options = Options(strict=strict, merge_partial=merge_partial)
    findings = []
    for doc_seed in itertools.islice(doc_seeds(seed), count):
        finding = check_seed(doc_seed, options)[1]
        if finding is not None:
            findings.append(finding)
    return findings


# ============================================================================ minimizing


def still_fails(doc: str, kind: Kind, options: Options) -> Failure | None:
    """Does ``doc`` fail in the same way (same kind) under per-char or one of a few seeded
    random chunkings? A different failure counts as no: the minimizer must not wander off."""
    for seed in range(4):
        try:
            check_doc(doc, None, random.Random(seed), options, modes=(kind[1],))
        except Failure as f:
            return f if same_kind(f.kind, kind) else None
        except Exception:  # noqa: BLE001 - a fuzzer error while shrinking: not this failure
            return None
    return None


def shrink_fragments(
    frags: Sequence[str], fail: Failure, deadline: float, options: Options
) -> tuple[str, Failure]:
    """ddmin over fragments: drop slices of fragments while the failure stays."""
    cur = list(frags)
    best = fail
    n = 2
    while len(cur) >= 2 and time.monotonic() < deadline:
        size = max(1, len(cur) // n)
        reduced = False
        for i in range(0, len(cur), size):
            cand = cur[:i] + cur[i + size :]
            f = still_fails("".join(cand), fail.kind, options)
            if f:
                cur, best, reduced = cand, f, True
                n = max(n - 1, 2)
                break
            if time.monotonic() >= deadline:
                break
        if not reduced:
            if size == 1:
                break
            n = min(len(cur), n * 2)
    return "".join(cur), best


def shrink_characters(
    doc: str, fail: Failure, deadline: float, options: Options
) -> tuple[str, Failure]:
    """Delete runs of 16, 8, 4, 2, then 1 characters while the failure stays."""
    best = fail
    for run in (16, 8, 4, 2, 1):
        i = 0
        while i < len(doc) and time.monotonic() < deadline:
            cand = doc[:i] + doc[i + run :]
            f = still_fails(cand, fail.kind, options)
            if f:
                doc, best = cand, f
            else:
                i += 1
    return doc, best


def shrink_chunking(doc: str, fail: Failure, deadline: float, options: Options) -> Failure:
    """Prefer a single cut; else merge adjacent chunks while the failure stays."""
    kind = fail.kind
    if fail.chunks is None or len(fail.chunks) <= 2 or "".join(fail.chunks) != doc:
        return fail
    try:
        ref = check_run(doc, [doc], kind[1], "one chunk", options)[1]
    except Failure:
        return fail

    def chunk_fails(chunks: list[str]) -> Failure | None:
        try:
            check_run(doc, chunks, kind[1], "minimized chunking", options, ref)
        except Failure as f:
            return f if same_kind(f.kind, kind) else None
        except Exception:  # noqa: BLE001 - a fuzzer error while shrinking: not this failure
            return None
        return None

    for c in range(1, len(doc)):
        f = chunk_fails([doc[:c], doc[c:]])
        if f:
            return f
    best = fail
    ch = [c for c in fail.chunks if c]
    i = 0
    while i < len(ch) - 1 and time.monotonic() < deadline:
        cand = ch[:i] + [ch[i] + ch[i + 1]] + ch[i + 2 :]
        f = chunk_fails(cand)
        if f:
            ch, best = cand, f
        else:
            i += 1
    return best


def minimize(
    frags: Sequence[str], fail: Failure, budget: float, options: Options
) -> tuple[str, Failure]:
    """A smaller document failing the same way, and its failure (with a smaller chunking).
    Fragments and characters get ``budget`` seconds, the chunking up to 20 more."""
    deadline = time.monotonic() + budget
    doc, best = shrink_fragments(frags, fail, deadline, options)
    doc, best = shrink_characters(doc, best, deadline, options)
    return doc, shrink_chunking(doc, best, deadline + 20, options)


# ============================================================================ running


@dataclass(frozen=True)
class RunResult:
    """One fuzzing run: ``status`` 0 ok, 1 failure, 2 fuzzer-internal error; ``seconds``
    spent fuzzing (shrinking excluded); ``report`` says what went wrong."""

    status: int
    documents: int
    chars: int
    seconds: float
    report: str = ""


class StopFlag(Protocol):
    """Shared between jobs: the first to find a failure stops the others."""

    def is_set(self) -> bool: ...

    def set(self) -> None: ...


def minimized_report(finding: Finding, budget: float) -> str:
    doc, f = minimize(finding.fragments, finding.failure, budget, finding.options)
    mode = f.kind[1]
    return "\n".join(
        [
            "\n=== minimized repro ===",
            f"kind: {f.kind}  options={MODE_OPTIONS[mode]!r}",
            f"document = {doc!r}",
            f"chunks   = {f.chunks!r}",
            f"detail:\n{f.detail}",
            "\nrepro snippet:",
            "  import callsieve",
            f"  doc = {doc!r}",
            f"  chunks = {f.chunks!r}",
            f"  s = callsieve.Sieve(**{MODE_OPTIONS[mode]!r})",
            "  events = [e for c in chunks for e in s.feed(c)] + s.close()",
        ]
    )


def failure_report(finding: Finding, n_docs: int, elapsed: float, budget: float | None) -> str:
    head = f"\nFAILURE after {n_docs} documents ({elapsed:.1f}s); {finding.describe()}"
    if budget is None:
        return head
    return head + "\n" + minimized_report(finding, budget)


def fuzz(
    seed: int | str,
    seconds: float,
    options: Options,
    budget: float | None,
    stop: StopFlag | None = None,
    docs: int | None = None,
) -> RunResult:
    """Check documents of ``seed`` for ``seconds`` (or until ``stop``, or the first ``docs``
    of them); on the first failure set ``stop`` and report it, shrunk within ``budget``
    seconds unless that is None."""
    start = time.monotonic()
    n_docs = n_chars = 0
    for doc_seed in itertools.islice(doc_seeds(seed), docs):
        if time.monotonic() - start >= seconds or (stop is not None and stop.is_set()):
            break
        try:
            doc, finding = check_seed(doc_seed, options)
        except Exception:  # noqa: BLE001 - a fuzzer bug: reported with status 2
            return RunResult(
                2,
                n_docs,
                n_chars,
                time.monotonic() - start,
                f"fuzzer internal error on doc_seed={doc_seed}:\n{traceback.format_exc()}",
            )
        if finding is not None:
            if stop is not None:
                stop.set()
            spent = time.monotonic() - start
            return RunResult(
                1, n_docs, n_chars, spent, failure_report(finding, n_docs, spent, budget)
            )
        n_docs += 1
        n_chars += len(doc)
    return RunResult(0, n_docs, n_chars, time.monotonic() - start)


def fuzz_doc_seed(doc_seed: int, options: Options, budget: float | None) -> RunResult:
    """Check the one document of ``doc_seed``."""
    start = time.monotonic()
    try:
        doc, finding = check_seed(doc_seed, options)
    except Exception:  # noqa: BLE001 - a fuzzer bug: reported with status 2
        return RunResult(
            2,
            0,
            0,
            time.monotonic() - start,
            f"fuzzer internal error on doc_seed={doc_seed}:\n{traceback.format_exc()}",
        )
    spent = time.monotonic() - start
    if finding is not None:
        return RunResult(1, 0, 0, spent, failure_report(finding, 0, spent, budget))
    return RunResult(0, 1, len(doc), spent)


def _fuzz_job(
    seed: str,
    seconds: float,
    options: Options,
    budget: float | None,
    stop: StopFlag,
    results: Queue[RunResult],
    docs: int | None,
) -> None:
    results.put(fuzz(seed, seconds, options, budget, stop, docs))


def fuzz_parallel(
    seed: int,
    seconds: float,
    jobs: int,
    options: Options,
    budget: float | None,
    docs: int | None = None,
) -> list[RunResult]:
    """``jobs`` forked processes, job ``i`` on run seed ``f"{seed}/{i}"`` (each checks at most
    ``docs`` documents)."""
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    results: Queue[RunResult] = ctx.Queue()
    procs = [
        ctx.Process(
            target=_fuzz_job, args=(f"{seed}/{i}", seconds, options, budget, stop, results, docs)
        )
        for i in range(jobs)
    ]
    for p in procs:
        p.start()
    out: list[RunResult] = []
    while len(out) < jobs:
        all_exited = not any(p.is_alive() for p in procs)
        try:
            out.append(results.get(timeout=0.5))
        except queue.Empty:
            if all_exited:  # a job died without a result
                codes = [p.exitcode for p in procs]
                out.append(RunResult(2, 0, 0, 0.0, f"a fuzzing job died (exit codes {codes})"))
                break
    for p in procs:
        p.join()
    return out


def summarize(results: Sequence[RunResult], wall: float) -> int:
    """Print the totals and the most important report; return the exit status."""
    elapsed = max(x.seconds for x in results)
    n_docs = sum(x.documents for x in results)
    n_chars = sum(x.chars for x in results)
    rate = n_docs / elapsed if elapsed else 0.0
    print(
        f"documents tested: {n_docs} in {elapsed:.1f}s ({rate:.0f} docs/s, "
        f"mean {n_chars / max(n_docs, 1):.0f} chars; wall {wall:.1f}s)"
    )
    bad = [x for x in results if x.status]
    if bad:
        worst = min(bad, key=lambda x: x.status)  # a real failure (1) before an error (2)
        print(worst.report)
        return worst.status
    print("OK: no failure")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Differential fragment fuzzer for callsieve.Sieve (see the module docstring).",
        epilog="Exit status: 0 no failure; 1 failure (shrunk repro printed); "
        "2 fuzzer-internal error.",
    )
    ap.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="fuzzing time (default 60, or no limit with --docs)",
    )
    ap.add_argument(
        "--docs",
        type=int,
        default=None,
        help="stop after this many documents (per job); with --seed S and one "
        "job, the documents check_documents(S, N) checks",
    )
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: random)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument(
        "--doc-seed",
        type=int,
        default=None,
        help="check only the document generated from this doc_seed",
    )
    strictness = ap.add_mutually_exclusive_group()
    strictness.add_argument(
        "--strict",
        dest="strict",
        action="store_true",
        default=True,
        help="also compare block.dialect, block.repairs, block.diagnostics (the default)",
    )
    strictness.add_argument(
        "--loose",
        dest="strict",
        action="store_false",
        help="do not compare block.dialect, block.repairs, block.diagnostics",
    )
    ap.add_argument(
        "--no-merge",
        action="store_true",
        help="do not merge a partial ToolCalls event with its continuation",
    )
    ap.add_argument("--no-minimize", action="store_true", help="report failures unshrunk")
    ap.add_argument(
        "--min-seconds", type=float, default=60.0, help="shrinking budget in seconds (default 60)"
    )
    ap.add_argument(
        "--hot-budget",
        type=int,
        default=None,
        help="run every Sieve with this many chunks between the hot paths' "
        "folds (callsieve._scan.cursor.HOT_BUDGET; a small one, e.g. 2, folds "
        "inside almost every document)",
    )
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    options = Options(strict=args.strict, merge_partial=not args.no_merge)
    budget = None if args.no_minimize else args.min_seconds
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    seconds = (
        args.seconds if args.seconds is not None else (60.0 if args.docs is None else float("inf"))
    )
    if args.hot_budget is not None:  # read by each new Sieve; forked jobs inherit it
        callsieve_cursor.HOT_BUDGET = args.hot_budget
    print(
        f"fuzz/fragments.py: seed={seed} seconds={seconds} docs={args.docs} jobs={args.jobs} "
        f"strict={options.strict} merge_partial={options.merge_partial} "
        f"hot_budget={callsieve_cursor.HOT_BUDGET} "
        f"callsieve={Path(callsieve.__file__).parent}",
        flush=True,
    )
    start = time.monotonic()
    if args.doc_seed is not None:
        results = [fuzz_doc_seed(args.doc_seed, options, budget)]
    elif args.jobs <= 1:
        results = [fuzz(seed, seconds, options, budget, docs=args.docs)]
    else:
        results = fuzz_parallel(seed, seconds, args.jobs, options, budget, args.docs)
    return summarize(results, time.monotonic() - start)


if __name__ == "__main__":
    sys.exit(main())

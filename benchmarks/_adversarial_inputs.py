"""Strategy: the hostile inputs of ``bench_adversarial.py``, each a pure function of one size
parameter, so a fresh child process can rebuild exactly the document the parent asked for.

Every case names what its parameter counts (``k`` units, invokes, blocks, items, characters or
repeats of a fixed unit) and gives it at two sizes 8x apart; the document's size in the report
is always ``len(doc)`` in characters. Random content uses fixed seeds. The chat and prose
generators are ``_workloads``' (imported lazily: it imports ``callsieve`` itself, which the
child has already imported from the tree under test). Nothing here imports ``callsieve``.

It also holds the run's checker, shared by every child: ``run_stream`` feeds a document in
fixed-size chunks and checks conservation event by event (the ``Text`` and block ``raw``
pieces, in order, are the input; each block's ``span`` is where its ``raw`` is), keeping only
an offset and SHA-1s of the block spans and the calls; ``check_parse`` checks a ``parse``
result the same way and gives the same digests, so the parent can compare the two.
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from types import ModuleType
from typing import Any

MB = 1_000_000
STREAM_MODES = ("7", "4096", "whole")  # chunk sizes, or parse() on the whole text

LOOSE_CDATA_UNIT = '<parameter name="p"><![CDATA[abc</parameter>'
INVOKE = '<invoke name="f"><parameter name="p">v</parameter></invoke>\n'
OPEN_CDATA_BLOCK = '<tool_calls><invoke name="f"><parameter name="p"><![CDATA[xx'
DSML_BLOCK = (
    '<|DSML|tool_calls><|DSML|invoke name="f"><|DSML|parameter name="p">'
    "<![CDATA[v]]></|DSML|parameter></|DSML|invoke></|DSML|tool_calls>\n"
)
DSML_FAILED = DSML_BLOCK.replace('<|DSML|parameter name="p">', '<|DSML|param name="p">')
MENTION = "<tool_calls> x "
OPEN_TAG = "<tool_calls>"
_NO_7 = "7-char chunks on 50 MB would take minutes (7.1 M feed calls)"
UNIT_50 = 781_250  # the 50 MB rows repeat one unit of this many characters (64 x = 50 MB)


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    make: Callable[[int], str]
    sizes: tuple[int, int]  # the parameter at the smaller and the larger size, before scaling
    param: str  # what the parameter counts
    modes: tuple[str, ...] = STREAM_MODES
    scaled: bool = True  # False: --quick/--sizes leave the parameter alone
    gate: str = ""  # run a mode only if this case's larger size was fast in that mode
    not_run: tuple[str, ...] = ()  # modes listed in the table as not run (see ``note``)
    note: str = ""
    dialects: tuple[str, ...] | str = ()  # () the default dialects; else ``dialects=``

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``parse`` and ``Sieve`` for this case."""
        return {"dialects": self.dialects} if self.dialects else {}


def _workloads() -> ModuleType:
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import _workloads

    return _workloads


def repeat_to(unit: str, n: int) -> str:
    """``unit`` repeated and cut to exactly ``n`` characters."""
    return (unit * (n // len(unit) + 1))[:n]


def loose_cdata(k: int) -> str:
    return '<tool_calls><invoke name="a">' + LOOSE_CDATA_UNIT * k + "</invoke>"


def nested_items(n: int) -> str:
    body = "<item>" * n + "x" + "</item>" * n
    return (
        '<tool_calls><invoke name="f"><parameter name="p">'
        + body
        + "</parameter></invoke></tool_calls>"
    )


def fences(n: int) -> str:
    """Backtick and tilde runs, newlines and fence lines, with a few words between."""
    rng = random.Random(12)
    out: list[str] = []
    size = 0
    while size < n:
        r = rng.random()
        if r < 0.3:
            s = "`" * rng.randint(1, 12)
        elif r < 0.5:
            s = "~" * rng.randint(1, 12)
        elif r < 0.65:
            s = "\n"
        elif r < 0.75:
            s = "`" * rng.randint(3, 6) + rng.choice(("x", "python", "", " sh", "~")) + "\n"
        elif r < 0.85:
            s = "~" * rng.randint(3, 6) + rng.choice(("", "x", "`")) + "\n"
        elif r < 0.95:
            s = rng.choice((" ", " a ", "code", " `x` ", "  "))
        else:
            s = rng.choice(("`` ` ``", "~`~`", "\n```\n", "\n~~~\n"))
        out.append(s)
        size += len(s)
    return "".join(out)[:n]


_ODD_PIECES = (
    "\ud800",
    "\udfff",
    "\udc00",
    "\ud83d",
    "\x00",
    "\x00\x00",
    "<\x00tool_calls>",
    "<tool_calls\x00>",
    "<|DSML|tool_calls>\x00",
    '<\ud800invoke name="f">',
    "</\x00tool_calls>",
    '<tool_calls><invoke name="f\x00"></invoke></tool_calls>',
    (
        '<tool_calls><invoke name="f"><parameter name="p">\x00\ud800</parameter></invoke>'
        "</tool_calls>"
    ),
    (
        '<|DSML|tool_calls><|DSML|invoke name="g"><|DSML|parameter name="q">'
        "<![CDATA[\udfff\x00]]></|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"
    ),
    '<tool_calls><invoke name="\ud800">',
    "<![CDATA[\x00",
    "]]>\x00",
    "`\x00`",
)
_WORDS = ("the ", "a ", "tool ", "call ", "value ", "if a<b ", "x ", ". ", "\n", "result ")


def odd_chars(n: int) -> str:
    """Prose with lone surrogates, NULs and tags holding them (some are complete blocks)."""
    rng = random.Random(13)
    out: list[str] = []
    size = 0
    while size < n:
        s = rng.choice(_ODD_PIECES) if rng.random() < 0.25 else rng.choice(_WORDS)
        out.append(s)
        size += len(s)
    return "".join(out)[:n]


def chat(n: int) -> str:
    """The benchmarks' chat (prose, DSML blocks with CDATA code), 200 calls per MB."""
    bs = _workloads()
    return str(bs.chat(random.Random(bs.DOC_SEED + 2), n, n * 200 // MB)[0])


def prose_units(count: int) -> str:
    bs = _workloads()
    return str(bs.prose(random.Random(bs.DOC_SEED), UNIT_50)) * count


def chat_units(count: int) -> str:
    return chat(UNIT_50) * count


#: The opt-in families' entries repeated, each the worst of its family's we tried (an entry
#: with its body left open: every entry in prose begins a block that fails, then the text after
#: its opener is read again, SPEC §7), then a character that may end a block of the family (so
#: that ``close()`` cannot fail the captures at once for want of any: ``Lessons.no_end_after``,
#: which streamed rows would measure instead). A row of these is ``family-…``, run with its
#: dialects.
KIMI_ARGS = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
)
HY_CALL = "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource>"
K3_CALL = '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|>'
FAMILY_UNITS: tuple[tuple[str, str, str, tuple[str, ...] | str, str], ...] = (
    ("json-name-keys", '{"name": "', "}", ("json",), '`{"name": "` repeated, json'),
    ("all-name-keys", '{"name": "', "}", "all", '`{"name": "` repeated, dialects="all"'),
    ("llama3-name-keys", '{"name": "', "}", ("llama3_json",), '`{"name": "` repeated, llama3_json'),
    ("pythonic-calls", "[a(", "]", ("pythonic",), "`[a(` repeated, pythonic"),
    (
        "pythonic-nested",
        "[a(" * 30 + ")" * 30,
        "]",
        ("pythonic",),
        "`[a(` 30 deep, closed, repeated, pythonic",
    ),
    ("all-calls", "[a(", "]", "all", '`[a(` repeated, dialects="all"'),
    ("mistral-args", '[TOOL_CALLS]f{"a": "', "}", ("mistral",), '`[TOOL_CALLS]f{"a": "` repeated'),
    (
        "hermes-bodies",
        '<tool_call>{"a": "',
        "</tool_call>",
        ("hermes",),
        '`<tool_call>{"a": "` repeated',
    ),
    (
        "kimi-args",
        KIMI_ARGS + '{"a": "',
        "<|tool_calls_section_end|>",
        ("kimi_k2",),
        'kimi_k2 section, call, `{"a": "` repeated',
    ),
    (
        "text_kv-args",
        'function.name: f\nfunction.arguments: {"a": "',
        "}",
        ("text_kv",),
        '`function.name: f` and `function.arguments: {"a": "` lines repeated',
    ),
    ("text_kv-names", "function.name: f\n", "}", ("text_kv",), "`function.name: f` lines repeated"),
    (
        "functionary_v32-args",
        '>>>f\n{"a": "',
        "}",
        ("functionary_v32",),
        '`>>>f\\n{"a": "` repeated, functionary_v32',
    ),
    (
        "functionary-args",
        '<function=f>{"a": "',
        "</function>",
        ("functionary",),
        '`<function=f>{"a": "` repeated, functionary',
    ),
    (
        "hunyuan-items",
        '<tool_calls>[{"a": "',
        "</tool_calls>",
        ("hunyuan",),
        '`<tool_calls>[{"a": "` repeated, hunyuan',
    ),
    (
        "nemotron-items",
        '<TOOLCALL>[{"a": "',
        "</TOOLCALL>",
        ("nemotron",),
        '`<TOOLCALL>[{"a": "` repeated',
    ),
    (
        "longcat-bodies",
        '<longcat_tool_call>{"a": "',
        "</longcat_tool_call>",
        ("longcat",),
        '`<longcat_tool_call>{"a": "` repeated',
    ),
    (
        "internlm2-bodies",
        '<|action_start|><|plugin|>{"a": "',
        "<|action_end|>",
        ("internlm2",),
        '`<|action_start|><|plugin|>{"a": "` repeated',
    ),
    (
        "phi4_mini-items",
        'functools[{"a": "',
        "]",
        ("phi4_mini",),
        '`functools[{"a": "` repeated, phi4_mini',
    ),
    (
        "firefunction-items",
        'functools[{"a": "',
        "]",
        ("firefunction",),
        '`functools[{"a": "` repeated, firefunction',
    ),
    ("xlam-name-keys", '[{"name": "', "]", ("xlam",), '`[{"name": "` repeated, xlam'),
    (
        "llamacpp_generic-calls",
        '{"tool_calls": [{"a": "',
        "]}",
        ("llamacpp_generic",),
        '`{"tool_calls": [{"a": "` repeated',
    ),
    (
        "kimi_k3-json",
        K3_CALL + '<|open|>json type="object"<|sep|>{"a": "',
        "<|close|>tools<|sep|>",
        ("kimi_k3",),
        'kimi_k3 tools, call, json section, `{"a": "` repeated',
    ),
    (
        "kimi_k3-args",
        K3_CALL + '<|open|>argument key="a" type="number"<|sep|>1',
        "<|close|>tools<|sep|>",
        ("kimi_k3",),
        "kimi_k3 tools, call, an argument left open, repeated",
    ),
    (
        "hy_v3-values",
        HY_CALL + "<arg_key:opensource>a</arg_key:opensource><arg_value:opensource>",
        "</tool_calls:opensource>",
        ("hy_v3",),
        "hy_v3 block, call, a value left open, repeated",
    ),
    (
        "gemma4-strings",
        '<|tool_call>call:f{a:<|"|>',
        "<tool_call|>",
        ("gemma4",),
        '`<|tool_call>call:f{a:<|"|>` repeated, gemma4',
    ),
    (
        "functiongemma-strings",
        "<start_function_call>call:f{a:<escape>",
        "<end_function_call>",
        ("functiongemma",),
        "`<start_function_call>call:f{a:<escape>` repeated, functiongemma",
    ),
    (
        "gemma4-nested",
        '<|tool_call>call:f{a:{b:[{c:<|"|>x<|"|>,d:[1,',
        "<tool_call|>",
        ("gemma4",),
        '`<|tool_call>call:f{a:{b:[{c:<|"|>x<|"|>,d:[1,` repeated (value nodes left open), gemma4',
    ),
    (
        "functiongemma-nested",
        "<start_function_call>call:f{a:{b:[<escape>x<escape>,{c:[1,",
        "<end_function_call>",
        ("functiongemma",),
        "`<start_function_call>call:f{a:{b:[<escape>x<escape>,{c:[1,` repeated, functiongemma",
    ),
    (
        "functiongemma-json",
        '<start_function_call>call:f{a:{"b": "',
        "<end_function_call>",
        ("functiongemma",),
        '`<start_function_call>call:f{a:{"b": "` repeated, functiongemma',
    ),
    (
        "minimax_m3-elements",
        ']<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<a>',
        "]<]minimax[>[</tool_call>",
        ("minimax_m3",),
        "minimax_m3 block, invoke, `<a>` element repeated",
    ),
    (
        "lfm2-calls",
        "<|tool_call_start|>[a(",
        "<|tool_call_end|>",
        ("lfm2",),
        "`<|tool_call_start|>[a(` repeated, lfm2",
    ),
    (
        "lfm2-json",
        '<|tool_call_start|>[{"a": "',
        "<|tool_call_end|>",
        ("lfm2",),
        '`<|tool_call_start|>[{"a": "` repeated, lfm2',
    ),
    (
        "command_r7b-json",
        '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": "',
        "<|END_ACTION|>",
        ("command_r7b",),
        '`<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": "` repeated, command_r7b',
    ),
    (
        "step3-values",
        (
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
            '<steptml:invoke name="f"><steptml:parameter name="a">'
        ),
        "<｜tool_calls_end｜>",
        ("step3",),
        "step3 block, invoke, a value left open, repeated",
    ),
    (
        "gigachat3-args",
        '<|function_call|>{"a": "',
        "}",
        ("gigachat3",),
        '`<|function_call|>{"a": "` repeated, gigachat3',
    ),
    (
        "apertus-args",
        '<|tools_prefix|>[{"f": {"a": "',
        "}",
        ("apertus",),
        '`<|tools_prefix|>[{"f": {"a": "` repeated, apertus',
    ),
    (
        "olmo3-calls",
        "<function_calls>a(",
        "</function_calls>",
        ("olmo3",),
        "`<function_calls>a(` repeated, olmo3",
    ),
    (
        "olmo3-nested",
        "<function_calls>a(" + "[" * 30 + "]" * 30,
        "</function_calls>",
        ("olmo3",),
        "`<function_calls>a(` then 30 `[` closed, repeated, olmo3",
    ),
    (
        "llama3_builtin-calls",
        "<|python_tag|>a.call(",
        ")",
        ("llama3_builtin",),
        "`<|python_tag|>a.call(` repeated, llama3_builtin",
    ),
    (
        "llama3_builtin-code",
        "<|python_tag|>a.cal",
        "<|eom_id|>",
        ("llama3_builtin",),
        "`<|python_tag|>a.cal` repeated (a built-in call's head, dead: raw code), llama3_builtin",
    ),
    (
        "ernie45-bodies",
        '<tool_call>{"a": "',
        "</tool_call>",
        ("ernie45",),
        '`<tool_call>{"a": "` repeated, ernie45',
    ),
    (
        "solar_open2-args",
        '<|tool_calls|><|tool_call:begin|>1<|tool_call:name|>f<|tool_call:args|>{"a": "',
        "<|calls|>",
        ("solar_open2",),
        'a Solar Open call up to `{"a": "`, repeated',
    ),
    (
        "minicpm5-params",
        '<function name="f"><param name="a">x',
        "</function>",
        ("minicpm5",),
        '`<function name="f"><param name="a">x` repeated, minicpm5',
    ),
    (
        "minicpm5-cdata",
        '<function name="f"><param name="a"><![CDATA[x',
        "]]>",
        ("minicpm5",),
        '`<function name="f"><param name="a"><![CDATA[x` repeated, minicpm5',
    ),
    (
        "inkling-args",
        '<|message_model|>f<|content_invoke_tool_json|>{"name": "f", "args": {"a": "',
        "<|end_message|>",
        ("inkling",),
        'an Inkling call up to `"args": {"a": "`, repeated',
    ),
)


CASES: tuple[Case, ...] = (
    Case(
        "loose-cdata",
        "loose-CDATA repair, wrapper never closed",
        loose_cdata,
        (8, 64),
        "k",
        scaled=False,
        note="exponential in k in the engine this was written against",
    ),
    Case(
        "loose-cdata-1mb",
        "loose-CDATA repair at ~1 MB",
        loose_cdata,
        (2_840, 22_720),
        "k",
        gate="loose-cdata",
        note="run only where loose-cdata at k=64 took under 1 s",
    ),
    Case(
        "bare-invokes", "bare invokes, no wrapper", lambda n: INVOKE * n, (2_048, 16_384), "invokes"
    ),
    Case(
        "open-wrapper",
        "unclosed <tool_calls> around invokes",
        lambda n: "<tool_calls>" + INVOKE * n,
        (2_048, 16_384),
        "invokes",
    ),
    Case(
        "open-cdata-blocks",
        "blocks each opening a CDATA, never closed",
        lambda n: OPEN_CDATA_BLOCK * n,
        (2_048, 16_384),
        "blocks",
    ),
    Case(
        "dsml-blocks",
        "complete DSML blocks back to back",
        lambda n: DSML_BLOCK * n,
        (1_000, 8_000),
        "blocks",
    ),
    Case(
        "dsml-failed",
        "failed DSML blocks (`<|DSML|param`)",
        lambda n: DSML_FAILED * n,
        (1_000, 8_000),
        "blocks",
    ),
    Case(
        "mentions",
        "prose mentions `<tool_calls> x `",
        lambda n: MENTION * n,
        (12_500, 100_000),
        "mentions",
    ),
    Case("lt-run", "a run of `<`", lambda n: "<" * n, (125_000, 1_000_000), "chars"),
    Case(
        "open-tags",
        "`<tool_calls>` repeated",
        lambda n: repeat_to(OPEN_TAG, n),
        (125_000, 1_000_000),
        "chars",
    ),
    Case(
        "nested-items",
        "nested `<item>` value, block closed",
        nested_items,
        (12_500, 100_000),
        "items",
    ),
    Case(
        "open-cdata-10mb",
        "one unclosed CDATA",
        lambda n: '<tool_calls><invoke name="f"><parameter name="p"><![CDATA[' + "x" * n,
        (1_250_000, 10_000_000),
        "chars",
    ),
    Case(
        "open-wrapper-10mb",
        "one unclosed wrapper and parameter",
        lambda n: '<tool_calls><invoke name="f"><parameter name="p">' + "x" * n,
        (1_250_000, 10_000_000),
        "chars",
    ),
    Case("fences", "backtick/tilde runs and fence lines", fences, (125_000, 1_000_000), "chars"),
    Case(
        "odd-chars",
        "lone surrogates and NULs in prose and tags",
        odd_chars,
        (125_000, 1_000_000),
        "chars",
    ),
    Case(
        "chat-1char",
        "chat (prose + DSML blocks), 1-char chunks",
        chat,
        (125_000, 1_000_000),
        "chars",
        modes=("1", "whole"),
    ),
    Case(
        "prose-50mb",
        "prose in one 50 MB chunk",
        prose_units,
        (8, 64),
        "units of 781,250 chars",
        modes=("4096", "whole"),
        not_run=("7",),
        note=_NO_7,
    ),
    Case(
        "chat-50mb",
        "chat in one 50 MB chunk",
        chat_units,
        (8, 64),
        "units of 781,250 chars",
        modes=("4096", "whole"),
        not_run=("7",),
        note=_NO_7,
    ),
)
CASES += tuple(
    Case(
        name,
        f"{title}, then `{end}`",
        lambda n, u=unit, e=end: repeat_to(u, n) + e,
        (125_000, 1_000_000),
        "chars",
        dialects=d,
    )
    for name, unit, end, d, title in FAMILY_UNITS
)
CASES += (
    Case(
        "gemma4-deep",
        'gemma4: one call, an argument of `[<|"|>a<|"|>,` nested deeper and deeper',
        lambda n: "<|tool_call>call:f{a:" + repeat_to('[<|"|>a<|"|>,', n) + "<tool_call|>",
        (125_000, 1_000_000),
        "chars",
        dialects=("gemma4",),
    ),
)
BY_NAME = {c.name: c for c in CASES}


def scaled_sizes(case: Case, scale: float) -> tuple[int, int]:
    """The case's two parameters under ``--sizes``/``--quick``; the larger stays 8x the
    smaller where it can (a parameter never drops below 1)."""
    if not case.scaled or scale == 1.0:
        return case.sizes
    small = max(1, round(case.sizes[0] * scale))
    return small, max(small + 1, round(case.sizes[1] * scale))


# ---------------------------------------------------------------------- running and checking
def _b(x: object) -> bytes:
    return repr(x).encode("utf-8", "surrogatepass")


def run_stream(cs: Any, doc: str, k: int, **options: Any) -> dict[str, Any]:
    """Stream ``doc`` in ``k``-character chunks, checking conservation event by event."""
    text_cls, calls_cls = cs.Text, cs.ToolCalls
    s = cs.Sieve(**options)
    feed = s.feed
    pos, bad, other, n_calls, n_blocks = 0, -1, 0, 0, 0
    spans, calls = hashlib.sha1(), hashlib.sha1()
    for i in chain(range(0, len(doc), k), (-1,)):
        for e in feed(doc[i : i + k]) if i >= 0 else s.close():
            cls = e.__class__
            if cls is text_cls:
                t = e.text
                if bad < 0 and not doc.startswith(t, pos):
                    bad = pos
                pos += len(t)
            elif cls is calls_cls:
                b = e.block
                raw = b.raw
                if bad < 0 and (
                    tuple(b.span) != (pos, pos + len(raw)) or not doc.startswith(raw, pos)
                ):
                    bad = pos
                pos += len(raw)
                spans.update(_b(tuple(b.span)))
                n_blocks += 1
                for c in e.calls:
                    calls.update(_b((c.name, c.input)))
                    n_calls += 1
            else:
                other += 1
    problem = None
    if bad >= 0 or pos != len(doc):
        at = bad if bad >= 0 else pos
        problem = (
            f"conservation: events rebuild the input only up to offset {at:,} of "
            f"{len(doc):,} ({other} other events)"
        )
    return {
        "problem": problem,
        "spans": spans.hexdigest(),
        "calls": calls.hexdigest(),
        "n_calls": n_calls,
        "n_blocks": n_blocks,
    }


def check_parse(doc: str, r: Any) -> dict[str, Any]:
    """Conservation for ``parse``'s result, and the same digests as ``run_stream``'s."""
    spans, calls = hashlib.sha1(), hashlib.sha1()
    pos = tpos = n_blocks = 0
    problem = None
    for b in sorted(r.blocks, key=lambda b: tuple(b.span)):
        s, e = b.span
        if doc[s:e] != b.raw:
            problem = problem or f"conservation: block raw is not input[{s:,}:{e:,}]"
        if b.status == "failed":
            continue
        piece = doc[pos:s]
        if s < pos or r.text[tpos : tpos + len(piece)] != piece:
            problem = problem or f"conservation: text differs before the block at {s:,}"
        tpos, pos = tpos + len(piece), e
        spans.update(_b((s, e)))
        n_blocks += 1
    if r.text[tpos:] != doc[pos:]:
        problem = problem or f"conservation: text differs after offset {pos:,}"
    for c in r.calls:
        calls.update(_b((c.name, c.input)))
    return {
        "problem": problem,
        "spans": spans.hexdigest(),
        "calls": calls.hexdigest(),
        "n_calls": len(r.calls),
        "n_blocks": n_blocks,
    }

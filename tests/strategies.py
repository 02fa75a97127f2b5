"""Hypothesis strategies for generated model replies, shared by the invariant properties
(``invariants/test_invariants.py``) and the renderers' properties (``spec/test_s10_*``).

Documents are concatenations of pieces: prose (unicode, stray angle brackets, HTML), look-alike
markup, fenced code and inline code holding tool blocks, valid blocks in every default dialect
(names, parameters and values generated), broken blocks, and DeepSeek native blocks.
``doc_and_chunks`` draws a document and a split of it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from helpers import chunk_at
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def soak_settings(examples: int) -> settings:
    """The properties' settings: ``examples`` examples, or ``CALLSIEVE_EXAMPLES`` for a
    longer soak; no deadline (a machine's load is not a failure)."""
    return settings(
        max_examples=int(os.environ.get("CALLSIEVE_EXAMPLES", str(examples))),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---------------------------------------------------------------------------- pieces
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)

PROSE_SNIPPETS = [
    "Hello, world. ",
    "héllo wörld ",
    "你好，世界。",
    "emoji 💥 ok ",
    "if a<b and c>d ",
    "<b>x</b> ",
    "1 < 2 ",
    "x <",
    "<",
    "＜",
    "〈",
    ">",
    "a<b",
    "use `code` here ",
    "``",
    "`",
    "\n",
    "\n\n",
    "   ",
    "&amp; &lt; ",
    "]]>",
    "<![CDATA[",
    "｜",
    "▁",
    "\x02",
    "~~",
    "I will ",
]
PROSE_CHARS = st.characters(blacklist_categories=("Cs",))
PROSE = st.one_of(
    st.sampled_from(PROSE_SNIPPETS),
    st.text(PROSE_CHARS, max_size=12),
    st.lists(st.sampled_from(PROSE_SNIPPETS), min_size=1, max_size=4).map("".join),
)

LOOKALIKES = st.sampled_from(
    [
        "<tool_calls_extra>",
        "</tool_calls_extra>",
        "<ToolCallsExtra>",
        "<tool-calls>",
        "</tool-calls>",
        '<invοke name="f">',
        "</invοke>",
        "<｜DSM",
        "<｜DSML｜",
        "<|DSML|",
        "<|DSML|tool_call>",
        "<tool_calls",
        "<tool_callsX>",
        "<|tool▁calls",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        '<parameter name="p">',
        "</parameter>",
        "</invoke>",
        "</tool_calls>",
        "I will use <tool_calls> now. ",
        "<invoke",
        "<DSML",
        "<<|DSML|",
        "<!CDATA[",
        "<!-- c -->",
    ]
)

# Values: (body, kind) where body is the text between the parameter tags.
PLAIN_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="<>&＜〈\r")
PLAIN = st.text(PLAIN_CHARS, max_size=10)
ENTITY_TEXT = st.lists(
    st.sampled_from(
        ["a", " ", "&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#65;", "&#x42;", "é", "字", "x y"]
    ),
    min_size=1,
    max_size=5,
).map("".join)
CDATA_INNER = st.one_of(
    st.text(PROSE_CHARS, max_size=12),
    st.sampled_from(
        [
            '<tool_calls><invoke name="x"></invoke></tool_calls>',
            "```\ncode\n```",
            "</parameter>",
            "<b>urgent</b>",
            "<a>1</a><b>2</b>",
            "a ＜b＞ 〈c〉",
            "<item>1</item><item>2</item>",
            "~~~",
            "`x`",
            '<|DSML|invoke name="y">',
        ]
    ),
).filter(lambda s: "]]>" not in s and not s.endswith("]]") and not s.endswith("]"))
CDATA = st.lists(CDATA_INNER, min_size=1, max_size=2).map(
    lambda parts: "".join(f"<![CDATA[{p}]]>" for p in parts)
)
JSON_SCALARS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(PLAIN_CHARS, max_size=6),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
    max_leaves=6,
)
JSON_LITERAL = JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False))


def hostile_values(
    hostile: list[str], *, piece: int, pieces: int, integers: int, leaves: int
) -> tuple[st.SearchStrategy[str], st.SearchStrategy[Any]]:
    """Strings made of ``hostile`` pieces and short text, and JSON values built of them
    (what the prompt writers must escape): ``(strings, values)``."""
    strings = st.lists(
        st.one_of(st.sampled_from(hostile), st.text(max_size=piece)), max_size=pieces
    ).map("".join)
    scalars = st.one_of(
        strings,
        st.integers(-integers, integers),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False, allow_infinity=False),
    )
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(strings, inner, max_size=3)
        ),
        max_leaves=leaves,
    )
    return strings, values


ITEMS = st.lists(
    st.one_of(PLAIN, NAMES.map(lambda n: f"<{n}>1</{n}>")), min_size=1, max_size=3
).map(lambda xs: "".join(f"<item>{x}</item>" for x in xs))
OBJECT_XML = st.lists(st.tuples(NAMES, st.one_of(PLAIN, ITEMS)), min_size=1, max_size=3).map(
    lambda kvs: "".join(f"<{k}>{v}</{k}>" for k, v in kvs)
)
BODIES = st.one_of(
    PLAIN, ENTITY_TEXT, CDATA, JSON_LITERAL, ITEMS, OBJECT_XML, st.just(""), st.just("   ")
)

# (open prefix, close prefix, wrapper local name)
MARKUP_DIALECTS = {
    "dsml": ("<|DSML|", "</|DSML|", "tool_calls"),
    "dsml_v4": ("<｜DSML｜", "</｜DSML｜", "tool_calls"),
    "dsml_v32": ("<｜DSML｜", "</｜DSML｜", "function_calls"),
    "dsml_v41": ("<｜DSML｜ ", "</｜DSML｜ ", "calls"),
    "xml": ("<", "</", "tool_calls"),
}
WS = st.sampled_from(["", "\n", "  ", "\n  "])


@st.composite
def markup_block_spec(draw: Any, dialect: str | None = None) -> tuple[str, list[str]]:
    """A valid markup block and the names of its calls, in order."""
    dialect = dialect or draw(st.sampled_from(sorted(MARKUP_DIALECTS)))
    lt, lts, wrapper = MARKUP_DIALECTS[dialect]
    invokes, names = [], []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(NAMES)
        names.append(name)
        shape = draw(st.integers(0, 5))
        if shape == 0:
            invokes.append(f'{lt}invoke name="{name}"/>')
            continue
        if shape == 1:  # a JSON object as the body (SPEC §4)
            invokes.append(f'{lt}invoke name="{name}">{draw(WS)}{draw(ARGS)}{draw(WS)}{lts}invoke>')
            continue
        params = []
        for _ in range(draw(st.integers(0, 3))):
            pname = draw(NAMES)
            attr = ""
            if dialect in ("dsml_v4", "dsml_v32", "dsml_v41"):
                attr = draw(st.sampled_from(["", ' string="true"', ' string="false"']))
            body = draw(BODIES)
            params.append(f'{draw(WS)}{lt}parameter name="{pname}"{attr}>{body}{lts}parameter>')
        invokes.append(f'{lt}invoke name="{name}">{"".join(params)}{draw(WS)}{lts}invoke>')
    ws = draw(WS)
    return f"{lt}{wrapper}>{ws}{ws.join(invokes)}{draw(WS)}{lts}{wrapper}>", names


ARGS = st.dictionaries(NAMES, JSON_VALUES, max_size=3).map(
    lambda d: json.dumps(d, ensure_ascii=False)
)


@st.composite
def native_block_spec(draw: Any) -> tuple[str, list[str]]:
    """A valid DeepSeek native block (V3 and V3.1 call forms) and its call names."""
    calls, names = [], []
    for _ in range(draw(st.integers(1, 2))):
        name, args = draw(NAMES), draw(ARGS)
        names.append(name)
        if draw(st.booleans()):  # V3: `function`, the name on its own line, a json fence
            calls.append(
                f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```"
                "<｜tool▁call▁end｜>"
            )
        else:  # V3.1
            calls.append(f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>")
    sep = draw(st.sampled_from(["", "\n"]))
    return f"<｜tool▁calls▁begin｜>{sep.join(calls)}<｜tool▁calls▁end｜>", names


VALID_SPEC = st.one_of(markup_block_spec(), native_block_spec())
VALID_BLOCK = VALID_SPEC.map(lambda spec: spec[0])
native_block = native_block_spec().map(lambda spec: spec[0])


@st.composite
def broken_block(draw: Any) -> str:
    kind = draw(
        st.sampled_from(
            [
                "unclosed",
                "param",
                "noname",
                "no_opener",
                "bare",
                "bare_unfinished",
                "mention",
                "stray",
                "loose_cdata",
            ]
        )
    )
    name = draw(NAMES)
    if kind == "unclosed":
        block = draw(VALID_BLOCK)
        return block[: draw(st.integers(1, len(block) - 1))]
    if kind == "param":
        return f'<tool_calls><invoke name="{name}"><param name="p">v</param></invoke></tool_calls>'
    if kind == "noname":
        return '<tool_calls><invoke><parameter name="p">v</parameter></invoke></tool_calls>'
    if kind == "no_opener":
        lt, lts, wrapper = MARKUP_DIALECTS[draw(st.sampled_from(sorted(MARKUP_DIALECTS)))]
        return (
            f'{lt}invoke name="{name}">{lt}parameter name="p">{draw(PLAIN)}{lts}parameter>'
            f"{lts}invoke>{draw(WS)}{lts}{wrapper}>"
        )
    if kind == "bare":
        return f'<invoke name="{name}"><parameter name="p">v</parameter></invoke>'
    if kind == "bare_unfinished":
        return f'<invoke name="{name}">not a real call'
    if kind == "loose_cdata":  # a CDATA never closed (repaired only at the end of input)
        return (
            f'<tool_calls><invoke name="{name}"><parameter name="p"><![CDATA[{draw(PLAIN)}'
            "</parameter></invoke></tool_calls>"
        )
    if kind == "mention":
        return "I will use <tool_calls> now."
    return (
        f'<tool_calls><invoke name="{name}"></invoke> stray {draw(PLAIN)} '
        f'<invoke name="g"/></tool_calls>'
    )


def fenced(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(["```", "~~~", "````", "```xml", "~~~~ md"]), inner).map(
        lambda t: f"\n{t[0]}\n{t[1]}\n{t[0].split()[0].rstrip('xml')}\n"
    )


NESTED_FENCE = VALID_BLOCK.map(lambda b: f"\n````md\n```xml\n{b}\n```\n{b}\n````\n")
INLINE_CODE = st.one_of(
    st.sampled_from(
        [
            "`<tool_calls>`",
            "`<|DSML|tool_calls>`",
            "`</tool_calls>`",
            '`<invoke name="f">`',
            "``<tool_calls>``",
        ]
    ),
    VALID_BLOCK.map(lambda b: f"`{b}`"),
    VALID_BLOCK.map(lambda b: f"`` {b} ``"),
)

PIECES = st.one_of(
    PROSE,
    PROSE,
    LOOKALIKES,
    VALID_BLOCK,
    VALID_BLOCK,
    broken_block(),
    broken_block(),
    fenced(VALID_BLOCK),
    NESTED_FENCE,
    INLINE_CODE,
    native_block,
)
DOCS = st.lists(PIECES, min_size=1, max_size=6).map("".join)


@st.composite
def doc_and_chunks(draw: Any, docs: st.SearchStrategy[str] = DOCS) -> tuple[str, list[str]]:
    """A document and a split of it: arbitrary cut points, or LLM-token-sized chunks."""
    doc = draw(docs)
    n = len(doc)
    if n < 2:
        return doc, [doc] if doc else []
    if draw(st.booleans()):
        cuts = draw(st.lists(st.integers(1, n - 1), max_size=min(n - 1, 40)))
    else:
        sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=n))
        cuts, pos = [], 0
        for size in sizes:
            pos += size
            cuts.append(pos)
    chunks = chunk_at(doc, cuts)
    if draw(st.integers(0, 4)) == 0:  # empty chunks anywhere change nothing
        chunks = [p for c in chunks for p in (("", c) if draw(st.booleans()) else (c,))]
    return doc, chunks


# ---------------------------------------------------------------------------- reasoning (§15)
THINK_OPENS = st.sampled_from(
    [
        "<think>",
        "<Think>",
        "＜think＞",
        "<think >",
        "<\u200bthink>",
        "<think|>",
        "<thinking>",
        "<|DSML|think>",
        "<think",
    ]
)
THINK_CLOSES = st.sampled_from(
    [
        "</think>",
        "</Think>",
        "＜/think＞",
        "< /think>",
        "</think\n>",
        "</thinking>",
        "</think",
        "</",
    ]
)
#: A thought: prose, look-alikes, blocks (valid, broken, quoted), a nested tag.
THOUGHT = st.lists(
    st.one_of(
        PROSE,
        LOOKALIKES,
        VALID_BLOCK,
        broken_block(),
        INLINE_CODE,
        fenced(VALID_BLOCK),
        THINK_OPENS,
    ),
    max_size=4,
).map("".join)
REASONING_PIECES = st.one_of(
    PIECES,
    THINK_OPENS,
    THINK_CLOSES,
    st.sampled_from(["", " ", "\n\n", "\n"]),
    st.tuples(THINK_OPENS, THOUGHT, THINK_CLOSES).map("".join),
    st.tuples(THINK_OPENS, THOUGHT, THINK_CLOSES).map("".join),
)
#: Replies that mix reasoning, prose, fences and blocks, white space first as often as not.
REASONING_DOCS = st.tuples(
    st.sampled_from(["", "", " ", "\n"]), st.lists(REASONING_PIECES, min_size=1, max_size=6)
).map(lambda t: t[0] + "".join(t[1]))
#: ``reasoning`` and ``calls_in_reasoning`` together.
REASONING_OPTIONS = st.sampled_from(
    [
        {},
        {"calls_in_reasoning": "call"},
        {"reasoning": "open"},
        {"reasoning": "open", "calls_in_reasoning": "call"},
        {"reasoning": "off"},
    ]
)


# ---------------------------------------------------------------------------- opt-in families
# (SPEC §2 and §19: the families whose blocks have no closing tag, or lead with no `<`.)
FAMILIES = (
    "mistral",
    "llama3_json",
    "pythonic",
    "json",
    "text_kv",
    "tool_use",
    "function_call",
    "phi4_mini",
    "firefunction",
    "xlam",
    "llamacpp_generic",
)
ARG_DICTS = st.dictionaries(NAMES, JSON_VALUES, max_size=3)
JWS = st.sampled_from(["", " ", "\n", "  "])


def _dumps(value: Any, draw: Any) -> str:
    """JSON as models write it: compact, spaced, or indented."""
    style = draw(st.integers(0, 2))
    if style == 0:
        return json.dumps(value, ensure_ascii=False)
    if style == 1:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=2)


def _envelope(draw: Any, name: str, args: dict[str, Any], keys: tuple[str, ...]) -> str:
    """A call object with its name first (the bare forms need it) or anywhere."""
    key = draw(st.sampled_from(keys))
    items = [("name", name), (key, args)]
    if draw(st.booleans()):
        items.append(("id", draw(st.from_regex(r"call_[A-Za-z0-9]{4}", fullmatch=True))))
    if draw(st.booleans()):
        items[1:] = draw(st.permutations(items[1:]))
    return _dumps(dict(items), draw)


@st.composite
def family_block_spec(draw: Any, dialect: str) -> tuple[str, list[str]]:
    """A valid block of an opt-in family and the names of its calls, in order."""
    n = draw(st.integers(1, 3))
    names = [draw(NAMES) for _ in range(n)]
    args = [draw(ARG_DICTS) for _ in range(n)]
    if dialect == "mistral":
        shape = draw(st.integers(0, 2))
        if shape == 0:  # pre-v11: one list
            items = [_envelope(draw, a, b, ("arguments",)) for a, b in zip(names, args)]
            sep = draw(st.sampled_from([", ", ","]))
            return f"[TOOL_CALLS]{draw(JWS)}[{sep.join(items)}]", names
        name, arg = names[0], args[0]  # v11+: one call per block
        mid = draw(st.sampled_from(["[ARGS]", "", "[CALL_ID]a1b2c3d4e[ARGS]"]))
        return f"[TOOL_CALLS]{name}{mid}{_dumps(arg, draw)}", names[:1]
    if dialect == "llama3_json":
        sep = draw(st.sampled_from(["; ", ";", ";\n", " ; "]))
        objs = [_envelope(draw, a, b, ("parameters", "arguments")) for a, b in zip(names, args)]
        if draw(st.booleans()):
            return "<|python_tag|>" + sep.join(objs), names
        first = json.dumps({"name": names[0], "parameters": args[0]}, ensure_ascii=False)
        return sep.join([first, *objs[1:]]), names
    if dialect == "pythonic":
        calls = [
            f"{a}({', '.join(f'{k}={v!r}' for k, v in b.items())})" for a, b in zip(names, args)
        ]
        body = "[" + draw(st.sampled_from([", ", ","])).join(calls) + "]"
        if draw(st.booleans()):
            body = "<|python_start|>" + body + draw(st.sampled_from(["<|python_end|>", ""]))
        return body, names
    if dialect == "json":
        shape = draw(st.integers(0, 2))
        if shape == 0:
            items = [
                _envelope(draw, a, b, ("arguments", "input", "parameters"))
                for a, b in zip(names, args)
            ]
            return '{"tool_calls": [' + ", ".join(items) + "]}", names
        strict = [
            json.dumps({"name": a, "arguments": b}, ensure_ascii=False) for a, b in zip(names, args)
        ]
        if shape == 1:
            return "[" + ", ".join(strict) + "]", names
        return strict[0], names[:1]
    if dialect == "text_kv":
        lines = [f"function.name: {names[0]}", f"function.arguments: {_dumps(args[0], draw)}"]
        if draw(st.booleans()):
            lines.append("status: completed")
        return "\n".join(lines), names[:1]
    if dialect == "function_call":  # the open form (its call ends where its block does)
        sep = draw(st.sampled_from(["", "\n", " ", "\n  "]))
        values = {
            k: json.dumps(v, ensure_ascii=False).replace("<", "\\u003c") for k, v in args[0].items()
        }
        params = "".join(
            f'{sep}<function parameter name="{k}">{v}</function parameter>'
            for k, v in values.items()
        )
        return f"<function_call>{names[0]}</function_call>{params}", names[:1]
    if dialect in ("phi4_mini", "firefunction", "xlam", "llamacpp_generic"):
        return _json_list_block(draw, dialect, names, args), names
    assert dialect == "tool_use"
    block = {"type": "tool_use", "id": "toolu_01", "name": names[0], "input": args[0]}
    return _dumps(block, draw), names[:1]


def _json_list_block(draw: Any, dialect: str, names: list[str], args: list[Any]) -> str:
    """A block of the issue-32 JSON list families: ``functools[…]`` (phi4_mini,
    firefunction), the bare list (xlam), ``{"tool_call(s)": …}`` (llamacpp_generic), or their
    tagged forms."""
    keys = ("arguments",) if dialect == "llamacpp_generic" else ("arguments", "parameters")
    items = [_envelope(draw, a, b, keys) for a, b in zip(names, args)]
    body = "[" + draw(st.sampled_from([", ", ",", ",\n  "])).join(items) + "]"
    tagged = draw(st.booleans())
    if dialect == "phi4_mini" and tagged:
        return "".join(f"<|tool_call|>{i}<|/tool_call|>" for i in items)
    if dialect in ("phi4_mini", "firefunction"):
        return "functools" + body
    if dialect == "xlam":
        return f"<tool_call>{draw(JWS)}{body}</tool_call>" if tagged else body
    if tagged and len(items) == 1:
        return '{"tool_call": ' + items[0] + "}"
    return '{"tool_calls": ' + body + "}"


#: Prose the families' leads meet: braces, brackets, JSON that is no call, near-misses.
FAMILY_LOOKALIKES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        "{x}",
        "[1]",
        "[a](b)",
        "{{t}}",
        '{"',
        "[{",
        '[{"id": 1}]',
        '{"name": "prod", "replicas": 3}',
        '{"name": "f"}',
        '{"tool_calls": "none"}',
        "[TOOL_CALLS]",
        "[TOOL_CALLS] oops",
        "[TOOL_CALLS]f",
        "[TOOL_CALLS][",
        "[f(x)]",
        "[g(",
        "<|python_tag|>",
        "<|python_start|>",
        "; ",
        "function.name: x\n",
        "function.name:",
        "f",
        "fun",
        '{"type": "tool_use"',
        '{"type": "text", "text": "x"}',
        "[calc(x=1e999)]",
        "<function_call>",
        "<function_call>f</function_call>",
        '<function parameter name="x">',
        "</function parameter>",
        "functools",
        "functools[",
        "functools[]",
        'functools[{"name": "f"}]',
        '[{"name": "Alice"}]',
        '{"tool_call": 1}',
        '{"tool_call": {"name": "f"',
        '{"tool_calls": [',
        '{"response": "hi"}',
        "<|tool_call|>",
    ]
)


def family_pieces(dialects: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Document pieces for ``dialects``: prose, look-alikes of every kind, the families'
    blocks (valid, cut short, quoted in a fence or a code span)."""
    mine = [d for d in dialects if d in FAMILIES]
    valid = st.one_of(*(family_block_spec(d).map(lambda spec: spec[0]) for d in mine))
    cut = valid.flatmap(lambda b: st.integers(1, max(1, len(b) - 1)).map(lambda k: b[:k]))
    return st.one_of(
        PROSE,
        PROSE,
        LOOKALIKES,
        FAMILY_LOOKALIKES,
        FAMILY_LOOKALIKES,
        valid,
        valid,
        cut,
        fenced(valid),
        valid.map(lambda b: f"`{b}`"),
        VALID_BLOCK,
    )


def family_docs(dialects: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.lists(family_pieces(dialects), min_size=1, max_size=6).map("".join)

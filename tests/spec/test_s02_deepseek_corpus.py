"""SPEC §2, §4, §7: a corpus of DeepSeek output shapes, one group per generation — V3 (and
R1), V3.1, V3.2, V4, V4.1 — as the models write them and as vLLM, SGLang and llama.cpp see
them: thinking text before the block (as plain text, and as the ``<think>…</think>``
reasoning SPEC §15 reads), one call, parallel calls, nested JSON arguments, unicode, and the damaged
forms SPEC §3/§4 tolerate or repair; and what stays text (a block cut off at the end, a
mention).

Each case runs whole, per character and at random splits (``check``), under argument
streaming (every delta belongs to a started call, the deltas add up to the arguments), and
streamed by LLM-sized tokens, where the text before the block must be out before the block's
first character is fed (nothing held back but a tag's possible start).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest
from helpers import check, chunk_at, run_all_ways, stream

from callsieve import (
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Reasoning,
    Sieve,
    Text,
    ToolCalls,
)

Calls = list[tuple[str, dict[str, Any]]]


class Case(NamedTuple):
    id: str
    text: str
    want_text: str
    calls: Calls
    dialect: str | None  # of the block that parsed (None: nothing parses)
    repairs: tuple[str, ...] = ()


# --------------------------------------------------------------------- the shapes
THINK = "The user wants the weather in Tokyo and Paris. I'll call get_weather for both.\n\n"
EOS = "<｜end▁of▁sentence｜>"


def v3_call(name: str, args: str) -> str:
    return (
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```"
        "<｜tool▁call▁end｜>"
    )


def v31_call(name: str, args: str) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>"


def native(*calls: str, sep: str = "\n", begin: str = "<｜tool▁calls▁begin｜>") -> str:
    return begin + sep.join(calls) + "<｜tool▁calls▁end｜>"


def param(name: str, value: str, string: str | None = None, sp: str = "") -> str:
    attr = "" if string is None else f' string="{string}"'
    return f'<｜DSML｜{sp}parameter name="{name}"{attr}>{value}</｜DSML｜{sp}parameter>'


def invoke(name: str, *params: str, sp: str = "") -> str:
    body = "".join(f"\n{p}" for p in params)
    return f'<｜DSML｜{sp}invoke name="{name}">{body}\n</｜DSML｜{sp}invoke>'


def dsml(wrapper: str, *invokes: str, sp: str = "") -> str:
    inner = "".join(f"\n{i}" for i in invokes)
    return f"<｜DSML｜{sp}{wrapper}>{inner}\n</｜DSML｜{sp}{wrapper}>"


def v32(*invokes: str) -> str:
    return dsml("function_calls", *invokes)


def v4(*invokes: str) -> str:
    return dsml("tool_calls", *invokes)


def v41(*invokes: str) -> str:
    return dsml("calls", *invokes, sp=" ")


def w(city: str, **more: Any) -> str:
    """A DSML get_weather invoke (V3.2/V4 spelling)."""
    return invoke(
        "get_weather",
        param("location", city, "true"),
        *(param(k, str(v), "false") for k, v in more.items()),
    )


def w41(city: str, **more: Any) -> str:
    return invoke(
        "get_weather",
        param("location", city, "true", sp=" "),
        *(param(k, str(v), "false", sp=" ") for k, v in more.items()),
        sp=" ",
    )


TOKYO = ("get_weather", {"location": "Tokyo"})
PARIS = ("get_weather", {"location": "Paris"})
NESTED_ARGS = {
    "query": {"must": [{"term": {"tag": "db"}}, {"range": {"year": {"gte": 2020}}}]},
    "size": 5,
}
NESTED = json.dumps(NESTED_ARGS)
QUERY = json.dumps(NESTED_ARGS["query"], indent=1)  # a string="false" body, pretty-printed
UNICODE = '{"城市": "杭州", "note": "naïve café — 😀", "ko": "서울"}'
UNICODE_ARGS = {"城市": "杭州", "note": "naïve café — 😀", "ko": "서울"}

V3 = [
    Case(
        "v3-one-call",
        THINK + native(v3_call("get_weather", '{"location": "Tokyo"}')),
        THINK,
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v3-parallel",
        THINK
        + native(
            v3_call("get_weather", '{"location": "Tokyo"}'),
            v3_call("get_weather", '{"location": "Paris"}'),
        ),
        THINK,
        [TOKYO, PARIS],
        "deepseek_native",
    ),
    Case(
        "v3-nested",
        native(v3_call("search", NESTED)),
        "",
        [("search", NESTED_ARGS)],
        "deepseek_native",
    ),
    Case(
        "v3-unicode",
        "好的，我来查一下。" + native(v3_call("lookup", UNICODE)),
        "好的，我来查一下。",
        [("lookup", UNICODE_ARGS)],
        "deepseek_native",
    ),
    Case(
        "v3-no-arguments",
        native(v3_call("get_time", "{}")),
        "",
        [("get_time", {})],
        "deepseek_native",
    ),
    Case(
        "v3-end-of-sentence-stays-text",
        native(v3_call("get_time", "{}")) + EOS,
        EOS,
        [("get_time", {})],
        "deepseek_native",
    ),
    Case(
        "v3-pretty-json",
        native(v3_call("get_weather", '{\n  "location": "Tokyo"\n}')),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    # damaged forms: llama.cpp's short opener, ASCII bars, underscores, no opener at all
    Case(
        "v3-short-opener",
        native(v3_call("get_weather", '{"location": "Tokyo"}'), begin="<｜tool▁calls｜>"),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v3-ascii-bars",
        native(v3_call("get_weather", '{"location": "Tokyo"}')).replace("｜", "|"),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v3-underscores",
        native(v3_call("get_weather", '{"location": "Tokyo"}')).replace("▁", "_"),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v3-missing-opener",
        THINK + v3_call("get_weather", '{"location": "Tokyo"}') + "<｜tool▁calls▁end｜>",
        THINK,
        [TOKYO],
        "deepseek_native",
        ("missing_opener",),
    ),
]

V31 = [
    Case(
        "v31-one-call",
        THINK + native(v31_call("get_weather", '{"location": "Tokyo"}')),
        THINK,
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v31-parallel-back-to-back",
        native(
            v31_call("get_weather", '{"location": "Tokyo"}'),
            v31_call("get_weather", '{"location": "Paris"}'),
            sep="",
        ),
        "",
        [TOKYO, PARIS],
        "deepseek_native",
    ),
    Case(
        "v31-nested",
        native(v31_call("search", NESTED)),
        "",
        [("search", NESTED_ARGS)],
        "deepseek_native",
    ),
    Case(
        "v31-unicode",
        native(v31_call("lookup", UNICODE)),
        "",
        [("lookup", UNICODE_ARGS)],
        "deepseek_native",
    ),
    Case(
        "v31-fenced-json",
        native(v31_call("get_weather", '```json\n{"location": "Tokyo"}\n```')),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v31-namespaced-name",
        native(v31_call("browser::search", '{"q": "lark"}')),
        "",
        [("browser::search", {"q": "lark"})],
        "deepseek_native",
    ),
    Case(
        "v31-short-opener",
        native(v31_call("get_weather", '{"location": "Tokyo"}'), begin="<｜tool▁calls｜>"),
        "",
        [TOKYO],
        "deepseek_native",
    ),
    Case(
        "v31-missing-opener",
        v31_call("get_weather", '{"location": "Tokyo"}') + "<｜tool▁calls▁end｜>",
        "",
        [TOKYO],
        "deepseek_native",
        ("missing_opener",),
    ),
]

V32 = [
    Case("v32-one-call", THINK + v32(w("Tokyo")), THINK, [TOKYO], "dsml_v32"),
    Case("v32-parallel", THINK + v32(w("Tokyo"), w("Paris")), THINK, [TOKYO, PARIS], "dsml_v32"),
    Case(
        "v32-typed",
        v32(w("杭州", days=3, metric="true")),
        "",
        [("get_weather", {"location": "杭州", "days": 3, "metric": True})],
        "dsml_v32",
    ),
    Case(
        "v32-nested",
        v32(invoke("search", param("query", QUERY, "false"))),
        "",
        [("search", {"query": NESTED_ARGS["query"]})],
        "dsml_v32",
    ),
    Case(
        "v32-string-true-keeps-json-text",
        v32(invoke("echo", param("s", "[1, 2]", "true"))),
        "",
        [("echo", {"s": "[1, 2]"})],
        "dsml_v32",
    ),
    Case(
        "v32-json-body", v32(invoke("lookup", UNICODE)), "", [("lookup", UNICODE_ARGS)], "dsml_v32"
    ),
    Case("v32-ascii-bars", v32(w("Tokyo")).replace("｜", "|"), "", [TOKYO], "dsml_v32"),
    Case(
        "v32-missing-opener",
        THINK + v32(w("Tokyo")).split(">", 1)[1].lstrip("\n"),
        THINK,
        [TOKYO],
        "dsml_v32",
        ("missing_opener",),
    ),
]

V4 = [
    Case("v4-one-call", THINK + v4(w("Tokyo")), THINK, [TOKYO], "dsml_v4"),
    Case("v4-parallel", THINK + v4(w("Tokyo"), w("Paris")), THINK, [TOKYO, PARIS], "dsml_v4"),
    Case(
        "v4-nested-string-false",
        v4(invoke("search", param("query", QUERY, "false"), param("size", "5", "false"))),
        "",
        [("search", NESTED_ARGS)],
        "dsml_v4",
    ),
    Case(
        "v4-unicode",
        v4(invoke("lookup", *(param(k, v, "true") for k, v in UNICODE_ARGS.items()))),
        "",
        [("lookup", UNICODE_ARGS)],
        "dsml_v4",
    ),
    Case(
        "v4-cdata-code",
        v4(
            invoke(
                "write_file",
                param("path", "a.py", "true"),
                param("content", "<![CDATA[if a < b:\n    print('</x>')\n]]>", "true"),
            )
        ),
        "",
        [("write_file", {"path": "a.py", "content": "if a < b:\n    print('</x>')\n"})],
        "dsml_v4",
    ),
    Case("v4-json-body", v4(invoke("search", NESTED)), "", [("search", NESTED_ARGS)], "dsml_v4"),
    Case(
        "v4-no-string-attribute", v4(invoke("f", param("n", "7"))), "", [("f", {"n": 7})], "dsml_v4"
    ),
    Case(
        "v4-curly-quotes",
        v4(w("Tokyo")).replace('"', "“", 1).replace('"', "”", 1),
        "",
        [TOKYO],
        "dsml_v4",
    ),
    Case(
        "v4-stray-separator",
        v4(w("Tokyo")).replace("tool_calls>", "tool_calls｜>", 1),
        "",
        [TOKYO],
        "dsml_v4",
    ),
    Case(
        "v4-missing-opener",
        v4(w("Tokyo")).split(">", 1)[1].lstrip("\n"),
        "",
        [TOKYO],
        "dsml_v4",
        ("missing_opener",),
    ),
    Case(
        "v4-loose-cdata-at-the-end",
        v4(invoke("write_file", param("content", "<![CDATA[x = 1\n", "true"))),
        "",
        [("write_file", {"content": "x = 1\n"})],
        "dsml_v4",
        ("loose_cdata",),
    ),
    Case(
        "v4-mention-then-block",
        "I will use <｜DSML｜tool_calls> now.\n" + v4(w("Tokyo")),
        "I will use <｜DSML｜tool_calls> now.\n",
        [TOKYO],
        "dsml_v4",
    ),
]

V41 = [
    Case(
        "v41-issue-example",
        "Let me check.\n\n" + v41(w41("Hangzhou", days=3)).replace('"location"', '"city"'),
        "Let me check.\n\n",
        [("get_weather", {"city": "Hangzhou", "days": 3})],
        "dsml_v41",
    ),
    Case(
        "v41-parallel", THINK + v41(w41("Tokyo"), w41("Paris")), THINK, [TOKYO, PARIS], "dsml_v41"
    ),
    Case(
        "v41-namespaced",
        v41(
            invoke("browser::search", param("q", "lark", "true", sp=" "), sp=" "),
            invoke("python::run", param("code", "<![CDATA[print('hi')]]>", "true", sp=" "), sp=" "),
        ),
        "",
        [("browser::search", {"q": "lark"}), ("python::run", {"code": "print('hi')"})],
        "dsml_v41",
    ),
    Case(
        "v41-nested",
        v41(
            invoke(
                "search",
                param("query", QUERY, "false", sp=" "),
                param("size", "5", "false", sp=" "),
                sp=" ",
            )
        ),
        "",
        [("search", NESTED_ARGS)],
        "dsml_v41",
    ),
    Case(
        "v41-unicode",
        v41(
            invoke(
                "lookup", *(param(k, v, "true", sp=" ") for k, v in UNICODE_ARGS.items()), sp=" "
            )
        ),
        "",
        [("lookup", UNICODE_ARGS)],
        "dsml_v41",
    ),
    Case(
        "v41-json-body",
        v41(invoke("lookup", UNICODE, sp=" ")),
        "",
        [("lookup", UNICODE_ARGS)],
        "dsml_v41",
    ),
    Case(
        "v41-empty-json-body",
        v41(invoke("get_time", "{}", sp=" ")),
        "",
        [("get_time", {})],
        "dsml_v41",
    ),
    # damaged: the space dropped, ASCII bars, V4 invokes inside, no opener, loose CDATA
    Case("v41-no-space", v41(w41("Tokyo")).replace("｜ ", "｜"), "", [TOKYO], "dsml_v41"),
    Case("v41-ascii-bars", v41(w41("Tokyo")).replace("｜", "|"), "", [TOKYO], "dsml_v41"),
    Case("v41-v4-invokes", v41(w("Tokyo")), "", [TOKYO], "dsml_v41"),
    Case(
        "v41-missing-opener",
        THINK + v41(w41("Tokyo")).split(">", 1)[1].lstrip("\n"),
        THINK,
        [TOKYO],
        "dsml_v41",
        ("missing_opener",),
    ),
    Case(
        "v41-loose-cdata-at-the-end",
        v41(invoke("write_file", param("content", "<![CDATA[x = 1\n", "true", sp=" "), sp=" ")),
        "",
        [("write_file", {"content": "x = 1\n"})],
        "dsml_v41",
        ("loose_cdata",),
    ),
]

# What stays text, in any generation: a block the reply ends inside, a mention in prose.
CUT_OFF = [
    Case(
        "v3-cut-off",
        THINK + native(v3_call("get_weather", '{"location": "Tok'))[:-30],
        THINK + native(v3_call("get_weather", '{"location": "Tok'))[:-30],
        [],
        None,
    ),
    Case("v41-cut-off", THINK + v41(w41("Tokyo"))[:-20], THINK + v41(w41("Tokyo"))[:-20], [], None),
    Case(
        "v41-bare-calls-word",
        "<calls> is the V4.1 wrapper's name, `calls` alone is a word.",
        "<calls> is the V4.1 wrapper's name, `calls` alone is a word.",
        [],
        None,
    ),
]

CORPUS = V3 + V31 + V32 + V4 + V41 + CUT_OFF
ids = [c.id for c in CORPUS]


def test_the_corpus_covers_every_generation() -> None:
    for group in (V3, V31, V32, V4, V41):
        names = {c.id.split("-", 1)[1] for c in group}
        assert {n for n in names if "parallel" in n or "nested" in n or "unicode" in n}
        assert any(c.repairs for c in group) or any("bars" in n for n in names)
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", CORPUS, ids=ids)
def test_whole_and_under_every_chunking(case: Case) -> None:
    r = check(case.text, case.want_text, case.calls)
    parsed = [b for b in r.blocks if b.status == "complete"]
    if case.dialect is None:
        assert parsed == []
        return
    assert [b.dialect for b in parsed] == [case.dialect]
    assert [c.dialect for c in r.calls] == [case.dialect] * len(case.calls)
    assert parsed[0].repairs == case.repairs
    assert all(c.repairs == case.repairs for c in r.calls)


@pytest.mark.parametrize("case", CORPUS, ids=ids)
def test_argument_streaming(case: Case) -> None:
    run_all_ways(case.text, early_emit="arguments")
    for size in (1, 3, 7):
        sieve = Sieve(early_emit="arguments")
        events: list[Any] = []
        for chunk in chunk_at(case.text, range(size, len(case.text), size)):
            events += sieve.feed(chunk)
        events += sieve.close()
        # a call begun and then not made (the reply ends inside it) is aborted: the rest are
        # the calls, in order; one the loose-CDATA repair reads at the end is not (what its
        # CDATA streamed stops where the repair may cut, SPEC §7.5)
        aborted = {e.index for e in events if isinstance(e, CallAborted)}
        started = [e.name for e in events if isinstance(e, CallStarted) and e.index not in aborted]
        finished = [e for e in events if isinstance(e, CallFinished)]
        assert started == [n for n, _ in case.calls]
        assert bool(aborted) == ("cut-off" in case.id)
        assert [(e.call.name, e.call.input) for e in finished] == case.calls
        for done in finished:
            deltas = "".join(
                e.delta for e in events if isinstance(e, ArgumentsDelta) and e.index == done.index
            )
            assert deltas == done.call.arguments


LEADING = [
    c for c in CORPUS if c.dialect and c.want_text.strip() and c.text.startswith(c.want_text)
]


@pytest.mark.parametrize("case", LEADING, ids=[c.id for c in LEADING])
def test_the_text_before_the_block_is_out_before_the_block_starts(case: Case) -> None:
    """Streamed in LLM-sized tokens, the thinking text before a block is released while it
    arrives: by the time the block's first character is fed, all of it is out but what could
    still begin a tag (here: nothing, it ends in a line break or punctuation)."""
    start = len(case.want_text)
    sieve = Sieve()
    out: list[Any] = []
    for chunk in chunk_at(case.text[:start], range(4, start, 4)):
        out += sieve.feed(chunk)
    assert "".join(e.text for e in out if isinstance(e, Text)) == case.want_text
    out += sieve.feed(case.text[start:]) + sieve.close()
    assert [
        (c.name, c.input) for e in out if isinstance(e, ToolCalls) for c in e.calls
    ] == case.calls


# The reasoning models (R1, V3.1 and later in thinking mode) think first; with the template's
# `<think>` in the reply, the thought is reasoning (SPEC §15), the block after it a call.
THOUGHT = "\nThe user wants the weather in Tokyo. get_weather takes a location.\n"
THINKING = [
    ("v3", native(v3_call("get_weather", '{"location": "Tokyo"}'))),
    ("v31", native(v31_call("get_weather", '{"location": "Tokyo"}'))),
    ("v32", v32(w("Tokyo"))),
    ("v4", v4(w("Tokyo"))),
    ("v41", v41(w41("Tokyo"))),
    ("v41-json-body", v41(invoke("get_weather", '{"location": "Tokyo"}', sp=" "))),
]


@pytest.mark.parametrize(("generation", "block"), THINKING, ids=[g for g, _ in THINKING])
def test_a_thought_then_the_block(generation: str, block: str) -> None:
    text = f"<think>{THOUGHT}</think>\n\n{block}"
    # (conservation with reasoning is SPEC §15's to test: helpers' check counts text only)
    r = check(text, "\n\n", [TOKYO], conserve=False)
    assert r.reasoning == THOUGHT
    for size in (1, 5):
        events = stream(chunk_at(text, range(size, len(text), size)))
        assert "".join(e.text for e in events if isinstance(e, Reasoning)) == THOUGHT

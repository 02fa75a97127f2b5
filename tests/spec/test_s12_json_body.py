"""SPEC §4 and §12: a call whose arguments (and maybe its name) are one JSON object streamed
as a *balanced run* (a terminal written ``/\\s*\\{[\\s\\S]*\\}/``), read by the contract nodes
``call_json`` and ``call_id`` (grammar/README.md). Three scratch dialects: ``jinv``
(``<invoke name="f">{"a": 1}</invoke>``: the name from the tag), ``herm`` (Hermes'
``<tool_call>{"name", "arguments"}</tool_call>``: name and arguments from the JSON) and
``kimi_k2`` (``tests/grammars/kimi_k2.lark``: the model's id ``functions.f:0``). Each case
runs whole, per character and at random splits (``run_all_ways``), and must agree."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import GRAMMARS, canon_value, run_all_ways, stream
from hypothesis import given, settings
from hypothesis import strategies as st

from callsieve import (
    DEFAULT_DIALECTS,
    ArgumentsDelta,
    CallFinished,
    GrammarError,
    Sieve,
    Text,
    ToolCalls,
    parse,
)
from callsieve._grammar.compiled import load_grammar
from callsieve._scan import balanced
from callsieve._scan.balanced import MAX_JSON_DEPTH, JsonRun, Walks

JINV = """\
// <jcalls><invoke name="f">{"a": 1}</invoke></tool_calls>: the name from the tag
jinv: JINV_OPEN WS_RUN? (jinv_call WS_RUN?)+ CALLS_CLOSE
jinv_call: INVOKE_OPEN call_name TAG_END jinv_body WS_RUN? INVOKE_CLOSE -> call
jinv_body: BODY_RUN -> call_json
BODY_RUN: /\\s*\\{[\\s\\S]*\\}/
JINV_OPEN: "<jcalls>"
"""

HERM = """\
// Hermes: <tool_call>{"name": "f", "arguments": {...}}</tool_call>, one call per block
herm: TC_OPEN herm_call
herm_call: herm_body WS_RUN? TC_CLOSE -> call
herm_body: BODY_RUN -> call_json
BODY_RUN: /\\s*\\{[\\s\\S]*\\}/
TC_OPEN: "<tool_call>"
TC_CLOSE: "</tool_call>"
"""


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("json_body")
    (folder / "jinv.lark").write_text(JINV, encoding="utf-8")
    (folder / "herm.lark").write_text(HERM, encoding="utf-8")
    return {
        "dialects": DEFAULT_DIALECTS + ("jinv", "herm", "kimi_k2"),
        "grammar_dirs": (str(folder), str(GRAMMARS)),
    }


def calls(r: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.input) for c in r.calls]


def kimi(*calls: str) -> str:
    return (
        "<|tool_calls_section_begin|>\n"
        + "".join(f"<|tool_call_begin|>{c}<|tool_call_end|>\n" for c in calls)
        + "<|tool_calls_section_end|>"
    )


def kcall(ident: str, args: str) -> str:
    return f"{ident}<|tool_call_argument_begin|>{args}"


# ---------------------------------------------------------------- 1. the three dialects
@pytest.mark.parametrize(
    ("text", "want", "rest"),
    [
        # jinv: the name from the tag, the object is the arguments (even with a "name" key)
        (
            'a <jcalls>\n<invoke name="f">{"x": 1, "y": [true, null]}</invoke>\n</tool_calls> b',
            [("f", {"x": 1, "y": [True, None]})],
            "a  b",
        ),
        (
            '<jcalls><invoke name="f">{"name": "g", "arguments": {"z": 2}}</invoke></tool_calls>',
            [("f", {"name": "g", "arguments": {"z": 2}})],
            "",
        ),
        (
            (
                '<jcalls><invoke name="f">  {}  </invoke><invoke name="g">{"a":{"b":{"c":[[{}]]}}}'
                "</invoke></tool_calls>"
            ),
            [("f", {}), ("g", {"a": {"b": {"c": [[{}]]}}})],
            "",
        ),
        # herm: the name and the arguments from the JSON ("parameters" too; none: {})
        (
            'x <tool_call>\n{"name": "get", "arguments": {"q": 1}}\n</tool_call> y',
            [("get", {"q": 1})],
            "x  y",
        ),
        ('<tool_call>{"name": "get", "parameters": {"q": 1}}</tool_call>', [("get", {"q": 1})], ""),
        ('<tool_call>{"name": " now ", "id": 7}</tool_call>', [("now", {})], ""),
        (
            '<tool_call>{"name": "get", "arguments": "{\\"q\\": 1}"}</tool_call>',
            [("get", {"q": 1})],
            "",
        ),
        (
            '<tool_call>{"name": "a", "arguments": {"p": 1}, "parameters": {"p": 2}}</tool_call>',
            [("a", {"p": 1})],
            "",
        ),
        # kimi_k2: the name inside the id; several calls in one section
        (
            kimi(kcall("functions.get_weather:0", '{"city": "Tokyo"}'), kcall("search:1", "{}")),
            [("get_weather", {"city": "Tokyo"}), ("search", {})],
            "",
        ),
    ],
)
def test_a_json_body_gives_the_arguments_and_maybe_the_name(
    scratch: dict[str, Any], text: str, want: list[tuple[str, Any]], rest: str
) -> None:
    r = run_all_ways(text, **scratch)
    assert calls(r) == want
    assert r.text == rest


@pytest.mark.parametrize(
    "value",
    [
        "}",
        "{",
        "}}}{{{",
        '"',
        '\\"}',
        "\\",
        "\\\\",
        "\\\\\\",
        "</invoke>",
        "</tool_calls>",
        "</tool_call>",
        "<|tool_call_end|>",
        "<tool_call>",
        "]",
        "[",
        "\n\t",
        "é😀\u2028",
    ],
)
def test_strings_may_hold_braces_quotes_escapes_and_the_closing_tags(
    scratch: dict[str, Any], value: str
) -> None:
    args = {"s": value, "t": [value, {"u": value}], value: 1}
    body = json.dumps(args)
    texts = [
        f'<jcalls><invoke name="f">{body}</invoke></tool_calls>',
        f"<tool_call>{json.dumps({'name': 'f', 'arguments': args})}</tool_call>",
        kimi(kcall("functions.f:0", body)),
    ]
    for text in texts:
        assert calls(run_all_ways(f"x {text} y", **scratch)) == [("f", args)], text


def test_the_models_id_is_the_calls_id_else_the_factorys(scratch: dict[str, Any]) -> None:
    text = (
        kimi(kcall("functions.get_weather:0", "{}"), kcall("lookup:7", "{}"))
        + '<jcalls><invoke name="f">{}</invoke></tool_calls>'
    )
    seen: list[str] = []

    def factory() -> str:
        seen.append("x")
        return f"mine-{len(seen)}"

    for chunks in ([text], list(text)):
        seen.clear()
        events = stream(chunks, id_factory=factory, **scratch)
        got = [(c.name, c.id) for e in events if isinstance(e, ToolCalls) for c in e.calls]
        assert got == [
            ("get_weather", "functions.get_weather:0"),
            ("lookup", "lookup:7"),
            ("f", "mine-1"),
        ]
    r = parse(text, id_factory=factory, **scratch)
    assert [c.id for c in r.calls][:2] == ["functions.get_weather:0", "lookup:7"]


def test_early_emit_invoke_sends_json_bodied_calls_as_their_invoke_closes(
    scratch: dict[str, Any],
) -> None:
    text = (
        '<jcalls><invoke name="f">{"a": "}"}</invoke><invoke name="g">{"b": 2}</invoke>'
        "</tool_calls>"
    )
    r = run_all_ways(text, early_emit="invoke", **scratch)
    assert calls(r) == [("f", {"a": "}"}), ("g", {"b": 2})]


def test_early_emit_arguments_streams_a_json_body_as_compact_json(scratch: dict[str, Any]) -> None:
    """SPEC §7 argument streaming of a JSON body: the object goes out as the call's
    ``arguments`` write it (white space dropped, escapes as ``json.dumps`` writes them, a
    number once it ends), while it arrives; a repeated key (its last value wins) sends the
    call again whole."""
    body = '{"city": "T\\u00f6ky\\u014d", "days": [1, 2.5e1], "x": {"y": null}}'
    for text in (
        kimi(kcall("functions.get_weather:0", body)),
        f'<jcalls><invoke name="get_weather">{body}</invoke></tool_calls>',
    ):
        sieve = Sieve(early_emit="arguments", **scratch)
        events: list[Any] = []
        before_end = 0
        for k, ch in enumerate(text):
            got = sieve.feed(ch)
            events += got
            if k < text.index(body) + len(body) - 1:
                before_end += sum(isinstance(e, ArgumentsDelta) for e in got)
        events += sieve.close()
        deltas = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
        (finished,) = [e.call for e in events if isinstance(e, CallFinished)]
        assert deltas == finished.arguments == '{"city":"Tökyō","days":[1,25.0],"x":{"y":null}}'
        assert before_end > 20
    text = kimi(kcall("f:0", '{"a": 1, "a": 2}'))
    events = stream(list(text), early_emit="arguments", **scratch)
    assert [type(e).__name__ for e in events if not isinstance(e, ArgumentsDelta)][:3] == [
        "CallStarted",
        "CallAborted",
        "CallStarted",
    ]
    assert [c.input for e in events if isinstance(e, CallFinished) for c in [e.call]] == [{"a": 2}]


# ---------------------------------------------------------------- 2. what fails the block
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('<tool_call>{"q": 1}</tool_call>', "a call needs a non-empty name"),
        ('<tool_call>{"name": 3, "arguments": {}}</tool_call>', "name is not a string"),
        ('<tool_call>{"name": "", "arguments": {}}</tool_call>', "a call needs a non-empty name"),
        (
            '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
            "arguments are not a JSON object",
        ),
        ('<tool_call>{"name": "f", "arguments": "nope"}</tool_call>', "not a JSON object"),
        ('<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>', "not a JSON object"),
        ('<tool_call>{"name": "f", "arguments": {"a": 1]}}</tool_call>', "unexpected"),
        ('<tool_call>{"name": "f"} and more</tool_call>', "unexpected 'a'"),
        ('<tool_call>{"name": "f"}{"name": "g"}</tool_call>', "unexpected '{'"),
        ('<tool_call>[{"name": "f"}]</tool_call>', "must begin with '{'"),
        ('<tool_call>{"a": 1]</tool_call>', "a ']' closes the JSON object"),
        ('<jcalls><invoke name="f">(1)</invoke></tool_calls>', "must begin with '{', not '('"),
        ('<jcalls><invoke name="f">{"a": "b}</invoke></tool_calls>', "the input ended"),
        ('<jcalls><invoke name="f">{"a": {}</invoke></tool_calls>', "the input ended"),
        ('<tool_call> is how I call tools: {"name": "f"}</tool_call>', "must begin with '{'"),
        (
            "<tool_call>"
            + "{" * (MAX_JSON_DEPTH + 1)
            + "}" * (MAX_JSON_DEPTH + 1)
            + "</tool_call>",
            f"nested deeper than {MAX_JSON_DEPTH}",
        ),
    ],
)
def test_a_malformed_body_fails_the_block_and_is_released_as_text(
    scratch: dict[str, Any], text: str, why: str
) -> None:
    r = run_all_ways(f"a {text} b", **scratch)
    assert r.calls == () and r.text == f"a {text} b"
    assert any(why in d for b in r.blocks for d in b.diagnostics), r.blocks


def test_the_deepest_body_allowed_parses(scratch: dict[str, Any]) -> None:
    inner: Any = 1
    for _ in range(MAX_JSON_DEPTH - 2):  # the envelope and "arguments" are two levels
        inner = [inner]
    text = f"<tool_call>{json.dumps({'name': 'f', 'arguments': {'a': inner}})}</tool_call>"
    assert calls(run_all_ways(text, **scratch)) == [("f", {"a": inner})]


def test_a_prose_mention_is_released_at_once_not_at_the_close(scratch: dict[str, Any]) -> None:
    s = Sieve(**scratch)
    out = s.feed("I use <tool_call>") + s.feed(" ") + s.feed("tags") + s.feed(" a lot")
    assert "".join(e.text for e in out if isinstance(e, Text)) == "I use <tool_call> tags a lot"


def test_a_real_block_after_a_failed_one_still_parses(scratch: dict[str, Any]) -> None:
    text = (
        '<tool_call>{"name": "f", "arguments": {"a": "<tool_call>{\\"name\\": 1}"}'
        '<tool_call>{"name": "g", "arguments": {}}</tool_call>'
    )
    r = run_all_ways(text, **scratch)
    assert calls(r) == [("g", {})]
    assert r.text == text[: text.rindex("<tool_call>")]


# ---------------------------------------------------------------- 3. the declaration
@pytest.mark.parametrize(
    "pattern", [r"/\{.*\}/", r"/\{[\s\S]*\}\s*/", r"/\s+\{[\s\S]*\}/", r"/\{[^}]*\}/"]
)
def test_a_run_that_is_almost_balanced_is_refused(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "bad.lark").write_text(
        HERM.replace("herm", "bad").replace("/\\s*\\{[\\s\\S]*\\}/", pattern), encoding="utf-8"
    )
    with pytest.raises(GrammarError) as info:
        load_grammar(("bad",), (str(tmp_path),))
    message = str(info.value)
    assert "bad.lark:5" in message and "terminal BODY_RUN" in message
    assert "balanced" in message and r"/\s*\{[\s\S]*\}/" in message


def test_a_balanced_pattern_is_a_run_only_with_a_run_name(tmp_path: Path) -> None:
    (tmp_path / "bad.lark").write_text(
        HERM.replace("herm", "bad").replace("BODY_RUN", "BODY"), encoding="utf-8"
    )
    with pytest.raises(GrammarError, match=r"bad\.lark:5: terminal BODY can be longer"):
        load_grammar(("bad",), (str(tmp_path),))


def test_the_loader_knows_the_run_is_balanced(scratch: dict[str, Any]) -> None:
    g = load_grammar(scratch["dialects"], scratch["grammar_dirs"])
    runs = {n: t for n, t in g.terminals.items() if t.is_run and t.balanced}
    assert sorted(runs) == [
        "HERM__BODY_RUN",
        "JINV__BODY_RUN",
        "JSON_BODY_RUN",
        "KIMI_K2__KIMI_ARGS_RUN",
    ]
    assert not any(t.soft for t in runs.values())
    # common.lark's invoke body (SPEC §4) starts at its `{`: JSON_TAG_END reads the space
    assert [n for n, t in runs.items() if not t.lead_ws] == ["JSON_BODY_RUN"]


# ---------------------------------------------------------------- 4. the reader
def test_the_reader_carries_its_state_across_any_cut() -> None:
    spec = load_grammar(("kimi_k2",), (str(GRAMMARS),)).terminals["KIMI_K2__KIMI_ARGS_RUN"]
    text = ' {"a": "\\\\\\"}", "b": [{"c": "]"}, 2], "d": "\\u007d"}<tail'
    end = text.index("<")
    for cut in range(len(text) + 1):
        run = JsonRun(spec)
        first = run.read(text[:cut], 0)
        got = first if first < cut else cut + run.read(text[cut:], 0)
        assert got == end, cut
        assert run.done


def test_the_reader_reads_text_the_sieve_appended_for_it() -> None:
    spec = load_grammar(("kimi_k2",), (str(GRAMMARS),)).terminals["KIMI_K2__KIMI_ARGS_RUN"]
    run = JsonRun(spec)
    assert run.read('{"a": "', 0) == 7 and run.stop_char == "}"
    pieces = ['{"a": "', 'x\\"', " y", '"}']
    run.took(pieces, 7)  # what the sieve appended: 'x\\"', ' y', '"}'
    assert run.done and run.read("</x>", 0) == 0


def test_a_run_holds_the_fields_of_its_spec_it_copies() -> None:
    # (``_SPEC_SLOTS``: stored on the run itself, not asked of the spec at each read)
    g = load_grammar(tuple(DEFAULT_DIALECTS) + ("pythonic", "json", "mistral"), ())
    specs = [t for t in g.terminals.values() if getattr(t, "balanced", False)]
    assert {s.closer for s in specs} == {"}", ")"}
    for spec in specs:
        run = JsonRun(spec)
        for name in balanced._SPEC_SLOTS:
            assert object.__getattribute__(run, name) == getattr(spec, name), name


# ---------------------------------------------------------------- 5. hostile input
@pytest.fixture
def chars_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A counter of the characters every balanced run's reader reads."""
    count = [0]
    read = JsonRun.read

    def counting(self: JsonRun, buf: str, p: int) -> int:
        end = read(self, buf, p)
        count[0] += (end if end >= 0 else self.at) - p
        return end

    monkeypatch.setattr(JsonRun, "read", counting)
    yield count


def _work(count: list[int], text: str, scratch: dict[str, Any], chunk: int | None) -> int:
    count[0] = 0
    if chunk is None:
        parse(text, **scratch)
    else:
        stream([text[i : i + chunk] for i in range(0, len(text), chunk)], **scratch)
    return count[0]


@pytest.mark.parametrize("chunk", [None, 7, 4096])
@pytest.mark.parametrize(
    "shape",
    [
        "braces",
        "backslashes",
        "quotes",
        "long-string",
        "unclosed-nested",
        "unclosed-nested-objects",
    ],
)
def test_hostile_bodies_cost_linear_work(
    chars_read: list[int], scratch: dict[str, Any], shape: str, chunk: int | None
) -> None:
    def doc(n: int) -> str:
        return {
            "braces": "<tool_call>" + "{" * n,
            "backslashes": '<tool_call>{"name": "f", "arguments": {"a": "' + "\\" * n,
            "quotes": '<tool_call>{"name": "f", "arguments": {' + '"' * n,
            "long-string": '<tool_call>{"name": "f", "arguments": {"a": "' + "x}" * n,
            # every later block is inside the first one's unclosed body
            "unclosed-nested": '<tool_call>{"a": "' * (n // 16) + "</tool_call>",
            "unclosed-nested-objects": '<tool_call>{"a": {}, ' * (n // 16) + "</tool_call>",
        }[shape]

    small, large = (
        _work(chars_read, doc(12_500), scratch, chunk),
        _work(chars_read, doc(100_000), scratch, chunk),
    )
    assert large <= 8 * small * 1.25 + 64, (small, large)


def test_a_megabyte_of_open_braces_or_backslashes_is_read_once(
    chars_read: list[int], scratch: dict[str, Any]
) -> None:
    for text in (
        "<tool_call>" + "{" * 1_000_000,
        '<tool_call>{"name": "f", "arguments": {"a": "' + "\\" * 1_000_000 + '"}}',
    ):
        for chunk in (None, 5):
            work = _work(chars_read, text, scratch, chunk)
            assert work <= len(text) + 64, (chunk, work)


# ---------------------------------------------------------------- 6. properties
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab }{][\\"/<>\n\u00e9\U0001f600'), max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.sampled_from('ab}{"\\<'), max_size=6), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=80, deadline=None)
@given(
    args=st.dictionaries(st.text(max_size=8), _JSON, max_size=5),
    ascii_only=st.booleans(),
    dialect=st.sampled_from(["jinv", "herm", "kimi_k2"]),
    data=st.data(),
)
def test_any_json_object_round_trips_as_the_arguments_under_any_chunking(
    scratch: dict[str, Any],
    args: dict[str, Any],
    ascii_only: bool,
    dialect: str,
    data: st.DataObject,
) -> None:
    body = json.dumps(args, ensure_ascii=ascii_only)
    text = {
        "jinv": f'<jcalls><invoke name="f">{body}</invoke></tool_calls>',
        "herm": f"<tool_call>{json.dumps({'name': 'f', 'arguments': args})}</tool_call>",
        "kimi_k2": kimi(kcall("functions.f:0", body)),
    }[dialect]
    text = f"hi {text} bye"
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=12)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    for way in ([text], chunks):
        events = stream(way, **scratch)
        got = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
        assert [(c.name, canon_value(c.input)) for c in got] == [("f", canon_value(args))]
        assert "".join(e.text for e in events if isinstance(e, Text)) == "hi  bye"


def test_max_block_chars_counts_a_json_body_whatever_the_chunks(scratch: dict[str, Any]) -> None:
    text = '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 300 + '"}}</tool_call>'
    assert calls(run_all_ways(text, max_block_chars=len(text), **scratch)) == [
        ("f", {"a": "x" * 300})
    ]
    r = run_all_ways(text, max_block_chars=len(text) - 1, **scratch)
    assert r.calls == () and r.text == text


# ---------------------------------------------------------------- 7. text read again
# A failed block is scanned again from after its opener (SPEC §7): a balanced run of a later
# capture that begins where an earlier one read goes along the walk the earlier one noted
# (``_scan.balanced``). Its answer must be the one reading gives, for any chunking, and the
# brackets read must stay a few per character where every entry in prose begins a block that
# reads its body up to the nesting limit.
_KIMI = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
_READ_AGAIN = [
    # (the rows of benchmarks/bench_adversarial.py)
    ('{"name": "', ("json",)),
    ('{"name": "', "all"),
    ('{"name": "', ("llama3_json",)),
    ("[a(", ("pythonic",)),
    ("[a(" * 30 + ")" * 30, ("pythonic",)),
    ('[TOOL_CALLS]f{"a": "', ("mistral",)),
    ('<tool_call>{"a": "', ("hermes",)),
    (_KIMI + '{"a": "', ("kimi_k2",)),
    ('function.name: f\nfunction.arguments: {"a": "', ("text_kv",)),
    # bodies that close inside what an earlier reader read, strings with escapes, two kinds
    ('{"name": ' * 40 + "0" + "}" * 40, ("json",)),
    ('[{"name": "\\"", "x": [', ("json",)),
    ("[a(b='\\'', c=[(", ("pythonic",)),
    ('[a(b="{"name": ', ("pythonic", "json")),
]


def _reread_doc(unit: str, n: int) -> str:
    """``unit`` repeated to ``n`` characters, then a call each family reads."""
    tail = (
        ' {"name": "f", "arguments": {"a": 1}} [f(a=1)] [TOOL_CALLS]f{"a": 1}'
        ' <tool_call>{"name": "f", "arguments": {}}</tool_call>'
    )
    return (unit * (n // len(unit) + 1))[:n] + tail


def _blocks(r: Any) -> list[tuple[Any, ...]]:
    return [(b.span, b.status, tuple(b.diagnostics)) for b in r.blocks]


@pytest.mark.parametrize(("unit", "dialects"), _READ_AGAIN)
def test_text_read_again_reads_as_it_does_without_walks(
    monkeypatch: pytest.MonkeyPatch, unit: str, dialects: tuple[str, ...] | str
) -> None:
    doc = _reread_doc(unit, 2_500)
    got = run_all_ways(doc, dialects=dialects)  # whole, per character, random splits
    with monkeypatch.context() as m:
        m.setattr(Walks, "find", lambda self, at, but: None)  # never meets a walk
        want = parse(doc, dialects=dialects)
    assert (got.text, calls(got), _blocks(got)) == (want.text, calls(want), _blocks(want))


@pytest.fixture
def brackets_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """A counter of the matches the balanced runs' readers make outside strings (one per
    bracket read, or string that does not close in the text, one per text that ends there)."""
    count = [0]

    class Counting:
        def __init__(self, pattern: Any) -> None:
            self.pattern = pattern

        def match(self, buf: str, p: int) -> Any:
            count[0] += 1
            return self.pattern.match(buf, p)

    monkeypatch.setattr(balanced, "_SKIP", {q: Counting(pat) for q, pat in balanced._SKIP.items()})
    yield count


@pytest.mark.parametrize("chunk", [None, 1, 7])
@pytest.mark.parametrize(("unit", "dialects"), _READ_AGAIN[:9])
def test_text_read_again_costs_a_few_brackets_a_character(
    brackets_read: list[int], unit: str, dialects: tuple[str, ...] | str, chunk: int | None
) -> None:
    def work(n: int) -> int:
        doc = _reread_doc(unit, n)
        brackets_read[0] = 0
        if chunk is None:
            parse(doc, dialects=dialects)
        else:
            stream([doc[i : i + chunk] for i in range(0, len(doc), chunk)], dialects=dialects)
        return brackets_read[0]

    # (reading each entry's body to the nesting limit again was 1.3 to 25 a character at the
    # larger size; going along the walks, at most about one)
    for n in (2_000, 16_000):
        assert work(n) <= 1.25 * n + 200, n


_RUN_SPECS = [
    ("json", "JSON__JSON_OBJECT_RUN"),  # an object, white space before it
    ("json", "JSON__JSON_REST_RUN"),  # the rest of one
    ("pythonic", "PYTHONIC__PY_ARGS_RUN"),  # the rest of a Python argument list
]


def _readers_agree(spec: Any, text: str, starts: list[int], chunk: Callable[[int], int]) -> None:
    """Readers of ``spec`` from each of ``starts`` in ``text`` (in that order, sharing the
    walks; a later one that begins earlier is deeper than the walk it meets; ``chunk(a)``
    says where the chunk that begins at ``a`` ends) end, or fail, where a reader of their own
    that reads the text whole does."""
    walks: dict[str, Walks] = {}
    for s in starts:
        plain = JsonRun(spec)
        end = plain.read(text[s:], 0)
        want = (s + end, "", -1) if end >= 0 else (-1, plain.why, s + plain.at)
        run = JsonRun(spec, walks, s)
        got = (len(text), "", -1)
        a = s
        while a < len(text):
            b = min(len(text), chunk(a))
            run.base = a
            end = run.read(text[a:b], 0)
            if end < 0:
                got = (-1, run.why, a + run.at)
                break
            if end < b - a:
                got = (a + end, "", -1)
                break
            a = b
        assert got == want, (s, text[s : s + 80])
        assert run.done == plain.done, (s, text[s : s + 80])


#: Pieces of the texts below: brackets of three kinds, strings of two quotes, escapes.
_PIECES = ("{", "[", "(", "[[", "((", "}", "]", ")", '"', "'", "\\", " a", '{"a": "', "[(", "'\\''")


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=240),
    data=st.data(),
)
def test_a_reader_that_meets_a_walk_ends_where_reading_ends(pieces: list[str], data: Any) -> None:
    text = "".join(pieces)
    starts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text))), max_size=20)))

    def chunk_end(a: int) -> int:
        i = bisect_right(cuts, a)
        return cuts[i] if i < len(cuts) else len(text)

    for dialect, name in _RUN_SPECS:
        spec = load_grammar((dialect,), ()).terminals[name]
        _readers_agree(spec, text, starts, chunk_end)


def _by_character(spec: Any, text: str) -> tuple[int, bool]:
    """Where a run of ``spec`` at ``text[0]`` ends, read one character at a time: ``(end,
    False)`` just after its closing bracket, ``(at, True)`` where it fails, ``(-1, False)``
    if it goes on past the text."""
    python = "'" in spec.quotes
    opens, closes = ("{[(", "}])") if python else ("{[", "}]")
    i, depth, quote = 0, 1, ""
    if not spec.opened:
        while spec.lead_ws and i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return -1, False
        if text[i] != {"}": "{", "]": "[", ")": "("}[spec.closer]:
            return i, True
        i += 1
    while i < len(text):
        c = text[i]
        i += 1
        if quote:
            i += c == "\\"
            quote = "" if c == quote else quote
        elif c in spec.quotes:
            quote = c
        elif c in opens or c in closes:
            depth += 1 if c in opens else -1
            if depth > MAX_JSON_DEPTH or depth == 0:
                return i, depth > 0 or c != spec.closer
    return -1, False


_RUN_SPECS_ALL = [
    *_RUN_SPECS,
    ("hermes", "HERMES__HERMES_JSON_RUN"),
]


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(st.sampled_from((*_PIECES, "a", '"', "\\", "''")), max_size=120), data=st.data()
)
def test_the_reader_ends_where_reading_a_character_at_a_time_ends(
    pieces: list[str], data: Any
) -> None:
    # Outside strings, the reader reads a stretch of whole strings at once (``_SKIP``): it
    # ends, fails or goes on where a reading one character at a time does, at any cut.
    text = "".join(pieces)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text))), max_size=12)))
    for dialect, name in _RUN_SPECS_ALL:
        spec = load_grammar((dialect,), ()).terminals[name]
        for body in (text, "{" + text, " [" + text):
            want = _by_character(spec, body)
            run, got, a = JsonRun(spec), (-1, False), 0
            for b in [c for c in cuts if c < len(body)] + [len(body)]:
                run.base = a
                end = run.read(body[a:b], 0)
                if end < 0:
                    got = (a + run.at, True)
                    break
                if end < b - a or run.done:
                    got = (a + end, False)
                    break
                a = b
            assert got == want, (dialect, body[:80])


@pytest.mark.parametrize("chunk", [1, 7, 1 << 30])
@pytest.mark.parametrize(
    ("unit", "at"),
    [
        ('{"name": "', '"'),  # each deeper than the limit, one phase in two
        ('{"name": ' * 40 + "0" + "}" * 40 + " ", ":"),  # each ends inside the one before
        ('[{"a": "\\"", "b": [', "["),  # escapes
        ("[a(b='\\'', c=[(", "("),  # Python's strings
        ('{"a": [1, {"b": "}"}, 2], "c": ', "{"),
    ],
)
def test_readers_from_every_entry_end_where_reading_ends(unit: str, at: str, chunk: int) -> None:
    text = unit * 60
    starts = [i + 1 for i, c in enumerate(text) if c == at]
    for dialect, name in _RUN_SPECS:
        spec = load_grammar((dialect,), ()).terminals[name]
        # (then from the end back: each reader deeper than the walks it meets)
        _readers_agree(spec, text, starts + starts[::-1], lambda a: a + chunk)


# ---------------------------------------------------------------- 5. envelope keys a dialect declares
ACT = """\
// <act>[{"tool_call_id": "0", "tool_name": "f", "parameters": {...}}, ...]</act>
//%envelope_name tool_name
//%envelope_arguments parameters
//%envelope_id tool_call_id
act: ACT_OPEN ACT_LIST_OPEN act_item (ACT_COMMA act_item)* ACT_LIST_CLOSE ACT_CLOSE
act_item: act_object -> call
act_object: ACT_OBJECT_RUN -> call_json
ACT_OPEN: "<act>"
ACT_CLOSE: /\\s{0,32}<\\/act>/
ACT_LIST_OPEN: /\\s{0,32}\\[/
ACT_COMMA: /\\s{0,32},/
ACT_LIST_CLOSE: /\\s{0,32}\\]/
ACT_OBJECT_RUN: /\\s*\\{[\\s\\S]*\\}/
"""


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("declared_keys")
    (folder / "act.lark").write_text(ACT, encoding="utf-8")
    (folder / "herm.lark").write_text(HERM, encoding="utf-8")
    return {"dialects": ("act", "herm"), "grammar_dirs": (str(folder),)}


@pytest.mark.parametrize(
    "obj",
    [
        '{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}',
        '{"parameters": {"a": 1}, "tool_name": "f", "tool_call_id": "0"}',
        '{"tool_name": "f", "tool_call_id": "0", "parameters": {"a": 1}, "extra": [1]}',
    ],
)
def test_a_dialect_declares_its_envelopes_keys_read_in_any_order(
    declared: dict[str, Any], obj: str
) -> None:
    """``//%envelope_name``, ``//%envelope_arguments``, ``//%envelope_id``: the keys a JSON
    envelope of the dialect is read by, whatever their order (Command R7B's
    ``tool_name``/``parameters``/``tool_call_id``)."""
    r = run_all_ways(
        f'Go.\n<act>[{obj}, {{"tool_name": "g", "parameters": {{}}}}]</act>', **declared
    )
    assert (r.text, calls(r)) == ("Go.\n", [("f", {"a": 1}), ("g", {})])
    assert r.calls[0].id == "0"


def test_declared_keys_are_the_dialects_own(declared: dict[str, Any]) -> None:
    """Another dialect's envelopes keep the default keys: ``tool_name`` names no call in
    ``herm``, and ``name`` none in ``act``."""
    assert (
        calls(parse('<tool_call>{"tool_name": "f", "parameters": {}}</tool_call>', **declared))
        == []
    )
    assert calls(parse('<tool_call>{"name": "f", "parameters": {}}</tool_call>', **declared)) == [
        ("f", {})
    ]
    assert calls(parse('<act>[{"name": "f", "arguments": {}}]</act>', **declared)) == []


def test_declared_keys_stream_the_arguments(declared: dict[str, Any]) -> None:
    """With ``early_emit="arguments"`` a declared envelope streams as the default one does:
    the call starts when its name closes, its arguments go out as they arrive."""
    body = '{"q": "a long query", "n": [1, 2]}'
    text = f'<act>[{{"tool_call_id": "7", "tool_name": "search", "parameters": {body}}}]</act>'
    sieve = Sieve(early_emit="arguments", **declared)
    events: list[Any] = []
    before_end = 0
    for k, ch in enumerate(text):
        got = sieve.feed(ch)
        events += got
        if k < text.index(body) + len(body) - 1:
            before_end += sum(isinstance(e, ArgumentsDelta) for e in got)
    events += sieve.close()
    deltas = "".join(e.delta for e in events if isinstance(e, ArgumentsDelta))
    (finished,) = [e.call for e in events if isinstance(e, CallFinished)]
    assert (finished.name, finished.id) == ("search", "7")
    assert deltas == finished.arguments == '{"q":"a long query","n":[1,2]}'
    assert before_end > 10


@pytest.mark.parametrize("line", ["//%envelope_name", "//%envelope_name a=b"])
def test_an_envelope_directive_takes_words(tmp_path: Path, line: str) -> None:
    (tmp_path / "act.lark").write_text(ACT.replace("//%envelope_name tool_name", line))
    with pytest.raises(GrammarError, match="act.lark:2: //%envelope_name takes one or more"):
        load_grammar(("act",), (str(tmp_path),))

"""SPEC §2-§8 and §Invariants 5 as tables, one group per section.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from helpers import canon_calls, canon_value, run_all_ways

import callsieve
from callsieve import (
    CallsieveError,
    ConfigurationError,
    InputTypeError,
    SieveClosedError,
    Text,
    ToolCalls,
)

Calls = list[tuple[str, dict[str, Any]]]


def check(text: str, want_text: str, want_calls: Calls, **opts: Any) -> Any:
    """Run ``text`` every way and compare with the expected text and calls."""
    r = run_all_ways(text, **opts)
    assert r.text == want_text
    assert canon_calls(r.calls) == [(n, canon_value(i)) for n, i in want_calls]
    return r


def table(rows: list[tuple[Any, ...]]) -> Any:
    """``pytest.mark.parametrize`` over rows whose first element is the case id."""
    return pytest.mark.parametrize("row", [pytest.param(r[1:], id=r[0]) for r in rows])


def X(inner: str) -> str:
    """A canonical XML wrapper around ``inner``."""
    return f"<tool_calls>{inner}</tool_calls>"


def INV(name: str, params: str = "") -> str:
    return f'<invoke name="{name}">{params}</invoke>'


def P(name: str, body: str) -> str:
    return f'<parameter name="{name}">{body}</parameter>'


def xml_call(body: str, pname: str = "p", tool: str = "f") -> str:
    """One canonical block: tool ``tool`` with one parameter ``pname`` holding ``body``."""
    return X(INV(tool, P(pname, body)))


# ============================================================================ §2 dialects
DSML = ('<|DSML|tool_calls>\n  <|DSML|invoke name="read_file">\n'
        '    <|DSML|parameter name="path"><![CDATA[README.MD]]></|DSML|parameter>\n'
        '  </|DSML|invoke>\n</|DSML|tool_calls>')
DSML_V4 = ('<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
           '<｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>\n'
           '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
           '</｜DSML｜invoke>\n</｜DSML｜tool_calls>')
DSML_V32 = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="zip" string="true">75001</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="days" string="false">2</｜DSML｜parameter>\n'
            '</｜DSML｜invoke>\n</｜DSML｜function_calls>')
XML = ('<tool_calls>\n  <invoke name="read_file">\n'
       '    <parameter name="path"><![CDATA[README.MD]]></parameter>\n'
       '  </invoke>\n</tool_calls>')
NATIVE_V3 = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n'
             '```json\n{"location": "Tokyo"}\n```<｜tool▁call▁end｜>\n'
             '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n'
             '```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
NATIVE_V31 = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>'
              '{"q": "lark", "n": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
READ = [("read_file", {"path": "README.MD"})]

DIALECT_ROWS = [
    ("dsml", DSML, READ, "dsml"),
    ("dsml_v4", DSML_V4, [("get_weather", {"location": "杭州", "days": 3})], "dsml_v4"),
    ("dsml_v32", DSML_V32, [("get_weather", {"zip": "75001", "days": 2})], "dsml_v32"),
    ("xml", XML, READ, "xml"),
    ("native-v3", NATIVE_V3, [("get_weather", {"location": "Tokyo"}), ("get_time", {})],
     "deepseek_native"),
    ("native-v31", NATIVE_V31, [("search", {"q": "lark", "n": 2})], "deepseek_native"),
]


@table(DIALECT_ROWS)
def test_s2_each_default_dialect(row: tuple[Any, ...]) -> None:
    text, calls, dialect = row
    r = check(f"Before.\n{text}\nAfter.", "Before.\n\nAfter.", calls)
    assert [c.dialect for c in r.calls] == [dialect] * len(calls)
    complete = [b for b in r.blocks if b.status == "complete"]
    assert [b.dialect for b in complete] == [dialect]
    assert complete[0].raw == text


def test_s2_default_dialects_listed() -> None:
    run_all_ways("")
    assert set(callsieve.DEFAULT_DIALECTS) == {"dsml", "dsml_v4", "dsml_v32", "xml",
                                               "deepseek_native"}


MIXED_ROWS = [
    # "A block opened in one dialect may close in another spelling of the same tag (a DSML
    # wrapper around canonical invokes parses)."
    ("dsml-wrapper-xml-invokes",
     ('<|DSML|tool_calls><invoke name="a"><parameter name="p">v</parameter></invoke>'
     '</|DSML|tool_calls>'), [("a", {"p": "v"})]),
    ("xml-wrapper-dsml-invokes",
     ('<tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">v</|DSML|parameter>'
     '</|DSML|invoke></tool_calls>'), [("a", {"p": "v"})]),
    ("xml-open-dsml-close", X(INV("a"))[:-len("</tool_calls>")] + "</|DSML|tool_calls>",
     [("a", {})]),
    ("dsml-open-xml-close", ('<|DSML|tool_calls><|DSML|invoke name="a"></|DSML|invoke>'
     '</tool_calls>'), [("a", {})]),
    ("v4-open-dsml-invokes", ('<｜DSML｜tool_calls><|DSML|invoke name="a"><|DSML|parameter '
     'name="p">1</|DSML|parameter></|DSML|invoke></｜DSML｜tool_calls>'), [("a", {"p": 1})]),
    ("v4-open-ascii-close", ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"></｜DSML｜invoke>'
     '</|DSML|tool_calls>'), [("a", {})]),
    ("param-closed-other-spelling", ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter'
     ' name="p">v</parameter></invoke></|DSML|tool_calls>'), [("a", {"p": "v"})]),
    ("v32-canonical-invokes", ('<｜DSML｜function_calls><invoke name="a"><parameter name="p">'
     '2</parameter></invoke></｜DSML｜function_calls>'), [("a", {"p": 2})]),
    # "Only name/string attributes carry meaning; others are ignored."
    ("other-attrs-ignored", ('<tool_calls><invoke id="7" name="a" type="fn"><parameter '
     'type="integer" name="p" required="true">v</parameter></invoke></tool_calls>'),
     [("a", {"p": "v"})]),
    ("other-attrs-with-string", ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"><｜DSML｜parameter'
     ' name="p" kind="x" string="true">5</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'),
     [("a", {"p": "5"})]),
]


BARE_ATTR_ROWS = [
    ("bare-invoke-name", "<tool_calls><invoke name=f></invoke></tool_calls>", ("f", {})),
    ("bare-parameter-name", ('<tool_calls><invoke name="f"><parameter name=p>1</parameter>'
     "</invoke></tool_calls>"), ("f", {"p": 1})),
    ("bare-string-attr", ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="p" '
                          "string=true>1</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"),
     ("f", {"p": "1"})),
]


@table(BARE_ATTR_ROWS)
def test_s2_unquoted_attribute_values_are_read_or_rejected(row: tuple[Any, ...]) -> None:
    """SPEC names quoted values only; an unquoted one may be accepted or make the block text,
    but it must never be misread (a call named ``name=f``, an ignored ``string=true``)."""
    text, (name, args) = row
    r = run_all_ways(text)
    got = (r.text, canon_calls(r.calls))
    assert got in [("", [(name, canon_value(args))]), (text, [])], got


@table(MIXED_ROWS)
def test_s2_mixed_spellings(row: tuple[Any, ...]) -> None:
    text, calls = row
    check("x " + text + " y", "x  y", calls)


def test_s2_blocks_of_several_dialects_in_order() -> None:
    text = f"a {XML} b {NATIVE_V31} c {DSML_V32} d {DSML}"
    r = check(text, "a  b  c  d ", [*READ, ("search", {"q": "lark", "n": 2}),
                                    ("get_weather", {"zip": "75001", "days": 2}), *READ])
    assert [b.dialect for b in r.blocks] == ["xml", "deepseek_native", "dsml_v32", "dsml"]
    assert [c.dialect for c in r.calls] == ["xml", "deepseek_native", "dsml_v32", "dsml"]


OPT_IN_ROWS = [
    # "Opt-in dialects (off unless enabled by name)"
    ("tool_call_xml", ("<tool_call><tool_name>f</tool_name><parameters><x>1</x></parameters>"
     "</tool_call>")),
    ("function_call", ('<function_call>f</function_call><function parameter name="x">1'
     "</function>")),
    ("tool_use", '<tool_use><name>f</name><input>{"x": 1}</input></tool_use>'),
    ("json-object", '{"tool_calls": [{"name": "f", "input": {"x": 1}}]}'),
    ("json-list", '[{"name": "f", "arguments": {"x": 1}}]'),
    ("text_kv", 'function.name: f\nfunction.arguments: {"x": 1}'),
]


@table(OPT_IN_ROWS)
def test_s2_opt_in_dialects_are_off_by_default(row: tuple[Any, ...]) -> None:
    (text,) = row
    r = check(text, text, [])
    assert not r.saw_tool_call_syntax


# ============================================================================ §3 aliases
# "Inside a tag shell only ... these map onto the canonical terminals". Each opener below
# wraps the same canonical DSML body; each must parse to the same call.
BODY = '<|DSML|invoke name="f"><|DSML|parameter name="p">1</|DSML|parameter></|DSML|invoke>'
CLOSE = "</|DSML|tool_calls>"
F1 = [("f", {"p": 1})]

ALIAS_OPENER_ROWS = [
    # bars | ｜ ‖, doubled bars, ！ 、 ␂ \x02, spaces between prefix parts
    ("bar-ascii", "<|DSML|tool_calls>"),
    ("bar-fullwidth", "<｜DSML｜tool_calls>"),
    ("bar-double-vertical", "<‖DSML‖tool_calls>"),
    ("bar-doubled", "<｜｜DSML｜｜tool_calls>"),
    ("bar-fullwidth-exclamation", "<！DSML！tool_calls>"),
    ("bar-ideographic-comma", "<、DSML、tool_calls>"),
    ("bar-stx-symbol", "<␂DSML␂tool_calls>"),
    ("bar-raw-stx", "<\x02DSML\x02tool_calls>"),
    ("spaces-between-parts", "<| DSML | tool_calls>"),
    # any protocol prefix before the fixed local name
    ("prefix-no-lead-bar", "<DSML|tool_calls>"),
    ("prefix-space", "<|DSML tool_calls>"),
    ("prefix-glued", "<DSMLtool_calls>"),
    ("prefix-double-lt", "<<|DSML|tool_calls>"),
    ("prefix-repeated", "<DSML|DSML|tool_calls>"),
    ("prefix-emoji", "<proto💥tool_calls>"),
    ("prefix-24-chars", "<" + "p" * 24 + "tool_calls>"),
    # fullwidth < > and CJK brackets
    ("fullwidth-brackets", "＜|DSML|tool_calls＞"),
    ("cjk-brackets", "〈|DSML|tool_calls〉"),
    # zero-width characters and BOM
    ("zero-width-space", "<\u200b|DSML|tool_calls>"),
    ("zero-width-joiner", "<\u200d|DSML|tool_calls>"),
    ("bom", "<\ufeff|DSML|tool_calls>"),
    # Unicode dashes/underscores, PascalCase, dashed names
    ("hyphen-u2010", "<|DSML|tool\u2010calls>"),
    ("en-dash", "<|DSML|tool\u2013calls>"),
    ("fullwidth-low-line", "<|DSML|tool\uff3fcalls>"),
    ("pascal-case", "<|DSML|ToolCalls>"),
    ("dashed", "<dsml-tool-calls>"),
    # one stray non-structural separator after the local name or before >
    ("stray-bar-before-gt", "<|DSML|tool_calls|>"),
    ("stray-bar-instead-of-gt", "<|DSML|tool_calls|"),
    ("stray-reference-mark", "<DSMLtool_calls※>"),
]


@table(ALIAS_OPENER_ROWS)
def test_s3_alias_wrapper_openers(row: tuple[Any, ...]) -> None:
    (opener,) = row
    r = check(f"x {opener}{BODY}{CLOSE} y", "x  y", F1)
    assert r.saw_tool_call_syntax
    assert [b.status for b in r.blocks] == ["complete"]


ALIAS_CLOSER_ROWS = [
    ("canonical", "</|DSML|tool_calls>"),
    ("fullwidth", "＜／|DSML|tool_calls＞"),
    ("fullwidth-slash-only", "<／|DSML|tool_calls>"),
    ("cjk", "〈/|DSML|tool_calls〉"),
    ("double-vertical-bar", "</‖DSML‖tool_calls>"),
    ("zero-width", "<\u200b/|DSML|tool_calls>"),
    ("dashed", "</dsml-tool-calls>"),
    ("pascal", "</|DSML|ToolCalls>"),
    ("stray-separator", "</|DSML|tool_calls|>"),
    ("emoji-prefix", "</proto💥tool_calls>"),
]


@table(ALIAS_CLOSER_ROWS)
def test_s3_alias_wrapper_closers(row: tuple[Any, ...]) -> None:
    (closer,) = row
    check(f"x <|DSML|tool_calls>{BODY}{closer} y", "x  y", F1)


ALIAS_INNER_ROWS = [
    ("dashed-invoke-and-parameter",
     '<dsml-invoke name="f"><dsml-parameter name="p">1</dsml-parameter></dsml-invoke>'),
    ("pascal-invoke-and-parameter",
     '<|DSML|Invoke name="f"><|DSML|Parameter name="p">1</|DSML|Parameter></|DSML|Invoke>'),
    ("stray-separator-parameter",
     '<|DSML|invoke name="f"><|DSML|parameter name="p"|>1</|DSML|parameter></|DSML|invoke>'),
    ("stray-separator-after-local-name",
     ('<|DSML|invoke| name="f"><|DSML|parameter| name="p">1</|DSML|parameter|>'
     '</|DSML|invoke|>')),
    ("fullwidth-brackets",
     ('＜|DSML|invoke name="f"＞＜|DSML|parameter name="p"＞1＜／|DSML|parameter＞'
     '＜／|DSML|invoke＞')),
    ("cjk-brackets",
     '〈|DSML|invoke name="f"〉〈|DSML|parameter name="p"〉1〈/|DSML|parameter〉〈/|DSML|invoke〉'),
    ("curly-double-quotes",
     '<|DSML|invoke name=“f”><|DSML|parameter name=“p”>1</|DSML|parameter></|DSML|invoke>'),
    ("curly-single-quotes",
     "<|DSML|invoke name=‘f’><|DSML|parameter name=‘p’>1</|DSML|parameter></|DSML|invoke>"),
    ("single-quotes",
     "<|DSML|invoke name='f'><|DSML|parameter name='p'>1</|DSML|parameter></|DSML|invoke>"),
    ("zero-width-and-bom",
     ('<\u200b|DSML|invoke name="f"><\ufeff|DSML|parameter name="p">1'
     '<\u200b/|DSML|parameter></|DSML|invoke>')),
    ("bars-and-spaces",
     '<‖DSML‖invoke name="f"><| DSML | parameter name="p">1</｜DSML｜parameter></!DSML!invoke>'),
    ("cdata-fullwidth-bang", ('<|DSML|invoke name="f"><|DSML|parameter name="p">'
     "<！[CDATA[1]]></|DSML|parameter></|DSML|invoke>")),
    ("cdata-ideographic-comma", ('<|DSML|invoke name="f"><|DSML|parameter name="p">'
     "<、[CDATA[1]]></|DSML|parameter></|DSML|invoke>")),
]


@table(ALIAS_INNER_ROWS)
def test_s3_alias_invoke_parameter_cdata(row: tuple[Any, ...]) -> None:
    (body,) = row
    want = "1" if "CDATA" in body else 1  # CDATA content is taken verbatim (§5)
    check(f"x <|DSML|tool_calls>{body}{CLOSE} y", "x  y", [("f", {"p": want})])


ZERO_WIDTH_ROWS = [
    # "zero-width characters and BOM" are noise anywhere in a tag shell, not only after `<`
    ("opener-before-gt", "<|DSML|tool_calls\u200b>" + BODY + CLOSE),
    ("closer-before-gt", "<|DSML|tool_calls>" + BODY + "</|DSML|tool_calls\u200b>"),
    ("invoke-before-attribute", '<|DSML|tool_calls><|DSML|invoke\u200b name="f">'
     '<|DSML|parameter name="p">1</|DSML|parameter></|DSML|invoke>' + CLOSE),
    ("bom-before-attribute", '<|DSML|tool_calls><|DSML|invoke \ufeffname="f">'
     '<|DSML|parameter name="p">1</|DSML|parameter></|DSML|invoke>' + CLOSE),
]


@table(ZERO_WIDTH_ROWS)
def test_s3_zero_width_inside_tag_shells(row: tuple[Any, ...]) -> None:
    (text,) = row
    check(f"x {text} y", "x  y", F1)


def test_s3_string_attribute_curly_quotes() -> None:
    text = ("<｜DSML｜tool_calls><｜DSML｜invoke name=“get_pages”><｜DSML｜parameter name=“pages” "
            "string=“true”>3</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")
    check(text, "", [("get_pages", {"pages": "3"})])


NATIVE_ALIAS_ROWS = [
    ("ascii-bars", "|", "▁"),
    ("fullwidth-bars-underscore", "｜", "_"),
    ("ascii-bars-underscore", "|", "_"),
    ("ascii-bars-space", "|", " "),
    ("fullwidth-bars-space", "｜", " "),
]


@table(NATIVE_ALIAS_ROWS)
def test_s3_native_marker_spellings(row: tuple[Any, ...]) -> None:
    bar, sep = row

    def m(*words: str) -> str:
        return f"<{bar}{sep.join(words)}{bar}>"

    text = (m("tool", "calls", "begin") + m("tool", "call", "begin") + "function"
            + m("tool", "sep") + 'f\n```json\n{"a": 1}\n```' + m("tool", "call", "end")
            + m("tool", "call", "begin") + "g" + m("tool", "sep") + '{"b": [2]}'
            + m("tool", "call", "end") + m("tool", "calls", "end"))
    r = check(f"pre {text} post", "pre  post", [("f", {"a": 1}), ("g", {"b": [2]})])
    assert [c.dialect for c in r.calls] == ["deepseek_native"] * 2


def test_s3_native_markers_mixed_spellings_in_one_block() -> None:
    text = ('<|tool▁calls▁begin|><｜tool_call_begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool_call_end｜>'
            "<|tool calls end|>")
    check(text, "", [("f", {"a": 1})])


NEAR_MISS_ROWS = [
    # "Near-miss names stay text"
    ("tool_calls_extra", '<tool_calls_extra><invoke name="f"></invoke></tool_calls_extra>'),
    ("ToolCallsExtra", '<ToolCallsExtra><invoke name="f"></invoke></ToolCallsExtra>'),
    ("prefixed-ToolCallsExtra",
     '<|DSML|ToolCallsExtra><|DSML|invoke name="f"></|DSML|invoke></|DSML|ToolCallsExtra>'),
    ("prefixed-tool_calls_extra",
     ('<|DSML|tool_calls_extra><|DSML|invoke name="f"></|DSML|invoke>'
     "</|DSML|tool_calls_extra>")),
    ("tool-calls-no-prefix", '<tool-calls><invoke name="f"></invoke></tool-calls>'),
    ("greek-omicron-invoke", 'Use <invοke name="f"></invοke> like this.'),
    ("greek-omicron-before-closer", '<invοke name="f"></invοke></tool_calls>'),
    ("greek-omicron-wrapper", '<tοol_calls><invoke name="f"></invoke></tοol_calls>'),
    ("singular-tool_call", '<tool_call><invoke name="f"></invoke></tool_call>'),
    ("prefix-over-24-chars", "<" + "p" * 25 + 'tool_calls><invoke name="f"></invoke>'
     "</" + "p" * 25 + "tool_calls>"),
    ("partial-opener", "<｜DSM some regular text"),
    ("lone-brackets", "a<b, c>d, ＜e＞, 〈f〉 and <b>bold</b>"),
]


def test_s3_prefix_holds_no_line_break() -> None:
    """"A protocol prefix ... holds no <, > or line break": the opener is text; the invoke
    and closer after it still form a missing-opener shape (§4)."""
    check('<DSML\n|tool_calls><invoke name="a"/></tool_calls>', "<DSML\n|tool_calls>",
          [("a", {})])


@table(NEAR_MISS_ROWS)
def test_s3_near_misses_stay_text(row: tuple[Any, ...]) -> None:
    (text,) = row
    r = check(text, text, [])
    assert not r.saw_tool_call_syntax


NOT_IN_BODY_ROWS = [
    # "never inside parameter bodies, CDATA content or prose"
    ("cdata-fullwidth-and-cjk", "<![CDATA[a ＜b＞ 〈c〉 ／ d]]>", "a ＜b＞ 〈c〉 ／ d"),
    ("cdata-zero-width-bom", "<![CDATA[a\u200bb\ufeffc]]>", "a\u200bb\ufeffc"),
    ("cdata-quotes-bars", "<![CDATA[“q” ‘r’ 'x' | ｜ ‖ ！ 、 ␂]]>", "“q” ‘r’ 'x' | ｜ ‖ ！ 、 ␂"),
    ("cdata-lookalike-tags", "<![CDATA[<！[CDATA[x <dsml-invoke> ＜／parameter＞]]>",
     "<！[CDATA[x <dsml-invoke> ＜／parameter＞"),
    ("body-quotes-bars", "“q” ‘r’ ‖ ｜ 、 ！", "“q” ‘r’ ‖ ｜ 、 ！"),
    ("body-zero-width", "a\u200bb\ufeffc", "a\u200bb\ufeffc"),
    ("body-fullwidth-brackets", "x ＞ y ／ z", "x ＞ y ／ z"),
    ("body-unicode-dashes", "tool‐calls tool—calls ToolCalls", "tool‐calls tool—calls ToolCalls"),
]


@table(NOT_IN_BODY_ROWS)
def test_s3_aliases_not_applied_in_bodies(row: tuple[Any, ...]) -> None:
    body, value = row
    check(xml_call(body), "", [("f", {"p": value})])


def test_s3_aliases_not_applied_in_prose() -> None:
    prose = "“quoted” ‘single’ ‖ ｜ 、 ！ ␂ \x02 a\u200bb\ufeff ＞ ／ 〉 tool—calls ToolCalls"
    check(prose + X(INV("a")) + prose, prose + prose, [("a", {})])


# ============================================================================ §4 structure
STRUCTURE_ROWS = [
    ("zero-arg-self-closing", '<tool_calls><invoke name="get_time"/></tool_calls>', "",
     [("get_time", {})]),
    ("zero-arg-self-closing-space", '<tool_calls><invoke name="t" /></tool_calls>', "",
     [("t", {})]),
    ("zero-arg-empty-invoke", X(INV("t")), "", [("t", {})]),
    ("whitespace-around-invokes", "<tool_calls>\n \t\n" + INV("a") + "\n\n" + INV("b")
     + "\n </tool_calls>", "", [("a", {}), ("b", {})]),
    ("several-params", X(INV("a", P("x", "1") + "\n" + P("y", "two"))), "",
     [("a", {"x": 1, "y": "two"})]),
    # "Only whitespace may stand between the opener and the first invoke: other text there
    # means the opener was a prose mention, and the block fails at once"
    ("mention", "I will use <tool_calls> now.", "I will use <tool_calls> now.", []),
    ("mention-then-real", "Use <tool_calls> to call.\n" + X(INV("a")),
     "Use <tool_calls> to call.\n", [("a", {})]),
    ("dsml-mention-then-real", ("The <|DSML|tool_calls> tag, then:\n<|DSML|tool_calls>"
     '<|DSML|invoke name="a"></|DSML|invoke></|DSML|tool_calls>'),
     "The <|DSML|tool_calls> tag, then:\n", [("a", {})]),
    # "scanning resumes right after its opening tag" (§7)
    ("double-opener", "<tool_calls>" + X('<invoke name="a"/>'), "<tool_calls>", [("a", {})]),
    # ... and what follows the failed opener is scanned again: here a missing-opener shape
    ("text-before-first-invoke", "<tool_calls>x" + INV("a") + "</tool_calls>",
     "<tool_calls>x", [("a", {})]),
    ("text-before-first-invoke-no-closer", "<tool_calls>x" + INV("a") + " y",
     "<tool_calls>x" + INV("a") + " y", []),
    # "An invoke needs a non-empty name"; "A parameter needs a name."
    ("empty-name", X('<invoke name=""></invoke>'), X('<invoke name=""></invoke>'), []),
    ("no-name", X(INV("a")).replace(' name="a"', ""), X(INV("a")).replace(' name="a"', ""),
     []),
    ("param-without-name", X(INV("a", "<parameter>v</parameter>")),
     X(INV("a", "<parameter>v</parameter>")), []),
    # "A wrapper that closes but does not parse ... is released verbatim as text"
    ("param-tag", X(INV("a", '<param name="p">v</param>')) + " tail",
     X(INV("a", '<param name="p">v</param>')) + " tail", []),
    ("no-invoke", "<tool_calls></tool_calls>", "<tool_calls></tool_calls>", []),
    ("no-invoke-whitespace", "<tool_calls>\n \n</tool_calls>", "<tool_calls>\n \n</tool_calls>",
     []),
    ("unclosed-invoke", "<tool_calls><invoke name=\"a\"></tool_calls>",
     "<tool_calls><invoke name=\"a\"></tool_calls>", []),
    ("unclosed-block", 'x <tool_calls><invoke name="a"><parameter name="p">v',
     'x <tool_calls><invoke name="a"><parameter name="p">v', []),
    ("unclosed-wrapper", "x " + X(INV("a"))[:-len("</tool_calls>")],
     "x " + X(INV("a"))[:-len("</tool_calls>")], []),
    ("failed-then-real",
     X(INV("a", "<param>v</param>")) + "\n" + X(INV("b", P("p", "1"))),
     X(INV("a", "<param>v</param>")) + "\n", [("b", {"p": 1})]),
    ("failed-dsml-then-real",
     "<|DSML|tool_calls><|DSML|invoke><|DSML|parameter name=\"p\">v</|DSML|parameter>"
     "</|DSML|invoke></|DSML|tool_calls> then " + X(INV("b")),
     ("<|DSML|tool_calls><|DSML|invoke><|DSML|parameter name=\"p\">v</|DSML|parameter>"
     "</|DSML|invoke></|DSML|tool_calls> then "), [("b", {})]),
    ("unclosed-then-real-inside", "<tool_calls>\nsee " + X(INV("b")),
     "<tool_calls>\nsee ", [("b", {})]),
    # "A bare invoke never followed by a closing wrapper is text."
    ("bare-invoke", 'ok <invoke name="a"><parameter name="p">v</parameter></invoke> after',
     'ok <invoke name="a"><parameter name="p">v</parameter></invoke> after', []),
    ("bare-invoke-unfinished", 'see <invoke name="terminal">not a real call',
     'see <invoke name="terminal">not a real call', []),
    ("bare-self-closing-invoke", 'use <invoke name="a"/> here', 'use <invoke name="a"/> here',
     []),
]


@table(STRUCTURE_ROWS)
def test_s4_structure(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    check(text, want_text, calls)


def test_s4_mention_fails_at_once_while_streaming() -> None:
    """"the block fails at once (no waiting for a close that may never come)"."""
    text = "I will use <tool_calls> now"
    run_all_ways(text)
    sieve = callsieve.Sieve()
    out = "".join(e.text for e in sieve.feed(text) if isinstance(e, Text))
    assert out == text


def test_s4_stray_text_between_invokes_is_ignored_and_reported() -> None:
    text = ('<tool_calls>\n<invoke name="a"/> I think\n<invoke name="b">'
            + P("p", "1") + "</invoke> and done\n</tool_calls>")
    r = check("x " + text + " y", "x  y", [("a", {}), ("b", {"p": 1})])
    (block,) = r.blocks
    assert block.status == "complete"
    assert block.diagnostics, "stray text must be reported in the block's diagnostics"
    assert block.raw == text


def test_s4_failed_wrapper_is_recorded_and_released_verbatim() -> None:
    bad = X(INV("a", '<param name="p">v</param>'))
    text = "pre " + bad + " post " + X(INV("b"))
    r = check(text, "pre " + bad + " post ", [("b", {})])
    *failed, last = r.blocks
    assert failed and all(b.status == "failed" and b.diagnostics for b in failed)
    assert failed[0].span[0] == len("pre ")
    assert all(b.raw == text[b.span[0]:b.span[1]] for b in r.blocks)
    assert (last.status, last.raw) == ("complete", X(INV("b")))


MISSING_OPENER_ROWS = [
    ("xml", 'ok\n<invoke name="a"><parameter name="p">v</parameter></invoke></tool_calls> after',
     "ok\n after", [("a", {"p": "v"})]),
    ("xml-whitespace", '<invoke name="a"/>\n  <invoke name="b"></invoke>\n</tool_calls>', "",
     [("a", {}), ("b", {})]),
    ("dsml", ('<|DSML|invoke name="a"></|DSML|invoke>\n<|DSML|invoke name="b"></|DSML|invoke>\n'
     "</|DSML|tool_calls>"), "", [("a", {}), ("b", {})]),
    ("v4", ('<｜DSML｜invoke name="a"><｜DSML｜parameter name="n" string="true">1'
     "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"), "", [("a", {"n": "1"})]),
    ("v32-closer", '<｜DSML｜invoke name="a"></｜DSML｜invoke></｜DSML｜function_calls>', "",
     [("a", {})]),
    ("fullwidth-closer", '<invoke name="a"/>＜／tool_calls＞', "", [("a", {})]),
    ("alias-prefix", '<DSMLinvoke name="a"/></DSMLtool_calls>', "", [("a", {})]),
]


@table(MISSING_OPENER_ROWS)
def test_s4_missing_opener_repair(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    r = check(text, want_text, calls)
    assert all(c.repairs == ("missing_opener",) for c in r.calls), r.calls
    complete = [b for b in r.blocks if b.status == "complete"]
    assert len(complete) == 1 and complete[0].repairs == ("missing_opener",)
    assert r.saw_tool_call_syntax


def test_s4_repaired_block_keeps_its_raw() -> None:
    text = 'a <invoke name="x"></invoke></tool_calls> b'
    r = check(text, "a  b", [("x", {})])
    (block,) = [b for b in r.blocks if b.status == "complete"]
    assert block.raw == '<invoke name="x"></invoke></tool_calls>'
    assert text[block.span[0]:block.span[1]] == block.raw


LOOSE_CDATA_ROWS = [
    ("basic", X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>')), "",
     [("a", {"p": "abc"})]),
    # "closed before the *last* parameter-closing tag that lets the rest of the block parse"
    ("last-closing-tag", X(INV("a", '<parameter name="p"><![CDATA[x</parameter>y'
                                    "</parameter>")), "", [("a", {"p": "x</parameter>y"})]),
    ("second-param", X(INV("a", P("q", "1") + '<parameter name="p"><![CDATA[ab\ncd'
                                              "</parameter>")), "",
     [("a", {"q": 1, "p": "ab\ncd"})]),
    ("dsml", ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">'
     "<![CDATA[v</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"), "", [("a", {"p": "v"})]),
    # the block ends at its closing wrapper; what follows it is prose
    ("with-text-after", X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))
     + " and then some", " and then some", [("a", {"p": "abc"})]),
    ("then-another-block", X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))
     + " text " + X('<invoke name="b"/>'), " text ", [("a", {"p": "abc"}), ("b", {})]),
]


@table(LOOSE_CDATA_ROWS)
def test_s4_loose_cdata(row: tuple[Any, ...]) -> None:
    text, want_text, calls = row
    r = check(text, want_text, calls)
    assert r.calls[0].repairs == ("loose_cdata",)
    complete = [b for b in r.blocks if b.status == "complete"]
    assert complete[0].repairs == ("loose_cdata",)
    assert complete[0].raw.endswith("tool_calls>")


LOOSE_CDATA_TEXT_ROWS = [
    ("no-closing-tag", 'x <tool_calls><invoke name="a"><parameter name="p"><![CDATA[abc'),
    ("no-wrapper-close", X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))[
        :-len("</tool_calls>")]),
    ("closing-tags-do-not-fit", ('x <tool_calls><invoke name="a"><parameter name="p">'
     "<![CDATA[abc</invoke></tool_calls>")),
]


@table(LOOSE_CDATA_TEXT_ROWS)
def test_s4_loose_cdata_without_a_fitting_cut_is_text(row: tuple[Any, ...]) -> None:
    (text,) = row
    check(text, text, [])


def test_s4_loose_cdata_repair_happens_at_close() -> None:
    text = X(INV("a", '<parameter name="p"><![CDATA[abc</parameter>'))
    run_all_ways(text)
    sieve = callsieve.Sieve()
    assert not any(isinstance(e, ToolCalls) for e in sieve.feed(text))
    events = sieve.close()
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    assert canon_calls(calls) == [("a", canon_value({"p": "abc"}))]
    assert calls[0].repairs == ("loose_cdata",)


# ============================================================================ §5 values
VALUE_ROWS = [
    # CDATA verbatim; several sections concatenate
    ("cdata-verbatim", "<![CDATA[  x < y  ]]>", "  x < y  "),
    ("cdata-entities-kept", "<![CDATA[&lt;b&gt; &amp;]]>", "&lt;b&gt; &amp;"),
    ("cdata-newlines", "<![CDATA[\nline1\n  line2\n]]>", "\nline1\n  line2\n"),
    ("cdata-concat", "<![CDATA[a]]><![CDATA[b]]>", "ab"),
    ("cdata-concat-split-close", "<![CDATA[x]]]]><![CDATA[>y]]>", "x]]>y"),
    ("cdata-number-stays-string", "<![CDATA[42]]>", "42"),
    ("cdata-empty", "<![CDATA[]]>", ""),
    # plain bodies trimmed, entities decoded
    ("trim", "  hello world \n", "hello world"),
    ("entities-named", "&lt;a&gt; &amp; &quot;q&quot; &apos;s&apos;", "<a> & \"q\" 's'"),
    ("entities-numeric", "&#65;&#x42;&#X43;&#233;", "ABCé"),
    ("entities-decoded-once", "&amp;lt;", "&lt;"),
    ("entities-trim", "  x &lt; y &amp; z  ", "x < y & z"),
    ("empty-body", "", ""),
    ("blank-body", "   \n ", ""),
    # JSON literals become values; anything else is a string
    ("json-int", "10", 10),
    ("json-negative", "-3", -3),
    ("json-float", "2.5", 2.5),
    ("json-exponent", "1e3", 1000.0),
    ("json-true", "true", True),
    ("json-false", "false", False),
    ("json-null", "null", None),
    ("json-array", "[1, \"a\", null]", [1, "a", None]),
    ("json-object", "{\"k\": {\"n\": [true]}}", {"k": {"n": [True]}}),
    ("json-trimmed", "\n  42  \n", 42),
    ("json-from-entities", "[&quot;a&quot;]", ["a"]),
    ("not-json-word", "hello", "hello"),
    ("not-json-capital-true", "True", "True"),
    ("not-json-leading-zero", "007", "007"),
    ("not-json-version", "1.2.3", "1.2.3"),
    ("not-json-quoted-string", "\"x\"", "\"x\""),
    ("not-json-broken-array", "[1, 2", "[1, 2"),
    ("not-json-sentence", "3 apples", "3 apples"),
    # element children: <item> lists are arrays, other children objects, recursively
    ("items", "<item>1</item><item>two</item>", [1, "two"]),
    ("single-item", "<item>x</item>", ["x"]),
    ("items-of-objects", "<item><q>x</q></item><item><q>y</q></item>",
     [{"q": "x"}, {"q": "y"}]),
    ("object", "<a>1</a><b>x</b>", {"a": 1, "b": "x"}),
    ("object-nested", "<a><b><c>true</c></b></a><d>null</d>",
     {"a": {"b": {"c": True}}, "d": None}),
    ("object-with-items", "<list><item>a</item><item>b</item></list><n>2</n>",
     {"list": ["a", "b"], "n": 2}),
    ("object-repeated-child", "<k>1</k><j>x</j><k>2</k>", {"k": [1, 2], "j": "x"}),
    ("object-whitespace", "\n  <a>1</a>\n  <b> x </b>\n", {"a": 1, "b": "x"}),
    ("object-entities", "<a>&lt;x&gt;</a>", {"a": "<x>"}),
    # CDATA holding a structured XML fragment is decoded as such
    ("cdata-siblings", "<![CDATA[<a>1</a><b>2</b>]]>", {"a": 1, "b": 2}),
    ("cdata-nesting", "<![CDATA[<o><p>x</p></o>]]>", {"o": {"p": "x"}}),
    ("cdata-items", "<![CDATA[<item>1</item><item>2</item>]]>", [1, 2]),
    # ... but a single flat inline tag stays a string
    ("cdata-flat-inline-tag", "<![CDATA[<b>urgent</b>]]>", "<b>urgent</b>"),
    ("cdata-html-with-text", "<![CDATA[see <b>this</b> now]]>", "see <b>this</b> now"),
]


@table(VALUE_ROWS)
def test_s5_parameter_values(row: tuple[Any, ...]) -> None:
    body, value = row
    check(xml_call(body), "", [("f", {"p": value})])


RAW_TEXT_FIELDS = ["content", "command", "prompt", "old_string", "new_string", "code", "text"]
STRUCTURED_CDATA = ["<a>1</a><b>2</b>", "<o><p>x</p></o>", "<item>1</item><item>2</item>"]


@pytest.mark.parametrize("field", RAW_TEXT_FIELDS)
@pytest.mark.parametrize("xml", STRUCTURED_CDATA, ids=["siblings", "nesting", "items"])
def test_s5_raw_text_fields_keep_cdata_xml_as_string(field: str, xml: str) -> None:
    check(xml_call(f"<![CDATA[{xml}]]>", pname=field), "", [("f", {field: xml})])


def test_s5_non_raw_text_field_decodes_the_same_cdata() -> None:
    check(xml_call("<![CDATA[<a>1</a><b>2</b>]]>", pname="contents"), "",
          [("f", {"contents": {"a": 1, "b": 2}})])


STRING_ATTR_ROWS = [
    # string="true" keeps the raw string; string="false" parses JSON (raw string if invalid)
    ("true-number", "true", "10", "10"),
    ("true-bool", "true", "true", "true"),
    ("true-array", "true", "[1]", "[1]"),
    ("true-word", "true", "杭州", "杭州"),
    ("false-number", "false", "3", 3),
    ("false-array", "false", "[1, 2]", [1, 2]),
    ("false-object", "false", '{"a": {"b": null}}', {"a": {"b": None}}),
    ("false-json-string", "false", '"x"', "x"),
    ("false-invalid", "false", "not json", "not json"),
    ("false-invalid-array", "false", "[1,", "[1,"),
]


@table(STRING_ATTR_ROWS)
def test_s5_string_attribute(row: tuple[Any, ...]) -> None:
    attr, body, value = row
    for opener, closer in (("<｜DSML｜", "</｜DSML｜"), ("<", "</")):
        text = (f'{opener}tool_calls>{opener}invoke name="f">{opener}parameter name="p" '
                f'string="{attr}">{body}{closer}parameter>{closer}invoke>{closer}tool_calls>')
        check(text, "", [("f", {"p": value})])


def test_s5_repeated_parameter_names_collect_into_an_array() -> None:
    text = X(INV("a", P("p", "1") + P("q", "x") + P("p", "two") + P("p", "[3]")))
    check(text, "", [("a", {"p": [1, "two", [3]], "q": "x"})])


def _schema() -> dict[str, Any]:
    return {"type": "object", "properties": {
        "command": {"type": "string"}, "n": {"type": "integer"}, "s": {"type": "string"},
        "flag": {"type": "boolean"}}}


TOOL_STYLES = {
    "openai": [{"type": "function", "function": {"name": "run", "parameters": _schema()}}],
    "flat": [{"name": "run", "parameters": _schema()}],
}
SCHEMA_ROWS = [
    # "a parameter whose schema type is string always stays a string"
    ("number", "command", "123", "123"),
    ("bool", "s", "true", "true"),
    ("null", "s", "null", "null"),
    ("array", "s", "[1, 2]", "[1, 2]"),
    ("object", "s", '{"a": 1}', '{"a": 1}'),
    ("trimmed-decoded", "s", "  1 &lt; 2 ", "1 < 2"),
    ("cdata-structured", "s", "<![CDATA[<a>1</a><b>2</b>]]>", "<a>1</a><b>2</b>"),
    # other types keep the ordinary rules
    ("integer-typed", "n", "5", 5),
    ("boolean-typed", "flag", "false", False),
    ("unknown-param", "other", "7", 7),
]


@pytest.mark.parametrize("style", sorted(TOOL_STYLES))
@table(SCHEMA_ROWS)
def test_s5_schema_typed_strings(row: tuple[Any, ...], style: str) -> None:
    pname, body, value = row
    check(xml_call(body, pname=pname, tool="run"), "", [("run", {pname: value})],
          tools=TOOL_STYLES[style])


@pytest.mark.parametrize("style", sorted(TOOL_STYLES))
def test_s5_schema_applies_to_its_own_tool_only(style: str) -> None:
    text = xml_call("123", pname="command", tool="other") + xml_call("123", pname="command",
                                                                     tool="run")
    check(text, "", [("other", {"command": 123}), ("run", {"command": "123"})],
          tools=TOOL_STYLES[style])


# ============================================================================ §6 code
REAL = X(INV("real", P("p", "1")))
FAKE = X(INV("fake", P("p", "1")))
CODE_ROWS = [
    ("backtick-fence", f"Example:\n```xml\n{FAKE}\n```\nReal:\n{REAL}",
     "Example:\n```xml\n{FAKE}\n```\nReal:\n"),
    ("tilde-fence", f"~~~\n{FAKE}\n~~~\n{REAL}", "~~~\n{FAKE}\n~~~\n"),
    ("long-fence", f"`````\n{FAKE}\n`````\n{REAL}", "`````\n{FAKE}\n`````\n"),
    ("indented-fence", f"  ```\n{FAKE}\n  ```\n{REAL}", "  ```\n{FAKE}\n  ```\n"),
    ("dsml-in-fence", f"```\n{DSML}\n```\n{REAL}", "```\n{DSML}\n```\n"),
    ("native-in-fence", f"```\n{NATIVE_V31}\n```\n{REAL}", "```\n{NATIVE_V31}\n```\n"),
    ("missing-opener-shape-in-fence", '```\n<invoke name="fake"/></tool_calls>\n```\n' + REAL,
     '```\n<invoke name="fake"/></tool_calls>\n```\n'),
    # "closed by a fence of the same character and at least the same length"
    ("tilde-does-not-close-backticks", f"```\n~~~\n{FAKE}\n```\n{REAL}",
     "```\n~~~\n{FAKE}\n```\n"),
    ("shorter-does-not-close", f"````\n```\n{FAKE}\n````\n{REAL}", "````\n```\n{FAKE}\n````\n"),
    ("longer-closes", f"```\n{FAKE}\n``````\n{REAL}", "```\n{FAKE}\n``````\n"),
    # "nesting respected"
    ("nested-longer-outer", f"````md\n```xml\n{FAKE}\n```\n{FAKE}\n````\n{REAL}",
     "````md\n```xml\n{FAKE}\n```\n{FAKE}\n````\n"),
    ("nested-same-length", f"```md\n```xml\n{FAKE}\n```\n{FAKE}\n```\n{REAL}",
     "```md\n```xml\n{FAKE}\n```\n{FAKE}\n```\n"),
    ("nested-tilde-in-backticks", f"```md\n~~~xml\n{FAKE}\n~~~\n{FAKE}\n```\n{REAL}",
     "```md\n~~~xml\n{FAKE}\n~~~\n{FAKE}\n```\n"),
    # inline code spans
    ("inline", f"Use `{FAKE}` like that. {REAL}", "Use `{FAKE}` like that. "),
    ("inline-double", f"Use ``a ` {FAKE}`` ok {REAL}", "Use ``a ` {FAKE}`` ok "),
    ("inline-needs-equal-run", f"x ``a`{FAKE}`` {REAL}", "x ``a`{FAKE}`` "),
    ("inline-single-not-closed-by-double", f"x `a``{FAKE}` {REAL}", "x `a``{FAKE}` "),
    ("inline-mentions", "它只提到了 `<|DSML|tool_calls>` 和 `<tool_calls>`。\n" + REAL,
     "它只提到了 `<|DSML|tool_calls>` 和 `<tool_calls>`。\n"),
    ("inline-across-newline", f"see `code\n{FAKE}` {REAL}", "see `code\n{FAKE}` "),
    # "an unclosed span ends at a blank line"
    ("unclosed-span-blank-line", f"don't use ` here.\n\n{REAL}", "don't use ` here.\n\n"),
    ("unclosed-span-blank-line-spaces", f"a ` b\n  \n{REAL}", "a ` b\n  \n"),
    ("unclosed-span-before-blank-line", f"a ` b\n{FAKE}\n\n{REAL}", "a ` b\n{FAKE}\n\n"),
    # a prose mention, then a real block
    ("mention-then-real", f"I will use <tool_calls> now.\n{REAL}",
     "I will use <tool_calls> now.\n"),
    ("tildes-are-not-inline-code", f"~x~ {REAL}", "~x~ "),
    ("fence-closed-then-real", f"```\ncode\n```\n{REAL}\n```\n{FAKE}\n```",
     "```\ncode\n```\n\n```\n{FAKE}\n```"),
]


@table(CODE_ROWS)
def test_s6_examples_are_not_calls(row: tuple[Any, ...]) -> None:
    text, want_text = row
    want_text = want_text.replace("{FAKE}", FAKE).replace("{DSML}", DSML).replace(
        "{NATIVE_V31}", NATIVE_V31)
    check(text, want_text, [("real", {"p": 1})])


FENCE_IN_BLOCK_ROWS = [
    # "Fence markers inside a block (e.g. in CDATA) do not change the fence state."
    ("cdata-backtick-fence", "<![CDATA[```python\nprint(1)\n]]>", "```python\nprint(1)\n"),
    ("cdata-tilde-fence", "<![CDATA[~~~\n]]>", "~~~\n"),
    ("cdata-closing-fence", "<![CDATA[\n```\n]]>", "\n```\n"),
    ("body-backtick", "a ` b", "a ` b"),
    ("body-fence-line", "\n```\n", "```"),
    ("cdata-inline-code-open", "<![CDATA[`unclosed]]>", "`unclosed"),
]


@table(FENCE_IN_BLOCK_ROWS)
def test_s6_fence_markers_inside_a_block(row: tuple[Any, ...]) -> None:
    body, value = row
    first = xml_call(body, pname="content")
    check(f"{first}\n{REAL}\nend", "\n\nend", [("f", {"content": value}), ("real", {"p": 1})])


def test_s6_fence_markers_inside_a_failed_block_are_prose() -> None:
    """A failed block is released as text and scanned again as prose: a fence it opens is
    a real fence, so the block after it, inside that fence, is an example."""
    failed = X(INV("a", "<param>\n```\n</param>"))
    text = f"{failed}\n{FAKE}\n```\n{REAL}"
    check(text, f"{failed}\n{FAKE}\n```\n", [("real", {"p": 1})])


def test_s6_unclosed_fence_runs_to_the_end() -> None:
    text = f"```\n{FAKE}\n{REAL}\n"
    check(text, text, [])


# ============================================================================ §7 streaming
def fed(chunks: list[str], **opts: Any) -> tuple[Any, list[list[Any]]]:
    """Feed chunks one by one; returns the sieve and the events of each feed."""
    sieve = callsieve.Sieve(**opts)
    return sieve, [sieve.feed(c) for c in chunks]


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


def calls_of(events: list[Any]) -> list[tuple[str, str]]:
    return canon_calls(c for e in events if isinstance(e, ToolCalls) for c in e.calls)


PLAIN_PROSE = [
    "hello wor",
    "a > b and c >= d, 100%",
    "日本語のテキスト ｜ ▁ 、 ！ ※ ␂",
    "use `x` and ``y`` here",
    "tail `",
    "tail ``",
    "~~~ not a fence",
    "```\ncode\n```\nafter",
    "```\ncode\n``",
    "line\n\n\n",
    "emoji 💥 and \u200b zero width",
]


@pytest.mark.parametrize("prose", PLAIN_PROSE)
def test_s7_text_without_a_tag_lead_is_never_held(prose: str) -> None:
    """"Text is released as soon as it cannot be the start of a tool block" - text with no
    `<` (or `＜`, `〈`) cannot start one, so every feed releases all of it."""
    run_all_ways(prose)
    sieve = callsieve.Sieve()
    out = ""
    for i, ch in enumerate(prose):
        out += text_of(sieve.feed(ch))
        assert out == prose[:i + 1], f"held back {prose[len(out):i + 1]!r}"
    _, [events] = fed([prose])
    assert text_of(events) == prose


HOLD_ROWS = [
    # (fed, what must already be out, may the rest be held)
    ("lone-lt", "x <", "x "),
    ("lt-letter", "x <b", "x "),
    ("lt-tag-closed", "x <b>", "x <b>"),
    ("lt-space", "x < y", "x < y"),
    ("lt-digit-run", "1<2<3", "1<2"),
    ("prefix-then-newline", "x <|DSML\nmore", "x <|DSML\nmore"),
    ("prefix-too-long", "x <" + "a" * 30, "x <" + "a" * 30),
    ("dsml-prefix-too-long", "x <|DSML|" + "q" * 40, "x <|DSML|" + "q" * 40),
    ("partial-dsml", "x <｜DSM", "x "),
    ("partial-wrapper", "x <|DSML|tool_cal", "x "),
    ("partial-native", "x <｜tool▁calls▁be", "x "),
    ("html-after-lt", "a <b>bold</b> c", "a <b>bold</b> c"),
    ("inside-fence", "```\nx <", "```\nx <"),
    ("inside-inline-code", "`x <tool_calls", "`x <tool_calls"),
]


@table(HOLD_ROWS)
def test_s7_hold_back_is_only_a_viable_tag_prefix(row: tuple[Any, ...]) -> None:
    text, must_be_out = row
    run_all_ways(text)
    for chunks in ([text], list(text)):
        _, per_feed = fed(chunks)
        out = "".join(text_of(evs) for evs in per_feed)
        assert out.startswith(must_be_out) and text.startswith(out), (chunks, out)
        held = text[len(out):]
        assert len(held) <= 64, f"held back {held!r}"
        assert "\n" not in held, f"held back a line break: {held!r}"


def test_s7_close_flushes_held_tail() -> None:
    run_all_ways("x <")
    sieve, [events] = fed(["x <"])
    assert text_of(events) == "x "
    assert text_of(sieve.close()) == "<"


def test_s7_close_flushes_unfinished_block_as_text() -> None:
    text = 'x <tool_calls><invoke name="a"><parameter name="p">v'
    run_all_ways(text)
    sieve, [events] = fed([text])
    assert text_of(events) == "x "
    closing = sieve.close()
    assert text_of(closing) == text[2:]
    assert not calls_of(closing)


EMIT_ROWS = [
    ("xml", X(INV("a", P("p", "1")))),
    ("dsml", ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">1'
     "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>")),
    ("dsml_v4", ('<｜DSML｜tool_calls><｜DSML｜invoke name="a"><｜DSML｜parameter name="p">1'
     "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")),
    ("dsml_v32", ('<｜DSML｜function_calls><｜DSML｜invoke name="a"><｜DSML｜parameter name="p">1'
     "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>")),
    ("fullwidth-closer", ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">1'
     "</|DSML|parameter></|DSML|invoke>＜／|DSML|tool_calls＞")),
    ("closer-with-space", X(INV("a", P("p", "1")))[:-1] + " >"),
    ("native", ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{"p": 1}'
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
    ("missing-opener", INV("a", P("p", "1")) + "</tool_calls>"),
]


@table(EMIT_ROWS)
def test_s7_call_emitted_when_closing_tag_completes(row: tuple[Any, ...]) -> None:
    (block,) = row
    text = "pre " + block + " post"
    check(text, "pre  post", [("a", {"p": 1})])
    cut = len("pre ") + len(block) - 1
    for chunks in ([text[:cut], text[cut:]], [*text[:cut], text[cut:]]):
        sieve, per_feed = fed(chunks)
        before = [e for evs in per_feed[:-1] for e in evs]
        assert not calls_of(before), "a call was emitted before its closing tag completed"
        assert text_of(before) == "pre "
        last = per_feed[-1]
        assert calls_of(last) == [("a", canon_value({"p": 1}))]
        assert text_of(last) == " post", "text after the block must go out at once"
        assert sieve.close() == []


def test_s7_early_emit_invoke_emits_each_call_when_its_invoke_closes() -> None:
    first = '<invoke name="a"/>'
    second = INV("b", P("p", "1"))
    text = f"x <tool_calls>\n{first}\n{second}\n</tool_calls> y"
    want = [("a", {}), ("b", {"p": 1})]
    check(text, "x  y", want, early_emit="invoke")
    check(text, "x  y", want)
    i1 = text.index(first) + len(first)
    i2 = text.index(second) + len(second)
    _sieve, per_feed = fed([text[:i1 - 1], text[i1 - 1:i1], text[i1:i2 - 1], text[i2 - 1:i2],
                           text[i2:]], early_emit="invoke")
    assert [len(calls_of(evs)) for evs in per_feed] == [0, 1, 0, 1, 0]
    assert text_of(per_feed[-1]) == " y"
    _, per_feed_block = fed([text[:i1], text[i1:i2], text[i2:]])
    assert [len(calls_of(evs)) for evs in per_feed_block] == [0, 0, 2]


@pytest.mark.parametrize("cut", [None, 38, 39, 57])
def test_s7_early_emit_invoke_events_carry_the_diagnostics_of_their_stretch(cut: Any) -> None:
    """Each event's block holds the diagnostics that arose in the input it settles, so the
    events of one block add up to the same diagnostics however the input was chunked."""
    text = '<tool_calls><invoke name="e"></invoke>a<invoke name="g"/></tool_calls>'
    sieve = callsieve.Sieve(early_emit="invoke")
    chunks = [text] if cut is None else [text[:cut], text[cut:]]
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    blocks = [e.block for e in events if isinstance(e, ToolCalls)]
    assert [d for b in blocks for d in b.diagnostics] == ["stray text ignored at offset 38"]
    for b in blocks:  # ... each in the event whose stretch holds the stray text
        assert all(b.span[0] <= 38 < b.span[1] for _ in b.diagnostics)


def test_s7_early_emit_invoke_block_breaks_off_after_a_call() -> None:
    head = '<tool_calls><invoke name="a"/>'
    rest = '<invoke name="b"><parameter name="p">v'
    r = check("x " + head + rest, "x " + rest, [("a", {})], early_emit="invoke")
    partial = [b for b in r.blocks if b.status == "partial"]
    assert len(partial) == 1 and partial[0].raw == head
    # with the default early_emit="block" nothing is emitted: the block never closed
    check("x " + head + rest, "x " + head + rest, [])


def test_s7_mode_off_passes_everything_as_text() -> None:
    text = f"a {XML} b {DSML} c {NATIVE_V3} `x` ```\n"
    r = check(text, text, [], mode="off")
    assert r.blocks == ()
    sieve, per_feed = fed(list(text), mode="off")
    assert "".join(text_of(e) for e in per_feed) == text
    assert sieve.close() == []


BIG_BLOCKS = {
    "plain-body": X(INV("a", P("p", "x" * 300))),
    "cdata-body": X(INV("a", P("p", "<![CDATA[" + "y" * 300 + "]]>"))),
    "many-params": X(INV("a", "".join(P(f"p{i}", str(i)) for i in range(12)))),
    "dsml": ('<|DSML|tool_calls><|DSML|invoke name="a"><|DSML|parameter name="p">'
             + "z" * 300 + "</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>"),
    "native": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>"
               + '{"p": "' + "w" * 300 + '"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
}


@pytest.mark.parametrize("big", list(BIG_BLOCKS.values()), ids=list(BIG_BLOCKS))
def test_s7_max_block_chars_releases_an_oversized_block_as_text(big: str) -> None:
    """"a block that grows past it is released as text with a diagnostic, never
    truncated"; a later block still parses."""
    small = X(INV("b", P("p", "1")))
    text = f"pre {big} mid {small} post"
    limit = 120
    r = check(text, f"pre {big} mid  post", [("b", {"p": 1})], max_block_chars=limit)
    failed = [b for b in r.blocks if b.status == "failed"]
    assert failed and all(b.diagnostics for b in failed)
    assert failed[0].span[0] == len("pre ")
    assert any(str(limit) in d or "max_block_chars" in d for d in failed[0].diagnostics)
    # at the limit the same block parses
    first = callsieve.parse(big).calls
    check(text, "pre  mid  post", [*[(c.name, c.input) for c in first], ("b", {"p": 1})],
          max_block_chars=len(big))


@pytest.mark.parametrize("body", ["x" * 5000, "<![CDATA[" + "y\n" * 2500 + "]]>",
                                  "<![CDATA[" + "x[i] = y[j]\n" * 450 + "]]>"])
@pytest.mark.parametrize("limit", [3000, 6000])
def test_s7_max_block_chars_holds_for_long_streamed_bodies(body: str, limit: int) -> None:
    """A body streamed in more small chunks than the sieve appends between two counts
    (``HOT_BUDGET``) is still measured against ``max_block_chars`` exactly: past it the
    block is text, below it the call; the same under every chunking (the third body has a
    ``]`` that may begin the CDATA stop at every few characters, so chunks keep leaving the
    run's hot path and coming back)."""
    from callsieve._cursor import HOT_BUDGET

    assert len(body) > 2 * HOT_BUDGET
    big = X(INV("a", P("p", body)))
    text = f"pre {big} post"
    if len(big) > limit:
        r = check(text, text, [], max_block_chars=limit)
        assert [b.status for b in r.blocks] == ["failed"]
    else:
        value = body[9:-3] if body.startswith("<![CDATA[") else body
        check(text, "pre  post", [("a", {"p": value})], max_block_chars=limit)


@pytest.mark.parametrize("budget", [1, 4, 256])
@pytest.mark.parametrize("unit", ["a]", "]", "ab]]", "xy\n"])
def test_s7_a_streamed_body_past_max_block_chars_fails_within_the_budget(
        monkeypatch: pytest.MonkeyPatch, budget: int, unit: str) -> None:
    """However a streamed body's chunks end (one ending in ``]``, which may begin the CDATA
    stop, leaves the run's hot path, and so does the next), what the sieve takes is counted
    at least every ``HOT_BUDGET`` chunks: a block past ``max_block_chars`` is released as
    text within that many chunks of passing it, so the text it holds stays bounded."""
    import callsieve._cursor

    monkeypatch.setattr(callsieve._cursor, "HOT_BUDGET", budget)
    head = '<tool_calls><invoke name="a"><parameter name="p"><![CDATA['
    limit = len(head) + 300
    sieve = callsieve.Sieve(max_block_chars=limit)
    events = sieve.feed(head)
    fed = len(head)
    released_at = None
    for _ in range(4 * (limit + budget) // len(unit) + 10):
        new = sieve.feed(unit)
        events += new
        fed += len(unit)
        if any(isinstance(e, Text) and "<tool_calls>" in e.text for e in new):
            released_at = fed
            break
    assert released_at is not None, "the block was never released"
    assert released_at <= limit + (budget + 2) * len(unit)
    events += sieve.close()
    assert "".join(e.text for e in events if isinstance(e, Text)) == head + unit * (
        (fed - len(head)) // len(unit))


def test_s7_id_factory_is_used_for_every_call() -> None:
    text = X(INV("a") + INV("b")) + X(INV("c"))
    run_all_ways(text)
    counter = itertools.count(1)
    r = callsieve.parse(text, id_factory=lambda: f"id{next(counter)}")
    assert [c.id for c in r.calls] == ["id1", "id2", "id3"]
    r2 = callsieve.parse(text)
    assert len({c.id for c in r2.calls}) == 3 and all(c.id for c in r2.calls)


@pytest.mark.parametrize("fence", ["", "\n```\n", "\n~~~~ py\n", "`"])
def test_s7_long_prose_keeps_offsets_and_fences_exact(fence: str) -> None:
    """Prose fed in more short chunks than the sieve logs between two folds
    (``HOT_BUDGET``): the block's span still counts every character before it, a fence or
    code span opened in that prose still quotes the block, and the log stays bounded."""
    from callsieve._cursor import HOT_BUDGET

    block = X(INV("a", P("p", "1")))
    prose = "ab " * HOT_BUDGET * 3 + fence
    sieve = callsieve.Sieve()
    events = []
    for ch in prose:
        events += sieve.feed(ch)
        assert len(sieve._cur.log) <= HOT_BUDGET
    events += sieve.feed(block) + sieve.feed("\n") + sieve.close()
    calls = [c.name for e in events if isinstance(e, ToolCalls) for c in e.calls]
    if fence:
        assert calls == [] and "".join(e.text for e in events if isinstance(e, Text)) \
            == prose + block + "\n"
    else:
        assert calls == ["a"]
        assert [e.block.span for e in events if isinstance(e, ToolCalls)] == [
            (len(prose), len(prose) + len(block))]


@pytest.mark.parametrize("budget", [1, 2, 3])
@pytest.mark.parametrize("indent", ["", " ", "  ", "   "])
def test_s7_hot_path_folds_keep_the_line_start(monkeypatch: pytest.MonkeyPatch, budget: int,
                                                indent: str) -> None:
    """The prose hot path folds its log every ``HOT_BUDGET`` chunks: a fold that holds only
    the indentation of a fence line must not lose the line break before it (§6: a fence opens
    at the start of a line, up to three spaces in)."""
    import callsieve._cursor

    monkeypatch.setattr(callsieve._cursor, "HOT_BUDGET", budget)
    block = X(INV("a", P("p", "1")))
    # (a blank line inside: were the fence taken for an inline span, it would end there)
    fenced = f"a\n{indent}```py\n\n{block}\n{indent}```\n"
    check(fenced + f"b {block} c", fenced + "b  c", [("a", {"p": 1})])


@pytest.mark.parametrize("budget", [1, 2, 3, 256])
@pytest.mark.parametrize("fence", ["", "\n```\n"])
def test_s7_held_leads_that_die_keep_the_log_bounded_and_offsets_exact(
        monkeypatch: pytest.MonkeyPatch, budget: int, fence: str) -> None:
    """A possible opener held across chunks that then dies goes back to the prose hot path
    through its log, as does the text before it: the log still never holds more than
    ``HOT_BUDGET`` chunks, and the offsets, the fence state and the block after are exact."""
    import callsieve._cursor

    monkeypatch.setattr(callsieve._cursor, "HOT_BUDGET", budget)
    block = X(INV("a", P("p", "1")))
    prose = "a<b value large, x <Str" + "ing> and <user@example.com> done. " * 5 + fence
    text = prose + block + "\n"
    for size in (1, 2, 3, 5):
        sieve = callsieve.Sieve()
        events = []
        for k in range(0, len(text), size):
            events += sieve.feed(text[k:k + size])
            assert len(sieve._cur.log) <= budget
        events += sieve.close()
        calls = [c.name for e in events if isinstance(e, ToolCalls) for c in e.calls]
        released = "".join(e.text for e in events if isinstance(e, Text))
        if fence:
            assert calls == [] and released == text
        else:
            assert calls == ["a"] and released == prose + "\n"
            assert [e.block.span for e in events if isinstance(e, ToolCalls)] == [
                (len(prose), len(prose) + len(block))]


# ============================================================================ §8 results
SAW_ROWS = [
    ("wrapper", X(INV("a")), True),
    ("dsml-wrapper", DSML, True),
    ("native", NATIVE_V31, True),
    ("missing-wrapper-shape", INV("a") + "</tool_calls>", True),
    ("failed-wrapper", X(INV("a", "<param>v</param>")), True),
    ("bare-invoke", "ok " + INV("a") + " after", False),
    ("bare-invoke-unfinished", 'see <invoke name="a">', False),
    ("prose", "Just some prose with a<b and <b>tags</b>.", False),
    ("empty", "", False),
]


@table(SAW_ROWS)
def test_s8_saw_tool_call_syntax(row: tuple[Any, ...]) -> None:
    text, saw = row
    r = run_all_ways(text)
    assert r.saw_tool_call_syntax is saw


def test_s8_result_fields() -> None:
    bad = X(INV("a", "<param>v</param>"))
    text = f"one {bad} two {XML} three"
    r = check(text, f"one {bad} two  three", READ)
    *failed, last = r.blocks
    assert failed and all(b.status == "failed" and b.diagnostics for b in failed)
    assert failed[0].span[0] == text.index(bad) and failed[0].dialect == "xml"
    for b in r.blocks:
        assert b.raw == text[b.span[0]:b.span[1]]
    assert (last.status, last.dialect) == ("complete", "xml")
    assert last.repairs == () and r.calls[0].repairs == () and last.diagnostics == ()
    assert last.span == (text.index(XML), text.index(XML) + len(XML))


# ============================================================================ errors (§Inv 5)
def test_errors_feed_and_close_after_close() -> None:
    run_all_ways("x")
    sieve = callsieve.Sieve()
    sieve.feed("x")
    sieve.close()
    for call in (lambda: sieve.feed("y"), sieve.close, lambda: sieve.feed("")):
        with pytest.raises(SieveClosedError) as info:
            call()
        assert isinstance(info.value, CallsieveError)


@pytest.mark.parametrize("value", [b"x", None, 1, 1.5, ["x"], bytearray(b"x")],
                         ids=["bytes", "none", "int", "float", "list", "bytearray"])
def test_errors_non_str_input(value: Any) -> None:
    run_all_ways("x")
    with pytest.raises(InputTypeError) as info:
        callsieve.parse(value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, CallsieveError)
    with pytest.raises(TypeError):
        callsieve.Sieve().feed(value)


@pytest.mark.parametrize("before", [
    "plain prose, nothing held",
    "prose then a possible opener <|DSML|tool_ca",
    "<tool_calls><invoke name=\"a\"><parameter name=\"p\"><![CDATA[inside an argument ]",
    '<tool_calls><invoke name="a"><parameter nam',
    "<tool_calls><invoke name=\"a\"><parameter name=\"p\"><![CDATA[x]]></parameter>",
], ids=["prose", "candidate", "argument-body", "cut-tag", "between-tags"])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_errors_carry_the_offset_of_the_input_so_far(before: str, size: int) -> None:
    """Whatever mode the sieve is in (argument bodies count lazily), a typed error says how
    many characters were fed before it."""
    sieve = callsieve.Sieve()
    for k in range(0, len(before), size):
        sieve.feed(before[k:k + size])
    with pytest.raises(InputTypeError) as bad:
        sieve.feed(7)  # type: ignore[arg-type]
    assert bad.value.offset == len(before)
    sieve.feed("tail")
    sieve.close()
    with pytest.raises(SieveClosedError) as closed:
        sieve.feed("more")
    assert closed.value.offset == len(before) + len("tail")


def test_errors_str_subclass_is_accepted() -> None:
    class S(str):
        pass

    run_all_ways(X(INV("a")))
    r = callsieve.parse(S(X(INV("a"))))
    assert canon_calls(r.calls) == [("a", "{}")]
    assert drive_sieve([S("x "), S(X(INV("a")))]) == ("x ", [("a", "{}")])


def drive_sieve(chunks: list[str]) -> tuple[str, list[tuple[str, str]]]:
    sieve = callsieve.Sieve()
    events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
    return text_of(events), calls_of(events)


BAD_OPTIONS = [
    ("early-emit", {"early_emit": "sometimes"}),
    ("mode", {"mode": "maybe"}),
    ("max-block-chars-zero", {"max_block_chars": 0}),
    ("max-block-chars-negative", {"max_block_chars": -5}),
    ("max-block-chars-str", {"max_block_chars": "8MiB"}),
    ("unknown-dialect", {"dialects": ("no_such_dialect",)}),
    ("unknown-option", {"frobnicate": True}),
]


@table(BAD_OPTIONS)
def test_errors_bad_options_raise_configuration_error(row: tuple[Any, ...]) -> None:
    (opts,) = row
    run_all_ways("x")
    with pytest.raises(ConfigurationError) as info:
        callsieve.Sieve(**opts)
    assert isinstance(info.value, ValueError) and isinstance(info.value, CallsieveError)
    with pytest.raises(ConfigurationError):
        callsieve.parse("x", **opts)

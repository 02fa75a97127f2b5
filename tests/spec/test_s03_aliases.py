"""SPEC §3 Token-alias layer: the tolerated noise inside tag shells (bars, prefixes,
brackets, zero-width characters, dashes, quotes), near misses that stay text, and no
aliasing inside bodies or prose.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

from helpers import (
    INV,
    X,
    check,
    table,
    xml_call,
)

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
    (
        "dashed-invoke-and-parameter",
        '<dsml-invoke name="f"><dsml-parameter name="p">1</dsml-parameter></dsml-invoke>',
    ),
    (
        "pascal-invoke-and-parameter",
        '<|DSML|Invoke name="f"><|DSML|Parameter name="p">1</|DSML|Parameter></|DSML|Invoke>',
    ),
    (
        "stray-separator-parameter",
        '<|DSML|invoke name="f"><|DSML|parameter name="p"|>1</|DSML|parameter></|DSML|invoke>',
    ),
    (
        "stray-separator-after-local-name",
        ('<|DSML|invoke| name="f"><|DSML|parameter| name="p">1</|DSML|parameter|></|DSML|invoke|>'),
    ),
    (
        "fullwidth-brackets",
        (
            '＜|DSML|invoke name="f"＞＜|DSML|parameter name="p"＞1＜／|DSML|parameter＞'
            "＜／|DSML|invoke＞"
        ),
    ),
    (
        "cjk-brackets",
        '〈|DSML|invoke name="f"〉〈|DSML|parameter name="p"〉1〈/|DSML|parameter〉〈/|DSML|invoke〉',
    ),
    (
        "curly-double-quotes",
        "<|DSML|invoke name=“f”><|DSML|parameter name=“p”>1</|DSML|parameter></|DSML|invoke>",
    ),
    (
        "curly-single-quotes",
        "<|DSML|invoke name=‘f’><|DSML|parameter name=‘p’>1</|DSML|parameter></|DSML|invoke>",
    ),
    (
        "single-quotes",
        "<|DSML|invoke name='f'><|DSML|parameter name='p'>1</|DSML|parameter></|DSML|invoke>",
    ),
    (
        "zero-width-and-bom",
        (
            '<\u200b|DSML|invoke name="f"><\ufeff|DSML|parameter name="p">1'
            "<\u200b/|DSML|parameter></|DSML|invoke>"
        ),
    ),
    (
        "bars-and-spaces",
        '<‖DSML‖invoke name="f"><| DSML | parameter name="p">1</｜DSML｜parameter></!DSML!invoke>',
    ),
    (
        "cdata-fullwidth-bang",
        (
            '<|DSML|invoke name="f"><|DSML|parameter name="p">'
            "<！[CDATA[1]]></|DSML|parameter></|DSML|invoke>"
        ),
    ),
    (
        "cdata-ideographic-comma",
        (
            '<|DSML|invoke name="f"><|DSML|parameter name="p">'
            "<、[CDATA[1]]></|DSML|parameter></|DSML|invoke>"
        ),
    ),
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
    (
        "invoke-before-attribute",
        '<|DSML|tool_calls><|DSML|invoke\u200b name="f">'
        '<|DSML|parameter name="p">1</|DSML|parameter></|DSML|invoke>' + CLOSE,
    ),
    (
        "bom-before-attribute",
        '<|DSML|tool_calls><|DSML|invoke \ufeffname="f">'
        '<|DSML|parameter name="p">1</|DSML|parameter></|DSML|invoke>' + CLOSE,
    ),
]


@table(ZERO_WIDTH_ROWS)
def test_s3_zero_width_inside_tag_shells(row: tuple[Any, ...]) -> None:
    (text,) = row
    check(f"x {text} y", "x  y", F1)


def test_s3_string_attribute_curly_quotes() -> None:
    text = (
        "<｜DSML｜tool_calls><｜DSML｜invoke name=“get_pages”><｜DSML｜parameter name=“pages” "
        "string=“true”>3</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"
    )
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

    text = (
        m("tool", "calls", "begin")
        + m("tool", "call", "begin")
        + "function"
        + m("tool", "sep")
        + 'f\n```json\n{"a": 1}\n```'
        + m("tool", "call", "end")
        + m("tool", "call", "begin")
        + "g"
        + m("tool", "sep")
        + '{"b": [2]}'
        + m("tool", "call", "end")
        + m("tool", "calls", "end")
    )
    r = check(f"pre {text} post", "pre  post", [("f", {"a": 1}), ("g", {"b": [2]})])
    assert [c.dialect for c in r.calls] == ["deepseek_native"] * 2


def test_s3_native_markers_mixed_spellings_in_one_block() -> None:
    text = (
        '<|tool▁calls▁begin|><｜tool_call_begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool_call_end｜>'
        "<|tool calls end|>"
    )
    check(text, "", [("f", {"a": 1})])


NEAR_MISS_ROWS = [
    # "Near-miss names stay text"
    ("tool_calls_extra", '<tool_calls_extra><invoke name="f"></invoke></tool_calls_extra>'),
    ("ToolCallsExtra", '<ToolCallsExtra><invoke name="f"></invoke></ToolCallsExtra>'),
    (
        "prefixed-ToolCallsExtra",
        '<|DSML|ToolCallsExtra><|DSML|invoke name="f"></|DSML|invoke></|DSML|ToolCallsExtra>',
    ),
    (
        "prefixed-tool_calls_extra",
        ('<|DSML|tool_calls_extra><|DSML|invoke name="f"></|DSML|invoke></|DSML|tool_calls_extra>'),
    ),
    ("tool-calls-no-prefix", '<tool-calls><invoke name="f"></invoke></tool-calls>'),
    ("greek-omicron-invoke", 'Use <invοke name="f"></invοke> like this.'),
    ("greek-omicron-before-closer", '<invοke name="f"></invοke></tool_calls>'),
    ("greek-omicron-wrapper", '<tοol_calls><invoke name="f"></invoke></tοol_calls>'),
    ("singular-tool_call", '<tool_call><invoke name="f"></invoke></tool_call>'),
    ("singular-function_call", '<function_call><invoke name="f"></invoke></function_call>'),
    (
        "prefix-over-24-chars",
        "<" + "p" * 25 + 'tool_calls><invoke name="f"></invoke></' + "p" * 25 + "tool_calls>",
    ),
    ("partial-opener", "<｜DSM some regular text"),
    ("lone-brackets", "a<b, c>d, ＜e＞, 〈f〉 and <b>bold</b>"),
]


def test_s3_prefix_holds_no_line_break() -> None:
    """ "A protocol prefix ... holds no <, > or line break": the opener is text; the invoke
    and closer after it still form a missing-opener shape (§4)."""
    check('<DSML\n|tool_calls><invoke name="a"/></tool_calls>', "<DSML\n|tool_calls>", [("a", {})])


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
    (
        "cdata-lookalike-tags",
        "<![CDATA[<！[CDATA[x <dsml-invoke> ＜／parameter＞]]>",
        "<！[CDATA[x <dsml-invoke> ＜／parameter＞",
    ),
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


# llama.cpp's short opener for the native block (`<｜tool▁calls｜>`), in the same marker
# spellings; with `_` it is the DSML wrapper's alias (`<|tool_calls|>`, a prefix `|` and a
# stray separator), as before.
NATIVE_SHORT_OPENER_ROWS = [
    ("fullwidth-bars", "<｜tool▁calls｜>"),
    ("ascii-bars", "<|tool▁calls|>"),
    ("space", "<｜tool calls｜>"),
    ("fullwidth-brackets", "＜｜tool▁calls｜＞"),
]


@table(NATIVE_SHORT_OPENER_ROWS)
def test_s3_native_short_opener(row: tuple[Any, ...]) -> None:
    (opener,) = row
    text = (
        f"{opener}<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
        '{"a": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    r = check(f"pre {text} post", "pre  post", [("f", {"a": 1})])
    assert [b.dialect for b in r.blocks] == ["deepseek_native"]
    assert r.blocks[0].repairs == ()


def test_s3_underscore_short_opener_stays_the_dsml_alias() -> None:
    r = check(f"<|tool_calls|>{BODY}{CLOSE}", "", F1)
    assert [b.dialect for b in r.blocks] == ["dsml"]


# dsml_v41's wrapper takes the alias layer like every DSML spelling, with the DSML marker.
V41_BODY = '<｜DSML｜ invoke name="f"><｜DSML｜ parameter name="p">1</｜DSML｜ parameter></｜DSML｜ invoke>'
V41_ALIAS_ROWS = [
    ("canonical", "<｜DSML｜ calls>", "</｜DSML｜ calls>"),
    ("no-space", "<｜DSML｜calls>", "</｜DSML｜calls>"),
    ("ascii-bars", "<|DSML| calls>", "</|DSML| calls>"),
    ("doubled-bars", "<｜｜DSML｜｜ calls>", "</｜｜DSML｜｜ calls>"),
    ("spaces-between-parts", "<| DSML | calls>", "</| DSML | calls>"),
    ("no-lead-bar", "<DSML| calls>", "</DSML| calls>"),
    ("glued", "<DSMLcalls>", "</DSMLcalls>"),
    ("lower-dashed", "<dsml-calls>", "</dsml-calls>"),
    ("pascal", "<｜DSML｜ Calls>", "</｜DSML｜ Calls>"),
    ("double-lt", "<<｜DSML｜ calls>", "</｜DSML｜ calls>"),
    ("repeated-prefix", "<DSML|DSML| calls>", "</DSML|DSML| calls>"),
    ("fullwidth-brackets", "＜｜DSML｜ calls＞", "＜／｜DSML｜ calls＞"),
    ("zero-width", "<\u200b｜DSML｜ calls\u200b>", "<\u200b/｜DSML｜ calls>"),
    ("stray-separator", "<｜DSML｜ calls｜>", "</｜DSML｜ calls｜>"),
    ("other-bars", "<！DSML！ calls>", "</、DSML、 calls>"),
]


@table(V41_ALIAS_ROWS)
def test_s3_dsml_v41_wrapper_aliases(row: tuple[Any, ...]) -> None:
    opener, closer = row
    r = check(f"x {opener}{V41_BODY}{closer} y", "x  y", F1)
    assert [b.dialect for b in r.blocks] == ["dsml_v41"]

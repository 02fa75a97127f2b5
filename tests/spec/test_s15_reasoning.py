"""SPEC §15 — reasoning: ``<think>…</think>`` split from the answer in the same pass, chunk-safe,
and no call executed from a thought unless asked for.

Every table row runs whole, per character and at random splits (``run_all_ways``), which also
checks that reasoning, text and calls agree across chunkings and that the events (text,
reasoning with its tags, blocks) conserve the input.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    DSML,
    XML,
    Calls,
    canon_calls,
    canon_value,
    random_chunkings,
    run_all_ways,
    stream,
    table,
)

import callsieve
from callsieve import (
    CallFinished,
    CallStarted,
    ConfigurationError,
    Reasoning,
    Sieve,
    Text,
    ToolCall,
    ToolCalls,
    parse,
)

RM = (
    '<|DSML|tool_calls><|DSML|invoke name="rm"><|DSML|parameter name="p">/</|DSML|parameter>'
    "</|DSML|invoke></|DSML|tool_calls>"
)
F = '<tool_calls><invoke name="f"><parameter name="a">1</parameter></invoke></tool_calls>'


def check3(text: str, want_reasoning: str, want_text: str, want_calls: Calls, **opts: Any) -> Any:
    r = run_all_ways(text, **opts)
    assert r.reasoning == want_reasoning
    assert r.text == want_text
    assert canon_calls(r.calls) == [(n, canon_value(i)) for n, i in want_calls]
    return r


# ---------------------------------------------------------------------- the issue's example
def test_a_call_drafted_in_reasoning_is_reasoning_text_not_a_call() -> None:
    text = f"<think>I could write {RM} but no.</think>Answer."
    r = check3(text, f"I could write {RM} but no.", "Answer.", [])
    (block,) = r.blocks
    assert (block.status, block.reasoning, block.raw) == ("complete", "text", RM)
    assert not r.saw_tool_call_syntax  # (a thought is no tool-call syntax of the reply)
    assert r.parts == (Reasoning(f"I could write {RM} but no."), "Answer.")


def test_calls_in_reasoning_call_makes_it_a_call_and_records_the_choice() -> None:
    text = f"<think>I will {RM}</think>Done."
    r = check3(text, "I will ", "Done.", [("rm", {"p": "/"})], calls_in_reasoning="call")
    assert [b.reasoning for b in r.blocks] == ["call"]
    assert isinstance(r.parts[1], ToolCall)


def test_a_block_in_the_answer_records_no_reasoning_choice() -> None:
    r = check3(f"<think>hm</think>{F}", "hm", "", [("f", {"a": 1})])
    assert [b.reasoning for b in r.blocks] == [None]


def test_a_tool_block_does_not_begin_the_answer() -> None:
    """Only white space, earlier reasoning or tool blocks may stand before a ``<think>``."""
    check3(f"{F}\n<think>a</think>b", "a", "\nb", [("f", {"a": 1})])


# ---------------------------------------------------------------------- reasoning="tags"
TAGS = [
    ("plain", "<think>a</think>b", "a", "b"),
    ("white space before", " \n\t<think>a</think>b", "a", " \n\tb"),
    ("after answer text it is text", "Hi <think>a</think> b", "", "Hi <think>a</think> b"),
    ("a second section before the answer", "<think>a</think>\n<think>b</think>c", "ab", "\nc"),
    (
        "after the answer began, no more",
        "<think>a</think>x<think>b</think>",
        "a",
        "x<think>b</think>",
    ),
    ("never closed: reasoning to the end", "<think>cut off while thi", "cut off while thi", ""),
    ("an empty section", "<think></think>ok", "", "ok"),
    ("a nested <think> is reasoning", "<think>a<think>b</think>c", "a<think>b", "c"),
    ("a stray </think> in the answer", "x</think>y", "", "x</think>y"),
    ("fullwidth brackets", "＜think＞a＜/think＞b", "a", "b"),
    ("capitalised", "<Think>a</Think>b", "a", "b"),
    ("white space before >", "<think >a</think\n>b", "a", "b"),
    ("zero-width after <", "<\u200bthink>a<\u200b/think>b", "a", "b"),
    ("a stray separator", "<think|>a</think｜>b", "a", "b"),
    ("a prefix is not an alias", "<|DSML|think>a", "", "<|DSML|think>a"),
    ("another word", "<thinking>a</thinking>", "", "<thinking>a</thinking>"),
    ("unicode reasoning", "<think>思考 💭 a<b</think>答", "思考 💭 a<b", "答"),
    ("in a fence it is text", "```\n<think>a</think>\n```\nb", "", "```\n<think>a</think>\n```\nb"),
    ("in inline code it is text", "`<think>` a", "", "`<think>` a"),
    ("a tag cut short", "<thin", "", "<thin"),
    ("a closing tag cut short", "<think>a</thi", "a</thi", ""),
]


@table(TAGS)
def test_tags_mode(row: tuple[str, str, str]) -> None:
    text, reasoning, answer = row
    check3(text, reasoning, answer, [])


def test_a_tool_block_quoted_in_code_inside_reasoning_is_reasoning_either_way() -> None:
    """Reasoning is read without Markdown code (docs/streaming.md, "Reasoning"): a stray
    backtick or an unclosed fence in a thought cannot hide the ``</think>`` that ends it."""
    check3("<think>a `stray tick </think>Answer", "a `stray tick ", "Answer", [])
    check3("<think>```\nunclosed fence </think>Answer", "```\nunclosed fence ", "Answer", [])
    quoted = f"<think>```\n{F}\n```</think>ok"
    r = check3(quoted, f"```\n{F}\n```", "ok", [])
    assert [b.reasoning for b in r.blocks] == ["text"]


def test_a_block_left_open_in_reasoning_is_released_as_reasoning_at_the_end() -> None:
    text = '<think>draft <tool_calls><invoke name="f"> hm</think>The answer.'
    check3(text, 'draft <tool_calls><invoke name="f"> hm', "The answer.", [])


@pytest.mark.parametrize("block", [DSML, XML])
def test_reasoning_then_calls_in_every_mode(block: str) -> None:
    text = f"<think>Let me look.</think>\n\n{block}"
    for opts in (
        {},
        {"calls_in_reasoning": "call"},
        {"early_emit": "invoke"},
        {"early_emit": "arguments"},
    ):
        r = check3(text, "Let me look.", "\n\n", [("read_file", {"path": "README.MD"})], **opts)
        assert [b.reasoning for b in r.blocks] == [None]


# ---------------------------------------------------------------------- reasoning="open"
OPEN = [
    ("the first </think> ends it", "thinking</think>Answer", "thinking", "Answer"),
    ("never closed", "all thought", "all thought", ""),
    ("a <think> inside is reasoning", "a<think>b</think>c", "a<think>b", "c"),
    ("a later section before the answer", "a</think>\n<think>b</think>c", "ab", "\nc"),
    ("a drafted call", f"x{RM}</think>y", f"x{RM}", "y"),
    ("a <think> the model wrote anyway is a tag", "<think>a</think>b", "a", "b"),
    ("... after white space", " \n<think>a</think>b", " \na", "b"),
    ("... not after reasoning text", "a<think>b", "a<think>b", ""),
    ("empty reasoning", "</think>x", "", "x"),
    ("a lead that is text begins it", "<b>x</think>y", "<b>x", "y"),
    ("nothing", "", "", ""),
]


@table(OPEN)
def test_open_mode(row: tuple[str, str, str]) -> None:
    text, reasoning, answer = row
    check3(text, reasoning, answer, [], reasoning="open")


def test_open_mode_with_calls_in_reasoning_call() -> None:
    check3(
        f"x{F}</think>y", "x", "y", [("f", {"a": 1})], reasoning="open", calls_in_reasoning="call"
    )


# ---------------------------------------------------------------------- reasoning="off"
def test_off_mode_is_text_as_before() -> None:
    text = f"<think>I could write {RM} but no.</think>Answer."
    check3(
        text,
        "",
        "<think>I could write  but no.</think>Answer.",
        [("rm", {"p": "/"})],
        reasoning="off",
    )


# ---------------------------------------------------------------------- the events
def test_events_carry_the_tags_and_stream_reasoning_at_once() -> None:
    sieve = Sieve()
    got: list[Any] = []
    seen = ""
    for ch in "<think>deep thought</think>42":
        got += sieve.feed(ch)
        seen += ch
        thought = "".join(e.text for e in got if isinstance(e, Reasoning))
        if seen.startswith("<think>") and "</" not in seen:
            # every reasoning character is out as soon as it cannot begin </think>
            assert thought == seen[len("<think>") :].rstrip("<")
            assert sieve.in_reasoning
    got += sieve.close()
    assert not sieve.in_reasoning
    tags = [e.raw for e in got if isinstance(e, Reasoning) and e.raw is not None]
    assert tags == ["<think>", "</think>"]
    assert [e for e in got if isinstance(e, Reasoning) and e.raw is not None] == [
        Reasoning("", "<think>"),
        Reasoning("", "</think>"),
    ]
    assert "".join(e.text for e in got if isinstance(e, Text)) == "42"
    assert Reasoning("x").source == "x" and Reasoning("", "<think>").source == "<think>"


def test_no_call_event_of_any_kind_comes_from_a_thought() -> None:
    text = f"<think>{F}{RM}</think>ok"
    for early_emit in ("block", "invoke", "arguments"):
        events = Sieve(early_emit=early_emit).feed(text)
        assert not [e for e in events if not isinstance(e, Text | Reasoning)], early_emit


def test_argument_streaming_counts_calls_from_reasoning_only_when_they_are_calls() -> None:
    text = f"<think>{F}</think>{F}"
    for choice, indexes in (("text", [0]), ("call", [0, 1])):
        events = Sieve(early_emit="arguments", calls_in_reasoning=choice).feed(text)
        assert [e.index for e in events if isinstance(e, CallStarted)] == indexes
        assert len([e for e in events if isinstance(e, CallFinished)]) == len(indexes)
        assert sum(len(e.calls) for e in events if isinstance(e, ToolCalls)) == len(indexes)


def test_parts_keep_reasoning_text_and_calls_in_order() -> None:
    r = parse(f"<think>a</think>b{F}<think>c</think>")
    assert [type(p).__name__ for p in r.parts] == ["Reasoning", "str", "ToolCall", "str"]
    assert r.parts[-1] == "<think>c</think>"  # (after answer text, a tag is text)


# ---------------------------------------------------------------------- the options
@pytest.mark.parametrize(
    ("option", "value"), [("reasoning", "on"), ("reasoning", True), ("calls_in_reasoning", "drop")]
)
def test_bad_values_are_configuration_errors(option: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=option):
        Sieve(**{option: value})
    with pytest.raises(ConfigurationError, match=option):
        parse("x", **{option: value})


def test_the_options_are_public() -> None:
    assert {"reasoning", "calls_in_reasoning"} <= set(callsieve._config.options.OPTIONS)


# ------------------------------------------------------- when </think> never comes; a stray one
@pytest.mark.parametrize(
    ("text", "reasoning", "unclosed"),
    [
        ("all thought", "open", True),  # the model was cut off while thinking
        ("<think>a leading tag, then thought", "open", True),  # (a leading <think> is a tag)
        ("", "open", True),  # (the template opened a thought no reply closed)
        ("thought</think>answer", "open", False),
        ("<think>thought</think>answer", "open", False),
        ("<think>never closed", "tags", True),
        ("<think>closed</think>then <think>text", "tags", False),  # (a <think> after text)
        ("plain answer", "tags", False),
        ("<think>x", "off", False),
    ],
)
def test_the_result_says_when_reasoning_was_never_closed(
    text: str, reasoning: str, unclosed: bool
) -> None:
    """SPEC §15.1: so that a server tells "the model thought until the end" from "the answer
    is missing" (an upstream that had split the reasoning off already, or thinking off)."""
    assert parse(text, reasoning=reasoning).reasoning_unclosed is unclosed
    for chunks in random_chunkings(text, seeds=(0, 1)) if text else ([],):
        sieve = Sieve(reasoning=reasoning)
        for c in chunks:
            sieve.feed(c)
        assert sieve.reasoning_unclosed is False  # (nothing has ended before close())
        sieve.close()
        assert sieve.reasoning_unclosed is unclosed
    if unclosed:
        snap = Sieve(reasoning=reasoning, metrics=True)
        snap.feed(text)
        snap.close()
        assert snap.metrics is not None and snap.metrics.snapshot()["reasoning_unclosed"] == 1


def test_open_mode_takes_a_leading_think_as_a_tag() -> None:
    """A template that did not write ``<think>`` after all, under ``"open"``: the model's own
    ``<think>`` (after white space only) is a tag, not reasoning text."""
    events = stream(["\n<thi", "nk>a", "</think>b"], reasoning="open")
    assert [e.raw for e in events if isinstance(e, Reasoning) and e.raw] == ["<think>", "</think>"]
    r = parse("\n<think>a</think>b", reasoning="open")
    assert (r.reasoning, r.text, r.reasoning_unclosed) == ("\na", "b", False)


STRAY = "The user asks for X. I'll answer.</think>Here is X.\n```\n</think>\n``` and `</think>`."


def test_a_close_with_no_think_open_is_text_and_noticed() -> None:
    """SPEC §15.1, §14: under "tags", a ``</think>`` where no ``<think>`` is open stays
    text; the sieve notes where (the sign of a template that wrote ``<think>``), under every
    chunking; in code it is text like any tag and not noted."""
    at = STRAY.index("</think>")
    r = parse(STRAY)
    assert (r.text, r.reasoning, r.stray_reasoning_closes) == (STRAY, "", (at,))
    for chunks in random_chunkings(STRAY, seeds=(0, 1, 2)):
        sieve = Sieve(metrics=True)
        events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
        assert "".join(e.text for e in events if isinstance(e, Text)) == STRAY
        assert sieve.stray_reasoning_closes == (at,)
        assert sieve.metrics is not None
        assert sieve.metrics.snapshot()["stray_reasoning_closes"] == 1
    # After reasoning that closed, and before any: the same. Not under "open" or "off".
    assert parse("<think>a</think>b</think>").stray_reasoning_closes == (len("<think>a</think>b"),)
    assert parse(" </think>b").stray_reasoning_closes == (1,)
    assert parse("a</think>b</think>c", reasoning="open").stray_reasoning_closes == ()
    assert parse("a</think>b", reasoning="off").stray_reasoning_closes == ()


# ------------------------------------------- calls in a thought never closed (SPEC §15)
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
    '{"a": 1}<|tool_call_end|><|tool_calls_section_end|>'
)
V4 = (
    '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="false">1'
    "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>"
)


@pytest.mark.parametrize(
    ("block", "dialects"),
    [(KIMI, ("kimi_k2",)), (KIMI, "all")],
    ids=["kimi_k2", "every dialect"],
)
def test_a_call_opener_in_a_thought_never_closed_ends_it(block: str, dialects: Any) -> None:
    """A dialect that declares it (``//%calls_end_thought``): the block is a call, the
    thought ends at its opener, the block records it, and the reply goes on before the
    answer (a ``<think>`` may follow)."""
    text = "<think>Let me check." + block + "\n<think>again</think>Done."
    r = check3(text, "Let me check.again", "\nDone.", [("f", {"a": 1})], dialects=dialects)
    assert [b.reasoning for b in r.blocks] == ["ended"]
    assert not r.reasoning_unclosed
    opened = check3(
        "Let me check." + block,
        "Let me check.",
        "",
        [("f", {"a": 1})],
        dialects=dialects,
        reasoning="open",
    )
    assert [b.reasoning for b in opened.blocks] == ["ended"]


def test_a_block_that_fails_there_stays_reasoning_and_the_thought_goes_on() -> None:
    text = "<think>I would write <tool_call> here.</think>Answer."
    check3(text, "I would write <tool_call> here.", "Answer.", [], dialects=("qwen3_coder",))


def test_the_opener_decides_a_block_in_a_thought_closed_later_is_a_call_too() -> None:
    """Nothing waits for a ``</think>`` that may never come: the ``</think>`` after the
    block stands in the answer, a close with nothing open (noted)."""
    text = "<think>x" + KIMI + "y</think>z"
    r = check3(text, "x", "y</think>z", [("f", {"a": 1})], dialects=("kimi_k2",))
    assert len(r.stray_reasoning_closes) == 1


def test_a_family_that_does_not_declare_it_keeps_the_draft_as_reasoning() -> None:
    block = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    check3("<think>x" + block, "x" + block, "", [], dialects=("hermes",))
    # (the default dialects declare it nowhere: DeepSeek V4's DSML drafted in a thought is
    # reasoning, as SGLang's V4 detector reads it; docs/families.md says why)
    check3("<think>x" + V4, "x" + V4, "", [], dialects=callsieve.DEFAULT_DIALECTS)


def test_a_thought_ended_by_calls_is_counted() -> None:
    sieve = Sieve(dialects=("kimi_k2",), metrics=True)
    sieve.feed("<think>x" + KIMI)
    sieve.close()
    assert sieve.metrics.snapshot()["reasoning_ended_by_calls"] == 1

"""SPEC §13 Leaked-output sanitizer (issue 15 item 3): ``sanitize_leaked_output(text)`` and the
streaming ``LeakFilter`` remove every category — empty ```json fences, leaked wire-format
call arrays and tool-result blobs, ``<think>`` tags and a dangling think suffix, DeepSeek
special tokens in every spelling, complete leaked DSML/XML wrapper blocks outside code, agent
XML shells — while look-alikes stay. Every row is checked whole, per character and at random
splits (``sanitized_all_ways``); a hypothesis property checks chunking invariance on generated
documents.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from helpers import DSML, DSML_V4, DSML_V41, NATIVE_V31, XML, random_chunkings, table
from hypothesis import given
from hypothesis import strategies as st
from strategies import soak_settings

import callsieve
from callsieve import LeakFilter, sanitize_leaked_output

CALLS = json.dumps(
    [{"function": {"name": "f", "arguments": "{}"}, "id": "call_1", "type": "function"}]
)
RESULT = json.dumps({"role": "tool", "tool_call_id": "call_1", "content": "42"})
RESULTS = json.dumps([{"type": "tool_result", "tool_use_id": "tu_1", "content": "ok"}])


def streamed(text: str, chunks: list[str]) -> str:
    f = LeakFilter()
    return "".join(f.feed(c) for c in chunks) + f.close()


def sanitized_all_ways(text: str) -> str:
    """The whole-text result, after checking every chunking gives the same."""
    want = sanitize_leaked_output(text)
    for chunks in [list(text), *random_chunkings(text)]:
        assert streamed(text, chunks) == want, chunks
    return want


# (id, input, output): each category's positives, then look-alikes that must stay.
ROWS = [
    # empty ```json fences
    ("empty-fence", "a```json\n```b", "ab"),
    ("empty-fence-blank-lines", "a\n```json\n\n  \n```\nb", "a\n\nb"),
    ("fence-with-json-stays", '```json\n{"a": 1}\n```', '```json\n{"a": 1}\n```'),
    ("empty-py-fence-stays", "```py\n```", "```py\n```"),
    # leaked wire-format call arrays and tool-result blobs
    ("call-array", f"before {CALLS} after", "before  after"),
    ("call-array-pretty", "x" + json.dumps(json.loads(CALLS), indent=2) + "y", "xy"),
    ("result-object", f"r {RESULT} s", "r  s"),
    ("result-array", f"r {RESULTS} s", "r  s"),
    ("plain-json-stays", 'data [{"a": 1}] and {"b": [2]}', 'data [{"a": 1}] and {"b": [2]}'),
    ("function-word-stays", '[{"function": "a string"}]', '[{"function": "a string"}]'),
    ("half-array-stays", '[{"function":', '[{"function":'),
    ("array-in-code-stays", f"`{CALLS}`", f"`{CALLS}`"),
    # <think> tags and a dangling think suffix
    ("think-tags", "a<think>why</think>b", "awhyb"),
    ("think-dangling", "answer <think>half a thought", "answer "),
    ("think-close-alone", "x</think>y", "xy"),
    ("think-fullwidth", "a＜think＞b＜/think＞c", "abc"),
    ("think-in-code-stays", "`<think>` and ```\n<think>\n```", "`<think>` and ```\n<think>\n```"),
    ("thinking-word-stays", "<thinking> is not a tag", "<thinking> is not a tag"),
    # DeepSeek special tokens, every spelling
    ("bos-fullwidth", "<｜begin▁of▁sentence｜>Hi", "Hi"),
    ("eos-ascii", "Bye<|end_of_sentence|>", "Bye"),
    ("eos-space", "Bye<| end of sentence|>"[:0] + "Bye<｜end of sentence｜>", "Bye"),
    ("roles", "<｜User｜>q<｜Assistant｜>a", "qa"),
    ("end-of-thinking", "t<|end▁of▁thinking|>a", "ta"),
    ("thought", "<｜thought▁begin｜>x<｜thought▁end｜>", "x"),
    (
        "tool-outputs",
        (
            "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>r<｜tool▁output▁end｜>"
            "<｜tool▁outputs▁end｜>"
        ),
        "r",
    ),
    ("near-miss-token-stays", "<|endoftext|> <｜Users｜>", "<|endoftext|> <｜Users｜>"),
    # complete leaked DSML / XML wrapper blocks outside code
    ("dsml-block", f"a{DSML}b", "ab"),
    ("dsml-v4-block", f"a{DSML_V4}b", "ab"),
    ("dsml-v41-block", f"a{DSML_V41}b", "ab"),  # (a dialect's opener, read from its grammar)
    ("xml-block", f"a\n{XML}\nb", "a\n\nb"),
    ("native-block", f"a{NATIVE_V31}b", "ab"),
    ("block-in-fence-stays", f"```\n{XML}\n```", f"```\n{XML}\n```"),
    ("block-in-span-stays", f"`{XML}`", f"`{XML}`"),
    ("mention-stays", "I will use <tool_calls> now.", "I will use <tool_calls> now."),
    ("unclosed-block-stays", '<tool_calls>\n<invoke name="f">', '<tool_calls>\n<invoke name="f">'),
    # agent XML shells
    (
        "attempt-completion",
        "<attempt_completion><result>Done.</result></attempt_completion>",
        "Done.",
    ),
    ("ask-followup", "<ask_followup_question>Which file?</ask_followup_question>", "Which file?"),
    ("new-task", "<new_task>\n<result>go</result>\n</new_task>", "\ngo\n"),
    ("lone-result-stays", "the <result> tag", "the <result> tag"),
    ("result-in-code-stays", "<attempt_completion>`<result>`</attempt_completion>", "`<result>`"),
    (
        "html-stays",
        '<b>bold</b> <div class="x">y</div> a<b',
        '<b>bold</b> <div class="x">y</div> a<b',
    ),
    ("prose-stays", "if a < b and [x] {y}", "if a < b and [x] {y}"),
    ("empty", "", ""),
]


@table(ROWS)
def test_s13_sanitizer(row: tuple[Any, ...]) -> None:
    text, want = row
    assert sanitized_all_ways(text) == want


def test_s13_markers_come_from_the_grammar() -> None:
    """The sanitizer's patterns are the grammar's terminals (``_leaks.lark`` and the dialects'
    openers): the reasoning tags are the parser's own ``THINK_OPEN``/``THINK_CLOSE``."""
    from callsieve._sanitizer.leak_patterns import leak_patterns

    p = leak_patterns()
    assert p.tokens.match("<think>") and p.tokens.match("＜/think＞")
    assert p.openers.match("<｜DSML｜tool_calls>") and p.openers.match("<tool_calls>")


# ---------------------------------------------------------------- streaming
PIECES = st.sampled_from(
    [
        "a",
        " ",
        "\n",
        "<think>",
        "</think>",
        "<thi",
        "<｜end▁of▁sentence｜>",
        "<|User|>",
        "```json\n```",
        "```",
        "`",
        "```py\n",
        "~~~\n",
        "<attempt_completion>",
        "</attempt_completion>",
        "<result>",
        "</result>",
        CALLS,
        '[{"function":',
        RESULT,
        '{"a":',
        "}",
        "]",
        '"',
        "\\",
        "<tool_calls>",
        "</tool_calls>",
        '<invoke name="f">',
        "</invoke>",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<b>x</b>",
        "<",
        "[",
        "{",
    ]
)


@soak_settings(300)
@given(st.lists(PIECES, max_size=16).map("".join), st.data())
def test_s13_leak_filter_is_chunking_invariant(text: str, data: Any) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    bounds = [0, *sorted(cuts), len(text)]
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert streamed(text, chunks) == sanitize_leaked_output(text)


def test_s13_filter_releases_prose_at_once() -> None:
    f = LeakFilter()
    assert f.feed("Hello, ") == "Hello, "
    assert f.feed("a<th") == "a"  # (a tail that may become <think>: held)
    assert f.feed("e\n") == "<the\n"  # (a line break: no tag can hold it)
    assert f.feed(" <think>") == " "  # (no </think> yet: held, it may dangle)
    assert f.feed("x</think>y") == "xy" and f.close() == ""


# ---------------------------------------------------------------- sanitize=True
def test_s13_sieve_option() -> None:
    text = "Hi<｜end▁of▁sentence｜> " + XML + " then <attempt_completion>ok</attempt_completion>"
    r = callsieve.parse(text, sanitize=True)
    assert r.text == "Hi  then ok" and [c.name for c in r.calls] == ["read_file"]
    for chunks in [list(text), *random_chunkings(text)]:
        sieve = callsieve.Sieve(sanitize=True)
        events = [e for c in chunks for e in sieve.feed(c)] + sieve.close()
        got = "".join(e.text for e in events if isinstance(e, callsieve.Text))
        assert got == r.text
    assert callsieve.parse(text).text != r.text  # (without the option the leaks stay)

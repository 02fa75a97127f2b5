"""SPEC §6 Examples are not calls: blocks inside fences and inline code spans stay text.

Every input goes through ``run_all_ways`` (``parse()`` and ``Sieve`` whole, per character and
at random splits, all agreeing); the expectations come from the SPEC text quoted next to each
group. Calls are compared by ``(name, input)`` with type-exact JSON values.
"""

from __future__ import annotations

from typing import Any

from helpers import (
    DSML,
    INV,
    NATIVE_V31,
    P,
    X,
    check,
    table,
    xml_call,
)

REAL = X(INV("real", P("p", "1")))
FAKE = X(INV("fake", P("p", "1")))
CODE_ROWS = [
    (
        "backtick-fence",
        f"Example:\n```xml\n{FAKE}\n```\nReal:\n{REAL}",
        "Example:\n```xml\n{FAKE}\n```\nReal:\n",
    ),
    ("tilde-fence", f"~~~\n{FAKE}\n~~~\n{REAL}", "~~~\n{FAKE}\n~~~\n"),
    ("long-fence", f"`````\n{FAKE}\n`````\n{REAL}", "`````\n{FAKE}\n`````\n"),
    ("indented-fence", f"  ```\n{FAKE}\n  ```\n{REAL}", "  ```\n{FAKE}\n  ```\n"),
    ("dsml-in-fence", f"```\n{DSML}\n```\n{REAL}", "```\n{DSML}\n```\n"),
    ("native-in-fence", f"```\n{NATIVE_V31}\n```\n{REAL}", "```\n{NATIVE_V31}\n```\n"),
    (
        "missing-opener-shape-in-fence",
        '```\n<invoke name="fake"/></tool_calls>\n```\n' + REAL,
        '```\n<invoke name="fake"/></tool_calls>\n```\n',
    ),
    # "closed by a fence of the same character and at least the same length"
    ("tilde-does-not-close-backticks", f"```\n~~~\n{FAKE}\n```\n{REAL}", "```\n~~~\n{FAKE}\n```\n"),
    ("shorter-does-not-close", f"````\n```\n{FAKE}\n````\n{REAL}", "````\n```\n{FAKE}\n````\n"),
    ("longer-closes", f"```\n{FAKE}\n``````\n{REAL}", "```\n{FAKE}\n``````\n"),
    # "nesting respected"
    (
        "nested-longer-outer",
        f"````md\n```xml\n{FAKE}\n```\n{FAKE}\n````\n{REAL}",
        "````md\n```xml\n{FAKE}\n```\n{FAKE}\n````\n",
    ),
    (
        "nested-same-length",
        f"```md\n```xml\n{FAKE}\n```\n{FAKE}\n```\n{REAL}",
        "```md\n```xml\n{FAKE}\n```\n{FAKE}\n```\n",
    ),
    (
        "nested-tilde-in-backticks",
        f"```md\n~~~xml\n{FAKE}\n~~~\n{FAKE}\n```\n{REAL}",
        "```md\n~~~xml\n{FAKE}\n~~~\n{FAKE}\n```\n",
    ),
    # inline code spans
    ("inline", f"Use `{FAKE}` like that. {REAL}", "Use `{FAKE}` like that. "),
    ("inline-double", f"Use ``a ` {FAKE}`` ok {REAL}", "Use ``a ` {FAKE}`` ok "),
    ("inline-needs-equal-run", f"x ``a`{FAKE}`` {REAL}", "x ``a`{FAKE}`` "),
    ("inline-single-not-closed-by-double", f"x `a``{FAKE}` {REAL}", "x `a``{FAKE}` "),
    (
        "inline-mentions",
        "它只提到了 `<|DSML|tool_calls>` 和 `<tool_calls>`。\n" + REAL,
        "它只提到了 `<|DSML|tool_calls>` 和 `<tool_calls>`。\n",
    ),
    ("inline-across-newline", f"see `code\n{FAKE}` {REAL}", "see `code\n{FAKE}` "),
    # "an unclosed span ends at a blank line"
    ("unclosed-span-blank-line", f"don't use ` here.\n\n{REAL}", "don't use ` here.\n\n"),
    ("unclosed-span-blank-line-spaces", f"a ` b\n  \n{REAL}", "a ` b\n  \n"),
    ("unclosed-span-before-blank-line", f"a ` b\n{FAKE}\n\n{REAL}", "a ` b\n{FAKE}\n\n"),
    # a prose mention, then a real block
    (
        "mention-then-real",
        f"I will use <tool_calls> now.\n{REAL}",
        "I will use <tool_calls> now.\n",
    ),
    ("tildes-are-not-inline-code", f"~x~ {REAL}", "~x~ "),
    (
        "fence-closed-then-real",
        f"```\ncode\n```\n{REAL}\n```\n{FAKE}\n```",
        "```\ncode\n```\n\n```\n{FAKE}\n```",
    ),
]


@table(CODE_ROWS)
def test_s6_examples_are_not_calls(row: tuple[Any, ...]) -> None:
    text, want_text = row
    want_text = (
        want_text.replace("{FAKE}", FAKE)
        .replace("{DSML}", DSML)
        .replace("{NATIVE_V31}", NATIVE_V31)
    )
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

"""SPEC §2 ``tool_use``, its JSON object form: an Anthropic Messages ``tool_use`` content block
written into the reply, ``{"type": "tool_use", "id": …, "name": …, "input": {…}}``
(grammar/tool_use.lark). Each case runs every way ``check_dialect`` drives it.
"""

from __future__ import annotations

from typing import Any

from helpers import check_dialect, table

import callsieve

D = "tool_use"

SF = ("get_weather", {"location": "San Francisco, CA"})
BLOCK = (
    '{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", '
    '"input": {"location": "San Francisco, CA"}}'
)

ROWS: list[tuple[Any, ...]] = [
    ("anthropic-docs", BLOCK, "", [SF]),
    ("text-around", f"I'll check.\n{BLOCK}\nOne moment.", "I'll check.\n\nOne moment.", [SF]),
    (
        "parallel",
        (
            '{"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}}\n'
            '{"type": "tool_use", "id": "toolu_2", "name": "b", "input": {"q": [1, {"r": "}"}]}}'
        ),
        "\n",
        [("a", {}), ("b", {"q": [1, {"r": "}"}]})],
    ),
    (
        "other-keys",
        '{"type":"tool_use","name":"f","input":{"x":1},"cache_control":{"type":"ephemeral"}}',
        "",
        [("f", {"x": 1})],
    ),
    (
        "unicode",
        '{"type": "tool_use", "name": "translate", "input": {"text": "Grüß Gott 🙏"}}',
        "",
        [("translate", {"text": "Grüß Gott 🙏"})],
    ),
    # ---------------------------------------------------------------- not calls
    ("no-name", '{"type": "tool_use", "input": {}}', '{"type": "tool_use", "input": {}}', []),
    ("text-block", '{"type": "text", "text": "hi"}', '{"type": "text", "text": "hi"}', []),
    (
        "never-closed",
        '{"type": "tool_use", "name": "f", "input": {',
        '{"type": "tool_use", "name": "f", "input": {',
        [],
    ),
]


@table(ROWS)
def test_tool_use_json(row: tuple[Any, ...]) -> None:
    text, want_text, want_calls = row
    check_dialect(text, want_text, want_calls, D)


def test_the_block_id_is_the_models() -> None:
    r = callsieve.parse(BLOCK, dialects=(D,))
    assert [c.id for c in r.calls] == ["toolu_01A09q90qw90lq917835lq9"]

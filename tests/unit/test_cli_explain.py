"""``callsieve parse --explain FILE`` (issue 15 item 5): each block with its span, dialect,
status, repairs and policy decisions, and for a failed block where and why it failed — the
offset, the terminals the parser expected there, the text it found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import INV, P, X

from callsieve.__main__ import main

FAILED = 'Hi <tool_calls><invoke name="f"><param>v</param></invoke></tool_calls>'
REPAIRED = INV("g", P("x", "1")) + "</tool_calls>"


def explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *extra: str
) -> dict[str, Any]:
    reply = tmp_path / "reply.txt"
    reply.write_text(text, encoding="utf-8")
    assert main(["parse", "--explain", str(reply), *extra]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_explain_a_failed_and_a_repaired_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = FAILED + "\nthen " + REPAIRED
    view = explain(tmp_path, capsys, text)
    failed, repaired = view["blocks"]
    assert failed["status"] == "failed" and failed["dialect"] == "xml"
    assert failed["span"] == [3, 3 + len('<tool_calls><invoke name="f">')]
    why = failed["failure"]
    at = text.index("<param>")
    assert why["offset"] == at and why["found"] == text[at : at + 24]
    assert why["expected"] == ["INVOKE_CLOSE", "PARAM_OPEN"]
    assert repaired["status"] == "complete" and repaired["repairs"] == ["missing_opener"]
    assert repaired["span"] == [len(text) - len(REPAIRED), len(text)]
    assert view["calls"] == [
        {
            "name": "g",
            "input": {"x": 1},
            "dialect": "xml",
            "repairs": ["missing_opener"],
            "coercions": [],
        }
    ]


def test_explain_a_prose_mention(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = explain(tmp_path, capsys, "I will use <tool_calls> now.")
    why = view["blocks"][0]["failure"]
    assert why["found"] == "now." and why["expected"] == ["INVOKE_OPEN"]


def test_explain_policy_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        '[{"name": "f", "parameters": {"type": "object", "properties": '
        '{"n": {"type": "integer"}}}}]',
        encoding="utf-8",
    )
    text = X(INV("f", P("n", "<![CDATA[3]]>")) + INV("rm"))
    view = explain(tmp_path, capsys, text, "--tools", str(tools), "--policy", "allowlist")
    (block,) = view["blocks"]
    assert block["policy"] == [
        {
            "call": "rm",
            "rejected": "unknown tool 'rm'",
            "action": "drop",
            "span": [text.index(INV("rm")), text.index("</tool_calls>")],
        }
    ]
    assert view["calls"][0]["coercions"] == ["/n: string -> integer"]
    assert view["rejected_tool_names"] == ["rm"]


def test_stream_with_policy_and_sanitize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "f"}]', encoding="utf-8")
    reply = tmp_path / "reply.txt"
    reply.write_text("a<｜end▁of▁sentence｜>b " + X(INV("rm")) + X(INV("f")), encoding="utf-8")
    assert (
        main(
            [
                "stream",
                str(reply),
                "--tools",
                str(tools),
                "--policy",
                "allowlist",
                "--sanitize",
                "--chunk-size",
                "3",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert "".join(x["text"] for x in lines if x["event"] == "text") == "ab "
    assert [c["name"] for x in lines if x["event"] == "tool_calls" for c in x["calls"]] == ["f"]


def test_explain_reasoning_a_stray_close_and_an_unclosed_thought(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §14.2: a ``</think>`` with no ``<think>`` open under "tags" (the sign of a chat
    template that wrote the ``<think>``) is shown where it stands; so is a thought that
    never closed."""
    text = "Let me think about it.</think>The answer is 4."
    view = explain(tmp_path, capsys, text)
    at = text.index("</think>")
    assert view["reasoning"] == {
        "unclosed": False,
        "stray_closes": [{"offset": at, "found": text[at : at + 24]}],
    }
    view = explain(tmp_path, capsys, text, "--reasoning", "open")
    assert view["reasoning"] == {"unclosed": False, "stray_closes": []}
    view = explain(tmp_path, capsys, "<think>cut off while thinking")
    assert view["reasoning"] == {"unclosed": True, "stray_closes": []}

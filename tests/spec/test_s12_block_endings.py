"""SPEC §12, the grammar contract for where calls and blocks end (grammar/README.md, "Rule
names that become calls", "Where a block ends", "Terminals", "Entries"): what the loader
refuses, and what the scanner does with what it accepts — a call that ends with a balanced
run complete the moment it closes, a block that may end or go on ending at the first
character none of its tokens takes, an end LALR merged in from another context checked.
Each grammar here is a scratch dialect written to a temporary folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways

import callsieve
from callsieve import GrammarError, Sieve, ToolCalls
from callsieve._grammar.compiled import load_grammar


def write(tmp_path: Path, name: str, text: str) -> tuple[str, ...]:
    (tmp_path / f"{name}.lark").write_text(f"// dialect: {name} — a scratch dialect\n" + text)
    return (str(tmp_path),)


def refused(tmp_path: Path, name: str, text: str) -> str:
    dirs = write(tmp_path, name, text)
    with pytest.raises(GrammarError) as info:
        load_grammar((name,), dirs)
    return str(info.value)


# ---------------------------------------------------------------- what the loader refuses
def test_a_call_may_not_end_with_a_soft_run_the_block_goes_on_after(tmp_path: Path) -> None:
    # (where the block can only end after it, the run is the raw rest of the block: allowed)
    message = refused(
        tmp_path,
        "sr",
        'sr: SR_OPEN sr_call SR_CLOSE\nsr_call: SR_NAME SR_TEXT_RUN -> call\nSR_OPEN: "<sr>"\n'
        'SR_CLOSE: "</sr>"\nSR_NAME: /[a-z]{1,9}:/\nSR_TEXT_RUN: /(?:(?!<)[\\s\\S])+/\n',
    )
    assert "sr.lark" in message and "ends with the run SR_TEXT_RUN" in message


def test_a_call_may_not_end_with_a_rule_that_can_end_otherwise(tmp_path: Path) -> None:
    message = refused(
        tmp_path,
        "rt",
        "rt: RT_OPEN rt_call\nrt_call: RT_NAME rt_args -> call\nrt_args: RT_RUN -> call_json\n"
        '     | RT_NONE\nRT_OPEN: "<rt>"\nRT_NAME: /[a-z]{1,9}:/\nRT_NONE: "-"\n'
        "RT_RUN: /\\{[\\s\\S]*\\}/\n",
    )
    assert "rt.lark" in message and "rule that always ends with a balanced run" in message


@pytest.mark.parametrize(
    "run", ["/(?:(?!;)[\\s\\S])+/", "/\\{[\\s\\S]*\\}/"], ids=["soft", "balanced"]
)
def test_no_soft_or_balanced_run_where_a_block_may_end(tmp_path: Path, run: str) -> None:
    message = refused(
        tmp_path,
        "me",
        'me: ME_OPEN me_call ME_TAIL_RUN?\nme_call: ME_NAME -> call\nME_OPEN: "<me>"\n'
        f"ME_NAME: /[a-z]{{1,9}};/\nME_TAIL_RUN: {run}\n",
    )
    assert "may follow where a block may end" in message


def test_the_missing_wrapper_repair_needs_a_closer(tmp_path: Path) -> None:
    """A dialect whose call may end its block (mistral v11) makes no repair entries of the
    terminals its opener takes first; one whose calls a closer follows (the markup) does."""
    g = load_grammar(("mistral",))
    assert [e.terminal for e in g.entries if e.synthetic is not None] == []
    g = load_grammar(callsieve.DEFAULT_DIALECTS)
    assert {e.terminal for e in g.entries if e.synthetic is not None} == {
        "INVOKE_OPEN",
        "DEEPSEEK_NATIVE__NATIVE_CALL_BEGIN",
    }


@pytest.mark.filterwarnings("ignore::callsieve.GrammarWarning")  # (a bare name is an entry)
def test_a_hard_run_with_a_negated_class_stops_at_the_class_it_negates(tmp_path: Path) -> None:
    dirs = write(
        tmp_path,
        "hr",
        "hr: HR_OPEN hr_call HR_CLOSE\nhr_call: hr_name hr_value HR_END -> call\n"
        "hr_name: HR_NAME -> call_name\nhr_value: HR_VALUE_RUN -> call_args\n"
        'HR_OPEN: "<hr>"\nHR_CLOSE: "</hr>"\nHR_NAME: /(?P<v>[a-z]{1,9})=/\nHR_END: ";"\n'
        "HR_VALUE_RUN: /[^;<]+/\n",
    )
    r = callsieve.parse('<hr>f={"a": 1};</hr>', dialects=("hr",), grammar_dirs=dirs)
    assert [(c.name, c.input) for c in r.calls] == [("f", {"a": 1})]


def test_bounded_terminals_are_tried_in_priority_then_name_order() -> None:
    """Never the parse table's order (string hashing: it differs between processes)."""
    g = load_grammar(("tool_use", "json", "mistral"))
    for spec in g.states.values():
        keys = [(-t.priority, t.name) for t in spec.bounded]
        assert keys == sorted(keys)


# ---------------------------------------------------------------- what the scanner does
LIST = (
    "ls: LS_OPEN ls_call (LS_SEP ls_call)*\nls_call: ls_args -> call\n"
    "ls_args: LS_RUN -> call_json\n"
    'LS_OPEN: "<ls>"\nLS_SEP: /[ ]{0,8};[ ]{0,8}(?=\\{)/\nLS_RUN: /\\s*\\{[\\s\\S]*\\}/\n'
)


def test_a_call_is_complete_when_its_object_closes(tmp_path: Path) -> None:
    dirs = write(tmp_path, "ls", LIST)
    opts: dict[str, Any] = {"dialects": ("ls",), "grammar_dirs": dirs}
    sieve = Sieve(early_emit="invoke", **opts)
    events = sieve.feed('<ls>{"name": "a", "arguments": {}}')
    assert [c.name for e in events if isinstance(e, ToolCalls) for c in e.calls] == ["a"]
    r = run_all_ways(
        'x <ls>{"name": "a", "arguments": {}} ; {"name": "b", "arguments": {}}; y', **opts
    )
    assert [c.name for c in r.calls] == ["a", "b"] and r.text == "x ; y"


def test_an_end_lalr_merged_in_is_checked(tmp_path: Path) -> None:
    """``mg_item`` is reduced before the call and after it: LALR merges those states, so after
    an item before the call the state seems to take the end. The capture asks the parser (a
    copy fed the end): a block with no call never completes."""
    dirs = write(
        tmp_path,
        "mg",
        "mg: MG_OPEN mg_item* mg_call mg_item*\nmg_call: mg_name MG_END -> call\n"
        'mg_name: MG_NAME -> call_name\nmg_item: MG_KEY\nMG_OPEN: "<mg>"\nMG_END: ";"\n'
        "MG_NAME: /![a-z]{1,9}(?=[^a-z])/\nMG_KEY: /\\.[a-z]{1,9}(?=[^a-z])/\n",
    )
    opts: dict[str, Any] = {"dialects": ("mg",), "grammar_dirs": dirs}
    r = run_all_ways("<mg>.k then prose", **opts)
    assert r.calls == () and r.text == "<mg>.k then prose"
    r = run_all_ways("<mg>.k!f;.j and then", **opts)
    assert [c.name for c in r.calls] == ["!f"] and r.text == " and then"

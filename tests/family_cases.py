"""The opt-in families' cases (SPEC §2's legacy formats, §19's open-model families) and the
one harness every family's test file runs them through.

A ``Case`` is one realistic model output and what it must give. ``FamilySuite`` is the
suite a family's file subclasses (``dialect``, ``cases``): each case parsed whole, per
character and at random splits (``run_all_ways``), with argument streaming and under
``early_emit="invoke"``, inside the family's reasoning (a drafted block is reasoning, the
answer's block a call; with ``calls_in_reasoning="call"`` both; in a family whose calls end
a thought never closed, the opener ends it and the block is a call), quoted in a Markdown fence
and an inline code span (text), and with every built-in dialect enabled at once (the same
calls, read as this family's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from helpers import (
    canon_calls,
    canon_value,
    check_argument_stream,
    random_chunkings,
    run_all_ways,
    stream,
)

from callsieve import parse
from callsieve._grammar.compiled import load_grammar

__all__ = ["ALL_DIALECTS", "THINK_TAGS", "Case", "FamilySuite", "ends_thought", "expect"]

#: Every built-in dialect at once (SPEC §19).
ALL_DIALECTS = "all"

#: The reasoning tags a family's model writes (its grammar module's, else common.lark's).
THINK_TAGS: dict[str, tuple[str, str]] = {
    "seed_oss": ("<seed:think>", "</seed:think>"),
    "gpt_oss": ("<|channel|>analysis<|message|>", "<|end|>"),
    "command_r7b": ("<|START_THINKING|>", "<|END_THINKING|>"),
    "minimax_m3": ("<mm:think>", "</mm:think>"),
    "kimi_k3": ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
    "hy_v3": ("<think:opensource>", "</think:opensource>"),
    "gemma4": ("<|channel>thought\n", "<channel|>"),
    "apertus": ("<|inner_prefix|>", "<|inner_suffix|>"),
    "solar_open2": ("<|think|>", "<|end|><|begin|>assistant"),
    "inkling": ("<|content_thinking|>", "<|end_message|>"),
}
_THINK = ("<think>", "</think>")

Calls = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Case:
    """One model output: the calls it holds (``calls``), the text released (``answer``; None:
    the input minus its blocks is not written out), the repairs recorded on the blocks, the
    model's call ids (``ids``: None, not checked), and the options it is read with."""

    id: str
    text: str
    calls: Calls
    answer: str | None = None
    repairs: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    tools: list[dict[str, Any]] | None = None
    #: a case whose text holds a Markdown fence of its own, or is no block at all, skips
    #: the variants that wrap it
    wraps: bool = True
    #: the calls with every dialect enabled, where another family reads the text otherwise
    #: (say why in the case); None: the same calls, read as this family's
    with_all: Calls | None = None
    opts: dict[str, Any] = field(default_factory=dict)


def expect(result: Any, case: Case) -> None:
    """``result`` (a ``ParseResult``) holds what ``case`` says."""
    assert canon_calls(result.calls) == [(n, canon_value(i)) for n, i in case.calls], (
        f"{case.id}: calls {[(c.name, c.input) for c in result.calls]}"
    )
    if case.answer is not None:
        assert result.text == case.answer, f"{case.id}: text {result.text!r}"
    repairs = tuple(r for b in result.blocks if b.status == "complete" for r in b.repairs)
    assert repairs == case.repairs, f"{case.id}: repairs {repairs}"
    if case.ids is not None:
        assert tuple(c.id for c in result.calls) == case.ids


def _options(case: Case, dialects: Sequence[str] | str) -> dict[str, Any]:
    names = dialects if isinstance(dialects, str) else tuple(dialects)
    return {"dialects": names, "tools": case.tools, **case.opts}


def check_every_way(dialect: str, case: Case, dialects: Sequence[str] | str | None = None) -> Any:
    """``case`` whole, per character and at random splits; the blocks are ``dialect``'s."""
    result = run_all_ways(case.text, **_options(case, dialects or (dialect,)))
    expect(result, case)
    assert {b.dialect for b in result.blocks if b.status == "complete"} <= {dialect}, (
        f"{case.id}: read as {[b.dialect for b in result.blocks]}"
    )
    return result


#: A tool whose ``code`` is typed ``string`` and ``n`` ``number`` (``check_typed_by_schema``).
CODE_AND_NUMBER = [
    {
        "name": "f",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "n": {"type": "number"}},
        },
    }
]


def check_typed_by_schema(dialect: str, text: str, code: str = "0042") -> None:
    """SPEC §9's coercion in a family that writes values as text: ``text`` holds one call
    ``f`` whose ``code`` reads as a number and ``n`` as ``2.5``; under ``CODE_AND_NUMBER`` the
    string-typed ``code`` stays the text ``code`` and ``n`` is the number, every way."""
    check_every_way(
        dialect,
        Case("typed", text, [("f", {"code": code, "n": 2.5})], tools=CODE_AND_NUMBER),
    )


def check_arguments(dialect: str, case: Case) -> None:
    """Argument streaming (SPEC §7): per character and at random splits, every rule of the
    stream holds (``helpers.check_argument_stream``: indexes count the calls, each finished
    call's deltas spell its ``arguments``, every started call ends, the calls and text are
    ``parse()``'s under the same ``early_emit``: a call in a block that never closes went out
    when it closed)."""
    opts = _options(case, (dialect,))
    for chunks in [[case.text], list(case.text), *random_chunkings(case.text)]:
        check_argument_stream(case.text, stream(chunks, early_emit="arguments", **opts), **opts)


def check_invoke(dialect: str, case: Case) -> None:
    """``early_emit="invoke"``: every chunking agrees, and where no block fails the calls and
    text are those of the whole block's (a block that fails late emitted its first calls)."""
    opts = _options(case, (dialect,))
    whole = parse(case.text, **opts)
    result = run_all_ways(case.text, early_emit="invoke", **opts)
    if all(b.status == "complete" for b in whole.blocks):
        assert (result.text, canon_calls(result.calls)) == (whole.text, canon_calls(whole.calls))


def ends_thought(dialect: str, case: Case) -> bool:
    """Whether ``dialect`` (from the grammar folders the case is read with) declares that
    its models open calls in a thought they never close (``//%calls_end_thought``, §15)."""
    dirs = tuple(str(d) for d in _options(case, (dialect,)).get("grammar_dirs") or ())
    return bool(load_grammar((dialect,), dirs).traits[dialect].flag("calls_end_thought"))


def check_in_reasoning(dialect: str, case: Case) -> None:
    """The case drafted inside the family's reasoning, then written in the answer: the
    draft is reasoning, only the answer's blocks are calls. A family whose calls end a
    thought never closed (``ends_thought``): ``check_calls_end_thought`` (not a block
    missing its opener: no opener stands there to end the thought)."""
    if ends_thought(dialect, case) and "missing_opener" not in case.repairs:
        check_calls_end_thought(dialect, case)
        return
    think_open, think_close = THINK_TAGS.get(dialect, _THINK)
    draft = "Draft:\n" + case.text
    text = think_open + draft + think_close + "\n" + case.text
    result = run_all_ways(text, **_options(case, (dialect,)))
    assert result.reasoning == draft, f"{case.id}: reasoning {result.reasoning!r}"
    assert canon_calls(result.calls) == [(n, canon_value(i)) for n, i in case.calls]
    # (calls_in_reasoning="call": the draft's calls are calls too, SPEC §15)
    drafted = run_all_ways(text, calls_in_reasoning="call", **_options(case, (dialect,)))
    assert canon_calls(drafted.calls) == [(n, canon_value(i)) for n, i in case.calls] * 2


def check_calls_end_thought(dialect: str, case: Case) -> None:
    """SPEC §15, a family whose models open calls in a thought they never close: the case
    written inside a thought never closed gives its calls, and the thought ends at the first
    block that is a call (the block records it); a block that fails stays reasoning. The
    opener decides, so a block in a thought closed after it is a call too."""
    think_open, think_close = THINK_TAGS.get(dialect, _THINK)
    opts = _options(case, (dialect,))
    want = [(n, canon_value(i)) for n, i in case.calls]
    thought = "Thinking.\n"
    result = run_all_ways(think_open + thought + case.text, **opts)
    assert canon_calls(result.calls) == want, f"{case.id}: calls {result.calls}"
    if case.calls:
        assert result.reasoning.startswith(thought), f"{case.id}: {result.reasoning!r}"
        assert any(b.reasoning == "ended" for b in result.blocks), case.id
    else:
        assert result.reasoning == thought + case.text, f"{case.id}: {result.reasoning!r}"
    draft = "Draft:\n" + case.text
    closed = run_all_ways(think_open + draft + think_close + "\n" + case.text, **opts)
    assert canon_calls(closed.calls) == want * 2, f"{case.id}: calls {closed.calls}"


def check_fenced(dialect: str, case: Case) -> None:
    """The case quoted in a Markdown fence, or in an inline code span where it holds no
    backtick and no blank line, is an example (SPEC §6): all text."""
    text = "For example:\n```\n" + case.text + "\n```\nThat is the format."
    result = run_all_ways(text, **_options(case, (dialect,)))
    assert result.calls == () and result.text == text
    if "`" not in case.text and "\n\n" not in case.text:
        text = f"Write `{case.text}` to call it."
        result = run_all_ways(text, **_options(case, (dialect,)))
        assert result.calls == () and result.text == text


class FamilySuite:
    """What every family's test file runs over its ``cases`` (``tests/families/conftest.py``
    parametrizes ``case``)."""

    dialect: str = ""
    cases: Sequence[Case] = ()

    def test_every_way(self, case: Case) -> None:
        check_every_way(self.dialect, case)

    def test_arguments_stream(self, case: Case) -> None:
        check_arguments(self.dialect, case)

    def test_invoke(self, case: Case) -> None:
        check_invoke(self.dialect, case)

    def test_in_reasoning(self, case: Case) -> None:
        if case.wraps:
            check_in_reasoning(self.dialect, case)

    def test_fenced_is_an_example(self, case: Case) -> None:
        if case.wraps:
            check_fenced(self.dialect, case)

    def test_with_every_dialect_enabled(self, case: Case) -> None:
        if case.with_all is None:
            check_every_way(self.dialect, case, ALL_DIALECTS)
            return
        result = run_all_ways(case.text, **_options(case, ALL_DIALECTS))
        assert canon_calls(result.calls) == [(n, canon_value(i)) for n, i in case.with_all]

"""The one door to CPython's private ``re`` modules (``_base/re_internals.py``, issue 34):
what each reader does when this Python lacks them. Each test forces a fallback by taking a
module away from the adapter, as a future Python would."""

from __future__ import annotations

import re

import pytest

from callsieve import GrammarError
from callsieve._base import re_internals
from callsieve._grammar import automaton, patterns, prefix
from callsieve.constrain import _regex

SOURCE = r"<tool_call>\s*(?=\{)"


@pytest.fixture
def no_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(re_internals, "_parser", None)


@pytest.fixture
def no_sre(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(re_internals, "_sre", None)
    monkeypatch.setattr(re_internals, "_CODE_WORKS", None)


def test_the_adapter_reads_this_python() -> None:
    ops = [str(op) for op, _ in re_internals.parse("ab+")]
    assert ops == ["LITERAL", "MAX_REPEAT"]
    assert re_internals.max_width("a{2,5}") == 5
    assert re_internals.max_width("a*") >= re_internals.MAXREPEAT
    code = re_internals.compiled_code(SOURCE)
    assert code is not None
    assert re_internals.pattern_from_code(SOURCE, code) == re.compile(SOURCE)


@pytest.mark.usefixtures("no_sre")
def test_without_sre_patterns_compile_from_their_source() -> None:
    assert re_internals.compiled_code(SOURCE) is None
    assert patterns.freeze(SOURCE) is None
    assert patterns.compile(SOURCE) == re.compile(SOURCE)
    with pytest.raises(re.error):
        re_internals.compiled_code("(")


@pytest.mark.usefixtures("no_parser")
def test_without_a_parser_the_readers_that_can_do_without_it_say_unknown() -> None:
    assert prefix.first_chars("<a") is None
    assert prefix.prefix_closure("<a") is None
    assert prefix.literal_text("<a") is None
    assert prefix.reads_before("<a") is True  # the safe answer: may depend on the text before


@pytest.mark.usefixtures("no_parser")
def test_without_a_parser_a_grammar_fails_to_load_with_a_clear_error() -> None:
    with pytest.raises(GrammarError, match="no re parser") as info:
        automaton.nfa_table([SOURCE])
    assert isinstance(info.value, ValueError)
    assert info.value.expected == ("re._parser (CPython 3.11+) or sre_parse",)


@pytest.mark.usefixtures("no_parser")
def test_without_a_parser_a_schema_pattern_is_a_configuration_error() -> None:
    from callsieve import ConfigurationError

    with pytest.raises(ConfigurationError, match="no re parser"):
        _regex.regex_node("^a+$")

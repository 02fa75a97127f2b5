"""SPEC §12: the grammar is the single source of truth; the scanner is derived from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import GRAMMARS, run_all_ways
from hypothesis import given, settings
from hypothesis import strategies as st

from callsieve import (
    DEFAULT_DIALECTS,
    ConfigurationError,
    GrammarError,
    GrammarWarning,
    Sieve,
    available_dialects,
    parse,
)
from callsieve._grammar.automaton import DEAD, EntryAutomaton
from callsieve._grammar.compiled import load_grammar
from callsieve._grammar.prefix import prefix_closure


def test_default_dialects_are_files() -> None:
    assert set(DEFAULT_DIALECTS) <= set(available_dialects())


def test_default_grammar_compiles_strict() -> None:
    g = load_grammar()
    assert g.parser.lark.options.strict is True
    assert set(g.dialects) == set(DEFAULT_DIALECTS)


def test_each_dialect_compiles_alone() -> None:
    for name in DEFAULT_DIALECTS:
        assert load_grammar((name,)).dialects == (name,)


def test_unknown_dialect_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as info:
        Sieve(dialects=("nope",))
    assert "dsml" in info.value.expected


def _grammar_dir(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / f"{name}.lark").write_text(text, encoding="utf-8")
    return str(tmp_path)


def test_conflicting_grammar_is_refused(tmp_path: Path) -> None:
    d = _grammar_dir(tmp_path, "amb", 'amb: A x | A y\nx: B?\ny: B?\nA: "<amb>"\nB: "b>"\n')
    with pytest.raises(GrammarError):
        load_grammar(("amb",), (d,))


def test_run_terminal_shape_is_checked(tmp_path: Path) -> None:
    d = _grammar_dir(
        tmp_path, "badrun", 'badrun: O BAD_RUN C\nO: "<o>"\nC: "</o>"\nBAD_RUN: /a+b/\n'
    )
    with pytest.raises(GrammarError, match="BAD_RUN"):
        load_grammar(("badrun",), (d,))


def test_token_that_could_grow_past_its_look_ahead_is_refused(tmp_path: Path) -> None:
    """``[^>]{1,9}(?=[>\u200b])``: cut after a zero-width character the repeat backs off and
    the look-ahead takes it (a short match); on the whole text the match is longer. The
    scanner's answer would depend on the chunking, so the grammar is refused."""
    d = _grammar_dir(
        tmp_path, "grow", 'grow: O X C\nO: "<o "\nC: "></o>"\nX: /[^\\s>]{1,9}(?=[\\s>\\u200b])/\n'
    )
    with pytest.raises(GrammarError, match="look-ahead"):
        Sieve(dialects=("grow",), grammar_dirs=(d,))


@pytest.mark.parametrize("value", [r"\S{1,64}", r"(?P<v>\S{1,64})"])
def test_token_that_could_grow_is_refused_inside_a_named_group(tmp_path: Path, value: str) -> None:
    """The check looks inside groups: ``(?P<v>\\S{1,64})(?=[\\s>])`` is refused as the bare
    repeat is. Accepted, ``<o get>weather>`` was no call whole and, cut after ``get>``, a
    call ``get>weather`` (issue 32)."""
    rules = "grow: O g_call\ng_call: g_name C -> call\ng_name: X -> call_name\n"
    terms = f'O: "<o "\nC: ">"\nX: /{value}(?=[\\s>])/\n'
    d = _grammar_dir(tmp_path, "grow", rules + terms)
    with pytest.raises(GrammarError, match="look-ahead"):
        Sieve(dialects=("grow",), grammar_dirs=(d,))


WSD = (
    "wsd: WSD_OPEN wsd_call+ WSD_CLOSE\n"
    'wsd_call: WSD_CALL_OPEN wsd_name ">" -> call\n'
    "wsd_name: WSD_NAME -> call_name\n"
    'WSD_OPEN: "<calls>"\nWSD_CLOSE: "</calls>"\n'
    "WSD_NAME: /[a-z]{1,9}(?=>)/\n"
)


def test_missing_opener_entry_that_widens_the_lead_set_warns(tmp_path: Path) -> None:
    """A call opener that may begin with white space is, for the missing-opener repair, an
    entry: prose is then searched for white space. The loader says so, naming the terminal
    and its lead set (issue 32); the grammar still loads and reads."""
    d = _grammar_dir(tmp_path, "wsd", WSD + "WSD_CALL_OPEN: /\\s{0,4}<c /\n")
    with pytest.warns(GrammarWarning, match=r"WSD_CALL_OPEN .* searched for \\s too"):
        r = parse("hi <calls> <c f></calls>", dialects=("wsd",), grammar_dirs=(d,))
    assert [c.name for c in r.calls] == ["f"]


def test_missing_opener_entry_within_the_lead_set_is_silent(tmp_path: Path) -> None:
    d = _grammar_dir(tmp_path, "wsd", WSD + 'WSD_CALL_OPEN: "<c "\n')
    assert [c.name for c in parse("<c f>", dialects=("wsd",), grammar_dirs=(d,)).calls] == []


def test_unbounded_token_is_refused(tmp_path: Path) -> None:
    d = _grammar_dir(tmp_path, "unb", 'unb: O X C\nO: "<o>"\nC: "</o>"\nX: /x+>/\n')
    with pytest.raises(GrammarError, match="longer than"):
        load_grammar(("unb",), (d,))


QWEN = (
    "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=location>\nTokyo\n"
    "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call> done"
)


def test_new_dialect_is_one_lark_file() -> None:
    opts = {"dialects": (*DEFAULT_DIALECTS, "qwen3_coder"), "grammar_dirs": [str(GRAMMARS)]}
    r = parse(QWEN, **opts)
    assert r.text == "Checking.\n done"
    assert [(c.name, c.input, c.dialect) for c in r.calls] == [
        ("get_weather", {"location": "Tokyo", "days": 3}, "qwen3_coder")
    ]
    # ... streamed per character too
    s = Sieve(**opts)
    events = [e for ch in QWEN for e in s.feed(ch)] + s.close()
    assert [c.name for e in events for c in getattr(e, "calls", ())] == ["get_weather"]
    # and without it enabled the same text is prose
    assert parse(QWEN).text == QWEN


# ---------------------------------------------------------------- prefix closure (§7 hold-back)
PATTERNS = [r"\]\]>", r"<[|｜]tool[▁_ ]call[▁_ ]end[|｜]>", r"\s{0,3}```", r"a(?:bc|d)+e?f"]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_closure_accepts_every_prefix(pattern: str, data: st.DataObject) -> None:
    word = data.draw(st.from_regex(pattern, fullmatch=True))
    closure = re.compile(f"(?:{prefix_closure(pattern)})\\Z")
    for k in range(len(word) + 1):
        assert closure.match(word[:k]), (word, k)


def test_closure_rejects_dead_tails() -> None:
    stop = r"\]\]>"
    closure = re.compile(f"(?:{prefix_closure(stop)})\\Z")
    assert closure.match("]]") and closure.match("]")
    assert not closure.match("]x") and not closure.match("]]]")


# ---------------------------------------------------------------- entry automaton
def _walk(auto: EntryAutomaton, text: str) -> tuple[int, bool]:
    state, seen = 0, False
    for ch in text:
        state = auto.step(state, ch)
        if state == DEAD:
            return DEAD, seen
        seen = seen or auto.accepting[state]
    return state, seen


@pytest.mark.parametrize(
    "opener",
    [
        "<|DSML|tool_calls>",
        "<｜DSML｜tool_calls>",
        "<｜DSML｜function_calls>",
        "<tool_calls>",
        "<｜tool▁calls▁begin｜>",
        "<invoke ",
        "<dsml-tool-calls>",
        "<<|DSML|tool_calls>",
    ],
)
def test_automaton_follows_every_opener(opener: str) -> None:
    auto = load_grammar().openers.entry_tables["answer"].automaton
    for k in range(1, len(opener)):
        assert _walk(auto, opener[:k])[0] != DEAD, opener[:k]
    assert _walk(auto, opener)[1]


@pytest.mark.parametrize("text", ["< ", "</b", "<b>", "<tool-calls>", "<a\nb"])
def test_automaton_dies_on_prose(text: str) -> None:
    assert _walk(load_grammar().openers.entry_tables["answer"].automaton, text)[0] == DEAD


# Texts after a tag lead, built from pieces of openers and of prose, so that walks reach
# live, accepting and dead states alike.
_LEADISH = st.lists(
    st.sampled_from(
        [
            "|",
            "｜",
            "DSML",
            "dsml-",
            "tool",
            "_",
            "-",
            "calls",
            "Calls",
            "function",
            "invoke",
            " ",
            "name=",
            ">",
            "＞",
            "▁",
            "begin",
            "｜>",
            "<",
            "b",
            "x y",
            "\n",
            '"',
            "Str",
        ]
    ),
    max_size=8,
).map("".join)


@given(texts=st.lists(_LEADISH, min_size=1, max_size=12), limit=st.sampled_from([3, 4096]))
@settings(max_examples=60, deadline=None)
def test_automaton_onward_is_the_open_part_of_trans(texts: list[str], limit: int) -> None:
    """``onward`` (what a held candidate's walk reads) holds exactly the memoised
    transitions to a live state that is not accepting, also once a state's memo has been
    cleared past its bound."""
    from callsieve._grammar import automaton

    g = load_grammar()
    auto = EntryAutomaton([g.terminals[e.terminal].pattern.pattern for e in g.entries])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(automaton, "_MEMO_LIMIT", limit)
        for text in texts:
            _walk(auto, "<" + text)
    for state, row in enumerate(auto.trans):
        open_part = {ch: nxt for ch, nxt in row.items() if nxt >= 0 and not auto.accepting[nxt]}
        assert auto.onward[state] == open_part


def test_name_terminal_without_value_group_stands_for_itself(tmp_path: Path) -> None:
    d = _grammar_dir(
        tmp_path,
        "plain",
        (
            "plain: PLAIN_OPEN plain_call PLAIN_CLOSE\n"
            "plain_call: plain_name PLAIN_END -> call\n"
            "plain_name: PLAIN_NAME -> call_name\n"
            'PLAIN_OPEN: "<plain>"\nPLAIN_CLOSE: "</plain>"\nPLAIN_END: ";"\n'
            "PLAIN_NAME: /[a-z_]{1,64}(?=;)/\n"
        ),
    )
    with pytest.warns(GrammarWarning, match="PLAIN_NAME"):  # (a bare name is an entry)
        r = parse("go <plain>do_it;</plain>!", dialects=("plain",), grammar_dirs=[d])
    assert (r.text, [(c.name, c.input) for c in r.calls]) == ("go !", [("do_it", {})])


@pytest.mark.parametrize(
    ("rules", "why"),
    [
        # the call's last symbol is a rule: the scanner could not see the moment it is complete
        (
            "bad: O bad_call C\nbad_call: bad_name -> call\nbad_name: N -> call_name\n",
            "must end with a terminal",
        ),
        # after N the call may be complete or may go on with X
        (
            "bad: O bad_call C\nbad_call: N -> call\n | N X -> call\n",
            "may be complete or may go on",
        ),
        # ... also where the block may end after N: the call is complete at the end of the
        # input and before C, not only where its block ends
        (
            "bad: O bad_call | O bad_call C\nbad_call: N -> call\n | N X -> call\n",
            "may be complete or may go on",
        ),
    ],
)
def test_call_contract_is_enforced(tmp_path: Path, rules: str, why: str) -> None:
    d = _grammar_dir(tmp_path, "bad", rules + 'O: "<o>"\nC: "</o>"\nX: "x"\nN: /n(?=[x<])/\n')
    with pytest.raises(GrammarError, match=why):
        load_grammar(("bad",), (d,))


def test_a_call_may_end_where_its_block_ends(tmp_path: Path) -> None:
    """A call with no closer of its own (``function_call``'s open form): the parser reduces
    it at the end of the input only, and the capture builds it where its block ends, at the
    first text that starts no further argument — whole, per character, at random splits."""
    d = _grammar_dir(
        tmp_path,
        "opn",
        (
            "opn: opn_call\n"
            "opn_call: opn_name opn_arg* -> call\n"
            "opn_name: OPN_NAME -> call_name\n"
            "opn_arg: opn_key opn_value? OPN_END -> param\n"
            "opn_value: OPN_VALUE_RUN -> param_value\n"
            "opn_key: OPN_KEY -> param_name\n"
            "OPN_NAME: /@call (?P<v>[a-z_]{1,64});/\n"
            "OPN_KEY: /\\s{0,8}@arg (?P<v>[a-z_]{1,64})=/\n"
            "OPN_VALUE_RUN: /(?:(?!;)[\\s\\S])+/\n"
            'OPN_END: ";"\n'
        ),
    )
    opts = {"dialects": ("opn",), "grammar_dirs": [d]}
    text = "Go: @call f; @arg a=1; @arg b=x y;\n\nthen @call g; done @call h;"
    r = run_all_ways(text, **opts)
    assert r.text == "Go: \n\nthen  done "
    assert [(c.name, c.input) for c in r.calls] == [
        ("f", {"a": 1, "b": "x y"}),
        ("g", {}),
        ("h", {}),
    ]


_BRACKET = (
    "{name}: {up}_OPEN {name}_call {up}_CLOSE\n"
    "{name}_call: {up}_CALL {name}_name {up}_END -> call\n"
    "{name}_name: {up}_NAME -> call_name\n"
    '{up}_OPEN: "{lead}plain]"\n{up}_CLOSE: "{lead}/plain]"\n'
    '{up}_CALL: "{lead}call="\n{up}_END: ";"\n'
    "{up}_NAME: /[a-z_]{{1,64}}(?=;)/\n"
)


@pytest.mark.parametrize(
    ("lead", "dialects", "hot_lead"),
    [
        # "[" and the defaults' "<": two ASCII tag leads, so the prose hot path is off
        ("[", (*DEFAULT_DIALECTS, "brk"), ""),
        # a non-ASCII lead; "<" is one too, for common.lark's reasoning tags (SPEC §15)
        ("【", ("brk",), "<"),
        ("<", ("brk",), "<"),
    ],
)
def test_any_tag_lead_is_found_whatever_the_hot_path_tests(
    tmp_path: Path, lead: str, dialects: tuple[str, ...], hot_lead: str
) -> None:
    d = _grammar_dir(tmp_path, "brk", _BRACKET.format(name="brk", up="BRK", lead=lead))
    opts = {"dialects": dialects, "grammar_dirs": [d]}
    assert load_grammar(dialects, (str(d),)).openers.prose_lead == hot_lead
    block = f"{lead}plain]{lead}call=go;{lead}/plain]"
    quoted = f"a `{block}` b ~~ {block[:5]}\n"
    r = run_all_ways((quoted + block + " c\n") * 3, **opts)
    assert r.text == (quoted + " c\n") * 3
    assert [c.name for c in r.calls] == ["go"] * 3


@pytest.mark.parametrize("pattern", [r"/(?<==)[a-z_]{1,64}(?=;)/", r"/\b[a-z_]{1,64}(?=;)/"])
def test_a_terminal_that_looks_behind_its_start_is_refused(tmp_path: Path, pattern: str) -> None:
    """A held tag is matched again from its own first character, with nothing of what stood
    before it: a look-behind, ``^`` or ``\\b`` would give a chunked stream another answer
    than the whole text (and the scanner's remembered decisions rely on it too)."""
    d = _grammar_dir(
        tmp_path,
        "lb",
        (
            "lb: LB_OPEN lb_call LB_CLOSE\n"
            "lb_call: LB_CALL lb_name LB_END -> call\n"
            "lb_name: LB_NAME -> call_name\n"
            'LB_OPEN: "<lb>"\nLB_CLOSE: "</lb>"\nLB_CALL: "call="\nLB_END: ";"\n'
            f"LB_NAME: {pattern}\n"
        ),
    )
    with pytest.raises(GrammarError, match="LB_NAME looks before"):
        load_grammar(("lb",), (d,))

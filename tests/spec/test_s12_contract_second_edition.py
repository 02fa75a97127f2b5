"""SPEC §12, the grammar contract's second edition (grammar/README.md, "Framing, anchors and
raw bodies"): framing a dialect drops (``-> frame``), terminals tied to the reply's start
(``/^…/``) and a raw body under a declared name (``-> body_<name>``), each said in a grammar
file alone and implemented once in the engine. Each grammar here is a scratch dialect
written to a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_conserves, run_all_ways, stream

from callsieve import GrammarError, ToolCalls, parse
from callsieve._grammar.compiled import load_grammar
from callsieve.render import anthropic, gemini, openai_chat, openai_responses

#: Recipients, Functionary-like: `@@user\n` a frame, `@@NAME {json}` a call, `@@sh\n` raw
#: shell, the first recipient without `@@`.
RELAY = r"""
relay: relay_call | relay_sh | relay_user
relay_call: relay_name relay_args -> call
relay_name: (R_HEAD | R_FIRST_HEAD) -> call_name
relay_args: R_ARGS_RUN -> call_args
relay_sh: relay_sh_name relay_cmd -> call
relay_sh_name: (R_SH | R_FIRST_SH) -> call_name
relay_cmd: R_CMD_RUN -> body_command
relay_user: (R_USER | R_FIRST_USER) -> frame
R_HEAD: /@@(?P<v>[a-z_]{1,32}) (?=\{)/
R_FIRST_HEAD: /^(?P<v>[a-z_]{1,32}) (?=\{)/
R_SH.2: /@@(?P<v>sh)\n/
R_FIRST_SH.2: /^(?P<v>sh)\n/
R_USER.2: "@@user\n"
R_FIRST_USER.2: /^user\n/
R_ARGS_RUN: /\{[\s\S]*\}/
R_CMD_RUN: /(?:(?!@@)[\s\S])+/
"""


def write(tmp_path: Path, name: str, text: str) -> list[str]:
    (tmp_path / f"{name}.lark").write_text(f"// dialect: {name} — a scratch dialect\n" + text)
    return [str(tmp_path)]


@pytest.fixture
def relay(tmp_path: Path) -> dict[str, Any]:
    return {"grammar_dirs": write(tmp_path, "relay", RELAY), "dialects": ["relay"]}


def calls(r: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.input) for c in r.calls]


# ---------------------------------------------------------------- framing
def test_a_frame_leaves_the_text_and_is_kept_as_a_block(relay: dict[str, Any]) -> None:
    text = 'user\nHello.\n@@user\nAgain.@@get {"a": 1}'
    r = run_all_ways(text, **relay)
    assert r.text == "Hello.\nAgain." and calls(r) == [("get", {"a": 1})]
    assert [(b.status, b.raw) for b in r.blocks] == [
        ("frame", "user\n"),
        ("frame", "@@user\n"),
        ("complete", '@@get {"a": 1}'),
    ]


def test_a_frame_is_a_toolcalls_event_with_no_calls(relay: dict[str, Any]) -> None:
    text = "@@user\nHi."
    for chunks in ([text], list(text)):
        events = stream(chunks, **relay)
        assert_conserves(text, events)  # (§Invariants 2: its raw is in the events)
        frames = [e for e in events if isinstance(e, ToolCalls)]
        assert [(e.calls, e.block.status, e.block.raw) for e in frames] == [
            ((), "frame", "@@user\n")
        ]


@pytest.mark.parametrize("early_emit", ["block", "invoke", "arguments"])
def test_frames_under_every_early_emit(relay: dict[str, Any], early_emit: str) -> None:
    text = '@@user\nOne.@@get {"a": [1, 2]}@@user\nTwo.'
    r = run_all_ways(text, early_emit=early_emit, **relay)
    assert r.text == "One.Two." and calls(r) == [("get", {"a": [1, 2]})]


def test_no_renderer_writes_a_frame(relay: dict[str, Any]) -> None:
    r = parse('@@user\nHello.@@get {"a": 1}', **relay)
    for module in (openai_chat, openai_responses, anthropic, gemini):
        body = json.dumps(module.render_response(r))
        assert "@@user" not in body and "Hello." in body, module.__name__


def test_a_block_of_frames_only_is_no_block_without_a_call(tmp_path: Path) -> None:
    # (a rule that can be complete without a call or a frame is still refused)
    dirs = write(tmp_path, "fr", 'fr: FR_A | fr_b\nfr_b: FR_B -> frame\nFR_A: "<a>"\nFR_B: "<b>"\n')
    with pytest.raises(GrammarError, match="can be complete without any call"):
        load_grammar(("fr",), tuple(dirs))


# ---------------------------------------------------------------- the reply's start
@pytest.mark.parametrize("lead", ["", "  \n"])
def test_an_anchored_terminal_at_the_start(relay: dict[str, Any], lead: str) -> None:
    r = run_all_ways(lead + 'get {"a": 1}', **relay)
    assert calls(r) == [("get", {"a": 1})] and r.text == lead


@pytest.mark.parametrize(
    "text",
    [
        'x get {"a": 1}',
        'Sure.\nget {"a": 1}',
        '@@user\nok\nget {"a": 1}',  # (after a block: no longer the start)
        'get {"a": 1} get {"b": 2}',
    ],
)
def test_an_anchored_terminal_nowhere_else(relay: dict[str, Any], text: str) -> None:
    r = run_all_ways(text, **relay)
    assert calls(r) in ([], [("get", {"a": 1})])
    assert ("get", {"b": 2}) not in calls(r)
    if not text.startswith("get"):
        assert calls(r) == []


@pytest.mark.parametrize("reasoning", ["tags", "open", "off"])
def test_an_anchored_terminal_under_every_reasoning_option(
    relay: dict[str, Any], reasoning: str
) -> None:
    start = run_all_ways('get {"a": 1}', reasoning=reasoning, **relay)
    want = [] if reasoning == "open" else [("get", {"a": 1})]  # ("open": the reply is a thought)
    assert calls(start) == want
    after = run_all_ways('<think>hm</think>\nget {"a": 1}', reasoning=reasoning, **relay)
    assert calls(after) == ([] if reasoning == "off" else [("get", {"a": 1})])


def test_anchored_leads_are_searched_for_only_at_the_start(relay: dict[str, Any]) -> None:
    g = load_grammar(("relay",), tuple(relay["grammar_dirs"]))
    assert "g" in g.openers.start_lead_chars and "g" not in g.openers.lead_chars


def test_an_anchored_terminal_inside_a_block_is_refused(tmp_path: Path) -> None:
    dirs = write(
        tmp_path,
        "an",
        "an: AN_OPEN an_call\nan_call: AN_NAME AN_ARGS_RUN -> call\n"
        'AN_OPEN: "<an>"\nAN_NAME: /^[a-z]{1,9}:/\nAN_ARGS_RUN: /\\{[\\s\\S]*\\}/\n',
    )
    with pytest.raises(GrammarError, match="anchored .* may only begin one"):
        load_grammar(("an",), tuple(dirs))


# ---------------------------------------------------------------- a raw body
def test_a_raw_body_is_its_parameter_verbatim_and_a_string(relay: dict[str, Any]) -> None:
    r = run_all_ways('@@sh\n  42\n@@sh\n{"a": 1}', **relay)
    assert calls(r) == [("sh", {"command": "  42\n"}), ("sh", {"command": '{"a": 1}'})]


def test_a_raw_body_ends_its_block_where_its_stop_matches(relay: dict[str, Any]) -> None:
    text = 'sh\nls -l | grep "@"\n@@user\nDone.@@get {}'
    r = run_all_ways(text, **relay)
    assert calls(r) == [("sh", {"command": 'ls -l | grep "@"\n'}), ("get", {})]
    assert r.text == "Done."


def test_a_raw_body_streams_its_arguments_whole(relay: dict[str, Any]) -> None:
    r = run_all_ways("@@sh\necho hi", early_emit="arguments", **relay)
    assert calls(r) == [("sh", {"command": "echo hi"})]


# ---------------------------------------------------------------- a dialect that reads another's grammar
GLM = "<tool_call>get<arg_key>n</arg_key><arg_value>1</arg_value></tool_call>"


def reader(tmp_path: Path, name: str, *lines: str) -> list[str]:
    """A dialect file that reads another's grammar: directives only."""
    return write(tmp_path, name, "".join(f"{line}\n" for line in lines))


def test_a_dialect_reads_another_grammar_under_its_own_name(tmp_path: Path) -> None:
    """``//%reads glm45``: glm45's blocks, named after the reading dialect, read by its own
    directives: with none, a raw value is JSON (glm45 declares strings)."""
    dirs = reader(tmp_path, "glm_plain", "//%reads glm45")
    r = run_all_ways("Go.\n" + GLM, grammar_dirs=dirs, dialects=["glm_plain"])
    assert (r.text, calls(r)) == ("Go.\n", [("get", {"n": 1})])
    assert [b.dialect for b in r.blocks] == ["glm_plain"]
    assert calls(parse(GLM, dialects=["glm45"])) == [("get", {"n": "1"})]


def test_of_two_dialects_with_one_grammar_the_first_named_reads(tmp_path: Path) -> None:
    """One grammar twice would be a conflict: the first named is loaded, with its traits."""
    dirs = reader(tmp_path, "glm_plain", "//%reads glm45")
    for named, reads, value in (
        (["glm45", "glm_plain"], "glm45", "1"),
        (["glm_plain", "glm45"], "glm_plain", 1),
    ):
        r = parse(GLM, grammar_dirs=dirs, dialects=named)
        assert ([b.dialect for b in r.blocks], calls(r)) == ([reads], [("get", {"n": value})])
        assert load_grammar(tuple(named), tuple(dirs)).dialects == (reads,)


def test_all_leaves_out_a_dialect_that_reads_another() -> None:
    from callsieve import dialects
    from callsieve._grammar.files import all_dialects

    assert "glm53_flash" in dialects() and "glm53_flash" not in all_dialects()
    assert [b.dialect for b in parse(GLM, dialects="all").blocks] == ["glm45"]


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        (("//%reads glm45", "x: GLM45__GLM_OPEN"), "defines 'x', but a dialect that reads"),
        (("//%reads rd",), "reads itself"),
        (("//%reads nothing_here",), "which no grammar file is for"),
        (("//%reads glm53_flash",), "which reads another dialect in turn"),
        (("//%reads glm45 hermes",), "takes one dialect name"),
        (("//%reads Glm45",), "takes one dialect name"),
    ],
)
def test_a_reads_directive_is_checked(tmp_path: Path, lines: tuple[str, ...], why: str) -> None:
    dirs = reader(tmp_path, "rd", *lines)
    with pytest.raises(GrammarError, match=f"rd.lark.*{why}"):
        load_grammar(("rd",), tuple(dirs))


def test_a_dialect_that_reads_another_writes_as_it_without_a_spelling(tmp_path: Path) -> None:
    from callsieve.prompt import format_calls

    dirs = reader(tmp_path, "glm_plain", "//%reads glm45")
    calls_in = [("f", {"a": "x"})]
    assert format_calls(calls_in, "glm_plain", grammar_dirs=dirs) == format_calls(calls_in, "glm45")


def test_a_frame_a_longer_opener_outranks_is_a_frame_at_the_end_of_the_input(
    tmp_path: Path,
) -> None:
    """The frame's spelling begins the opener of a call that outranks it: held while that
    opener may still come, the frame is one at the end of the input too."""
    dirs = write(
        tmp_path,
        "sep",
        "sep: sep_call | sep_frame\nsep_call: SEP_OPEN sep_args -> call\n"
        "sep_args: SEP_ARGS_RUN -> call_json\nsep_frame: SEP_END -> frame\n"
        'SEP_OPEN.2: /<sep>call:(?=\\{)/\nSEP_END: "<sep>"\nSEP_ARGS_RUN: /\\{[\\s\\S]*\\}/\n',
    )
    for tail in ("", " ", "call"):
        r = run_all_ways("Done.<sep>" + tail, grammar_dirs=dirs, dialects=["sep"])
        assert r.text == "Done." + tail
        assert [b.status for b in r.blocks][:1] == ["frame"]
    r = run_all_ways(
        '<sep>call:{"name": "f", "arguments": {}}', grammar_dirs=dirs, dialects=["sep"]
    )
    assert calls(r) == [("f", {})]

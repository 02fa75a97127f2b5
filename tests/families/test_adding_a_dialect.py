"""docs/adding-a-dialect.md's worked examples, built from the page itself in a temporary
folder: the grammar files and the spelling are the page's ``lark`` blocks, checked with
``check-grammar``, then used as the page says — whole and per character, the reasoning split,
the written calls read back; and section 7's Acme-2 (framing dropped, the reply's start, a raw
body: SPEC §12's second edition), section 9's Acme-4 (values in a syntax of their own), section 10's GLM-5 (another dialect's grammar)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from family_cases import Case, FamilySuite, check_every_way
from helpers import ROOT, run_all_ways

from callsieve import parse
from callsieve.prompt import format_calls, format_results

PAGE = ROOT / "docs" / "adding-a-dialect.md"
REPLY = (
    "<acme:thought>The user wants the weather.</acme:thought>\n<acme:calls>\n"
    '<call name="get_weather">\n<arg name="city">Paris</arg>\n<arg name="days">3</arg>\n'
    "</call>\n</acme:calls>"
)


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: Any) -> str:
    d = tmp_path_factory.mktemp("my_grammars")
    grammar, spelling, acme2, acme3, acme4, _ = _blocks("lark")
    (d / "acme.lark").write_text(grammar, encoding="utf-8")
    (d / "acme2.lark").write_text(acme2, encoding="utf-8")
    (d / "acme3.lark").write_text(acme3, encoding="utf-8")
    (d / "acme4.lark").write_text(acme4, encoding="utf-8")
    (d / "spelling").mkdir()
    (d / "spelling" / "acme.lark").write_text(spelling, encoding="utf-8")
    return str(d)


def test_the_page_shows_this_reply() -> None:
    assert REPLY.replace("\n", "") in _blocks("text")[0].replace("\n", "")
    assert "'get_weather', {'city': 'Paris', 'days': 3}, 'acme'" in _blocks("python")[0]


def test_check_grammar_takes_the_file(folder: str, capsys: Any) -> None:
    from callsieve.__main__ import main

    assert main(["check-grammar", str(Path(folder) / "acme.lark")]) == 0
    assert ": ok — dialects acme;" in capsys.readouterr().out


def test_the_reply_parses_whole_and_per_character(folder: str) -> None:
    for opts in ({"grammar_dirs": [folder]}, {"grammar_dirs": [folder], "dialects": ["acme"]}):
        r = run_all_ways(REPLY, **opts)
        assert [(c.name, c.input, c.dialect) for c in r.calls] == [
            ("get_weather", {"city": "Paris", "days": 3}, "acme")
        ]
        assert r.reasoning == "The user wants the weather."
        assert r.text == "\n"


def test_the_writer_writes_what_the_page_shows(folder: str) -> None:
    text = format_calls(
        [("get_weather", {"city": "Paris", "days": 3})], dialect="acme", grammar_dirs=[folder]
    )
    shown = _blocks("python")[1].rsplit(")\n", 1)[1]  # (what the call prints, as comments)
    assert text == "\n".join(line[2:] for line in shown.strip().splitlines())
    hard = [("w", {"code": "x = '</arg>'", "n": "42", "v": [1, {"a": None}]})]
    back = parse(
        format_calls(hard, dialect="acme", grammar_dirs=[folder]),
        grammar_dirs=[folder],
        dialects=["acme"],
    )
    assert [(c.name, c.input) for c in back.calls] == hard
    assert format_results(["ok"], dialect="acme", grammar_dirs=[folder]) == "<result>ok</result>"


# ---------------------------------------------------------------- section 7: Acme-2
REPLY2 = 'user\nLet me look that up.\n@@get_weather {"city": "Paris"}\n@@shell\nls /tmp'


def test_section_7_parses_as_the_page_shows(folder: str) -> None:
    assert f"reply = {REPLY2!r}" in _blocks("python")[2]
    r = run_all_ways(REPLY2, grammar_dirs=[folder], dialects=["acme2"])
    shown = _blocks("python")[2]
    assert repr([(c.name, c.input) for c in r.calls]) in shown
    assert repr(r.text) in shown and repr([b.status for b in r.blocks]) in shown
    assert [(c.name, c.input) for c in r.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("shell", {"command": "ls /tmp"}),
    ]


def test_section_7_check_grammar_takes_it(folder: str, capsys: Any) -> None:
    from callsieve.__main__ import main

    assert main(["check-grammar", str(Path(folder) / "acme2.lark")]) == 0
    assert ": ok — dialects acme2;" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text",
    [
        'Sure.\nget_weather {"city": "Paris"}',  # (not at the start: text)
        "Hello\nuser\nthere",
        "The shell\nis fine",
    ],
)
def test_section_7_anchored_heads_only_at_the_start(folder: str, text: str) -> None:
    r = run_all_ways(text, grammar_dirs=[folder], dialects=["acme2"])
    assert (r.calls, r.text) == ((), text)


def test_section_7_anchored_after_reasoning(folder: str) -> None:
    text = '<think>Paris?</think>\nget_weather {"city": "Paris"}'
    r = run_all_ways(text, grammar_dirs=[folder], dialects=["acme2"])
    assert [(c.name, c.input) for c in r.calls] == [("get_weather", {"city": "Paris"})]
    assert (r.reasoning, r.text) == ("Paris?", "\n")


class TestAcme(FamilySuite):
    """The page's last advice, taken: the family harness over a few cases."""

    dialect = "acme"
    cases: ClassVar[list[Case]] = [
        Case(
            "page-reply", REPLY.split("\n", 1)[1], [("get_weather", {"city": "Paris", "days": 3})]
        ),
        Case(
            "markup-in-a-value",
            '<acme:calls><call name="w"><arg name="html"><b>a < b</b></arg></call></acme:calls>',
            [("w", {"html": "<b>a < b</b>"})],
            answer="",
        ),
    ]

    @pytest.fixture(autouse=True)
    def _folder(self, folder: str, monkeypatch: Any) -> None:
        import family_cases

        real = family_cases._options

        def with_folder(case: Case, dialects: Any) -> dict[str, Any]:
            return {**real(case, dialects), "grammar_dirs": [folder]}

        monkeypatch.setattr(family_cases, "_options", with_folder)

    def test_with_every_dialect_enabled(self, case: Case) -> None:
        check_every_way(self.dialect, case, "all")


def test_the_json_family_reads_its_own_keys(folder: str) -> None:
    """Section 8: Acme-3's envelope keys, declared by directives, in any order."""
    text = (
        "Checking.\n<acme3:action>[\n"
        '  {"call_id": "0", "tool": "get_weather", "args": {"city": "Paris"}},\n'
        '  {"args": {}, "tool": "now", "call_id": "1"}\n]</acme3:action> done'
    )
    shown = next(b for b in _blocks("text") if b.startswith("<acme3"))
    assert text.split("\n", 1)[1].startswith(shown[:14])
    r = run_all_ways(text, dialects=["acme3"], grammar_dirs=[folder])
    assert r.text == "Checking.\n done"
    assert [(c.name, c.input, c.id) for c in r.calls] == [
        ("get_weather", {"city": "Paris"}, "0"),
        ("now", {}, "1"),
    ]


ACME4 = "<acme4>plan{city:'Paris',size:{h:2,w:3},tags:['a','b']}</acme4>"


def test_section_9_reads_values_in_their_own_syntax(folder: str, capsys: Any) -> None:
    from callsieve.__main__ import main

    assert main(["check-grammar", str(Path(folder) / "acme4.lark")]) == 0
    assert ": ok — dialects acme4;" in capsys.readouterr().out
    assert ACME4 in [b.strip() for b in _blocks("text")]
    opts = {"grammar_dirs": [folder], "dialects": ["acme4"]}
    r = run_all_ways(ACME4, **opts)
    assert [(c.name, c.input) for c in r.calls] == [
        ("plan", {"city": "Paris", "size": {"h": 2, "w": 3}, "tags": ["a", "b"]})
    ]
    broken = ACME4.replace("w:3}", "w:3")
    assert run_all_ways(broken, **opts).text == broken


def test_section_10_reads_another_dialects_grammar(tmp_path: Path) -> None:
    """The page's file, alone in a folder, reads GLM-4.7's text as its own dialect's calls,
    by its own directives (a raw value a string)."""
    (tmp_path / "glm53_flash.lark").write_text(_blocks("lark")[5], encoding="utf-8")
    dirs = [str(tmp_path)]
    text = "<tool_call>f<arg_key>n</arg_key><arg_value>1</arg_value></tool_call>"
    r = parse(text, grammar_dirs=dirs, dialects=["glm53_flash"])
    assert [(c.name, c.input, c.dialect) for c in r.calls] == [("f", {"n": "1"}, "glm53_flash")]

"""The README is the front door (issue 34, item 6): its first code block holds the two
commands, and its ``Sieve`` and ``parse()`` examples stand within the first 40 lines and
really run, printing what the README says they print."""

from __future__ import annotations

import contextlib
import doctest
import io
import re

from helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
FRONT = 40  # the examples end within the first lines


def _blocks() -> list[tuple[str, str, int]]:
    """Each fenced block: its language, its text and the line its closing fence is on."""
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```$", README, re.MULTILINE | re.DOTALL):
        found.append((match[1], match[2], README[: match.end()].count("\n") + 1))
    return found


def test_the_first_block_is_the_two_commands() -> None:
    """One installs and runs the main job on the bundled example; the other runs the
    tests, as CI does (``.ci/run`` runs ``python -m pytest -q``)."""
    language, text, _ = _blocks()[0]
    assert language == ""
    assert text.splitlines() == [
        "pip install . && callsieve stream examples/transcript.txt",
        "pip install '.[test]' && python -m pytest -q",
    ]
    assert (ROOT / "examples" / "transcript.txt").is_file()
    assert "run python -m pytest -q" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_sieve_example_prints_what_the_readme_says() -> None:
    """The first Python block runs; the backticked text after it is its output."""
    python = [(text, end) for language, text, end in _blocks() if language == "python"]
    code, end = python[0]
    assert end <= FRONT
    assert len([line for line in code.splitlines() if line.strip()]) <= 11
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 (the README's own code)
    said = README[README.index(code) + len(code) :].split("\n\n", 2)[1]
    printed = re.search(r"^This prints `([^`]+)`", said)
    assert printed, said
    assert out.getvalue() == printed[1]
    assert out.getvalue().count("<call ") == 1


def test_the_parse_example_runs_as_a_doctest() -> None:
    """The second Python block is three ``>>>`` lines, and their output is as written."""
    python = [(text, end) for language, text, end in _blocks() if language == "python"]
    code, end = python[1]
    assert end <= FRONT
    assert code.count(">>> ") == 3
    test = doctest.DocTestParser().get_doctest(code, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
    assert runner.tries == 3

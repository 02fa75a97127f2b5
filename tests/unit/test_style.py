"""The code's layout is ruff's (docs/architecture.md, "Formatting and the complexity
budget"): every Python file is as ``ruff format`` writes it, with the settings in
pyproject.toml (its ``[tool.ruff.format]`` lists what is left out, and why), and no function
is over the complexity budget (McCabe, ruff's C901, ``max-complexity`` in pyproject.toml)
unless it says why.

ruff comes with the test extra, pinned to one minor version: its formatting style changes
only between those.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tokenize
from pathlib import Path

from helpers import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def test_every_file_is_formatted() -> None:
    proc = ruff("format", "--check", "--no-cache", ".")
    assert proc.returncode == 0, (
        f"run `ruff format` (the files below are not as it writes them)\n{proc.stdout}{proc.stderr}"
    )


def test_no_function_is_over_the_complexity_budget() -> None:
    proc = ruff("check", "--select", "C901", "--no-cache", ".")
    assert proc.returncode == 0, (
        "split these into named steps, or say why one must stay whole (`# noqa: C901`)\n"
        f"{proc.stdout}{proc.stderr}"
    )


#: A measured figure: a time per operation, a share of instructions, a count of them.
FIGURE = re.compile(
    r"\d\s*(?:ns|µs|us)\b|\d\s*%\s*(?:of|on|fewer|more|dearer|cheaper)\b"
    r"|\d\s*M\b.*(?:instructions|against)|->\s*[\d,]+\s*(?:M\b|a character)"
)


def comments(path: Path) -> list[tuple[int, str]]:
    with path.open(encoding="utf-8") as f:
        return [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(f.readline)
            if tok.type == tokenize.COMMENT
        ]


def test_benchmark_figures_live_in_the_benchmarks_readme() -> None:
    """Issue 34: a fast path's figure is in benchmarks/README.md ("Fast paths"); its code
    comment names the row. (Docstrings' "What it costs" lines are the house's strategy
    notes, not a fast path's figure.)"""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for line, text in comments(path)
        if FIGURE.search(text)
    ]
    assert not found, "\n".join(found)
    assert FIGURE.search("# costs about 90 ns") and FIGURE.search("# 290 -> 259 M on it")

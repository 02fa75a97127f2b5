"""The code's layout is ruff's (docs/architecture.md, "Formatting and the complexity
budget"): every Python file is as ``ruff format`` writes it, with the settings in
pyproject.toml (its ``[tool.ruff.format]`` lists what is left out, and why), and no function
is over the complexity budget (McCabe, ruff's C901, ``max-complexity`` in pyproject.toml)
unless it says why.

ruff comes with the test extra, pinned to one minor version: its formatting style changes
only between those.
"""

from __future__ import annotations

import subprocess
import sys

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

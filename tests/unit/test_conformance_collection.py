"""The external conformance suite's tests on a clone without ``../shared``: not collected (and
said so), rather than skipped; under ``CI`` collected, so a missing file fails them.

Runs pytest in a subprocess on a scratch copy of ``tests/conftest.py`` and ``tests/helpers.py``
(which puts ``../shared`` beside the scratch folder, where nothing is) with three tests: a
``test_conformance*`` module, a ``test_conformance*`` function in another module, and a plain
test beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

TESTS = {
    "spec/test_conformance.py": "def test_case():\n    assert False, 'ran without cases'\n",
    "spec/test_s10_render_x.py": (
        "def test_conformance_case():\n    assert False\n\n\ndef test_plain():\n    pass\n"
    ),
}


def _run(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "repo"
    tests = root / "tests"
    (tests / "spec").mkdir(parents=True)
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(ROOT / "tests" / name, tests / name)
    for name, text in TESTS.items():
        (tests / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_the_cases_they_are_not_collected(tmp_path: Path) -> None:
    assert not (tmp_path / "shared").exists()
    proc = _run(tmp_path, ci=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout
    assert "test_conformance* tests were not collected" in proc.stdout


def test_under_ci_they_run_and_fail(tmp_path: Path) -> None:
    proc = _run(tmp_path, ci=True)
    assert "2 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert "not collected" not in proc.stdout

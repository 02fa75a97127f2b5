"""The shared conformance cases (``../shared/conformance/cases.jsonl``), one test per case.

Each case runs through ``parse()`` and through ``Sieve`` whole, per character, at seeded
random splits and at the case's own ``chunkings``; every way must give the case's expected
text and calls. The file is read in place, never copied. A missing file is a failure under
CI (``CI`` set: ``.ci/run`` runs beside the shared folder) and a visible skip elsewhere, so
the README's test command also runs on a bare clone.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from helpers import CASES_PATH, canon_calls, conformance_cases, expected_calls, run_all_ways

CASES = conformance_cases()
MISSING = (f"conformance cases not found at {CASES_PATH}; the tests expect the shared folder "
           "beside the repository (../shared/conformance/cases.jsonl)")
REQUIRED = bool(os.environ.get("CI"))
# Under CI no cases must fail, never skip: an empty parameter list would only be reported as
# skipped.
PARAMS = [pytest.param(c, id=c["id"]) for c in CASES] or [pytest.param(None, id="no-cases")]


def _missing() -> None:
    if REQUIRED:
        pytest.fail(MISSING)
    pytest.skip(MISSING + " (outside CI: skipped)")


def test_cases_file_present() -> None:
    if not CASES_PATH.is_file():
        _missing()
    assert CASES, f"{CASES_PATH} holds no cases"
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


@pytest.mark.parametrize("case", PARAMS)
def test_case(case: dict[str, Any] | None) -> None:
    if case is None:
        if not CASES_PATH.is_file():
            _missing()
        pytest.fail(f"{CASES_PATH} holds no cases")
    expect = case["expect"]
    opts: dict[str, Any] = {}
    if case.get("tools") is not None:
        opts["tools"] = case["tools"]
    result = run_all_ways(case["input"], extra_chunkings=case.get("chunkings", ()), **opts)
    assert result.text == expect["text"]
    assert canon_calls(result.calls) == expected_calls(expect["calls"])

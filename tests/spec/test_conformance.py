"""The external conformance suite (``../shared/conformance/cases.jsonl``, beside the repository),
one test per case: the outside check of docs/spec.md.

Each case runs through ``parse()`` and through ``Sieve`` whole, per character, at seeded
random splits and at the case's own ``chunkings``; every way must give the case's expected
text and calls. The file is read in place, never copied. Without it this module is not
collected (``conftest.py``), unless ``CI`` is set: CI must run the cases, and there a missing
or empty file fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import CASES_PATH, canon_calls, conformance_cases, expected_calls, run_all_ways

CASES = conformance_cases()
MISSING = (
    f"conformance cases not found at {CASES_PATH}; CI runs them with the shared "
    "folder beside the repository (../shared/conformance/cases.jsonl)"
)
# An empty parameter list would only be reported as skipped: with no cases, one test fails.
PARAMS = [pytest.param(c, id=c["id"]) for c in CASES] or [pytest.param(None, id="no-cases")]


def test_cases_file_present() -> None:
    assert CASES_PATH.is_file(), MISSING
    assert CASES, f"{CASES_PATH} holds no cases"
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


@pytest.mark.parametrize("case", PARAMS)
def test_case(case: dict[str, Any] | None) -> None:
    if case is None:
        pytest.fail(MISSING if not CASES_PATH.is_file() else f"{CASES_PATH} holds no cases")
    expect = case["expect"]
    opts: dict[str, Any] = {}
    if case.get("tools") is not None:
        opts["tools"] = case["tools"]
    result = run_all_ways(case["input"], extra_chunkings=case.get("chunkings", ()), **opts)
    assert result.text == expect["text"]
    assert canon_calls(result.calls) == expected_calls(expect["calls"])

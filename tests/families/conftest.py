"""The families' suites (``family_cases.FamilySuite``): each test that takes a ``case`` runs
once per case of its class."""

from __future__ import annotations

from typing import Any


def pytest_generate_tests(metafunc: Any) -> None:
    if "case" in metafunc.fixturenames and metafunc.cls is not None:
        cases = list(metafunc.cls.cases)
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])

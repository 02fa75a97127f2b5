"""Test setup: import ``callsieve`` from ``src/`` unless an installed copy is importable.

The tests run unchanged against an installed wheel (``pip install .``) or a source checkout.
Grammar tables are cached in a temporary folder for the run, not the user's cache.
The tests live in ``spec/`` (by section of docs/spec.md, "SPEC §N"), ``invariants/``
(§Invariants as properties), ``unit/`` (modules, options, CLI, packaging, ...) and
``server/`` (the gateway); this file, at their root, applies to all four. The ``tests``
folder itself goes on ``sys.path`` so ``helpers`` imports from every subfolder under any
pytest import mode, and so does ``fuzz`` (the fragment fuzzer, ``fuzz/fragments.py``, a tool
whose seeded run is a test).

The external conformance suite (``../shared/conformance/cases.jsonl``, beside the repository,
not part of it) is read by the modules and test functions named ``test_conformance*``. On a
clone without it they are not collected — not skipped; one line at the end of the run says so
— unless ``CI`` is set: CI must run them, and there a missing file fails them
(``helpers.CONFORMANCE_REQUIRED``).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

# The suite compiles many scratch grammars: their cached tables go to a folder of this run's
# (a test that checks the cache itself points CALLSIEVE_CACHE_DIR elsewhere), never into
# the user's cache.
os.environ["CALLSIEVE_CACHE_DIR"] = tempfile.mkdtemp(prefix="callsieve-test-cache-")
# LiteLLM (the litellm extra) fetches a price list from the network when imported, unless
# told to use the copy it ships: no test reaches the network for it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_TESTS = Path(__file__).resolve().parent
_SRC = _TESTS.parent / "src"
_FUZZ = _TESTS.parent / "fuzz"

if importlib.util.find_spec("callsieve") is None and _SRC.is_dir():
    sys.path.insert(0, str(_SRC))

for _folder in (_FUZZ, _TESTS):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


# ---------------------------------------------------------------- the external conformance suite
_CONFORMANCE = "test_conformance"


def _conformance_left_out() -> bool:
    from helpers import conformance_collected  # (imported once the paths above are set)

    return not conformance_collected()


def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
    """A ``test_conformance*`` module is not collected without the cases (outside CI)."""
    if collection_path.name.startswith(_CONFORMANCE) and _conformance_left_out():
        return True
    return None


def pytest_pycollect_makeitem(collector: Any, name: str, obj: object) -> list[Any] | None:
    """Nor is a ``test_conformance*`` function of another module (the renderers')."""
    if name.startswith(_CONFORMANCE) and inspect.isfunction(obj) and _conformance_left_out():
        return []
    return None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say it, even under ``-q``: what was left out, and why."""
    if _conformance_left_out():
        from helpers import CASES_PATH

        terminalreporter.write_line(
            f"conformance: {CASES_PATH} not found, so the test_conformance* tests were not "
            "collected (CI runs them, with the shared folder beside the clone)"
        )

"""Test setup: import ``callsieve`` from ``src/`` unless an installed copy is importable.

The tests run unchanged against an installed wheel (``pip install .``) or a source checkout.
Grammar tables are cached in a temporary folder for the run, not the user's cache.
The tests live in ``spec/`` (by SPEC section), ``invariants/`` (§Invariants as properties)
and ``unit/`` (modules, options, CLI, packaging, ...); this file, at their root, applies to
all three. The ``tests`` folder itself goes on ``sys.path`` so ``helpers`` imports from
every subfolder under any pytest import mode, and so does ``fuzz`` (the fragment fuzzer,
``fuzz/fragments.py``, a tool whose seeded run is a test).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

# The suite compiles many scratch grammars: their cached tables go to a folder of this run's
# (a test that checks the cache itself points CALLSIEVE_CACHE_DIR elsewhere), never into
# the user's cache.
os.environ["CALLSIEVE_CACHE_DIR"] = tempfile.mkdtemp(prefix="callsieve-test-cache-")

_TESTS = Path(__file__).resolve().parent
_SRC = _TESTS.parent / "src"
_FUZZ = _TESTS.parent / "fuzz"

if importlib.util.find_spec("callsieve") is None and _SRC.is_dir():
    sys.path.insert(0, str(_SRC))

for _folder in (_FUZZ, _TESTS):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

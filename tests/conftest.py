"""Test setup: import ``callsieve`` from ``src/`` unless an installed copy is importable.

The tests run unchanged against an installed wheel (``pip install .``) or a source checkout.
The ``tests`` folder itself goes on ``sys.path`` so ``helpers`` imports under any pytest
import mode.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parent
_SRC = _TESTS.parent / "src"

if importlib.util.find_spec("callsieve") is None and _SRC.is_dir():
    sys.path.insert(0, str(_SRC))

if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

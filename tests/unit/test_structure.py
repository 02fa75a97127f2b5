"""The structure the code promises (docs/architecture.md): the mode has one writer and the
position one owner."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import callsieve

SRC = Path(callsieve.__file__).parent


def _assignments(module: str) -> list[tuple[str, str, str]]:
    """``(function, object, attribute)`` of every attribute assignment in ``module``
    (plain, augmented and tuple targets)."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    out: list[tuple[str, str, str]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute):
                        v = t.value
                        owner = (
                            v.id
                            if isinstance(v, ast.Name)
                            else v.attr
                            if isinstance(v, ast.Attribute)
                            else "?"
                        )
                        out.append((fn.name, owner, t.attr))
    return out


def test_only_enter_writes_the_mode() -> None:
    """The mode, its reader and the hot halves' arming are written in ``_enter`` (and set up
    in ``__init__``), nowhere else — but for re-arming RUN's hot half within RUN."""
    mode_fields = {"_mode", "_reader", "_prose_hot"}
    writers = {
        (fn, attr)
        for module in ("_stream/sieve.py",)
        for fn, owner, attr in _assignments(module)
        if owner == "self" and attr in mode_fields
    }
    assert {fn for fn, _ in writers} <= {"_enter", "__init__"}, writers
    run_arm = {
        fn
        for module in ("_stream/sieve.py",)
        for fn, owner, attr in _assignments(module)
        if owner == "self" and attr in ("_run_hot", "_arg_hot", "_arg_send")
    }
    assert run_arm <= {"_enter", "__init__", "_read_run", "_arm_run"}, run_arm
    # RUN's arming (``_arm_run``) is asked for by ``_enter``, and by ``_read_run`` within RUN.
    assert _callers("_stream/sieve.py", "_arm_run") == {"_enter", "_read_run"}


def _callers(module: str, method: str) -> set[str]:
    """The functions of ``module`` that call ``self.<method>``."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    return {
        fn.name
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
    }


@pytest.mark.parametrize("field", ["total", "held", "tail"])
def test_only_the_cursor_writes_the_position(field: str) -> None:
    """No module but ``_cursor`` assigns the cursor's offset, held text or tail."""
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        if module == "_scan/cursor.py":
            continue
        bad = [
            (fn, owner)
            for fn, owner, attr in _assignments(module)
            if attr == field and owner in {"cur", "cursor", "_cur"}
        ]
        assert not bad, f"{module} writes the cursor's {field}: {bad}"

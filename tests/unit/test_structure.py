"""The structure the code promises (docs/architecture.md): the mode has one writer, and the
cursor owns the position and its buffers (no other module assigns its fields or changes a
buffer of it in place)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import callsieve
from callsieve._scan.cursor import Cursor, RunText

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


def test_only_step_writes_the_mode() -> None:
    """The mode, its reader and the fast halves' arming are written in ``_step``, which looks
    the step up in ``modes.STEPS``, and nowhere else (``__init__`` only puts the sieve in
    ``NEW``, whose one step it then takes; ``_arm_run`` is RUN's arming, asked for by
    ``_step`` alone)."""
    mode_fields = {
        "_mode",
        "_reader",
        "_steps",
        "_fast",
        "_hot",
        "_arg",
        "_run_char",
        "_run_may_stop",
    }
    writers = {
        (fn, attr)
        for fn, owner, attr in _assignments("_stream/sieve.py")
        if owner == "self" and attr in mode_fields
    }
    assert {fn for fn, _ in writers} <= {"_step", "_arm_run", "__init__"}, writers
    # (``__init__``: the mode ``NEW`` and its row, and no run yet)
    assert {attr for fn, attr in writers if fn == "__init__"} == {
        "_mode",
        "_steps",
        "_arg",
        "_run_char",
        "_run_may_stop",
    }, writers
    assert _callers("_stream/sieve.py", "_arm_run") == {"_step"}


def test_the_context_changes_in_one_step() -> None:
    """Where the reply stands is written by ``Where`` itself, in ``_enter``, which only its
    ``step`` (and its ``__init__``) calls; the sieve asks for steps and never writes it."""
    fields = {"context", "finder", "fences", "kind", "home", "until_text"}
    writers = {fn for fn, owner, attr in _assignments("_stream/context.py") if attr in fields}
    assert writers <= {"_enter", "__init__"}, writers
    assert _callers("_stream/context.py", "_enter") == {"step", "__init__"}
    outside = {
        (fn, attr)
        for fn, owner, attr in _assignments("_stream/sieve.py")
        if owner in {"where", "_where"} and attr in fields
    }
    assert not outside, outside


def test_feed_is_never_called_from_inside() -> None:
    """No reader, nor anything else in the machine, calls ``feed`` again; the one reader
    that steps to another mode and leaves the chunk hands it to the new mode's reader."""
    assert _callers("_stream/sieve.py", "feed") <= {"parse_whole"}
    assert _callers("_stream/sieve.py", "_reader") == {"feed", "_read_before_text"}


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
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    }


#: What refers to the cursor, and to the run text a capture shares with it, outside it.
_OWNERS = {"cur", "cursor", "_cur", "run_text"}
#: The cursor's fields, and among them its buffers (lists the hot paths log into).
_FIELDS = set(Cursor.__slots__) | set(RunText.__slots__)
_BUFFERS = {"grown", "log", "pieces", "prose_live", "run_live"}
#: The sieve's own names for the cursor's buffers (read on its hot paths).
_ALIASES = {"_grown"}
#: What changes a list in place.
_MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"}
#: The budgets' one use: take a bound append and call it (``Cursor``'s docstring).
_BUDGET_USE = "pop"


def _owner(expr: ast.expr) -> bool:
    """``cur``, ``self._cur``, ``cap.run_text``, ``self.run_text`` …: the cursor or the run
    text it shares."""
    if isinstance(expr, ast.Name):
        return expr.id in _OWNERS
    return isinstance(expr, ast.Attribute) and expr.attr in _OWNERS


def _buffer(expr: ast.expr, aliases: set[str]) -> bool:
    """An expression that is one of the cursor's buffers: ``cur.grown``, ``self._grown``, or
    a local name given one (``grown = self._grown``)."""
    if isinstance(expr, ast.Name):
        return expr.id in aliases
    if isinstance(expr, ast.Attribute):
        if expr.attr in _ALIASES and isinstance(expr.value, ast.Name):
            return True
        return expr.attr in _BUFFERS and _owner(expr.value)
    return False


def _writes(module: str) -> list[str]:
    """Every write to the cursor outside it in ``module``: an assignment to one of its
    fields, and a call that changes one of its buffers in place (or an item of one)."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    out: list[str] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        aliases: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and _buffer(node.value, aliases):
                aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(fn):
            where = f"{module}:{getattr(node, 'lineno', '?')} ({fn.name})"
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = list(node.targets)
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and t.attr in _FIELDS and _owner(t.value):
                        out.append(f"{where}: assigns {ast.unparse(t)}")
                    if isinstance(t, ast.Subscript) and _buffer(t.value, aliases):
                        out.append(f"{where}: assigns an item of {ast.unparse(t.value)}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
                and _buffer(node.func.value, aliases)
            ):
                buffer = node.func.value
                budget = isinstance(buffer, ast.Attribute) and buffer.attr.endswith("_live")
                if not (budget and node.func.attr == _BUDGET_USE):
                    out.append(f"{where}: {ast.unparse(node.func)}()")
    return out


def test_only_the_cursor_writes_the_position_and_its_buffers() -> None:
    """The cursor owns the stream's position and its buffers: no module but
    ``_scan/cursor.py`` assigns one of its fields (``total``, ``held``, ``tail``,
    ``fences``, …) or changes one of its buffers in place (``grown``, the logs, the run's
    ``pieces``); the others call its methods, and the bound appends it hands out (``grow``,
    a budget's entries, taken with ``pop``)."""
    writes = [
        w
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).as_posix() != "_scan/cursor.py"
        for w in _writes(path.relative_to(SRC).as_posix())
    ]
    assert not writes, "\n".join(writes)


def test_the_write_finder_finds_writes(tmp_path: Path) -> None:
    """(The check above can fail: each kind of write, in a module of its own.)"""
    global SRC
    samples = {
        "a.py": "def f(self):\n    self._cur.total = 1\n",
        "b.py": "def f(cur):\n    cur.grown.append('x')\n",
        "c.py": "def f(self):\n    grown = self._grown\n    grown.clear()\n",
        "d.py": "def f(cap):\n    cap.run_text.pieces[0:] = []\n",
        "e.py": "def f(self):\n    self._cur.fences = None\n",
        "ok.py": "def f(self, c):\n    self._cur.prose_live.pop()(c)\n    self._cur.grow(c)\n",
    }
    for name, text in samples.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    src, SRC = SRC, tmp_path
    try:
        found = {name: _writes(name) for name in samples}
    finally:
        SRC = src
    assert all(found[n] for n in samples if n != "ok.py"), found
    assert found["ok.py"] == [], found["ok.py"]


def test_the_transition_table_is_whole() -> None:
    """``STEPS`` (docs/architecture.md, "The machine as data"): every mode has a reader, a
    mode steps only to modes and a context only to contexts, nothing leaves CLOSED, and a
    step the table lacks raises ``IllegalStep``."""
    from callsieve._stream.modes import READERS, STEPS, Context, Found, IllegalStep, Mode, step

    assert set(READERS) == set(Mode)
    for (at, _found), targets in STEPS.items():
        assert targets and all(type(t) is type(at) for t in targets), (at, targets)
        assert at is not Mode.CLOSED
    assert {at for at, _ in STEPS if isinstance(at, Context)} == set(Context)
    with pytest.raises(IllegalStep):
        step(Mode.CLOSED, Found.MACHINE_RAN)
    with pytest.raises(IllegalStep):
        step(Context.ANSWER, Found.FIRST_TEXT)

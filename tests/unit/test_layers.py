"""The layout shows the layers (docs/architecture.md, "The layers, as the folders are"): every
import in ``src/``
points down the table below or stays in its layer, no import circle exists — imports inside
functions counted, ``if TYPE_CHECKING:`` ones not (they never run) — and no folder holds more
than ``FOLDER_LIMIT`` modules.

The imports are read from the source (``ast``), not from a running interpreter, so an import
that only some path would run is counted too. Not counted: ``importlib.import_module`` (the
CLI's ``serve`` command finds ``callsieve.server`` that way, so that ``import callsieve``
never needs the server's extra) and the implicit import of a package's ``__init__``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import callsieve

SRC = Path(callsieve.__file__).parent
FOLDER_LIMIT = 20

#: The layers, lowest first: a module may import its own layer's modules and those below.
#: A top-level name (module or folder of ``callsieve/``) not listed is a surface, as is the
#: package itself (``callsieve/__init__.py``).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("_base",)),
    ("grammar", ("_grammar",)),
    ("configuration and services", ("_config",)),
    ("scanning", ("_scan",)),
    ("blocks", ("_blocks",)),
    ("stream", ("_stream",)),
    ("sanitizer", ("_sanitizer",)),
    ("facade", ("_facade",)),
    (
        "surfaces",
        (
            "render",
            "_prompt",
            "prompt",
            "deepseek",
            "prometheus",
            "server",
            "_cli_output",
            "_cli_serve",
            "_cli_grammar",
            "__main__",
        ),
    ),
)
SURFACES = len(LAYERS) - 1


def module_name(path: Path) -> str:
    parts = ["callsieve", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer index of ``module`` (``callsieve`` itself, the package, is a surface)."""
    top = module.split(".")[1] if "." in module else ""
    return next((k for k, (_, names) in enumerate(LAYERS) if top in names), SURFACES)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for stmt in node.body:
                out.update(id(n) for n in ast.walk(stmt))
    return out


def imports(module: str) -> Iterator[tuple[str, int, bool]]:
    """``(imported callsieve module, line, type-only)`` for each import in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            # ``from X import name``: the module X.name if there is one, else X itself.
            targets = [
                f"{where}.{a.name}" if f"{where}.{a.name}" in MODULES else where for a in node.names
            ]
        else:
            continue
        for target in targets:
            if target in MODULES and target != module:
                yield target, node.lineno, id(node) in type_only


def graph(with_type_only: bool) -> dict[str, set[str]]:
    return {m: {t for t, _, typed in imports(m) if with_type_only or not typed} for m in MODULES}


def test_every_module_is_read() -> None:
    assert "callsieve._stream.sieve" in MODULES and "callsieve.render.openai_chat" in MODULES
    # The reader sees relative imports of every depth, inside functions too.
    edges = graph(with_type_only=False)
    assert "callsieve._grammar.derive" in edges["callsieve._grammar.compiled"]  # (lazy)
    assert "callsieve._base.errors" in edges["callsieve.render._options"]  # (..)


def test_no_import_points_up() -> None:
    """A module imports its own layer or lower ones — type-only imports included: a name a
    module's types need is a dependency of reading it."""
    up = [
        f"{m.removeprefix('callsieve.')}:{line} imports {t.removeprefix('callsieve.')} "
        f"({LAYERS[layer(m)][0]} -> {LAYERS[layer(t)][0]})"
        for m in MODULES
        for t, line, _ in imports(m)
        if layer(t) > layer(m)
    ]
    assert not up, "\n".join(up)


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``edges``, or None (an iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in sorted(edges):
        if root in state:
            continue
        path, stack = [root], [iter(sorted(edges[root]))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(edges[nxt])))
    return None


def test_no_import_cycle() -> None:
    cycle = _cycle(graph(with_type_only=False))
    assert cycle is None, " -> ".join(m.removeprefix("callsieve.") for m in cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize(
    "folder",
    sorted({p.parent for p in SRC.rglob("*.py")}),
    ids=lambda p: str(p.relative_to(SRC.parent)),
)
def test_no_folder_is_over_the_limit(folder: Path) -> None:
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= FOLDER_LIMIT, (folder, len(modules))


def test_every_private_folder_has_a_layer() -> None:
    """A new private folder is placed in the table above (a public one may be left out: it
    is a surface)."""
    folders = {p.parent.name for p in SRC.glob("_*/__init__.py")}
    placed = {name for _, names in LAYERS for name in names}
    assert folders <= placed, folders - placed


def test_the_architecture_page_lists_every_module() -> None:
    """docs/architecture.md gives every private module a line (by its path under
    ``src/callsieve/``), every top-level module and every public package's folder."""
    page = (Path(__file__).parents[2] / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        if rel.parts[0].startswith("_") and len(rel.parts) > 1:
            named = f"`{rel.as_posix()}`" if rel.name != "__init__.py" else f"`{rel.parts[0]}/`"
        elif len(rel.parts) > 1:
            named = f"`{rel.parts[0]}/`"
        else:
            named = f"`{rel.name}`"
        if named not in page:
            missing.append(named)
    assert not missing, missing


#: CPython's private ``re`` modules, and the one module that may import them.
RE_PRIVATE = frozenset(
    {
        "re._parser",
        "re._constants",
        "re._compiler",
        "_sre",
        "sre_parse",
        "sre_constants",
        "sre_compile",
    }
)
RE_DOOR = "callsieve._base.re_internals"


def private_re_uses(module: str) -> list[int]:
    """The lines of ``module`` that import a private ``re`` module, or name one as a string
    (what ``importlib.import_module`` is given)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        if RE_PRIVATE.intersection(names):
            lines.append(node.lineno)
    return lines


def test_only_one_module_reaches_re_internals() -> None:
    """Issue 34's fence: CPython's ``re`` internals live behind ``_base/re_internals.py``."""
    assert private_re_uses(RE_DOOR), "the door itself must be found by the check"
    outside = {m: lines for m in MODULES if m != RE_DOOR and (lines := private_re_uses(m))}
    assert not outside, outside


#: Lark's private interfaces (docs/architecture.md), and the one module that may use them.
LARK_DOOR = "callsieve._grammar.lark_internals"
LARK_PRIVATE_ATTRIBUTES = frozenset(
    {
        "parse_table",
        "parse_conf",
        "lexer_thread",
        "_load_from_dict",
        "memo_serialize",
        "_transform_tree",
        "to_regexp",
        "callbacks",
    }
)
LARK_PRIVATE_STRINGS = frozenset({"Shift", "Reduce", "$END"})


def private_lark_uses(module: str) -> list[str]:
    """What ``module`` reaches of Lark's private interfaces: an import from
    ``lark.parsers``, one of the attributes above, or an action's name as a string."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lark.parsers"):
            found.append(f"{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in LARK_PRIVATE_ATTRIBUTES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and node.value in LARK_PRIVATE_STRINGS:
            found.append(f"{node.lineno}: {node.value!r}")
    return found


def test_only_one_module_reaches_lark_internals() -> None:
    """Issue 34's fence: Lark's private interfaces live behind ``_grammar/lark_internals.py``
    (a parser state's stacks and ``feed_token`` are used through its ``ParserStateView``)."""
    assert private_lark_uses(LARK_DOOR), "the door itself must be found by the check"
    outside = {m: uses for m in MODULES if m != LARK_DOOR and (uses := private_lark_uses(m))}
    assert not outside, outside

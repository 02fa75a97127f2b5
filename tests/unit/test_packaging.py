"""The wheel: it carries the grammar files and the typing marker, installs into a fresh
virtual environment with its declared dependencies, and works away from the source tree.

This test needs the network (the build backend, hatchling, and the dependencies come from
PyPI). It fails, loudly, when PyPI cannot be reached: a skipped packaging test would let a
broken wheel ship.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT

REQUIRED_IN_WHEEL = (
    "callsieve/__init__.py",
    "callsieve/__main__.py",
    "callsieve/py.typed",
    "callsieve/grammar/common.lark",
    "callsieve/grammar/dsml.lark",
)
SNIPPET = (
    "import callsieve; "
    "print(callsieve.parse('<tool_calls><invoke name=\"f\"></invoke></tool_calls>').calls[0].name)"
)


def clean_env() -> dict[str, str]:
    """The environment without anything that would let the source tree leak in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def check(
    cmd: list[str], *, cwd: Path, what: str, timeout: float = 300, stdin: str | None = None
) -> str:
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env=clean_env(),
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{what} failed (exit {proc.returncode}); if this is a network error, this test "
        f"needs PyPI.\n$ {' '.join(cmd)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    return proc.stdout


def venv_bin(venv: Path, name: str) -> Path:
    if os.name == "nt":  # pragma: no cover - CI runs on Linux
        return venv / "Scripts" / f"{name}.exe"
    return venv / "bin" / name


@pytest.mark.network
def test_wheel_contents_and_install(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    check(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        cwd=ROOT,
        what="building the wheel",
    )
    wheels = sorted(dist.glob("callsieve-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {dist}, found {wheels}"
    wheel = wheels[0]

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        missing = [n for n in REQUIRED_IN_WHEEL if n not in names]
        assert not missing, f"{wheel.name} lacks {missing}; it holds {sorted(names)}"
        for dialect in ("dsml_v4", "dsml_v32", "xml", "deepseek_native"):
            assert f"callsieve/grammar/{dialect}.lark" in names
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [
            line
            for line in zf.read(metadata).decode("utf-8").splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        ]
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        points = zf.read(entry_points).decode("utf-8")
        assert "callsieve = callsieve.__main__:main" in points
        # the hosts' plugin entry points (docs/vllm.md, docs/integrations.md)
        assert "[vllm.general_plugins]\ncallsieve = callsieve.integrations.vllm:register" in points
        assert "[sglang.srt.plugins]\ncallsieve = callsieve.integrations.sglang:register" in points
        # Release hygiene (issue 16): one version, the licence shipped, the metadata complete.
        meta = zf.read(metadata).decode("utf-8")
        licensed = any(
            n.endswith((".dist-info/licenses/LICENSE", ".dist-info/LICENSE")) for n in names
        )
    assert any("lark" in r for r in requires), requires
    # The stdlib `re` does all matching: lark is the one run-time dependency.
    assert len(requires) == 1, requires
    assert f"\nVersion: {_source_version()}\n" in meta
    assert licensed, f"{wheel.name} ships no LICENSE"
    assert "Classifier: License :: OSI Approved :: MIT License" in meta
    assert "Project-URL: Changelog," in meta
    server = [
        line
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and "extra == 'server'" in line
    ]
    assert {r.split()[1].split(">")[0] for r in server} >= {"starlette", "uvicorn", "httpx"}

    # A fresh environment; the wheel's own metadata pulls in lark.
    venv = tmp_path / "venv"
    check([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, what="creating a venv")
    python = venv_bin(venv, "python")
    check(
        [str(python), "-m", "pip", "install", str(wheel)], cwd=tmp_path, what="installing the wheel"
    )

    # Away from the source tree, so only the installed copy can be imported.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert check([str(python), "-c", SNIPPET], cwd=elsewhere, what="importing").strip() == "f"
    where = check(
        [str(python), "-c", "import callsieve; print(callsieve.__file__)"],
        cwd=elsewhere,
        what="locating the package",
    ).strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where

    # The console script is installed and reads standard input.
    reply = '<|DSML|tool_calls><|DSML|invoke name="g"></|DSML|invoke></|DSML|tool_calls>'
    out = check(
        [str(venv_bin(venv, "callsieve")), "parse", "-"],
        cwd=elsewhere,
        what="running the callsieve script",
        stdin=reply,
    )
    result = json.loads(out)
    assert [c["name"] for c in result["calls"]] == ["g"]
    assert result["blocks"][0]["dialect"] == "dsml"

    # Without the server extra, `callsieve serve` says how to get it (exit 2, one line).
    proc = subprocess.run(
        [str(venv_bin(venv, "callsieve")), "serve", "--transcript", "x"],
        cwd=elsewhere,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "pip install 'callsieve[server]'" in proc.stderr, proc.stderr


def _source_version() -> str:
    found = re.search(
        r'^__version__ = "([^"]+)"$',
        (ROOT / "src" / "callsieve" / "__init__.py").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert found, "no __version__ in src/callsieve/__init__.py"
    return found.group(1)


@pytest.mark.network
def test_the_sdist_ships_the_licence_changelog_and_docs(tmp_path: Path) -> None:
    import tarfile

    check(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        cwd=ROOT,
        what="building the sdist",
    )
    [sdist] = sorted(tmp_path.glob("callsieve-*.tar.gz"))
    assert sdist.name == f"callsieve-{_source_version()}.tar.gz"
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {
        "LICENSE",
        "CHANGELOG.md",
        "README.md",
        "docs/gateway.md",
        "docs/spec.md",
        "src/callsieve/server/_app.py",
        "grammar/common.lark",
    } <= names


def test_the_version_has_one_source() -> None:
    """``__version__`` is the version: the build reads it (hatch's version source) and no
    second copy is written in pyproject.toml; the installed metadata agrees with it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the server extra (in the test extra) brings tomli on 3.10
        import tomli as tomllib

    import callsieve

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"], "a second version in pyproject.toml"
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["hatch"]["version"] == {"path": "src/callsieve/__init__.py"}
    assert importlib.metadata.version("callsieve") == callsieve.__version__ == _source_version()

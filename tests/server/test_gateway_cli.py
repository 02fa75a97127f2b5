"""``callsieve serve`` as a command: a real process serving the config file's settings, the
one-line errors (exit 2) for a missing ``server`` extra and bad settings, and the promise that
``import callsieve`` never imports the server's stack."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import ROOT
from loopback import closed_port

import callsieve.server

TRANSCRIPT = ROOT / "examples" / "transcript.txt"
SRC = ROOT / "src"


def run_cli(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"import sys\n{prelude}\nfrom callsieve.__main__ import main\nsys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=False,
    )


def test_the_core_never_imports_the_server_stack() -> None:
    code = (
        "import sys, callsieve, callsieve.__main__, callsieve.render.openai_chat\n"
        "bad = [m for m in ('starlette', 'uvicorn', 'httpx', 'callsieve.server') "
        "if m in sys.modules]\nassert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )


def test_serve_without_the_server_extra_says_how_to_install_it() -> None:
    proc = run_cli(
        "serve",
        "--transcript",
        str(TRANSCRIPT),
        prelude="sys.modules['starlette'] = None  # as if not installed",
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "callsieve: error: callsieve serve needs the server extra "
        "(Starlette, Uvicorn, httpx): pip install "
        "'callsieve[server]'"
    )


@pytest.mark.parametrize(
    ("args", "config", "message"),
    [
        ((), None, "give exactly one of --upstream URL"),
        (("--transcript", "missing.txt"), None, "missing.txt"),
        (("--upstream", "ftp://x"), None, "http:// or https://"),
        (("--transcript", str(TRANSCRIPT), "--sieve-option", "mode=maybe"), None, "not a JSON"),
        (
            ("--transcript", str(TRANSCRIPT), "--sieve-option", 'early_emit="soon"'),
            None,
            "early_emit",
        ),
        (("--transcript", str(TRANSCRIPT)), "[sever]\nport = 1\n", "unknown table [sever]"),
        (("--transcript", str(TRANSCRIPT)), "[server]\nprot = 1\n", "no setting 'prot'"),
        (("--transcript", str(TRANSCRIPT)), "[sieve]\ntools = []\n", "set per request"),
        (("--transcript", str(TRANSCRIPT)), "[server\n", "not valid TOML"),
        (("--transcript", str(TRANSCRIPT), "--host", "0.0.0.0"), None, "--api-key KEY"),
        (("--transcript", str(TRANSCRIPT)), "[upstream]\nread_timeout = 3\n", "idle_timeout"),
        (
            ("--transcript", str(TRANSCRIPT)),
            '[models."deepseek-r1*"]\nthinking = "maybe"\n',
            '[models."deepseek-r1*"] thinking must be one of always, on, off, never',
        ),
        (
            ("--transcript", str(TRANSCRIPT)),
            '[models."qwen3*"]\nprewrites = true\n',
            "[models.\"qwen3*\"] has no setting 'prewrites'",
        ),
        (("--transcript", str(TRANSCRIPT)), "models = 3\n", "[models] must hold one table"),
        (("--transcript", str(TRANSCRIPT), "--on-abort", "ignore"), None, "on_abort must be"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], config: str | None, message: str
) -> None:
    if config is not None:
        (tmp_path / "gateway.toml").write_text(config, encoding="utf-8")
        args = (*args, "--config", str(tmp_path / "gateway.toml"))
    proc = run_cli("serve", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_serve_runs_the_config_files_settings(tmp_path: Path) -> None:
    port = closed_port()
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'[server]\nport = {port}\nmodel = "from-config"\n\n'
        f'[replay]\ntranscript = "{TRANSCRIPT.as_posix()}"\nchunk_size = 16\n\n'
        '[sieve]\nearly_emit = "arguments"\n',
        encoding="utf-8",
    )
    with subprocess.Popen(
        [sys.executable, "-m", "callsieve", "serve", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                    break
                except httpx.TransportError:
                    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                    assert time.monotonic() < deadline, "callsieve serve did not start"
                    time.sleep(0.1)
            assert [m["id"] for m in models.json()["data"]] == ["from-config"]
        finally:
            proc.terminate()
            proc.wait(20)


def test_the_server_modules_declare_all() -> None:
    for info in pkgutil.walk_packages(callsieve.server.__path__, "callsieve.server."):
        module = importlib.import_module(info.name)
        assert module.__doc__ and module.__doc__.startswith("Strategy:"), info.name
        for name in module.__all__:
            assert hasattr(module, name), f"{info.name}.{name}"


def test_the_config_file_in_the_docs_is_valid(tmp_path: Path) -> None:
    """docs/gateway.md's example config file reads and builds as it is written, and so does
    its ``[models]`` example."""
    doc = (ROOT / "docs" / "gateway.md").read_text(encoding="utf-8")
    example, models = [
        block.split("\n", 1)[1] for block in doc.split("```")[1::2] if block.startswith("toml\n")
    ]
    (tmp_path / "models.toml").write_text(models, encoding="utf-8")
    table = callsieve.server.ServerConfig.build(
        transcript=str(TRANSCRIPT), **callsieve.server.load_toml(str(tmp_path / "models.toml"))
    )
    instruct = table.profile("Qwen/Qwen3-30B-A3B-Instruct-2507")
    assert instruct is not None and instruct.thinking == "never"
    (tmp_path / "gateway.toml").write_text(example, encoding="utf-8")
    config = callsieve.server.ServerConfig.build(
        **callsieve.server.load_toml(str(tmp_path / "gateway.toml"))
    )
    assert config.upstream == "http://127.0.0.1:8001/v1" and config.dialect == "dsml"
    assert config.sieve == {
        "early_emit": "arguments",
        "dialects": ["dsml", "xml", "deepseek_native"],
    }
    assert (config.port, config.idle_timeout, config.model_name) == (8000, 60.0, "my-model")
    assert config.on_abort == "error"
    r1 = config.profile("deepseek-ai/DeepSeek-R1-0528")
    assert r1 is not None and r1.thinking == "always"
    v31 = config.profile("deepseek-ai/DeepSeek-V3.1-Terminus")
    assert v31 is not None and v31.thinking == "off" and v31.prewrites_think

"""The package as a stranger gets it: an sdist built from the source holds every module
and data file of the tree, the wheel built from that sdist does too, and installed into a
clean venv its entry points work against a private tmux server (tmux-send through both
process-facts implementations, tmux-bridge doctor, and tmux-bridge mcp answering a real
JSON-RPC call).

Building needs setuptools from PyPI (the build requirements pyproject.toml declares) and
the install takes the dependencies from PyPI, as a stranger's would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ..support.pane import WAIT, MakeBridge, TestPane

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tmux_bridge"
# the files the build reads besides the package
BESIDE = ["pyproject.toml", "README.md"]
# Building and installing take minutes on a loaded machine: more than a test's default.
pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.first_pass_only("the wheel's tmux-send is run through both paths here"),
]


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[Path, Path, Path]]:
    """(the wheel, a venv with it installed and its `mcp` extra, the sdist), built from a
    copy of the source so the checkout gets no build/ or egg-info of the test's; the
    wheel is built by pip from the sdist, as for a stranger without a wheel, in a venv
    holding only the build requirements pyproject.toml declares (what pip's build
    isolation makes; made once here). The venvs get no pip of their own: this one's
    installs into them, without compiling bytecode (seconds on a loaded machine)."""
    with tempfile.TemporaryDirectory(prefix="tb-wheel-") as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(SOURCE, tree / "tmux_bridge", ignore=shutil.ignore_patterns("__pycache__"))
        for name in BESIDE:
            shutil.copy(ROOT / name, tree / name)
        dist = Path(tmp) / "dist"
        build_python = _venv(Path(tmp) / "build")
        _run([*_pip(build_python), "install", "--no-compile", *_build_requires()])
        backend = "import sys, setuptools.build_meta as b; b.build_sdist(sys.argv[1])"
        _run([build_python, "-c", backend, str(dist)], cwd=tree)
        (sdist,) = dist.glob("tmux_bridge-*.tar.gz")
        wheel_from = ["wheel", "--no-build-isolation", "--no-deps", "-w", str(dist), str(sdist)]
        _run([*_pip(build_python), *wheel_from])
        (wheel,) = dist.glob("tmux_bridge-*.whl")
        env_dir = Path(tmp) / "venv"
        _run([*_pip(_venv(env_dir)), "install", "--no-compile", f"{wheel}[mcp]"])
        yield wheel, env_dir, sdist


def _build_requires() -> list[str]:
    """The build requirements pyproject.toml declares (``requires`` of its
    ``[build-system]`` table, a list JSON reads too)."""
    table = (ROOT / "pyproject.toml").read_text().split("[build-system]\n", 1)[1]
    line = next(t for t in table.split("\n[", 1)[0].splitlines() if t.startswith("requires"))
    requires: list[str] = json.loads(line.split("=", 1)[1])
    return requires


def _venv(path: Path) -> str:
    """A clean venv at ``path`` (no pip); its python."""
    venv.create(path)
    return str(path / "bin" / "python")


def _pip(python: str) -> list[str]:
    """This venv's pip, quiet, working on the venv of ``python`` (which has none)."""
    return [sys.executable, "-m", "pip", "--python", python, "-q"]


def _run(argv: list[str], cwd: Path | None = None) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=cwd)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"


def _expected_files() -> set[str]:
    """Every module and data file of the source tree, as wheel paths."""
    found = set()
    for path in SOURCE.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            found.add(path.relative_to(ROOT).as_posix())
    return found


def test_the_sdist_holds_every_module_and_data_file(built: tuple[Path, Path, Path]) -> None:
    *_, sdist = built
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        inside = {n.removeprefix(top + "/") for n in archive.getnames()}
    assert sorted(_expected_files() - inside) == []
    assert {"pyproject.toml", "README.md"} <= inside


def test_the_wheel_holds_every_module_and_data_file(built: tuple[Path, Path, Path]) -> None:
    wheel, *_ = built
    with zipfile.ZipFile(wheel) as archive:
        inside = {name for name in archive.namelist() if name.startswith("tmux_bridge/")}
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    expected = _expected_files()
    # the browser view's files and xterm.js are data, not modules: they must be there too
    assert any(name.startswith("tmux_bridge/server/static/vendor/xterm/") for name in expected)
    assert any(name.startswith("tmux_bridge/server/static/vendor/fonts/") for name in expected)
    assert sorted(expected - inside) == []
    assert "tmux-send = tmux_bridge.cli.send:main" in scripts
    assert "tmux-bridge = tmux_bridge.cli.bridge:main" in scripts


@pytest.mark.parametrize("facts", ["linux", "portable"])
def test_the_installed_tmux_send_runs_a_command(
    built: tuple[Path, Path, Path], make_bridge: MakeBridge, facts: str
) -> None:
    _, env_dir, _ = built
    pane = make_bridge("bash")
    pane.start()
    result = subprocess.run(
        [str(env_dir / "bin" / "tmux-send"), "--", "echo from-the-wheel; (exit 3)"],
        env={**pane.env, "TMUX_BRIDGE_PROCESS": facts},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout, result.stderr) == (3, b"from-the-wheel\n", b"")


def test_the_installed_doctor_finds_the_machine_ready(
    built: tuple[Path, Path, Path], make_bridge: MakeBridge
) -> None:
    _, env_dir, _ = built
    pane = make_bridge("bash")
    result = subprocess.run(
        [str(env_dir / "bin" / "tmux-bridge"), "doctor", "--json"],
        env=pane.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    document = json.loads(result.stdout)
    assert (result.returncode, document["ok"]) == (0, True), result.stdout
    extras = {c["name"]: c["status"] for c in document["checks"] if "extra" in c["name"]}
    assert extras == {"serve extra": "ok", "mcp extra": "ok"}


def _send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    stdin.flush()


def test_the_installed_mcp_server_answers_a_tool_call(
    built: tuple[Path, Path, Path], make_bridge: MakeBridge
) -> None:
    _, env_dir, _ = built
    pane = make_bridge("bash")
    pane.start()
    env = {**pane.env, "PATH": f"{env_dir / 'bin'}{os.pathsep}{pane.env['PATH']}"}
    _answers_a_tool_call([str(env_dir / "bin" / "tmux-bridge"), "mcp"], env, pane)


def test_the_documented_installers_install_the_wheel(
    built: tuple[Path, Path, Path], make_bridge: MakeBridge, tmp_path: Path
) -> None:
    """docs/platforms.md's recipes with the built wheel in place of the name on PyPI:
    ``uvx --from 'tmux-bridge[mcp]' tmux-bridge mcp`` answers a tool call;
    ``uv tool install --compile-bytecode`` and ``pipx install`` of
    ``tmux-bridge[server,mcp]`` give a ``tmux-send`` that runs a command and a
    ``tmux-bridge doctor`` that finds its extras, and no start compiling the modules
    again where ``PYTHONDONTWRITEBYTECODE`` is set (as container images often do): uv
    compiled them, pipx's commands ignore the environment (``python -E``) and keep what
    their first start compiled."""
    wheel, _, _ = built
    pane = make_bridge("bash")
    pane.start()
    bins = {"uv": tmp_path / "uv-bin", "pipx": tmp_path / "pipx-bin"}
    env = {
        **pane.env,
        "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never",
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"), "UV_TOOL_BIN_DIR": str(bins["uv"]),
        "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(bins["pipx"]),
        "PIPX_DEFAULT_PYTHON": sys.executable, "PYTHONDONTWRITEBYTECODE": "1",
    }  # fmt: skip
    tools = Path(sys.executable).parent  # uv and pipx, from the test extra
    spec = f"tmux-bridge[server,mcp] @ {wheel.as_uri()}"
    uvx = [str(tools / "uvx"), "--from", spec.replace("server,mcp", "mcp"), "tmux-bridge", "mcp"]
    _answers_a_tool_call(uvx, env, pane)
    _run_env([str(tools / "uv"), "tool", "install", "--compile-bytecode", spec], env)
    _run_env([str(tools / "pipx"), "install", f"{wheel}[server,mcp]"], env)
    for installer, folder in bins.items():
        sent = subprocess.run(
            [str(folder / "tmux-send"), "--", f"echo via-{installer}"],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
        )  # fmt: skip
        assert (sent.returncode, sent.stdout) == (0, f"via-{installer}\n".encode()), sent.stderr
        doctor = subprocess.run(
            [str(folder / "tmux-bridge"), "doctor", "--json"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        checks = json.loads(doctor.stdout)["checks"]
        extras = {c["name"]: c["status"] for c in checks if "extra" in c["name"]}
        assert extras == {"serve extra": "ok", "mcp extra": "ok"}, installer
        (bytecode,) = [c for c in checks if c["name"] == "bytecode"]
        assert bytecode["status"] == "ok", (installer, bytecode)
        assert installer == "pipx" or "compiled" in bytecode["detail"], bytecode


def _run_env(argv: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"


def _answers_a_tool_call(argv: list[str], env: dict[str, str], pane: TestPane) -> None:
    """``argv`` (an MCP server on stdio) initializes and runs a command in ``pane``."""
    server = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {},
                 "clientInfo": {"name": "wheel-test", "version": "0"}}  # fmt: skip
        _send(server.stdin, {"id": 1, "method": "initialize", "params": hello})
        answer = json.loads(pane.read_line_from(server.stdout, WAIT * 4))  # uvx installs first
        assert answer["result"]["serverInfo"]["name"] == "tmux-bridge", answer
        _send(server.stdin, {"method": "notifications/initialized"})
        call = {"name": "run", "arguments": {"command": "echo via-mcp"}}
        _send(server.stdin, {"id": 2, "method": "tools/call", "params": call})
        reply = json.loads(pane.read_line_from(server.stdout, WAIT))
        result = reply["result"]["structuredContent"]
        assert (result["exit_status"], result["stdout"]) == (0, "via-mcp\n"), reply
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=WAIT)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            server.stdout.close()
            if server.stderr is not None:
                server.stderr.close()

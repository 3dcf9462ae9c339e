"""Import boundaries, each checked in a fresh interpreter.

The core (every module but the CLIs and the servers to come) never imports click, so a
server can use it without a CLI framework; tmux-send's start-up never pays for the
servers' dependencies. Modules are found with pkgutil, so new ones are covered as they
are added.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tmux_bridge

ROOT = Path(tmux_bridge.__file__).resolve().parent.parent
FACES = ("cli", "web", "server", "mcp", "__main__")  # the packages (and module) of the faces
SERVER_DEPENDENCIES = [
    "starlette", "uvicorn", "mcp", "websockets", "httpx", "anyio", "h11", "regex",
]  # fmt: skip

_REPORT = """\
import importlib, sys
importlib.import_module(sys.argv[1])
for name in sys.argv[2:]:
    if any(m == name or m.startswith(name + ".") for m in sys.modules):
        print(name)
"""


def _modules(path: list[str], prefix: str) -> list[str]:
    """Every module and package below ``path``, found without importing any of them."""
    found = []
    for info in pkgutil.iter_modules(path, prefix):
        found.append(info.name)
        if info.ispkg:
            found += _modules([str(Path(path[0], info.name.rsplit(".", 1)[1]))], info.name + ".")
    return sorted(found)


def _is_core(name: str) -> bool:
    parts = name.split(".")
    return len(parts) == 1 or parts[1] not in FACES


def _core(path: list[str]) -> list[str]:
    return [name for name in ["tmux_bridge", *_modules(path, "tmux_bridge.")] if _is_core(name)]


CORE = _core(list(tmux_bridge.__path__))


def _loaded_after_import(module: str, names: list[str]) -> list[str]:
    """Which of the top-level packages ``names`` a fresh interpreter has loaded after
    importing ``module`` (from this source tree)."""
    result = subprocess.run(
        [sys.executable, "-c", _REPORT, module, *names],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_core_is_found_and_the_clis_are_not_in_it() -> None:
    assert {
        "tmux_bridge",
        "tmux_bridge.api",
        "tmux_bridge.calls.command",
        "tmux_bridge.pane.sessions",
    } <= set(CORE)
    assert not {name for name in CORE if name.startswith(("tmux_bridge.cli", "tmux_bridge.mcp"))}


def test_new_modules_join_the_core_and_servers_stay_out(tmp_path: Path) -> None:
    for name in [
        "__init__.py", "__main__.py", "api.py", "cli/__init__.py", "cli/send.py",
        "mcp/tools.py", "server/__init__.py", "server/http.py", "web/gates.py",
        "calls/__init__.py", "calls/jobs.py",
    ]:  # fmt: skip
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    assert _core([str(tmp_path)]) == [
        "tmux_bridge", "tmux_bridge.api", "tmux_bridge.calls", "tmux_bridge.calls.jobs",
    ]  # fmt: skip


def test_the_check_sees_click_when_a_cli_imports_it() -> None:
    assert _loaded_after_import("tmux_bridge.cli.send_options", ["click", "starlette"]) == ["click"]


@pytest.mark.parametrize("module", ["tmux_bridge.cli.send", "tmux_bridge.cli.send_quick"])
def test_tmux_send_reads_its_common_lines_without_click(module: str) -> None:
    """Importing click is about a third of tmux-send's start-up."""
    assert _loaded_after_import(module, ["click"]) == []


@pytest.mark.parametrize("module", CORE)
def test_the_core_does_not_import_click(module: str) -> None:
    assert _loaded_after_import(module, ["click"]) == []


def test_tmux_send_does_not_import_the_servers_dependencies() -> None:
    assert _loaded_after_import("tmux_bridge.cli.send", SERVER_DEPENDENCIES) == []


# What a call of tmux-send imports after its entry (lazily, by mode), and standard-library
# modules that cost its start-up milliseconds: ``dataclasses`` pulls in ``inspect``, ``ast``
# and ``dis``, about 10 ms a call (measured with bench/run.py --only latency).
CALL_PATH = [
    "tmux_bridge.cli.request", "tmux_bridge.api", "tmux_bridge.calls.command",
    "tmux_bridge.calls.repl", "tmux_bridge.calls.far", "tmux_bridge.calls.files",
    "tmux_bridge.calls.check", "tmux_bridge.cli.send_jobs", "tmux_bridge.calls.jobs",
    "tmux_bridge.calls.jobwait", "tmux_bridge.calls.background",
]  # fmt: skip
SLOW_STDLIB = ["dataclasses", "inspect", "ast", "dis"]


@pytest.mark.parametrize("module", CALL_PATH)
def test_a_call_imports_no_slow_standard_library_module(module: str) -> None:
    assert _loaded_after_import(module, SLOW_STDLIB) == []


def test_the_check_sees_a_slow_standard_library_module() -> None:
    assert _loaded_after_import("dataclasses", SLOW_STDLIB) == SLOW_STDLIB


# A command call pays only for what it uses: the typed results of the pane-wide
# operations (status, panes, labels, fit, upload) are imported when first used
# (``tmux_bridge.results`` re-exports them lazily).
COMMAND_PATH = ["tmux_bridge.cli.send", "tmux_bridge.api", "tmux_bridge.calls.command"]
PANE_WIDE = ["tmux_bridge.pane.shapes"]


@pytest.mark.parametrize("module", COMMAND_PATH)
def test_a_command_call_does_not_import_the_pane_wide_results(module: str) -> None:
    assert _loaded_after_import(module, PANE_WIDE) == []


def test_the_check_sees_the_pane_wide_results_when_status_is_imported() -> None:
    assert _loaded_after_import("tmux_bridge.pane.status", PANE_WIDE) == PANE_WIDE


def test_tmux_bridge_imports_the_servers_dependencies_only_for_serve() -> None:
    assert _loaded_after_import("tmux_bridge.cli.bridge", SERVER_DEPENDENCIES) == []


def test_the_check_sees_the_servers_dependencies_when_serve_is_imported() -> None:
    loaded = _loaded_after_import("tmux_bridge.server.serve", SERVER_DEPENDENCIES)
    assert {"starlette", "uvicorn"} <= set(loaded)


def test_the_check_sees_the_sdk_when_the_mcp_server_is_imported() -> None:
    loaded = _loaded_after_import("tmux_bridge.mcp.server", SERVER_DEPENDENCIES)
    assert {"mcp", "anyio"} <= set(loaded)


def test_the_mcp_texts_and_cap_do_not_import_the_sdk() -> None:
    """`tmux-bridge mcp --list-tools` and the tool list of docs/mcp.md need no SDK."""
    for module in ("tmux_bridge.mcp.texts", "tmux_bridge.mcp.cap"):
        assert _loaded_after_import(module, SERVER_DEPENDENCIES) == [], module


def test_python_m_tmux_bridge_imports_bridge_cli_only_for_bridge() -> None:
    assert _loaded_after_import("tmux_bridge.__main__", ["tmux_bridge.cli.bridge"]) == []

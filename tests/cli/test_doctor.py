"""``tmux-bridge doctor``: what this machine has, what it lacks, and what to install.

Each test runs the real command with a PATH made of real programs (symlinks to them),
so that one is missing as on a machine without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tmux_bridge.infra.doctor import check_control_mode, check_tmux, parse_version

from ..support.pane import BIN


def _doctor(tmp_path: Path, programs: list[str], **env: str) -> tuple[int, dict[str, Any]]:
    """``tmux-bridge doctor --json`` with only ``programs`` on PATH."""
    path = tmp_path / f"bin-{len(list(tmp_path.glob('bin-*')))}"
    path.mkdir()
    for name in programs:
        found = shutil.which(name)
        assert found, f"{name} is not installed here"
        (path / name).symlink_to(found)
    run_env = {
        "PATH": str(path),
        "HOME": str(tmp_path),
        "TMUX_BRIDGE_DIR": str(tmp_path / "run"),
        "SHELL": "/bin/bash",
        **env,
    }
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "doctor", "--json"],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.returncode, json.loads(result.stdout)


def _by_name(document: dict[str, Any], name: str) -> list[dict[str, str]]:
    return [c for c in document["checks"] if c["name"] == name]


def test_a_machine_with_tmux_is_ready(tmp_path: Path) -> None:
    code, document = _doctor(tmp_path, ["tmux"])
    told = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=True)
    (tmux,) = _by_name(document, "tmux")
    assert (code, document["ok"], tmux["status"]) == (0, True, "ok")
    assert tmux["detail"] == told.stdout.strip()
    (runtime,) = _by_name(document, "runtime dir")
    assert runtime["status"] == "ok"
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o700


def test_without_tmux_it_says_what_to_install(tmp_path: Path) -> None:
    code, document = _doctor(tmp_path, [])
    (tmux,) = _by_name(document, "tmux")
    assert (code, document["ok"], tmux["status"]) == (1, False, "missing")
    assert "brew install tmux" in tmux["fix"] and "apt install tmux" in tmux["fix"]


def test_a_runtime_dir_open_to_others_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir(mode=0o755)
    os.chmod(tmp_path / "run", 0o755)
    code, document = _doctor(tmp_path, ["tmux"])
    (runtime,) = _by_name(document, "runtime dir")
    assert (code, runtime["status"]) == (1, "missing")
    assert "0755" in runtime["detail"]


def test_the_portable_path_says_what_it_cannot_see(tmp_path: Path) -> None:
    code, document = _doctor(tmp_path, ["tmux", "ps"], TMUX_BRIDGE_PROCESS="portable")
    (facts,) = _by_name(document, "process facts")
    assert code == 0 and facts["detail"].startswith("portable (forced")
    notes = _by_name(document, "cannot see")
    assert any("lsof" in n["detail"] and n["fix"] == "install lsof" for n in notes)
    code, document = _doctor(tmp_path, ["tmux"], TMUX_BRIDGE_PROCESS="linux")
    assert _by_name(document, "process facts")[0]["detail"].startswith("linux (forced")
    assert _by_name(document, "cannot see") == []


def test_a_login_shell_tmux_send_cannot_drive_is_a_note(tmp_path: Path) -> None:
    code, document = _doctor(tmp_path, ["tmux"], SHELL="/usr/bin/tcsh")
    (note,) = _by_name(document, "your shell")
    assert code == 0 and note["status"] == "note" and "tcsh" in note["detail"]


def test_tmux_versions() -> None:
    assert [parse_version(v) for v in ("tmux 3.3a", "tmux next-3.5", "tmux master")] == [
        (3, 3),
        (3, 5),
        None,
    ]
    assert check_tmux("tmux 3.1c").status == "missing"
    assert check_tmux("tmux 3.2").status == "ok"
    assert check_tmux(None).fix.startswith("install tmux 3.2 or later")


def test_modules_without_bytecode_that_python_may_not_write_are_told_with_the_fix(
    tmp_path: Path,
) -> None:
    """An install without bytecode (editable, uv's, read-only) where
    PYTHONDONTWRITEBYTECODE is set: every tmux-send compiles its modules again. An empty
    PYTHONPYCACHEPREFIX stands for it; the fix doctor gives, run as given, ends it."""
    cache = tmp_path / "pycache"
    cache.mkdir()
    env = {"PYTHONPYCACHEPREFIX": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    code, document = _doctor(tmp_path, ["tmux"], **env)
    (note,) = _by_name(document, "bytecode")
    assert (code, note["status"]) == (0, "note"), note
    assert "PYTHONDONTWRITEBYTECODE is set" in note["detail"], note
    assert not any(cache.iterdir()), "doctor wrote bytecode although it may not"
    fixed = subprocess.run(note["fix"], shell=True, env={**os.environ, **env}, timeout=120)
    assert fixed.returncode == 0
    (after,) = _by_name(_doctor(tmp_path, ["tmux"], **env)[1], "bytecode")
    assert after["status"] == "ok" and "compiled" in after["detail"], after


def test_modules_python_may_still_compile_are_not_a_concern(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    cache.mkdir()
    code, document = _doctor(tmp_path, ["tmux"], PYTHONPYCACHEPREFIX=str(cache))
    (check,) = _by_name(document, "bytecode")
    assert code == 0 and check["status"] == "ok" and "compile once" in check["detail"], check
    assert any(cache.rglob("*.pyc")), "the modules doctor imported were not compiled"


def test_a_tmux_that_crashes_under_an_attaching_control_client_is_noted() -> None:
    """tmux GitHub issue 4980: fixed in 3.7; 3.2 to 3.6 have it."""
    for version in ("tmux 3.2a", "tmux 3.3a", "tmux 3.6b"):
        (note,) = check_control_mode(version)
        assert note.status == "note" and version in note.detail and "3.7" in note.fix
    for fixed in ("tmux 3.7", "tmux 3.7c", "tmux next-3.8", "tmux 3.1", None):
        assert check_control_mode(fixed) == [], fixed

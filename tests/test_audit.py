"""The audit log as an attacker and a killed tmux-send meet it: nothing is written into
a runtime directory another user made, a call's start is logged before anything is
typed and its end after, and a long command is logged with what is left out of it and
its SHA-256."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import BIN

ATTACKER = "tbattacker"  # another local user, made with useradd
VICTIM = "tbvictim"  # the name in $USER of the person whose runtime directory is taken
SECRET = "curl -H 'Authorization: Bearer s3cr3t-t0ken' https://api.example.com"


def _other_user(name: str) -> int:
    """The uid of local user ``name``, made with useradd when missing (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: makes a user with useradd")
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name).pw_uid
    subprocess.run(["useradd", "--no-create-home", "-s", "/bin/sh", name], check=True)
    return pwd.getpwnam(name).pw_uid


@pytest.fixture
def taken_runtime_dir() -> Iterator[Path]:
    """``/tmp/tmux-bridge-tbvictim`` made first by another user, with a ``log.jsonl``
    (and a ``context.json``) anyone may write: what an attacker plants for a person."""
    uid = _other_user(ATTACKER)
    path = Path(f"/tmp/tmux-bridge-{VICTIM}")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o755)
    for name in ("log.jsonl", "context.json"):
        (path / name).write_text("")
        (path / name).chmod(0o666)
        os.chown(path / name, uid, uid)
    os.chown(path, uid, uid)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _as_victim(tmp_path: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``program ARGS`` as the person: $USER names them, no TMUX_BRIDGE_DIR (so the
    default ``/tmp/tmux-bridge-$USER``), a tmux server of their own, and file
    permissions honoured (root without CAP_DAC_OVERRIDE, as test_files.py does)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "TMUX_BRIDGE"))}
    env.update(USER=VICTIM, HOME=str(tmp_path), TMUX_TMPDIR=str(tmp_path))
    setpriv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run(
        [*setpriv, str(BIN / program), *args], env=env, capture_output=True, text=True, timeout=60
    )


def _contents(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def test_nothing_is_written_into_a_runtime_directory_another_user_made(
    taken_runtime_dir: Path, tmp_path: Path
) -> None:
    before = _contents(taken_runtime_dir)
    # the premise: the person could write the planted log (it is 0666)
    probe = _as_victim(tmp_path, "tmux-send", "--version")
    assert probe.returncode == 0, probe.stderr
    for args in (
        ["--", SECRET],
        ["--json", "--", SECRET],
        ["--check", "--", SECRET],
        ["--repl", "python", "--", SECRET],
        ["--read", "/etc/hostname"],
        ["--max-time", "nan", "--", SECRET],
    ):
        result = _as_victim(tmp_path, "tmux-send", *args)
        assert result.returncode in (2, 125), (args, result.stderr)
        if result.returncode == 125:
            assert "owned by uid" in result.stdout + result.stderr, (args, result.stderr)
    for args in (["log"], ["status"], ["-d"]):
        result = _as_victim(tmp_path, "tmux-bridge", *args)
        assert result.returncode != 0, (args, result.stdout)
    assert _contents(taken_runtime_dir) == before
    assert "s3cr3t" not in "".join(before.values())


def test_the_writers_that_never_fail_a_call_skip_a_directory_not_ours(
    taken_runtime_dir: Path,
) -> None:
    from tmux_bridge import audit
    from tmux_bridge.context import prune, update_pane

    before = _contents(taken_runtime_dir)
    audit.record(str(taken_runtime_dir), {"command": SECRET, "exit_status": 125})
    update_pane(str(taken_runtime_dir), "pane-0", {"last_command": {"command": SECRET}})
    prune(str(taken_runtime_dir), set())
    assert _contents(taken_runtime_dir) == before


def test_the_log_is_written_into_our_own_directory_made_0700(tmp_path: Path) -> None:
    from tmux_bridge import audit

    directory = tmp_path / "run"
    audit.record(str(directory), {"command": "true", "exit_status": 0})
    assert oct(directory.stat().st_mode & 0o777) == oct(0o700)
    assert [e["command"] for e in audit.read(str(directory), None)] == ["true"]

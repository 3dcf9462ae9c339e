"""Files kept safe through a far shell (ssh to this machine as a test user): a write of
the same bytes changes nothing, backups go to the far user's backup directory and come
back with --restore, --stat, --if-sha256 and line edits, as in a local pane.

The far host is this machine, so files and backups are checked on disk; expected
digests come from hashlib.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.files import backup_dir, backups_of, send_json
from ..support.pane import TestPane, private_pane
from ..support.sshd import USERS, Sshd, ensure_user, running_sshd, ssh_pane


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


@pytest.mark.parametrize("shell", ["bash", "fish", "dash"])
def test_far_files_kept_safe(sshd: Sshd, shell: str) -> None:
    user = USERS[shell]
    home = Path(f"/home/{user}")
    work = Path(tempfile.mkdtemp(prefix="tb-keep-", dir=home))  # no backups of it yet
    shutil.chown(work, user, user)
    target = work / "k.txt"
    try:
        with private_pane("bash") as b:
            ssh_pane(b, sshd, shell)
            _check_far_files(b, home, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


GATES = [("su", "su - {user}", "zsh"), ("sudo", "sudo -i -u {user}", "fish")]


@pytest.mark.parametrize(("gate", "line", "shell"), GATES, ids=[g[0] for g in GATES])
def test_far_files_kept_safe_through_su_and_sudo(gate: str, line: str, shell: str) -> None:
    """The same through `su - USER` (a far zsh) and `sudo -i -u USER` (a far fish),
    which share the pane's terminal: backups in that user's home, owned by that user."""
    user = ensure_user(shell)
    home = Path(f"/home/{user}")
    work = Path(tempfile.mkdtemp(prefix=f"tb-keep-{gate}-", dir=home))
    shutil.chown(work, user, user)
    try:
        with private_pane("bash") as b:
            b.start()
            b.tmux("send-keys", "-t", b.target, line.format(user=user), "Enter")
            b.wait_for(lambda: b.foreground() != "bash", f"{gate} to start")
            b.wait_until_ready()
            _check_far_files(b, home, work / "k.txt")
            doc = json.loads(b.send("--json", "--stat", str(work / "k.txt")).stdout)
            assert doc["far"]["user"] == user, doc
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _drawn(b: TestPane) -> None:  # a far fish draws its prompt after the call's end marker
    b.wait_for(lambda: b.pane("#{cursor_x}") != "0", "the prompt drawn")


def _check_far_files(b: TestPane, home: Path, target: Path) -> None:
    code, created = send_json(b, "--write", str(target), data=b"one\ntwo\n")
    assert (code, created["file"]["status"]) == (0, "created"), created
    mtime = target.stat().st_mtime_ns
    _drawn(b)
    code, same = send_json(b, "--write", str(target), data=b"one\ntwo\n")
    assert (code, same["file"]["status"], target.stat().st_mtime_ns) == (0, "unchanged", mtime)
    _drawn(b)
    code, facts = send_json(b, "--stat", str(target))
    assert code == 0, facts
    assert facts["file"]["sha256"] == hashlib.sha256(b"one\ntwo\n").hexdigest()
    assert facts["file"]["md5"] == hashlib.md5(b"one\ntwo\n").hexdigest()
    _drawn(b)
    edited = b.send("--edit", str(target), "--line", "2", "--new", "TWO")
    assert edited.returncode == 0, (edited.stderr, b.screen())
    assert target.read_bytes() == b"one\nTWO\n"
    (kept,) = backups_of(home, target)  # in the far user's home, not beside the file
    assert kept.read_bytes() == b"one\ntwo\n" and kept.parent == backup_dir(home)
    assert kept.stat().st_uid == target.stat().st_uid
    _drawn(b)
    stale = hashlib.sha256(b"one\ntwo\n").hexdigest()
    refused = b.send("--json", "--if-sha256", stale, "--write", str(target), input=b"x\n")
    assert json.loads(refused.stdout)["error_code"] == "file_changed"
    assert target.read_bytes() == b"one\nTWO\n"
    _drawn(b)
    code, listed = send_json(b, "--backups", str(target))
    assert [e["id"] for e in listed["backups"]] == [kept.name], listed
    _drawn(b)
    code, restored = send_json(b, "--restore", str(target))
    assert (code, restored["file"]["status"]) == (0, "updated"), restored
    assert target.read_bytes() == b"one\ntwo\n"
    assert [p.read_bytes() for p in backups_of(home, target)] == [b"one\ntwo\n", b"one\nTWO\n"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["k.txt"]
    _drawn(b)  # a check by kind, by the far host's python3
    checked = b.send("--json", "--check", "--as", "python", "-", input=b"x = (\n")
    document = json.loads(checked.stdout)
    assert (checked.returncode, document["validator"], document["valid"]) == (1, "python3", False)
    assert document["error"]["line"] == 1, document

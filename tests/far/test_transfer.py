"""Far transfers at speed: --write and --read of files far larger than a command line
through ssh and su, exact (SHA-256 on both ends), carried through the pane's stream as
base64 the person never sees: the pane shows a short progress line at most.

The far host is this machine, so files are checked on disk; expected digests come from
hashlib, and what the person sees from tmux's own record of the pane (its history).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.pane import TestPane, private_pane
from ..support.sshd import USERS, Sshd, ensure_user, running_sshd, ssh_pane

pytestmark = pytest.mark.tmux

BIG = 50 * 1024 * 1024  # the 50 MB


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


@pytest.fixture
def far_dir() -> Iterator[Path]:
    """A directory the far users may write in."""
    folder = Path(tempfile.mkdtemp(prefix="tb-transfer-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _unseen(b: TestPane, data: bytes) -> None:
    """None of ``data``'s base64 (nor hex) reached the pane's screen or history, and
    the pane shows few lines for it (progress, the summary)."""
    shown = b.history()
    encoded = base64.b64encode(data)
    for at in (0, len(encoded) // 2, len(encoded) - 80):
        assert encoded[at : at + 40].decode() not in shown, shown[-2000:]
    assert data[:20].hex() not in shown.replace(" ", "")
    progress = [line for line in shown.splitlines() if line.startswith("tmux-send: ")]
    assert len(progress) < 40, progress


def _round_trip(b: TestPane, path: Path, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    written = b.send("--json", "--max-time", "600", "--write", str(path), input=data, timeout=620)
    doc = json.loads(written.stdout)
    assert (written.returncode, doc["file"]["status"]) == (0, "created"), (doc, b.screen())
    assert (doc["file"]["sha256"], doc["file"]["size"]) == (digest, len(data))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    read = b.send("--max-time", "600", "--read", str(path), timeout=620)
    assert (read.returncode, read.stderr) == (0, b""), (read.stderr, b.screen())
    assert hashlib.sha256(read.stdout).hexdigest() == digest
    _unseen(b, data)


def test_50_mb_through_ssh(sshd: Sshd, far_dir: Path) -> None:
    """50 MB each way through an ssh pane (its far bash), exact, unseen."""
    data = os.urandom(BIG)
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        _round_trip(b, far_dir / "big.bin", data)
        assert (far_dir / "big.bin").stat().st_uid == _uid(USERS["bash"])


def test_megabytes_through_ssh_dash_and_fish(sshd: Sshd, far_dir: Path) -> None:
    """A far dash and a far fish: 3 MB each way (30 times the old limit), and a write
    of those bytes again is unchanged."""
    data = os.urandom(3 * 1024 * 1024)
    for shell in ("dash", "fish"):
        with private_pane("bash") as b:
            ssh_pane(b, sshd, shell)
            path = far_dir / f"{shell}.bin"
            _round_trip(b, path, data)
            again = b.send("--json", "--write", str(path), input=data)
            assert json.loads(again.stdout)["file"]["status"] == "unchanged", b.screen()


GATES = [("su", "su - {user}", "zsh"), ("sudo", "sudo -i -u {user}", "fish")]


@pytest.mark.parametrize(("gate", "line", "shell"), GATES, ids=[g[0] for g in GATES])
def test_megabytes_through_su_and_sudo(far_dir: Path, gate: str, line: str, shell: str) -> None:
    """`su - USER` and `sudo -i -u USER` share the pane's terminal: 3 MB each way, exact,
    the terminal's settings as they were after (echo on: the person's typing shows)."""
    user = ensure_user(shell)
    data = os.urandom(3 * 1024 * 1024)
    with private_pane("bash") as b:
        b.start()
        b.tmux("send-keys", "-t", b.target, line.format(user=user), "Enter")
        b.wait_for(lambda: b.foreground() != "bash", f"{gate} to start")
        b.wait_until_ready()
        path = far_dir / f"{gate}.bin"
        _round_trip(b, path, data)
        assert path.stat().st_uid == _uid(user)
        echo = b.send_text("--", "stty -a | grep -o ' -*echo '")
        assert echo[1].split() == ["echo"], echo


def _uid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid


def test_without_base64_the_slow_way(sshd: Sshd, far_dir: Path) -> None:
    """A far host without base64 nor openssl: the far side says so before reading
    anything, and a small write and read go the old way (with a note); a large write
    is refused as too large for it, the file untouched."""
    tools = far_dir / "bin"
    tools.mkdir()
    for folder in ("/usr/bin", "/bin"):
        for entry in os.scandir(folder):
            if entry.name not in ("base64", "openssl") and not (tools / entry.name).exists():
                (tools / entry.name).symlink_to(entry.path)
    data = os.urandom(20_000)
    path = far_dir / "small.bin"
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        assert b.send_text("--", f"export PATH={tools}")[0] == 0
        written = b.send("--json", "--write", str(path), input=data)
        doc = json.loads(written.stdout)
        assert (written.returncode, path.read_bytes()) == (0, data), (doc, b.screen())
        assert any("no base64 here" in note for note in doc["notes"]), doc["notes"]
        assert b.send("--read", str(path)).stdout == data
        large = b.send("--json", "--write", str(path), input=os.urandom(200_000))
        assert json.loads(large.stdout)["error_code"] == "file_too_large", b.screen()
        assert path.read_bytes() == data

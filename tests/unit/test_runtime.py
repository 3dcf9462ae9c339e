"""The runtime directory, private files, names from the environment, and the call lock.

No tmux needed. The lock tests hold the lock from a second process, which tells us over a
pipe once it holds it; nothing here waits a fixed time.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tmux_bridge.errors import LockTimeout, RuntimeDirError
from tmux_bridge.infra.runtime import (
    call_lock,
    ensure_private_dir,
    runtime_dir,
    session_name,
    sweep_call_files,
    user_name,
    write_private_file,
)

from ..support.pane import WAIT, read_line


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --- ensure_private_dir ----------------------------------------------------------------


def test_private_dir_created_0700(tmp_path: Path) -> None:
    path = tmp_path / "run"
    ensure_private_dir(str(path))
    assert path.is_dir()
    assert mode_of(path) == 0o700


def test_private_dir_created_0700_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "run"
    old = os.umask(0)
    try:
        ensure_private_dir(str(path))
    finally:
        os.umask(old)
    assert mode_of(path) == 0o700


def test_private_dir_existing_0700_accepted(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.mkdir(0o700)
    (path / "keep").write_text("x")
    ensure_private_dir(str(path))
    assert mode_of(path) == 0o700
    assert (path / "keep").read_text() == "x"


def test_private_dir_missing_parent(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "run"
    with pytest.raises(RuntimeDirError, match="cannot create the runtime directory"):
        ensure_private_dir(str(path))


def test_private_dir_symlink_to_dir_refused(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir(0o700)
    link = tmp_path / "run"
    link.symlink_to(target)
    with pytest.raises(RuntimeDirError, match="symlink") as info:
        ensure_private_dir(str(link))
    assert str(link) in str(info.value)
    assert link.is_symlink()


def test_private_dir_dangling_symlink_refused(tmp_path: Path) -> None:
    link = tmp_path / "run"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RuntimeDirError, match="symlink"):
        ensure_private_dir(str(link))
    assert not (tmp_path / "nowhere").exists()


def test_private_dir_regular_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("not a dir")
    with pytest.raises(RuntimeDirError, match="not a directory"):
        ensure_private_dir(str(path))
    assert path.read_text() == "not a dir"


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701], ids=oct)
def test_private_dir_open_mode_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "run"
    path.mkdir()
    path.chmod(mode)
    with pytest.raises(RuntimeDirError, match=f"its mode is {mode:04o}.*must be 0700"):
        ensure_private_dir(str(path))
    assert mode_of(path) == mode  # nothing is changed


def test_private_dir_other_owner_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another uid needs root")
    path = tmp_path / "run"
    path.mkdir(0o700)
    os.chown(path, 65534, 65534)
    with pytest.raises(RuntimeDirError, match="owned by uid 65534"):
        ensure_private_dir(str(path))
    assert os.lstat(path).st_uid == 65534


# --- write_private_file ----------------------------------------------------------------


def test_private_file_created_0600(tmp_path: Path) -> None:
    path = tmp_path / "call.run"
    data = bytes(range(256)) * 4096  # 1 MiB: more than one write() may take
    write_private_file(str(path), data)
    assert mode_of(path) == 0o600
    assert path.read_bytes() == data


def test_private_file_existing_refused(tmp_path: Path) -> None:
    path = tmp_path / "call.run"
    path.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        write_private_file(str(path), b"new")
    assert path.read_bytes() == b"old"


def test_private_file_symlink_to_file_refused(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"old")
    link = tmp_path / "call.run"
    link.symlink_to(target)
    with pytest.raises(FileExistsError):
        write_private_file(str(link), b"new")
    assert target.read_bytes() == b"old"


def test_private_file_dangling_symlink_refused(tmp_path: Path) -> None:
    link = tmp_path / "call.run"
    link.symlink_to(tmp_path / "target")
    with pytest.raises(FileExistsError):
        write_private_file(str(link), b"new")
    assert not (tmp_path / "target").exists()


# --- sweep_call_files ------------------------------------------------------------------


def test_sweep_removes_only_call_files(tmp_path: Path) -> None:
    swept = ["0123456789.run", "0123456789.cmd", "abc.run", "inflight"]
    kept = ["keep.txt", "x.run.bak", "inflight2", "notes.running", "run", "cmd", ".cmdx"]
    for name in swept + kept:
        (tmp_path / name).write_text(name)
    assert sweep_call_files(str(tmp_path)) is True  # a killed call's: the pane may differ
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
    assert sweep_call_files(str(tmp_path)) is False


def test_sweep_empty_dir(tmp_path: Path) -> None:
    assert sweep_call_files(str(tmp_path)) is False
    assert list(tmp_path.iterdir()) == []


# --- names from the environment --------------------------------------------------------


def test_names_from_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "alice")
    monkeypatch.delenv("TMUX_BRIDGE_SESSION", raising=False)
    monkeypatch.delenv("TMUX_BRIDGE_DIR", raising=False)
    assert user_name() == "alice"
    assert session_name() == "tmux-bridge-alice"
    assert runtime_dir() == "/tmp/tmux-bridge-alice"


def test_names_from_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("TMUX_BRIDGE_SESSION", "my-bridge")
    monkeypatch.setenv("TMUX_BRIDGE_DIR", "/run/user/1000/bridge")
    assert session_name() == "my-bridge"
    assert runtime_dir() == "/run/user/1000/bridge"


def test_names_empty_overrides_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("TMUX_BRIDGE_SESSION", "")
    monkeypatch.setenv("TMUX_BRIDGE_DIR", "")
    assert session_name() == "tmux-bridge-alice"
    assert runtime_dir() == "/tmp/tmux-bridge-alice"


@pytest.mark.parametrize("user", [None, ""], ids=["unset", "empty"])
def test_names_without_user(monkeypatch: pytest.MonkeyPatch, user: str | None) -> None:
    if user is None:
        monkeypatch.delenv("USER", raising=False)
    else:
        monkeypatch.setenv("USER", user)
    monkeypatch.delenv("TMUX_BRIDGE_SESSION", raising=False)
    monkeypatch.delenv("TMUX_BRIDGE_DIR", raising=False)
    account = pwd.getpwuid(os.geteuid()).pw_name
    assert user_name() == account
    assert session_name() == f"tmux-bridge-{account}"
    assert runtime_dir() == f"/tmp/tmux-bridge-{account}"


# --- call_lock -------------------------------------------------------------------------

# pytest-timeout's default method also uses SIGALRM, which call_lock takes over while it
# waits; the thread method keeps the test timeout working.
lock_test = pytest.mark.timeout(120, method="thread")

_HOLDER = """\
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
sys.stdout.write("held\\n")
sys.stdout.flush()
sys.stdin.read()  # hold the lock until our stdin closes, or until killed
"""


@pytest.fixture
def lock_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(0o700)
    return path


@pytest.fixture
def holder(lock_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another process holding the call lock on ``lock_dir``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = read_line(proc.stdout, WAIT, lambda: "the holder did not take the lock")
        assert line == b"held\n"
        yield proc
    finally:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def lock_is_free(directory: Path) -> bool:
    """Whether another open file description could take the lock right now."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    finally:
        os.close(fd)
    return True


def fail_on_wait() -> None:
    raise AssertionError("on_wait ran although the lock was free")


@lock_test
def test_call_lock_says_whether_a_holder_came_and_went_since_a_look(lock_dir: Path) -> None:
    """Free when tried, yet held and let go after the caller looked: what it saw may be
    gone. Every holder marks its letting go on the directory, however little it did."""
    deadline = time.monotonic() + WAIT
    looked = time.time()
    with call_lock(str(lock_dir), deadline, fail_on_wait, since=looked) as changed:
        assert not changed  # nobody held it since
    # that hold was let go after the look: the next caller that looked then is told
    with call_lock(str(lock_dir), deadline, fail_on_wait, since=looked) as changed:
        assert changed
    looked = time.time()  # a look after the last letting go
    with call_lock(str(lock_dir), deadline, fail_on_wait, since=looked) as changed:
        assert not changed
    with call_lock(str(lock_dir), deadline, fail_on_wait) as changed:
        assert not changed  # no look named: only a wait counts


@lock_test
def test_call_lock_free(lock_dir: Path) -> None:
    before = signal.getsignal(signal.SIGALRM)
    with call_lock(str(lock_dir), time.monotonic() + WAIT, fail_on_wait):
        assert not lock_is_free(lock_dir)
    assert lock_is_free(lock_dir)
    assert signal.getsignal(signal.SIGALRM) == before


@lock_test
def test_call_lock_free_after_deadline(lock_dir: Path) -> None:
    with call_lock(str(lock_dir), time.monotonic() - 1, fail_on_wait):
        assert not lock_is_free(lock_dir)


@lock_test
def test_call_lock_released_on_error(lock_dir: Path) -> None:
    with pytest.raises(KeyError), call_lock(str(lock_dir), time.monotonic() + WAIT, fail_on_wait):
        raise KeyError("boom")
    assert lock_is_free(lock_dir)


def _release_by_exit(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()


def _release_by_kill(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()


@lock_test
@pytest.mark.parametrize(
    "release", [_release_by_exit, _release_by_kill], ids=["holder-exits", "holder-killed"]
)
def test_call_lock_waits_for_other_process(
    lock_dir: Path,
    holder: subprocess.Popen[bytes],
    release: Callable[[subprocess.Popen[bytes]], None],
) -> None:
    events: list[tuple[str, float]] = []

    def on_wait() -> None:
        events.append(("wait", time.monotonic()))
        assert holder.poll() is None  # we really were waiting for the holder
        release(holder)

    start = time.monotonic()
    with call_lock(str(lock_dir), start + WAIT, on_wait, wait_notice_after=0.2):
        events.append(("acquired", time.monotonic()))
        assert not lock_is_free(lock_dir)
    assert [name for name, _ in events] == ["wait", "acquired"]
    assert events[0][1] - start >= 0.2
    # taken as soon as the holder let go, not at the deadline
    assert events[1][1] - events[0][1] < WAIT / 2
    assert holder.wait(WAIT) is not None


@lock_test
def test_call_lock_times_out(lock_dir: Path, holder: subprocess.Popen[bytes]) -> None:
    waits: list[float] = []
    before = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    deadline = start + 1.5
    with (
        pytest.raises(LockTimeout, match="overall time limit"),
        call_lock(str(lock_dir), deadline, lambda: waits.append(time.monotonic()), 0.2),
    ):
        raise AssertionError("the lock was taken although another process holds it")
    end = time.monotonic()
    assert len(waits) == 1  # once, although the wait went on past the notice
    assert waits[0] - start >= 0.2
    assert waits[0] < deadline
    assert end >= deadline
    assert holder.poll() is None
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@lock_test
def test_call_lock_deadline_already_passed(lock_dir: Path, holder: subprocess.Popen[bytes]) -> None:
    with (
        pytest.raises(LockTimeout),
        call_lock(str(lock_dir), time.monotonic() - 1, fail_on_wait, 0.2),
    ):
        raise AssertionError("the lock was taken although another process holds it")
    assert holder.poll() is None

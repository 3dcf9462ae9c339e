"""The shell code tmux-bridge types runs in the shells and tool sets of other systems:
``busybox sh`` with busybox's applets only (as an Alpine host or a container has), and a
BSD-style tool set (no ``sha256sum``/``md5sum``: ``shasum -a 256``, the Perl script
macOS ships, and ``openssl``), besides dash with Debian's tools.

The snippets: the platform probe (:mod:`tmux_bridge.text.facts`), the file operations
script (:data:`tmux_bridge.calls.files.SCRIPT`) and the far shell's private directory
(:func:`tmux_bridge.text.seams.far_dir_function`). Expected values come from Python's
own hashlib and os.stat of the same file."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tmux_bridge.calls.files import SCRIPT, LocalTransport
from tmux_bridge.text import facts, seams

BUSYBOX = shutil.which("busybox")
pytestmark = pytest.mark.skipif(BUSYBOX is None, reason="busybox is not installed")
# Applets whose absence makes a tool set BSD-like (macOS has neither sha256sum nor md5sum).
GNU_ONLY = {"sha256sum", "md5sum", "sha1sum", "sha512sum"}


def _tool_dir(root: Path, name: str, drop: set[str], add: list[str]) -> Path:
    """A PATH directory of busybox applets (less ``drop``) plus ``add`` from this system."""
    assert BUSYBOX is not None
    folder = root / name
    folder.mkdir()
    listed = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True, check=True)
    for applet in listed.stdout.split():
        if applet not in drop:
            (folder / applet).symlink_to(BUSYBOX)
    for program in add:
        found = shutil.which(program)
        assert found, f"{program} is not installed"
        target = folder / program
        if target.is_symlink():
            target.unlink()
        target.symlink_to(found)
    return folder


@pytest.fixture(params=["busybox", "bsd-style", "dash"])
def world(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[list[str], dict[str, str]]]:
    """(the shell's argv prefix, its environment) for one tool set."""
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path), "LC_ALL": "C"}
    if request.param == "busybox":
        path = _tool_dir(tmp_path, "bin", set(), [])
        yield [str(path / "sh")], {**env, "PATH": str(path)}
    elif request.param == "bsd-style":
        path = _tool_dir(tmp_path, "bin", GNU_ONLY, ["shasum", "perl", "openssl"])
        yield [str(path / "sh")], {**env, "PATH": str(path)}
    else:
        yield ["dash"], {**env, "PATH": os.environ["PATH"]}


def _sh(world: tuple[list[str], dict[str, str]], script: str, *args: str) -> bytes:
    shell, env = world
    done = subprocess.run(
        [*shell, "-c", script, "sh", *args], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def test_the_platform_probe(world: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    found = facts.parse(_sh(world, facts.SCRIPT, "5.2").decode(), "posix")
    uname = os.uname()
    assert (found["os"], found["arch"], found["hostname"]) == (
        uname.sysname,
        uname.machine,
        uname.nodename,
    )
    assert found["shell_version"] == "5.2" and found["user"]


def _header(out: bytes) -> list[bytes]:
    fields = out.split(b"\0")
    assert fields[0] == b"tmux-send-file 2", out[:200]
    return fields[1:9]


def test_the_file_script_reads_and_stats(
    world: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    data = b"line one\nline \xff two\n"
    target = tmp_path / "file.txt"
    target.write_bytes(data)
    target.chmod(0o640)
    out = tmp_path / "out"
    script = LocalTransport.PRELUDE + SCRIPT
    _sh(world, script, os.devnull, str(out), "stat", str(target))
    path, size, sha, mode, mtime, _backup, _status, md5 = _header(out.read_bytes())
    assert (path, int(size), sha.decode()) == (
        str(target).encode(),
        len(data),
        hashlib.sha256(data).hexdigest(),
    )
    assert (mode, int(mtime)) == (b"640", int(target.stat().st_mtime))
    assert md5.decode() == hashlib.md5(data).hexdigest()
    _sh(world, script, os.devnull, str(out), "read", str(target), "1000")
    assert out.read_bytes().endswith(b"\0" + data)


def test_the_file_script_writes(world: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    data = b"new\ncontent\n"
    source, target, out = tmp_path / "in", tmp_path / "written.txt", tmp_path / "out"
    source.write_bytes(data)
    target.write_bytes(b"old\n")
    script = LocalTransport.PRELUDE + SCRIPT
    sha = hashlib.sha256(data).hexdigest()
    _sh(world, script, str(source), str(out), "write", str(target), sha, "1", "-", "30", "1000000")
    assert target.read_bytes() == data
    fields = _header(out.read_bytes())
    assert fields[2].decode() == sha and fields[6] == b"updated"
    backup = Path(fields[5].decode())
    assert backup.read_bytes() == b"old\n"


def test_the_far_private_directory(world: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    script = seams.far_dir_function() + ' __tmux_send_dir && printf "%s" "$__tmux_send_d"'
    made = Path(_sh(world, script).decode())
    assert made.parent == tmp_path and made.is_dir()
    assert made.stat().st_mode & 0o777 == 0o700

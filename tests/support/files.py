"""Files through the pane, for the tests of --write/--read/--edit here and in far shells:
``tmux-send --json`` and ``--read`` that must succeed, and names that start with a dash."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from .pane import TestPane


def send_json(bridge: TestPane, *args: str, data: bytes = b"") -> tuple[int, dict[str, Any]]:
    """``tmux-send --json ARGS`` with ``data`` on stdin: its status and its document."""
    result = bridge.send("--json", *args, input=data)
    assert result.stderr == b"", result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["exit_status"] == result.returncode
    return result.returncode, document


def write(bridge: TestPane, path: Path | str, data: bytes, *options: str) -> bytes:
    """``tmux-send --write PATH`` that must succeed; its stdout."""
    result = bridge.send(*options, "--write", str(path), input=data)
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return result.stdout


def read(bridge: TestPane, path: Path | str) -> bytes:
    """``tmux-send --read PATH`` that must succeed; the bytes it printed."""
    result = bridge.send("--read", str(path))
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return result.stdout


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def backup_dir(home: Path) -> Path:
    """The backup directory of a host whose user has ``home`` (docs/files.md)."""
    return home / ".cache" / "tmux-bridge" / "backups"


def backups_of(home: Path, path: Path | str) -> list[Path]:
    """The backup copies of the file at ``path`` (absolute; its directory resolved) kept
    under ``home``, oldest first, read from the directory's index as docs/files.md
    describes it (ID TIME SHA256 SIZE PATH-in-hex, one line each)."""
    directory = backup_dir(home)
    index = directory / "index"
    if not index.exists():
        return []
    real = Path(path).parent.resolve() / Path(path).name  # as the script records it
    wanted = os.fsencode(str(real)).hex()
    found = []
    for line in index.read_text().splitlines():
        backup, _time, _digest, _size, where = line.split(" ")
        if where == wanted and (directory / backup).exists():
            found.append(directory / backup)
    return found


def diff_u(tmp_path: Path, label: str, before: bytes, after: bytes) -> bytes:
    """What `diff -u` prints for the change, both sides labelled ``label``."""
    old, new = tmp_path.parent / f"{tmp_path.name}.old", tmp_path.parent / f"{tmp_path.name}.new"
    old.write_bytes(before)
    new.write_bytes(after)
    result = subprocess.run(
        ["diff", "-u", "--label", label, "--label", label, str(old), str(new)],
        capture_output=True,
        timeout=30,
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


DASH_NAMES = ["-", "-x", "--", "-n", "--help"]


def check_dash_names(
    bridge: TestPane, directory: Path, owner: str | None = None, home: Path | None = None
) -> None:
    """In ``directory``, the pane's shell there with umask 027: for each name of
    :data:`DASH_NAMES`, a new file of a name that starts with it gets 0640, as `cat >
    NAME` would; an existing file of that name (mode 0604, given to ``owner`` when
    named) is read, edited and written over, keeping its mode and backing the old
    content up (in the backup directory under ``home``, default the bridge's)."""

    def drawn() -> None:  # a far fish draws its prompt after the call's end marker
        bridge.wait_for(lambda: bridge.pane("#{cursor_x}") != "0", "the prompt drawn")

    for name in DASH_NAMES:
        before = backups_of(home or bridge.home, directory / name)  # of an earlier run
        drawn()
        code, document = send_json(bridge, "--write", f"{name}new", data=b"new\n")
        assert code == 0, document
        assert document["file"]["abs_path"] == f"{directory}/{name}new"
        assert stat.S_IMODE((directory / f"{name}new").stat().st_mode) == 0o640  # the umask
        target = directory / name
        target.write_bytes(b"old\n")
        target.chmod(0o604)
        if owner is not None:
            shutil.chown(target, owner, owner)
        drawn()
        assert read(bridge, name) == b"old\n"  # not stdin
        drawn()
        edited = bridge.send("--edit", name, "--old", "old", "--new", "edited")
        assert edited.returncode == 0, edited.stderr
        assert edited.stdout == diff_u(directory, name, b"old\n", b"edited\n")
        drawn()
        write(bridge, name, b"- item\n")  # data that starts with "-" too
        kept = [p for p in backups_of(home or bridge.home, directory / name) if p not in before]
        assert len(kept) == 2, kept
        for path, data in [(target, b"- item\n"), (kept[0], b"old\n"), (kept[1], b"edited\n")]:
            assert (path.read_bytes(), stat.S_IMODE(path.stat().st_mode)) == (data, 0o604)
    expected = [f"{n}{end}" for n in DASH_NAMES for end in ("", "new")]
    assert listing(directory) == sorted(expected)

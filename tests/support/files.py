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


def check_dash_names(bridge: TestPane, directory: Path, owner: str | None = None) -> None:
    """In ``directory``, the pane's shell there with umask 027: for each name of
    :data:`DASH_NAMES`, a new file of a name that starts with it gets 0640, as `cat >
    NAME` would; an existing file of that name (mode 0604, given to ``owner`` when
    named) is read, edited and written over, keeping its mode and backing the old
    content up."""

    def drawn() -> None:  # a far fish draws its prompt after the call's end marker
        bridge.wait_for(lambda: bridge.pane("#{cursor_x}") != "0", "the prompt drawn")

    for name in DASH_NAMES:
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
        for path, data in [(target, b"- item\n"), (directory / f"{name}.~1~", b"old\n"),
                           (directory / f"{name}.~2~", b"edited\n")]:  # fmt: skip
            assert (path.read_bytes(), stat.S_IMODE(path.stat().st_mode)) == (data, 0o604)
    expected = [f"{n}{end}" for n in DASH_NAMES for end in ("", ".~1~", ".~2~", "new")]
    assert listing(directory) == sorted(expected)

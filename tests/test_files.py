"""Files through the pane: the library's write_file, read_file and edit_file against real
shells, and the shell-side script on its own.

Expected bytes, digests and diffs come from the test's own data, hashlib and `diff -u`
run here, never from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tmux_bridge import Bridge as Api
from tmux_bridge import files as files_module
from tmux_bridge import to_document
from tmux_bridge.errors import EditAmbiguous, FileTooLarge
from tmux_bridge.files import SCRIPT

from .conftest import Bridge
from .test_api import target_of

ALL_BYTES = bytes(range(256)) * 4 + b"\r\n\x00\x1b[31mred\x1b[0m\xff\xfe no newline at the end"


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


# --- the library -------------------------------------------------------------------------------


def test_the_library_returns_typed_results(bridge: Bridge, tmp_path: Path) -> None:
    api = Api(target_of(bridge), client="test")
    target = str(tmp_path / "lib.bin")
    written = api.write_file(target, ALL_BYTES)
    assert (written.mode, written.exit_status) == ("write", 0)
    assert written.file is not None
    assert written.file.sha256 == hashlib.sha256(ALL_BYTES).hexdigest()
    assert written.file.size == len(ALL_BYTES)
    read_back = api.read_file(target)
    assert read_back.stdout == ALL_BYTES
    assert to_document(read_back)["file"]["size"] == len(ALL_BYTES)
    edited = api.edit_file(target, "red", "green")
    assert edited.file is not None and edited.file.backup == target + ".~1~"
    assert Path(target).read_bytes() == ALL_BYTES.replace(b"red", b"green")
    with pytest.raises(EditAmbiguous):
        api.edit_file(target, b"\x00", b"")
    log = [json.loads(line) for line in (bridge.runtime / "log.jsonl").read_text().splitlines()]
    assert [entry["mode"] for entry in log] == ["write", "read", "edit", "edit"]
    assert log[0]["file"]["sha256"] == hashlib.sha256(ALL_BYTES).hexdigest()
    assert log[3]["error_code"] == "edit_ambiguous"
    assert bridge.runtime_files() == bridge.between_calls(next(
        path.name for path in bridge.runtime.iterdir() if path.is_dir()
    ))  # fmt: skip


def test_the_size_limit(
    shared_bridge: Bridge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "MAX_FILE_BYTES", 1000)
    api = Api(target_of(shared_bridge), client="test")
    with pytest.raises(FileTooLarge, match="1000 bytes"):
        api.write_file(str(tmp_path / "big"), b"x" * 1001)
    assert listing(tmp_path) == []
    (tmp_path / "big").write_bytes(b"x" * 1001)
    with pytest.raises(FileTooLarge, match="1000 bytes"):
        api.read_file(str(tmp_path / "big"))
    (tmp_path / "fits").write_bytes(b"x" * 1000)
    assert api.read_file(str(tmp_path / "fits")).stdout == b"x" * 1000


# --- the script on its own: each digest tool -----------------------------------------------------

TOOLS = ["cat", "wc", "stat", "mv", "chmod", "rm", "readlink", "sleep"]


@pytest.mark.parametrize("digest", ["sha256sum", "shasum", "openssl", None])
def test_the_script_with_each_digest_tool(tmp_path: Path, digest: str | None) -> None:
    """The script run by /bin/sh directly, with a PATH holding only the tools it uses and
    one digest tool (or none)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in [*TOOLS, *([digest] if digest else [])]:
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"{name} is not installed")
        (tools / name).symlink_to(found)
    work = tmp_path / "work"
    work.mkdir()

    def script(*args: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["/bin/sh", "-c", SCRIPT, "tmux-send-file", *args],
            input=data,
            capture_output=True,
            cwd=work,
            env={"PATH": str(tools)},
            timeout=30,
        )

    digest_hex = hashlib.sha256(ALL_BYTES).hexdigest()
    written = script("write", "f", digest_hex, "1", "-", data=ALL_BYTES)
    if digest is None:
        assert written.returncode == 84, written.stderr
        assert b"no SHA-256 tool" in written.stderr
        assert listing(work) == []
        return
    assert written.returncode == 0, written.stderr
    assert (work / "f").read_bytes() == ALL_BYTES
    header = written.stdout.split(b"\0")
    assert header[:4] == [b"tmux-send-file 1", f"{work}/f".encode(), b"%d" % len(ALL_BYTES),
                          digest_hex.encode()]  # fmt: skip
    wrong = script("write", "f", "0" * 64, "1", "-", data=b"other")
    assert wrong.returncode == 83, wrong.stderr
    changed = script("write", "f", hashlib.sha256(b"x").hexdigest(), "1", "0" * 64, data=b"x")
    assert changed.returncode == 85, changed.stderr
    assert listing(work) == ["f"]
    assert (work / "f").read_bytes() == ALL_BYTES
    got = script("read", "f", "100000")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split(b"\0", 7)[3] == digest_hex.encode()
    assert got.stdout.split(b"\0", 7)[7] == ALL_BYTES

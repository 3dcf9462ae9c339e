"""Files through the pane: tmux-send --write, --read and --edit, and the library's
write_file, read_file and edit_file, against real shells.

Expected bytes, digests and diffs come from the test's own data, hashlib and `diff -u`
run here, never from the code under test.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tmux_bridge import Bridge as Api
from tmux_bridge import to_document
from tmux_bridge.calls import files as files_module
from tmux_bridge.calls.files import SCRIPT
from tmux_bridge.errors import EditAmbiguous, FileTooLarge

from ..support.files import (
    backups_of,
    check_dash_names,
    diff_u,
    listing,
    read,
    send_json,
    write,
)
from ..support.pane import (
    BIN,
    SHELLS,
    TMUX_TIMEOUT,
    MakeBridge,
    TestPane,
    dash_bridge,
    shell_path,
    target_of,
)

ALL_BYTES = bytes(range(256)) * 4 + b"\r\n\x00\x1b[31mred\x1b[0m\xff\xfe no newline at the end"


def snapshot(path: Path) -> tuple[bytes, int, int]:
    """A file's bytes, mode and mtime in nanoseconds: equal only if it was not touched."""
    info = path.stat()
    return path.read_bytes(), info.st_mode, info.st_mtime_ns


def cd(bridge: TestPane, directory: Path) -> None:
    assert bridge.send_text("--", "cd", str(directory))[0] == 0


# --- writing and reading ---------------------------------------------------------------------


def test_every_byte_value_round_trips(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "all.bin"
    write(shared_bridge, target, ALL_BYTES)
    assert target.read_bytes() == ALL_BYTES
    assert read(shared_bridge, target) == ALL_BYTES
    assert listing(tmp_path) == ["all.bin"]


def test_ten_megabytes_round_trip(shared_bridge: TestPane, tmp_path: Path) -> None:
    data = os.urandom(10 * 1024 * 1024)
    target = tmp_path / "big.bin"
    summary = write(shared_bridge, target, data)
    digest = hashlib.sha256(data).hexdigest()
    assert summary == f"wrote {len(data)} bytes to {target} (SHA-256 {digest} checked)\n".encode()
    assert target.read_bytes() == data
    assert read(shared_bridge, target) == data


def test_an_empty_file(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "empty"
    write(shared_bridge, target, b"")
    assert target.read_bytes() == b""
    assert read(shared_bridge, target) == b""


NAMES = ["a b", "new\nline", "ends with newline\n", 'it\'s "q" $HOME * ~', "-dash", "back\\slash"]


def test_names_with_spaces_quotes_and_newlines(bridge: TestPane, tmp_path: Path) -> None:
    cd(bridge, tmp_path)  # relative paths start at the directory of the pane's shell
    for number, name in enumerate(NAMES):
        data = f"{number}: {name}\n".encode()
        code, document = send_json(bridge, "--write", name, data=data)
        assert code == 0, document
        assert (tmp_path / name).read_bytes() == data
        assert document["file"]["path"] == name
        assert document["file"]["abs_path"] == f"{tmp_path}/{name}"
        assert read(bridge, name) == data
    assert listing(tmp_path) == sorted(NAMES)


def test_a_symbolic_link_is_written_through(shared_bridge: TestPane, tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"old\n")
    (tmp_path / "link").symlink_to("real")
    write(shared_bridge, tmp_path / "link", b"new\n")
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "real").read_bytes() == b"new\n"
    (kept,) = backups_of(shared_bridge.home, tmp_path.resolve() / "real")
    assert kept.read_bytes() == b"old\n"


def test_an_existing_file_is_backed_up_first(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    versions = [b"first\x00version\n", b"second\n", b"third"]
    target.write_bytes(versions[0])
    target.chmod(0o640)
    for number, data in enumerate(versions[1:], start=1):
        code, document = send_json(shared_bridge, "--write", str(target), data=data)
        assert code == 0, document
        backup = backups_of(shared_bridge.home, target)[-1]
        assert len(backups_of(shared_bridge.home, target)) == number
        assert document["file"]["backup"] == str(backup)
        assert document["file"]["status"] == "updated"
        assert backup.read_bytes() == versions[number - 1]
        assert target.read_bytes() == data
        # the new file and the backup keep the file's mode
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert stat.S_IMODE(backup.stat().st_mode) == 0o640
        assert document["file"]["mode"] == "0640"
        assert f"the old content is in {backup}" in document["stdout"]
    assert listing(tmp_path) == ["notes.txt"]  # no backup beside the file


def test_no_backup(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old\n")
    code, document = send_json(shared_bridge, "--no-backup", "--write", str(target), data=b"new\n")
    assert code == 0, document
    assert document["file"]["backup"] is None
    assert target.read_bytes() == b"new\n"
    assert listing(tmp_path) == ["notes.txt"]


def test_a_new_file_gets_the_shells_umask(bridge: TestPane, tmp_path: Path) -> None:
    assert bridge.send_text("--", "umask 027")[0] == 0
    write(bridge, tmp_path / "new", b"x")
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o640


# names an argument parser or cat(1) would take for something else: stdin, options
@pytest.mark.parametrize("shell", [*SHELLS, "dash"])
def test_names_that_start_with_a_dash(make_bridge: MakeBridge, shell: str, tmp_path: Path) -> None:
    bridge = dash_bridge(make_bridge) if shell == "dash" else make_bridge(shell)
    bridge.start()
    cd(bridge, tmp_path)
    assert bridge.send_text("--", "umask 027")[0] == 0
    check_dash_names(bridge, tmp_path)


class Missing(NamedTuple):
    test_id: str
    args: tuple[str, ...]
    code: str
    says: str


MISSING = [
    Missing("read-missing", ("--read", "{d}/nope"), "file_not_found", "does not exist"),
    Missing("read-directory", ("--read", "{d}"), "read_failed", "not a regular file"),
    Missing("edit-missing", ("--edit", "{d}/x", "--old", "a", "--new", "b"), "file_not_found", ""),
    Missing("write-no-directory", ("--write", "{d}/no/such"), "file_not_found", "directory"),
    Missing("write-a-directory", ("--write", "{d}"), "write_failed", "not a regular file"),
]  # fmt: skip


@pytest.mark.parametrize("case", MISSING, ids=[c.test_id for c in MISSING])
def test_what_is_not_there(shared_bridge: TestPane, tmp_path: Path, case: Missing) -> None:
    args = [arg.format(d=tmp_path) for arg in case.args]
    code, document = send_json(shared_bridge, *args, data=b"data")
    assert (code, document["error_code"]) == (125, case.code), document
    assert case.says in document["error"]
    assert listing(tmp_path) == []


# --- --read --json ---------------------------------------------------------------------------


def test_read_json_of_a_binary_file(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(ALL_BYTES)
    target.chmod(0o600)
    code, document = send_json(shared_bridge, "--read", str(target))
    assert code == 0, document
    assert document["mode"] == "read"
    assert document["file"] == {
        "path": str(target),
        "abs_path": str(target),
        "size": len(ALL_BYTES),
        "sha256": hashlib.sha256(ALL_BYTES).hexdigest(),
        "mode": "0600",
        "mtime": int(target.stat().st_mtime),
        "backup": None,
        "status": None,
        "md5": None,
    }
    assert base64.b64decode(document["stdout_b64"]) == ALL_BYTES
    assert document["stdout"] is None  # not text: the bytes only in base64


def test_read_json_of_a_text_file(shared_bridge: TestPane, tmp_path: Path) -> None:
    text = "héllo wörld\n\ttabs and ✓ marks\n"
    target = tmp_path / "text.txt"
    target.write_text(text, encoding="utf-8")
    code, document = send_json(shared_bridge, "--read", str(target))
    assert code == 0, document
    assert document["stdout"] == text
    assert "stdout_b64" not in document
    assert document["file"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert document["file"]["size"] == len(text.encode())


# --- --edit ----------------------------------------------------------------------------------

BEFORE = b"alpha\nbeta\ngamma\nbeta\ndelta\nlast line without newline"


def test_edit_without_a_match_leaves_the_file(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(BEFORE)
    before = snapshot(target)
    code, document = send_json(
        shared_bridge, "--edit", str(target), "--old", "epsilon", "--new", "x"
    )
    assert (code, document["error_code"]) == (125, "edit_no_match"), document
    assert "does not occur" in document["error"]
    assert snapshot(target) == before
    assert listing(tmp_path) == ["f.txt"]


def test_edit_with_two_matches_leaves_the_file(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(BEFORE)
    before = snapshot(target)
    code, out, err = shared_bridge.send_text("--edit", str(target), "--old", "beta", "--new", "B")
    assert (code, out) == (125, "")
    assert "occurs 2 times" in err and "lines 2, 4" in err
    assert "--old" in err  # the command line's hint
    assert snapshot(target) == before
    assert listing(tmp_path) == ["f.txt"]


def test_overlapping_matches_count_as_two(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"aaa\n")
    code, document = send_json(shared_bridge, "--edit", str(target), "--old", "aa", "--new", "b")
    assert (code, document["error_code"]) == (125, "edit_ambiguous"), document
    assert target.read_bytes() == b"aaa\n"


EDITS = [
    ("middle-line", "gamma\n", "GAMMA\nand more\n"),
    ("last-line-without-newline", "without newline", "now with a newline\n"),
    ("remove-text", "delta\n", ""),
]


@pytest.mark.parametrize(("old", "new"), [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_edit_with_one_match(shared_bridge: TestPane, tmp_path: Path, old: str, new: str) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(BEFORE)
    after = BEFORE.replace(old.encode(), new.encode())
    result = shared_bridge.send("--edit", str(target), "--old", old, "--new", new)
    assert result.returncode == 0, result.stderr
    assert result.stdout == diff_u(tmp_path, str(target), BEFORE, after)
    assert target.read_bytes() == after
    (backup,) = backups_of(shared_bridge.home, target)
    assert backup.read_bytes() == BEFORE
    assert result.stderr.decode() == f"tmux-send: the old content of {target} is in {backup}\n"


def test_edit_without_backup_in_json(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"x = 1\n")
    code, document = send_json(
        shared_bridge, "--edit", str(target), "--old", "1", "--new", "2", "--no-backup"
    )
    assert code == 0, document
    assert document["stdout"] == diff_u(tmp_path, str(target), b"x = 1\n", b"x = 2\n").decode()
    assert document["file"]["sha256"] == hashlib.sha256(b"x = 2\n").hexdigest()
    assert document["file"]["backup"] is None
    assert listing(tmp_path) == ["f.txt"]


# --- failures leave nothing half-written ------------------------------------------------------


def start_without_dac_override(bridge: TestPane) -> None:
    """Start the bridge so that its pane's shell honours file permissions: as root,
    through a tmux server whose capabilities lack CAP_DAC_OVERRIDE (and
    CAP_DAC_READ_SEARCH), since root would write into a read-only directory."""
    if os.geteuid() != 0:
        bridge.start()
        return
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux)")
    result = subprocess.run(
        [setpriv, "--bounding-set=-dac_override,-dac_read_search", str(BIN / "tmux-bridge"), "-d"],
        env=bridge.env,
        capture_output=True,
        text=True,
        timeout=TMUX_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    bridge.wait_for_prompt()


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """``directory`` with mode 0555 for the block, then writable again (so that the
    fixture can remove it when the tests do not run as root)."""
    directory.chmod(0o555)
    try:
        yield directory
    finally:
        directory.chmod(0o755)


@pytest.mark.parametrize("shell", SHELLS)
def test_a_read_only_directory(make_bridge: Callable[[str], TestPane], shell: str) -> None:
    bridge = make_bridge(shell)
    start_without_dac_override(bridge)
    (bridge.root / "read-only").mkdir()
    (bridge.root / "read-only" / "old.txt").write_bytes(b"old\n")
    with read_only(bridge.root / "read-only") as directory:
        # the premise: the pane's shell may not create files there
        assert bridge.send_text("--", "touch", str(directory / "probe"))[0] != 0
        before = snapshot(directory / "old.txt")
        for name in ("new.txt", "old.txt"):
            code, document = send_json(bridge, "--write", str(directory / name), data=ALL_BYTES)
            assert (code, document["error_code"]) == (125, "write_failed"), document
            assert "Permission denied" in document["error"]
            assert listing(directory) == ["old.txt"]
        assert snapshot(directory / "old.txt") == before
        code, document = send_json(
            bridge, "--edit", str(directory / "old.txt"), "--old", "old", "--new", "new"
        )
        assert (code, document["error_code"]) == (125, "write_failed"), document
        assert listing(directory) == ["old.txt"]
        assert snapshot(directory / "old.txt") == before


def fake_tool(bridge: TestPane, name: str, body: str) -> None:
    """Put a script ``name`` first on the PATH of the pane's shell."""
    tools = bridge.root / "tools"
    tools.mkdir(exist_ok=True)
    (tools / name).write_text("#!/bin/sh\n" + body)
    (tools / name).chmod(0o755)
    if bridge.shell == "fish":
        setting = f"set -gx PATH {tools} $PATH"
    else:
        setting = f"export PATH={tools}:$PATH"
    assert bridge.send_text("--", setting)[0] == 0


def test_a_wrong_digest_on_the_far_side_changes_nothing(bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old\n")
    before = snapshot(target)
    fake_tool(bridge, "sha256sum", f"cat >/dev/null; echo {'0' * 64}  -\n")
    code, document = send_json(bridge, "--write", str(target), data=b"new\n")
    assert (code, document["error_code"]) == (125, "checksum_mismatch"), document
    assert snapshot(target) == before
    assert listing(tmp_path) == ["f.txt"]
    # reading: the digest the far side reports is not that of the bytes that came
    code, document = send_json(bridge, "--read", str(target))
    assert (code, document["error_code"]) == (125, "checksum_mismatch"), document


def test_an_interrupted_write_leaves_no_temporary_file(bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"old\n")
    before = snapshot(target)
    fake_tool(bridge, "sha256sum", "exec sleep 60\n")  # the check never ends
    code, document = send_json(bridge, "--max-time", "2", "--write", str(target), data=b"new\n")
    assert (code, document["timed_out"]) == (124, "overall"), document
    assert document["signals_sent"] == ["SIGINT"]
    assert snapshot(target) == before
    assert listing(tmp_path) == ["f.txt"]


def test_the_person_sees_a_summary(shared_bridge: TestPane, tmp_path: Path) -> None:
    data = os.urandom(1024 * 1024)
    write(shared_bridge, tmp_path / "m.bin", data)
    history = shared_bridge.history()
    assert f"[tmux-send] write {tmp_path}/m.bin ({len(data)} bytes)" in history
    assert f"tmux-send: wrote {len(data)} bytes, SHA-256 " in history
    assert max(len(line) for line in history.split("\n")) < 200
    assert base64.b64encode(data[:30]).decode()[:20] not in history


# --- POSIX sh ----------------------------------------------------------------------------------


def test_in_a_posix_sh_pane(make_bridge: Callable[[str], TestPane], tmp_path: Path) -> None:
    shell_path("dash")
    bridge = make_bridge("dash")
    bridge.env["ENV"] = str(bridge.home / ".shrc")
    (bridge.home / ".shrc").write_text("PS1='$ '\n")
    bridge.start()
    target = tmp_path / "new\nline"
    write(bridge, target, ALL_BYTES)
    assert target.read_bytes() == ALL_BYTES
    assert read(bridge, target) == ALL_BYTES
    result = bridge.send("--edit", str(target), "--old", "red", "--new", "blue")
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == ALL_BYTES.replace(b"red", b"blue")
    assert backups_of(bridge.home, target)[0].read_bytes() == ALL_BYTES


# --- the library -------------------------------------------------------------------------------


def test_the_library_returns_typed_results(bridge: TestPane, tmp_path: Path) -> None:
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
    assert edited.file is not None
    assert edited.file.backup == str(backups_of(bridge.home, target)[-1])
    assert Path(target).read_bytes() == ALL_BYTES.replace(b"red", b"green")
    with pytest.raises(EditAmbiguous):
        api.edit_file(target, b"\x00", b"")
    lines = (bridge.runtime / "log.jsonl").read_text().splitlines()
    log = [e for e in map(json.loads, lines) if e.get("event") != "start"]  # the ends
    assert [entry["mode"] for entry in log] == ["write", "read", "edit", "edit"]
    assert log[0]["file"]["sha256"] == hashlib.sha256(ALL_BYTES).hexdigest()
    assert log[3]["error_code"] == "edit_ambiguous"
    api_dir = next(
        path.name
        for path in bridge.runtime.iterdir()
        if path.is_dir() and path.name != bridge.pane_dir()  # (that one is --detach's)
    )
    assert bridge.runtime_files() == bridge.between_calls(api_dir) | bridge.learnt_at_start()


def test_the_size_limit(
    shared_bridge: TestPane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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

TOOLS = ["cat", "wc", "stat", "mv", "chmod", "rm", "readlink", "sleep", "mktemp", "od", "tr"]


def tools_dir(tmp_path: Path, names: list[str]) -> Path:
    """A directory for PATH holding links to these tools only."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in names:
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"{name} is not installed")
        (tools / name).symlink_to(found)
    return tools


@pytest.mark.parametrize("digest", ["sha256sum", "shasum", "openssl", None])
def test_the_script_with_each_digest_tool(tmp_path: Path, digest: str | None) -> None:
    """The script run by /bin/sh directly, with a PATH holding only the tools it uses and
    one digest tool (or none)."""
    tools = tools_dir(tmp_path, [*TOOLS, *([digest] if digest else [])])
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
    keep = ["30", "1000000", ""]  # the backups kept: days, bytes; no source file
    written = script("write", "f", digest_hex, "1", "-", *keep, data=ALL_BYTES)
    if digest is None:
        assert written.returncode == 84, written.stderr
        assert b"no SHA-256 tool" in written.stderr
        assert listing(work) == []
        return
    assert written.returncode == 0, written.stderr
    assert (work / "f").read_bytes() == ALL_BYTES
    header = written.stdout.split(b"\0")
    assert header[:4] == [b"tmux-send-file 2", f"{work}/f".encode(), b"%d" % len(ALL_BYTES),
                          digest_hex.encode()]  # fmt: skip
    wrong = script("write", "f", "0" * 64, "1", "-", *keep, data=b"other")
    assert wrong.returncode == 83, wrong.stderr
    x_hex = hashlib.sha256(b"x").hexdigest()
    changed = script("write", "f", x_hex, "1", "0" * 64, *keep, data=b"x")
    assert changed.returncode == 85, changed.stderr
    assert listing(work) == ["f"]
    assert (work / "f").read_bytes() == ALL_BYTES
    got = script("read", "f", "100000")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split(b"\0", 9)[3] == digest_hex.encode()
    assert got.stdout.split(b"\0", 9)[9] == ALL_BYTES


WRITERS, WRITES = 6, 8


@pytest.mark.parametrize("sh", ["/bin/sh", "busybox sh", "bash --posix"])
def test_backups_written_at_once_are_all_in_the_index(tmp_path: Path, sh: str) -> None:
    """Writers in several panes at once (each prunes the index after its backup): every
    backup kept is in the index once, none is lost from it, the index is whole lines."""
    argv = sh.split()
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    # each writer writes its own file WRITES times: a backup of each version but the first;
    # nothing is old or large enough to be pruned
    loop = f"""i=0; while [ "$i" -lt "$2" ]; do
        printf "%s %s" "$1" "$i" >"$1.data"
        d=$(sha256sum <"$1.data"); d=${{d%% *}}
        {sh} -c "$3" tmux-send-file write "$1" "$d" 1 - 30 {1 << 30} "" <"$1.data" >/dev/null \\
            || exit 1
        i=$((i + 1))
    done"""
    writers = [
        subprocess.Popen(
            [*argv, "-c", loop, "w", f"f{n}", str(WRITES), SCRIPT],
            cwd=work,
            env=env,
            stderr=subprocess.PIPE,
        )
        for n in range(WRITERS)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode(errors="replace")
    backups = home / ".cache" / "tmux-bridge" / "backups"
    kept = sorted(p.name for p in backups.iterdir() if p.name != "index")
    lines = (backups / "index").read_text().splitlines()
    assert len(kept) == WRITERS * (WRITES - 1), kept
    assert sorted(line.split(" ")[0] for line in lines) == kept
    for line in lines:
        name, _when, _sha, size, path = line.split(" ")
        assert int(size) == (backups / name).stat().st_size
        assert bytes.fromhex(path).decode().startswith(f"{work}/f")


def test_a_backup_index_lock_left_behind_is_taken_over(tmp_path: Path) -> None:
    """The index's lock names a writer that was killed (a process gone), one whose
    process id is in use but whose lock is over a minute old (a pid used again), or one
    still working that lets go soon: the next write takes the lock and records its
    backup, and lets go of it after."""
    home, work = tmp_path / "home", tmp_path / "work"
    backups = home / ".cache" / "tmux-bridge" / "backups"
    backups.mkdir(parents=True)
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    dead = subprocess.Popen(["true"])
    dead.wait()
    holder = subprocess.Popen(["sh", "-c", "read -r _"], stdin=subprocess.PIPE)
    now = int(time.time())
    locks = [f"{dead.pid}-{now}", f"{os.getpid()}-{now - 3600}", f"{holder.pid}-{now}"]
    for n, lock in enumerate(locks):
        (backups / "index.lock").symlink_to(lock)
        (work / "f").write_bytes(b"old %d" % n)
        if lock.startswith(f"{holder.pid}-"):
            threading.Timer(0.3, holder.communicate, [b"done\n"]).start()
        new = b"new %d" % n
        written = subprocess.run(
            ["/bin/sh", "-c", SCRIPT, "tmux-send-file", "write", "f",
             hashlib.sha256(new).hexdigest(), "1", "-", "30", "1000000", ""],
            input=new, capture_output=True, cwd=work, env=env, timeout=30,
        )  # fmt: skip
        assert written.returncode == 0, written.stderr
        assert b"locked" not in written.stderr, lock
        assert not (backups / "index.lock").is_symlink()  # let go after it
        lines = (backups / "index").read_text().splitlines()
        assert len(lines) == n + 1
        assert (backups / lines[-1].split(" ")[0]).read_bytes() == b"old %d" % n


def test_the_script_without_mktemp(tmp_path: Path) -> None:
    """No mktemp on the pane's side: a write refuses (no temporary file of a name of its
    own), nothing is touched; a read needs no temporary file."""
    tools = tools_dir(tmp_path, [t for t in TOOLS if t != "mktemp"] + ["sha256sum"])
    work = tmp_path / "work"
    work.mkdir()
    (work / "f").write_bytes(b"old\n")
    env = {"PATH": str(tools)}
    digest = hashlib.sha256(b"new\n").hexdigest()
    written = subprocess.run(
        ["/bin/sh", "-c", SCRIPT, "tmux-send-file", "write", "f", digest, "1", "-", "1", "1", ""],
        input=b"new\n", capture_output=True, cwd=work, env=env, timeout=30,
    )  # fmt: skip
    assert (written.returncode, written.stderr) == (
        80,
        b"tmux-send: no mktemp here to make the new file with\n",
    )
    assert listing(work) == ["f"] and (work / "f").read_bytes() == b"old\n"
    got = subprocess.run(
        ["/bin/sh", "-c", SCRIPT, "tmux-send-file", "read", "f", "100"],
        capture_output=True, cwd=work, env=env, timeout=30,
    )  # fmt: skip
    assert got.returncode == 0 and got.stdout.endswith(b"\0old\n"), got.stderr


# --- the command line --------------------------------------------------------------------------


class Usage(NamedTuple):
    test_id: str
    args: tuple[str, ...]
    says: str


USAGE = [
    Usage("write-and-read", ("--write", "a", "--read", "b"), "do not go together"),
    Usage("read-and-command", ("--read", "a", "--", "ls"), "takes no COMMAND"),
    Usage("edit-and-keys", ("--edit", "a", "--old", "x", "--new", "y", "--keys"), "go together"),
    Usage("edit-without-old", ("--edit", "a", "--new", "y"), "needs --old"),
    Usage("line-and-old", ("--edit", "a", "--line", "1", "--old", "x", "--new", "y"), "needs one"),
    Usage("line-alone", ("--edit", "a", "--line", "1"), "needs one of --new"),
    Usage("insert-without-line", ("--edit", "a", "--insert", "x"), "go with --line"),
    Usage("append-and-line", ("--edit", "a", "--append", "x", "--line", "2"), "goes alone"),
    Usage("line-without-edit", ("--read", "a", "--line", "1"), "go with --edit"),
    Usage("guard-with-read", ("--read", "a", "--if-sha256", "0" * 64), "goes with --write"),
    Usage("backup-without-restore", ("--read", "a", "--backup", "x"), "goes with --restore"),
    Usage("backups-two-paths", ("--backups", "a", "b"), "at most one PATH"),
    Usage("stat-and-read", ("--stat", "a", "--read", "b"), "do not go together"),
    Usage("edit-without-new", ("--edit", "a", "--old", "x"), "needs --old TEXT and --new"),
    Usage("old-without-edit", ("--read", "a", "--old", "x"), "go with --edit"),
    Usage("no-backup-with-read", ("--read", "a", "--no-backup"), "goes with --write or --edit"),
    Usage("repl-and-write", ("--repl", "python", "--write", "a", "--", "x"), "go together"),
]


@pytest.mark.parametrize("case", USAGE, ids=[c.test_id for c in USAGE])
def test_usage_errors(tmp_path: Path, case: Usage) -> None:
    env = {**os.environ, "TMUX_TMPDIR": str(tmp_path), "TMUX_BRIDGE_DIR": str(tmp_path / "run")}
    env["TMUX_BRIDGE_SESSION"] = "tb-test-no-such-session"
    result = subprocess.run(
        [str(BIN / "tmux-send"), *case.args],
        input=b"",
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert result.returncode == 2, result.stderr
    assert case.says in result.stderr.decode()
    assert not (tmp_path / "run").exists()  # nothing was tried

"""Files kept safe: a write of the same bytes changes nothing, backups go to one
directory per host and come back with --restore, --stat gives a file's facts without
its content, --if-sha256 guards every change, and --edit --line/--append.

Expected bytes, digests and diffs come from the test's own data, hashlib, os.stat and
`diff -u` run here, never from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from tmux_bridge import Bridge as Api
from tmux_bridge.calls import files as files_module
from tmux_bridge.results import LineEdit

from ..support.files import backup_dir, backups_of, diff_u, listing, send_json, write
from ..support.pane import TestPane, target_of


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- idempotent writes ---------------------------------------------------------------------


def test_a_write_of_the_same_bytes_changes_nothing(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "same.txt"
    code, created = send_json(shared_bridge, "--write", str(target), data=b"one\n")
    assert (code, created["file"]["status"], created["file"]["backup"]) == (0, "created", None)
    target.chmod(0o640)
    before = target.stat()
    code, same = send_json(shared_bridge, "--write", str(target), data=b"one\n")
    assert code == 0, same
    assert (same["file"]["status"], same["file"]["backup"]) == ("unchanged", None)
    assert same["file"]["sha256"] == sha(b"one\n")
    after = target.stat()
    # not rewritten: the same inode, mtime and mode
    assert (after.st_ino, after.st_mtime_ns, after.st_mode) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_mode,
    )
    assert backups_of(shared_bridge.home, target) == []
    assert same["stdout"].startswith(f"unchanged: {target} already holds these 4 bytes")
    code, updated = send_json(shared_bridge, "--write", str(target), data=b"two\n")
    assert (code, updated["file"]["status"]) == (0, "updated")
    assert listing(tmp_path) == ["same.txt"]


# --- backups and restore -------------------------------------------------------------------


def test_backups_are_listed_and_restored(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "v.txt"
    versions = [b"v1\n", b"v2\n", b"v3\n"]
    target.write_bytes(versions[0])
    target.chmod(0o604)
    for data in versions[1:]:
        write(shared_bridge, target, data)
    code, listed = send_json(shared_bridge, "--backups", str(target))
    assert code == 0, listed
    assert [(e["path"], e["sha256"], e["size"]) for e in listed["backups"]] == [
        (str(target), sha(v), len(v)) for v in versions[:2]
    ]
    on_disk = backups_of(shared_bridge.home, target)
    assert [e["id"] for e in listed["backups"]] == [p.name for p in on_disk]
    assert all(e["directory"] == str(backup_dir(shared_bridge.home)) for e in listed["backups"])
    text = shared_bridge.send("--backups", str(target))
    assert text.returncode == 0 and text.stdout.decode().count(str(target)) == 2
    # the newest backup back: v2; v3 is backed up first, so the restore can be undone
    code, restored = send_json(shared_bridge, "--restore", str(target))
    assert code == 0, restored
    assert target.read_bytes() == versions[1]
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert (restored["mode"], restored["file"]["status"]) == ("restore", "updated")
    assert Path(restored["file"]["backup"]).read_bytes() == versions[2]
    assert on_disk[1].name in restored["stdout"]
    # an older one by its id
    code, first = send_json(
        shared_bridge, "--restore", str(target), "--backup", listed["backups"][0]["id"]
    )
    assert code == 0, first
    assert target.read_bytes() == versions[0]
    # and undone: the newest backup is now what the last restore replaced
    code, undone = send_json(shared_bridge, "--restore", str(target))
    assert (code, target.read_bytes()) == (0, versions[1]), undone
    code, again = send_json(shared_bridge, "--restore", str(target), "--backup", on_disk[1].name)
    assert (code, again["file"]["status"]) == (0, "unchanged"), again
    assert listing(tmp_path) == ["v.txt"]


def test_restore_refusals(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "none.txt"
    target.write_bytes(b"x\n")
    result = shared_bridge.send("--json", "--restore", str(target))
    document = json.loads(result.stdout)
    assert (result.returncode, document["error_code"]) == (125, "backup_not_found")
    assert "--backups" in " ".join(document["notes"]) + document["error"]
    result = shared_bridge.send("--json", "--restore", str(target), "--backup", "0-nosuch")
    assert json.loads(result.stdout)["error_code"] == "backup_not_found"
    assert target.read_bytes() == b"x\n"
    code, listed = send_json(shared_bridge, "--backups", str(target))
    assert (code, listed["backups"]) == (0, [])


def test_a_deleted_file_comes_back_with_its_mode(bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "gone.sh"
    target.write_bytes(b"#!/bin/sh\necho 1\n")
    target.chmod(0o750)
    write(bridge, target, b"#!/bin/sh\necho 2\n")
    target.unlink()
    code, restored = send_json(bridge, "--restore", str(target))
    assert (code, restored["file"]["status"]) == (0, "created"), restored
    assert target.read_bytes() == b"#!/bin/sh\necho 1\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_old_backups_are_pruned(bridge: TestPane, tmp_path: Path) -> None:
    """A backup older than the age kept (seeded in the index with a time of 1000) goes
    when the next backup is made; one of another file within the age stays."""
    directory = backup_dir(bridge.home)
    target, other = tmp_path / "p.txt", tmp_path / "other.txt"
    target.write_bytes(b"0\n")
    other.write_bytes(b"o1\n")
    write(bridge, other, b"o2\n")  # makes the directory and its index
    (kept,) = backups_of(bridge.home, other)
    old = directory / "1000-seeded"
    old.write_bytes(b"ancient\n")
    with (directory / "index").open("a") as index:
        hexpath = os.fsencode(str(target.parent.resolve() / target.name)).hex()
        digest = sha(b"ancient\n")
        index.write(f"1000-seeded 1000 {digest} 8 {hexpath}\n")
    assert backups_of(bridge.home, target) == [old]
    write(bridge, target, b"1\n")
    assert not old.exists()
    assert [p.read_bytes() for p in backups_of(bridge.home, target)] == [b"0\n"]
    assert kept.exists() and backups_of(bridge.home, other) == [kept]
    assert "1000-seeded" not in (directory / "index").read_text()


def test_backups_are_pruned_to_a_total_size(
    bridge: TestPane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With at most 100 bytes kept, the oldest backups go first; the newest stays even
    when it alone is larger."""
    monkeypatch.setattr(files_module, "BACKUP_BYTES", 100)
    api = Api(target_of(bridge), client="test")
    target = tmp_path / "s.bin"
    sizes = [60, 30, 20, 200, 5]
    target.write_bytes(b"a" * 50)
    for number, size in enumerate(sizes):
        assert api.write_file(str(target), bytes([65 + number]) * size).exit_status == 0
    kept = [p.read_bytes() for p in backups_of(bridge.home, target)]
    # backups in order: 50 a, 60 A, 30 B, 20 C, 200 D; the 200 bytes alone stay
    assert kept == [b"D" * 200]
    assert sorted(os.listdir(backup_dir(bridge.home))) == sorted(
        ["index", *(p.name for p in backups_of(bridge.home, target))]
    )


# --- stat ----------------------------------------------------------------------------------


def test_stat_gives_the_facts(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "facts.bin"
    data = bytes(range(256)) * 40
    target.write_bytes(data)
    target.chmod(0o612)
    code, document = send_json(shared_bridge, "--stat", str(target))
    assert code == 0, document
    info = target.stat()
    assert document["mode"] == "stat"
    assert document["file"] == {
        "path": str(target),
        "abs_path": str(target),
        "size": len(data),
        "sha256": sha(data),
        "mode": "0612",
        "mtime": int(info.st_mtime),
        "backup": None,
        "status": None,
        "md5": hashlib.md5(data).hexdigest(),
    }
    assert "stdout_b64" not in document  # the content did not come back
    text = shared_bridge.send("--stat", str(target))
    assert text.returncode == 0
    assert f"sha256: {sha(data)}\n".encode() in text.stdout
    assert f"md5: {hashlib.md5(data).hexdigest()}\n".encode() in text.stdout
    missing = shared_bridge.send("--json", "--stat", str(tmp_path / "nope"))
    assert (missing.returncode, json.loads(missing.stdout)["error_code"]) == (
        125,
        "file_not_found",
    )


# --- --if-sha256 ---------------------------------------------------------------------------


def test_if_sha256_guards_every_change(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "g.txt"
    target.write_bytes(b"seen\n")
    write(shared_bridge, target, b"now\n")  # a backup, for --restore
    stale = sha(b"seen\n")
    for args in (
        ("--write", str(target)),
        ("--edit", str(target), "--old", "now", "--new", "later"),
        ("--edit", str(target), "--line", "1", "--delete"),
        ("--edit", str(target), "--append", "more\n"),
        ("--restore", str(target)),
    ):
        result = shared_bridge.send("--json", "--if-sha256", stale, *args, input=b"new\n")
        document = json.loads(result.stdout)
        assert (result.returncode, document["error_code"]) == (125, "file_changed"), args
        assert target.read_bytes() == b"now\n"
    assert len(backups_of(shared_bridge.home, target)) == 1
    current = sha(b"now\n").upper()  # any case
    code, document = send_json(
        shared_bridge, "--if-sha256", current, "--write", str(target), data=b"new\n"
    )
    assert (code, target.read_bytes()) == (0, b"new\n"), document
    bad = shared_bridge.send("--json", "--if-sha256", "xyz", "--write", str(target), input=b"")
    assert json.loads(bad.stdout)["error_code"] == "invalid_request"
    assert target.read_bytes() == b"new\n"


# --- line edits ----------------------------------------------------------------------------

TEXT = b"one\ntwo\nthree\nfour"  # no line end at the end

LINE_EDITS = [
    ("replace-2", ("--line", "2", "--new", "TWO"), b"one\nTWO\nthree\nfour"),
    ("replace-last", ("--line", "4", "--new", "FOUR"), b"one\ntwo\nthree\nFOUR"),
    ("insert-1", ("--line", "1", "--insert", "zero"), b"zero\none\ntwo\nthree\nfour"),
    ("insert-end", ("--line", "5", "--insert", "five"), b"one\ntwo\nthree\nfour\nfive\n"),
    ("insert-lines", ("--line", "3", "--insert", "a\nb\n"), b"one\ntwo\na\nb\nthree\nfour"),
    ("delete-1", ("--line", "1", "--delete"), b"two\nthree\nfour"),
    ("delete-last", ("--line", "4", "--delete"), b"one\ntwo\nthree\n"),
    ("append", ("--append", "!\n"), b"one\ntwo\nthree\nfour!\n"),
]


@pytest.mark.parametrize(
    ("args", "after"), [e[1:] for e in LINE_EDITS], ids=[e[0] for e in LINE_EDITS]
)
def test_line_edits(
    shared_bridge: TestPane, tmp_path: Path, args: tuple[str, ...], after: bytes
) -> None:
    target = tmp_path / "l.txt"
    target.write_bytes(TEXT)
    result = shared_bridge.send("--edit", str(target), *args)
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == after
    assert result.stdout == diff_u(tmp_path, str(target), TEXT, after)
    (backup,) = backups_of(shared_bridge.home, target)
    assert backup.read_bytes() == TEXT


def test_a_line_the_file_does_not_have(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "short.txt"
    target.write_bytes(b"a\nb\n")
    for args in (("--line", "3", "--new", "x"), ("--line", "3", "--delete"),
                 ("--line", "4", "--insert", "x")):  # fmt: skip
        result = shared_bridge.send("--json", "--edit", str(target), *args)
        document = json.loads(result.stdout)
        assert (result.returncode, document["error_code"]) == (125, "edit_no_line"), args
        assert "2 lines" in document["error"]
    assert target.read_bytes() == b"a\nb\n"
    assert backups_of(shared_bridge.home, target) == []


def test_the_library(bridge: TestPane, tmp_path: Path) -> None:
    api = Api(target_of(bridge), client="test")
    target = str(tmp_path / "lib.txt")
    assert api.write_file(target, b"a\nb\n").file is not None
    edited = api.edit_lines(target, LineEdit("insert", 2, b"between"))
    assert Path(target).read_bytes() == b"a\nbetween\nb\n"
    assert edited.file is not None and edited.file.status == "updated"
    facts = api.stat_file(target).file
    assert facts is not None and facts.md5 == hashlib.md5(b"a\nbetween\nb\n").hexdigest()
    listed = api.list_backups(target).backups
    assert listed is not None and [e.sha256 for e in listed] == [sha(b"a\nb\n")]
    assert api.restore_file(target).exit_status == 0
    assert Path(target).read_bytes() == b"a\nb\n"
    everything = api.list_backups().backups
    assert everything is not None and len(everything) == 2
    lines = (bridge.runtime / "log.jsonl").read_text().splitlines()
    modes = [e["mode"] for e in map(json.loads, lines) if e.get("event") != "start"]
    assert modes == ["write", "edit", "stat", "backups", "restore", "backups"]

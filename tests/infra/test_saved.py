"""Saved streams (infra/saved.py): private files, pruned by age and by total size
(oldest first), written as they come once a cut is certain, read back in pages only
from the output folder. No tmux: files only."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

import pytest

from tmux_bridge.errors import InvalidRequest, NoSavedOutput
from tmux_bridge.infra.saved import FittedStream, prune, read_page, resolve, save
from tmux_bridge.text.fit import Limits


def test_saved_streams_are_private_and_old_ones_go(tmp_path: Path) -> None:
    runtime = str(tmp_path / "run")
    old = save(runtime, "old", "stdout", b"old")
    os.utime(old, (time.time() - 25 * 3600,) * 2)
    recent = save(runtime, "recent", "stdout", b"recent")
    os.utime(recent, (time.time() - 23 * 3600,) * 2)
    new = save(runtime, "new", "stderr", b"new")
    assert not os.path.exists(old) and os.path.exists(recent) and os.path.exists(new)
    assert stat.S_IMODE(os.stat(os.path.dirname(new)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600
    assert os.path.dirname(new) == os.path.join(runtime, "output")


def test_the_oldest_go_first_past_the_total_size(tmp_path: Path) -> None:
    runtime = str(tmp_path / "run")
    paths = []
    for index in range(5):  # 1000 bytes each, a minute apart
        path = save(runtime, f"c{index}", "stdout", b"x" * 1000)
        os.utime(path, (time.time() - 600 + 60 * index,) * 2)
        paths.append(path)
    prune(os.path.dirname(paths[0]), max_total=2500)
    assert [os.path.exists(p) for p in paths] == [False, False, False, True, True]


def test_a_stream_is_saved_whole_as_it_comes_and_named_by_the_call(tmp_path: Path) -> None:
    shown: list[bytes] = []
    data = b"".join(b"line %d\n" % i for i in range(300_000))  # 3.8 MB
    stream = FittedStream(str(tmp_path / "run"), "stdout", Limits(3, 2), shown.append)
    for start in range(0, len(data), 4096):
        stream(data[start : start + 4096])
        assert len(stream.stream.ring) + sum(map(len, stream.early)) < 200 * 1024  # bounded
    fitted, path = stream.finish("c0ffee0000")
    assert path == str(tmp_path / "run" / "output" / "c0ffee0000.stdout")
    assert hashlib.sha256(Path(path).read_bytes()).digest() == hashlib.sha256(data).digest()
    assert b"".join(shown) == (
        b"line 0\nline 1\nline 2\n"
        + b"[tmux-send: 299,995 lines (" + f"{len(data) - 21 - 24:,}".encode()
        + b" bytes) of stdout not shown (truncated); all of it is in " + path.encode() + b"]\n"
        + b"line 299998\nline 299999\n"  # 7 * 3 = 21 bytes of head, 12 * 2 = 24 of tail
    )  # fmt: skip
    assert (fitted.lines, fitted.bytes) == (300_000, len(data))


def test_nothing_is_saved_when_nothing_is_cut(tmp_path: Path) -> None:
    shown: list[bytes] = []
    stream = FittedStream(str(tmp_path / "run"), "stderr", Limits(max_bytes=100), shown.append)
    stream(b"a" * 60)
    stream(b"b" * 40)
    assert stream.finish("id0") == (stream.stream.finish(), None)
    assert b"".join(shown) == b"a" * 60 + b"b" * 40
    assert not (tmp_path / "run" / "output").exists()


def test_pages_by_lines(tmp_path: Path) -> None:
    runtime = str(tmp_path / "run")
    path = save(runtime, "abc123", "stdout", b"".join(b"%d\n" % i for i in range(10)) + b"end")
    page = read_page(runtime, "abc123", 3, 4)
    assert (page.data, page.offset, page.lines, page.total_lines, page.more) == (
        b"3\n4\n5\n6\n", 3, 4, 11, True,
    )  # fmt: skip
    last = read_page(runtime, path, 8, 100)
    assert (last.data, last.more, last.total_bytes) == (b"8\n9\nend", False, 23)


def test_only_files_of_the_output_folder_are_read(tmp_path: Path) -> None:
    runtime = str(tmp_path / "run")
    save(runtime, "abc", "stderr", b"e")
    assert resolve(runtime, "abc.stderr").endswith("/output/abc.stderr")
    (tmp_path / "secret").write_text("no")
    for outside in (str(tmp_path / "secret"), f"{runtime}/output/../../secret", "/etc/passwd"):
        with pytest.raises(InvalidRequest, match="not a saved output"):
            resolve(runtime, outside)
    for bad in ("../x", "abc.txt", "a b"):
        with pytest.raises(InvalidRequest):
            resolve(runtime, bad)
    os.symlink(tmp_path / "secret", Path(runtime) / "output" / "link.stdout")
    with pytest.raises(InvalidRequest):
        resolve(runtime, "link")  # a symlink out of the folder is refused too
    with pytest.raises(NoSavedOutput):
        resolve(runtime, "abc")  # its stdout was never saved


def test_a_stream_that_cannot_be_saved_is_still_cut_and_says_so(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.write_text("a file where the runtime directory should be")
    shown: list[bytes] = []
    stream = FittedStream(str(runtime), "stdout", Limits(1, 1), shown.append)
    for i in range(100_000):
        stream(b"%d\n" % i)
    assert sum(map(len, stream.early)) == 0 and stream.failed  # nothing piles up
    fitted, path = stream.finish("id1")
    assert path is None
    assert b"".join(shown) == (
        b"0\n[tmux-send: 99,998 lines (" + f"{fitted.cut_bytes:,}".encode()
        + b" bytes) of stdout not shown (truncated); it could not be saved]\n99999\n"
    )  # fmt: skip

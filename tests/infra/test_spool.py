"""The spool of a job's output: bounded appends, reads that never cut a UTF-8 character,
and the job document's text and base64."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tmux_bridge.infra.spool import SpoolWriter, read_span, spool_size, utf8_end
from tmux_bridge.results import JobResult


@pytest.mark.parametrize(
    ("data", "end"),
    [
        (b"", 0),
        (b"abc", 3),
        ("é".encode(), 2),
        ("é".encode()[:1], 0),
        (b"a" + "€".encode()[:2], 1),
        (b"a" + "€".encode(), 4),
        (b"a" + "😀".encode()[:3], 1),
        ("😀".encode(), 4),
        (b"\xff\xfe", 2),  # no UTF-8 at all: nothing is held back
        (b"ab\x80", 3),  # a stray continuation byte: passed on
    ],
)
def test_a_read_ends_on_a_whole_character(data: bytes, end: int) -> None:
    assert utf8_end(data) == end
    assert data[: utf8_end(data)] + data[utf8_end(data) :] == data


def test_the_spool_keeps_the_budget_and_counts_the_rest(tmp_path: Path) -> None:
    budget = [10]
    out = SpoolWriter(str(tmp_path / "stdout"), budget)
    err = SpoolWriter(str(tmp_path / "stderr"), budget)
    out(b"123456")
    err(b"abcdef")
    out(b"xyz")
    out.close()
    err.close()
    assert (tmp_path / "stdout").read_bytes() == b"123456"
    assert (tmp_path / "stderr").read_bytes() == b"abcd"
    assert (out.dropped, err.dropped) == (3, 2)
    assert stat.S_IMODE((tmp_path / "stdout").stat().st_mode) == 0o600
    assert spool_size(str(tmp_path / "stdout")) == 6
    assert read_span(str(tmp_path / "stdout"), 2, 5) == b"345"
    assert spool_size(str(tmp_path / "missing")) == 0


def test_the_spool_is_created_exclusively(tmp_path: Path) -> None:
    (tmp_path / "stdout").write_bytes(b"old")
    with pytest.raises(FileExistsError):
        SpoolWriter(str(tmp_path / "stdout"), [10])


def test_the_job_document() -> None:
    fields = ("0123456789", "%1", "s:0.0", "make", "exited", 2)
    job = JobResult(*fields, b"ok\n", b"\xff", 3, 1, 0.0, 1.0)
    document = job.document(["a note"])
    assert document["stdout"] == "ok\n" and "stdout_b64" not in document
    assert document["stderr"] == "\ufffd" and document["stderr_b64"] == "/w=="
    assert (document["state"], document["exit_status"]) == ("exited", 2)
    assert document["dropped_bytes"] == 0
    assert document["notes"] == ["a note"]
    assert job.exit_code == 2
    assert job._replace(state="running", exit_status=None).exit_code == 0
    assert job._replace(state="lost", exit_status=None).exit_code == 125
    assert job._replace(timed_out="idle").exit_code == 124

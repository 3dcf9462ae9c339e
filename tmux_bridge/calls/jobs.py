"""The job store: each job's state and spooled output in the runtime directory.

A job lives in ``<runtime dir>/jobs/<id>/`` (0700): ``job.json`` (its state, replaced
atomically by the keeper, :mod:`tmux_bridge.calls.keeper`), ``stdout`` and ``stderr``
(the spool, 0600, appended by the keeper), and ``cursor`` (how far ``read`` has handed
each stream out, replaced under the flock of ``read.lock`` so two readers never hand out
the same byte twice). The pane a job runs in has a file ``job`` in its own directory
naming it, so another call is refused (``pane_busy``) instead of waiting for the lock
the keeper holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from ..errors import BridgeError, InvalidRequest, NoSuchJob, PaneBusy
from ..infra.process import proc
from ..infra.runtime import atomic_write, check_private_dir, ensure_private_dir, remove_quietly
from ..infra.spool import read_span, spool_size, utf8_end
from ..pane.records import PaneDir
from ..results import JobResult
from ..tuples import NamedTuple

JOBS = "jobs"
STATE = "job.json"
PANE_JOB = "job"  # in a pane's directory: the job that holds the pane
KEEP_ENDED = 24 * 3600.0  # seconds a job is kept once it ended and was read
STATES = ("running", "exited", "interrupted", "lost")


class JobRecord(NamedTuple):
    """A job as ``job.json`` holds it. Times are ``time.time()`` values; ``keeper`` the
    keeper's pid and ``keeper_start`` its start (clock ticks after boot), to tell it
    from a later process with the same pid."""

    job: str
    pane: str
    target: str
    command: str
    state: str
    exit_status: int | None
    started: float
    ended: float | None
    keeper: int
    keeper_start: int
    dropped_bytes: int = 0
    notes: tuple[str, ...] = ()
    read_after_end: float | None = None  # when a read first handed out the end

    @property
    def running(self) -> bool:
        return self.state == "running"


def jobs_root(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, JOBS)


def job_dir(runtime_dir: str, job_id: str) -> str:
    """The directory of job ``job_id``; :class:`InvalidRequest` for an id that is no
    job id (ten hex digits), :class:`RuntimeDirError` when the runtime directory or its
    ``jobs`` is not our own 0700 directory (nothing in it is read then)."""
    if not (len(job_id) == 10 and all(c in "0123456789abcdef" for c in job_id)):
        raise InvalidRequest(
            f"{job_id!r} is no job id: a job id is ten hex digits, as starting the job "
            "printed it. List the jobs to find it."
        )
    _check_root(runtime_dir)
    return os.path.join(jobs_root(runtime_dir), job_id)


def _check_root(runtime_dir: str) -> None:
    check_private_dir(runtime_dir)
    if os.path.lexists(jobs_root(runtime_dir)):
        check_private_dir(jobs_root(runtime_dir))


def create(runtime_dir: str, record: JobRecord) -> str:
    """Make the job's directory and its first state; returns the directory."""
    ensure_private_dir(runtime_dir)
    ensure_private_dir(jobs_root(runtime_dir))
    path = job_dir(runtime_dir, record.job)
    os.mkdir(path, 0o700)
    write(path, record)
    return path


def write(path: str, record: JobRecord) -> None:
    document = record._asdict()
    document["notes"] = list(record.notes)
    atomic_write(os.path.join(path, STATE), json.dumps(document).encode())


def load(path: str, job_id: str) -> JobRecord:
    """The job's state as stored; :class:`NoSuchJob` when there is none."""
    try:
        with open(os.path.join(path, STATE), encoding="utf-8") as f:
            data: dict[str, Any] = json.load(f)
        data["notes"] = tuple(data.get("notes") or ())
        return JobRecord(**data)
    except (OSError, ValueError, TypeError) as exc:
        raise NoSuchJob(
            f"no job {job_id} is known in this runtime directory (it never ran here, or "
            "it ended and was removed a day after it was read). List the jobs to see "
            "those that are."
        ) from exc


def keeper_alive(record: JobRecord) -> bool:
    stat = proc.proc_stat(record.keeper)
    return stat is not None and stat.start == record.keeper_start and stat.state != "Z"


def current(path: str, record: JobRecord) -> JobRecord:
    """``record``, or, for a running job whose keeper is gone (killed), the job as
    ``lost`` (stored so)."""
    if not record.running or keeper_alive(record):
        return record
    again = load(path, record.job)  # it may have written its end meanwhile
    if not again.running:
        return again
    lost = again._replace(
        state="lost",
        ended=time.time(),
        notes=(*again.notes, f"The job's keeper (pid {again.keeper}) ended without its end."),
    )
    write(path, lost)
    return lost


def read(runtime_dir: str, job_id: str, from_start: bool) -> JobResult:
    """The job now, with what it printed since the last read (``from_start``: all of
    it, the cursor left alone). Reads under the job's read lock: two readers never get
    the same bytes, and together they get every byte once."""
    path = job_dir(runtime_dir, job_id)
    record = current(path, load(path, job_id))
    with _read_lock(path):
        cursor = (0, 0) if from_start else _cursor(path)
        out, err = (
            _new_bytes(os.path.join(path, name), at, record.running)
            for name, at in zip(("stdout", "stderr"), cursor, strict=True)
        )
        if not from_start:
            _save_cursor(path, (cursor[0] + len(out), cursor[1] + len(err)))
    if not record.running and record.read_after_end is None:
        record = record._replace(read_after_end=time.time())
        write(path, record)
    return result_of(path, record, out, err)


def peek(runtime_dir: str, job_id: str) -> JobResult:
    """The job now, reading nothing."""
    path = job_dir(runtime_dir, job_id)
    return result_of(path, current(path, load(path, job_id)), b"", b"")


def unread(runtime_dir: str, job_id: str) -> tuple[int, int]:
    """How many bytes of each stream no read has handed out yet."""
    path = job_dir(runtime_dir, job_id)
    cursor = _cursor(path)
    sizes = (spool_size(os.path.join(path, n)) for n in ("stdout", "stderr"))
    out, err = (size - at for size, at in zip(sizes, cursor, strict=True))
    return out, err


def result_of(path: str, record: JobRecord, out: bytes, err: bytes) -> JobResult:
    return JobResult(
        job=record.job,
        pane=record.pane,
        target=record.target,
        command=record.command,
        state=record.state,
        exit_status=record.exit_status,
        stdout=out,
        stderr=err,
        stdout_bytes=spool_size(os.path.join(path, "stdout")),
        stderr_bytes=spool_size(os.path.join(path, "stderr")),
        started=record.started,
        ended=record.ended,
        dropped_bytes=record.dropped_bytes,
        notes=record.notes,
    )


def listing(runtime_dir: str) -> list[JobResult]:
    """Every job of the runtime directory, oldest first; ended jobs read more than a
    day ago are removed first."""
    _check_root(runtime_dir)
    root = jobs_root(runtime_dir)
    found = []
    for path, job_id in _job_dirs(root):
        try:
            record = current(path, load(path, job_id))
        except NoSuchJob:
            continue
        if _expired(record):
            _remove(path)
            continue
        found.append(result_of(path, record, b"", b""))
    return sorted(found, key=lambda job: job.started)


def job_events(before: dict[str, JobResult], now: list[JobResult]) -> list[dict[str, Any]]:
    """What happened to the jobs between two listings (``before``: id -> job):
    ``job-started`` for a job not listed before, ``job-ended`` for one that was running
    and is not now (a job that started and ended in between gets both). Each event
    carries the job document (no output: read it with a job read)."""
    events: list[dict[str, Any]] = []
    for job in now:
        prior = before.get(job.job)
        if prior is None:
            events.append({"type": "job-started", "job": job.document()})
        if job.state != "running" and (prior is None or prior.state == "running"):
            events.append({"type": "job-ended", "job": job.document()})
    return events


def pane_job(records: PaneDir) -> JobRecord | None:
    """The running job that holds the pane, if any."""
    try:
        with open(records.file(PANE_JOB), encoding="ascii") as f:
            job_id = f.read().strip()
        path = job_dir(records.root, job_id)
        record = current(path, load(path, job_id))
    except (OSError, ValueError, BridgeError):
        return None
    return record if record.running else None


def refuse_if_job(records: PaneDir) -> None:
    """Raise :class:`PaneBusy` naming the job when a job runs in the pane."""
    record = pane_job(records)
    if record is not None:
        raise PaneBusy(
            f"job {record.job} runs in this pane ({record.command[:80]!r}); nothing was "
            "typed. Use another pane (split one off), wait for the job or kill it."
        )


def claim_pane(records: PaneDir, job_id: str) -> None:
    atomic_write(records.file(PANE_JOB), job_id.encode())


def release_pane(records: PaneDir) -> None:
    remove_quietly(records.file(PANE_JOB))


# --- the read cursor -------------------------------------------------------------------


class _read_lock:  # a context manager used like a function
    def __init__(self, path: str) -> None:
        self.path = os.path.join(path, "read.lock")

    def __enter__(self) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(self.path, flags, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *_exc: object) -> None:
        os.close(self.fd)


def _cursor(path: str) -> tuple[int, int]:
    try:
        with open(os.path.join(path, "cursor"), encoding="ascii") as f:
            out, err = f.read().split()
        return int(out), int(err)
    except (OSError, ValueError):
        return 0, 0


def _save_cursor(path: str, cursor: tuple[int, int]) -> None:
    atomic_write(os.path.join(path, "cursor"), f"{cursor[0]} {cursor[1]}".encode())


def _new_bytes(path: str, start: int, running: bool) -> bytes:
    """The spool's bytes from ``start`` to its size now; while the job runs, not a
    UTF-8 character cut in two (its rest comes with the next read)."""
    data = read_span(path, start, spool_size(path))
    return data[: utf8_end(data)] if running else data


def _job_dirs(root: str) -> Iterator[tuple[str, str]]:
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and len(entry.name) == 10:
            yield entry.path, entry.name


def _expired(record: JobRecord) -> bool:
    read_at = record.read_after_end
    return read_at is not None and time.time() - read_at > KEEP_ENDED


def _remove(path: str) -> None:
    for name in (STATE, "stdout", "stderr", "cursor", "read.lock"):
        remove_quietly(os.path.join(path, name))
    with contextlib.suppress(OSError):
        os.rmdir(path)

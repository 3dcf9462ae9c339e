"""Waiting for a job and killing it: the calls on a job that block.

A wait reads the job's spool as it grows (each read advances the cursor, as
:func:`tmux_bridge.calls.jobs.read` does) and hands each piece to the caller's sinks, until
the keeper's process ends (a pidfd) or a time limit fires; a timeout or a cancellation
of the wait leaves the job running. A kill sends the keeper SIGINT: it interrupts the
command as a timeout would (Ctrl-C, then Ctrl-\\) and records the job as interrupted.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable

from ..cancel import Cancel
from ..errors import Cancelled
from ..infra.process import proc
from ..infra.relay import close_fd
from ..results import JobResult, RunOptions, TimeoutKind
from . import jobs
from .clock import INTERRUPT_GRACE, QUIT_GRACE

Sink = Callable[[bytes], None]
TICK = 0.05  # seconds between looks at the spool while the keeper runs
KILL_MARGIN = 5.0  # seconds past the interrupt ladder for the keeper to record the end


def wait(
    runtime_dir: str,
    job_id: str,
    options: RunOptions,
    sinks: tuple[Sink, Sink],
    cancel: Cancel | None,
) -> JobResult:
    """Hand what the job prints to ``sinks`` until it ends, the idle timeout (no new
    output) or the overall one fires (``timed_out``; the job runs on). Raises
    :class:`Cancelled` when ``cancel`` fires (what was read is in the sinks)."""
    first = jobs.peek(runtime_dir, job_id)
    keeper = _keeper_fd(runtime_dir, job_id) if first.state == "running" else -1
    now = time.monotonic()
    deadline, last = now + options.max_time, now
    totals = [0, 0]
    try:
        while True:
            result = jobs.read(runtime_dir, job_id, False)
            for index, data in enumerate((result.stdout, result.stderr)):
                if data:
                    sinks[index](data)
                    totals[index] += len(data)
                    last = time.monotonic()
            timed_out = _timed_out(options, deadline, last)
            if result.state != "running" or timed_out:
                return result._replace(stdout=b"", stderr=b"", timed_out=timed_out)
            _sleep(keeper, cancel, min(deadline, last + options.idle_timeout))
    finally:
        close_fd(keeper)


def _timed_out(options: RunOptions, deadline: float, last: float) -> TimeoutKind | None:
    now = time.monotonic()
    if now >= deadline:
        return "overall"
    if now >= last + options.idle_timeout:
        return "idle"
    return None


def _sleep(keeper: int, cancel: Cancel | None, wake: float) -> None:
    """Until the keeper ends, the next look at the spool, ``wake`` or a cancellation."""
    fds = [fd for fd in (keeper, cancel.fd if cancel is not None else -1) if fd >= 0]
    seconds = max(min(TICK, wake - time.monotonic()), 0)
    select.select(fds, [], [], seconds)  # the keeper ended: the next read sees its end
    if cancel is not None and cancel.signum is not None:
        raise Cancelled(cancel.signum)


def _keeper_fd(runtime_dir: str, job_id: str) -> int:
    """A pidfd of the job's keeper (readable once it ended), or -1."""
    path = jobs.job_dir(runtime_dir, job_id)
    record = jobs.load(path, job_id)
    if not jobs.keeper_alive(record):
        return -1
    return proc.exit_fd(record.keeper)


def kill(runtime_dir: str, job_id: str) -> JobResult:
    """Interrupt a running job as a timeout would, and wait for its keeper to record
    the end (at most the ladder's grace periods and a margin); the job as it is then."""
    path = jobs.job_dir(runtime_dir, job_id)
    record = jobs.current(path, jobs.load(path, job_id))
    if not record.running:
        return jobs.peek(runtime_dir, job_id)
    keeper = proc.exit_fd(record.keeper)
    try:
        if jobs.keeper_alive(record):
            os.kill(record.keeper, signal.SIGINT)
        limit = INTERRUPT_GRACE + QUIT_GRACE + KILL_MARGIN
        if keeper >= 0:
            select.select([keeper], [], [], limit)
        else:
            give_up = time.monotonic() + limit
            while jobs.keeper_alive(record) and time.monotonic() < give_up:
                time.sleep(TICK)
    finally:
        close_fd(keeper)
    return jobs.peek(runtime_dir, job_id)

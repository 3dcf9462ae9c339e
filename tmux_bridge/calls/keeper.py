"""The job keeper: a detached process that holds a job's call once the call that started
it has returned, spooling the output and recording how the job ended.

A keeper is forked (twice, so it is nobody's child) from a process with one thread, or
started as a fresh interpreter from one with threads (:mod:`tmux_bridge.calls.background`).
A fork keeps every descriptor and all the state of a live call: that is how a call that
timed out with ``on_timeout`` ``detach`` becomes a job (:func:`detach`); in a process
with threads, where forking is unsafe, a live call is not detached (it is interrupted,
with a note). Either way the keeper tells its starter through a pipe once the command
runs (one JSON line: the job id, or the error that kept the command from starting),
holds the pane's lock until the job ends, and stops on SIGINT (or SIGTERM, SIGHUP)
with the interrupts of a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import BridgeError
from ..infra.process import proc
from ..infra.spool import DEFAULT_LIMIT, SpoolWriter
from ..infra.tmux import Tmux
from ..pane.records import PaneDir
from ..results import MAX_SECONDS, CallRecord, RunOptions
from . import jobs

Sink = Callable[[bytes], None]


class LiveCall(Protocol):
    """What a keeper needs of a command call (:class:`~tmux_bridge.calls.command.CommandCall`)."""

    tmux: Tmux
    records: PaneDir
    record: CallRecord
    sinks: tuple[Sink, Sink]
    notice: Callable[[str], None]
    end_row: int

    def start(self) -> None: ...

    def wait(self, deadline: float) -> None: ...

    def close(self) -> None: ...

    def back_at_prompt(self) -> bool: ...


JOB_OPTIONS = RunOptions(MAX_SECONDS, MAX_SECONDS)  # a job is never timed out
START_MARGIN = 10.0  # seconds past the lock wait for a keeper to say how it started


# --- a keeper's start ----------------------------------------------------------------------


def fork_keeper(body: Any) -> int:
    """Run ``body(fd)`` in a new session in a grandchild of ours (nobody's child once its
    parent exited at once); returns the read end of its reply pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            os.close(read_end)
            os.setsid()
            if os.fork() == 0:
                quiet_stdio()
                body(write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    return read_end


def await_keeper(fd: int, deadline: float) -> str:
    """The keeper's reply: the job id, or its error raised."""
    data = b""
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                break
            data += chunk
            if data.endswith(b"\n"):
                break
    finally:
        os.close(fd)
    try:
        reply: dict[str, Any] = json.loads(data)
    except ValueError:
        raise BridgeError(
            "the job's keeper process ended before its command started; nothing may have "
            "run. Look at the pane, and try again."
        ) from None
    if "job" in reply:
        return str(reply["job"])
    raise _error_of(str(reply.get("code")), str(reply.get("message")))


def _error_of(code: str, message: str) -> BridgeError:
    """The error a keeper reported, as its own class where the code names one."""
    found: type[BridgeError] = BridgeError
    todo: list[type[BridgeError]] = [BridgeError]
    while todo:
        cls = todo.pop()
        if cls.code == code:
            found = cls
            break
        todo += cls.__subclasses__()
    error = found.__new__(found)
    Exception.__init__(error, message)
    return error


class Reply:
    """The keeper's side of the reply pipe: one JSON line, then closed."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, document: dict[str, Any]) -> None:
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):  # the starter gave up waiting
            os.write(self.fd, (json.dumps(document) + "\n").encode())
        os.close(self.fd)
        self.fd = -1

    @property
    def sent(self) -> bool:
        return self.fd < 0


def quiet_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


# --- the keeper --------------------------------------------------------------------------


class Job:
    """A job's spool and state while its keeper holds it."""

    def __init__(self, tmux: Tmux, runtime_dir: str, record: CallRecord, records: PaneDir) -> None:
        from ..infra.process import proc

        self.tmux = tmux

        stat = proc.proc_stat(os.getpid())
        self.record = jobs.JobRecord(
            job=record.call_id,
            pane=record.pane,
            target=record.target,
            command=record.command,
            state="running",
            exit_status=None,
            started=time.time(),
            ended=None,
            keeper=os.getpid(),
            keeper_start=stat.start if stat else 0,
        )
        self.path = jobs.create(runtime_dir, self.record)
        budget = [DEFAULT_LIMIT]
        self.out = SpoolWriter(os.path.join(self.path, "stdout"), budget)
        self.err = SpoolWriter(os.path.join(self.path, "stderr"), budget)
        self.records = records
        jobs.claim_pane(records, record.call_id)

    def end(self, record: CallRecord, lost: str | None = None) -> None:
        """Record how the job ended; the pane is free again."""
        self.out.close()
        self.err.close()
        state, status = end_state(record)
        notes = [*record.notes, *([lost] if lost else [])]
        self.record = self.record._replace(
            state="lost" if lost else state,
            exit_status=None if lost else status,
            ended=time.time(),
            dropped_bytes=self.out.dropped + self.err.dropped,
            notes=tuple(notes),
        )
        jobs.write(self.path, self.record)
        jobs.release_pane(self.records)
        _notify_person(self.tmux, self.record)


def _notify_person(tmux: Tmux, record: jobs.JobRecord) -> None:
    """Say on the person's status line that the job ended, and how (tmux failures
    are ignored: the job's state is what counts)."""
    from ..text import seams

    how = f"exit {record.exit_status}" if record.exit_status is not None else "no status"
    text = f"tmux-bridge: job {record.job} {record.state} ({how}): {record.command[:60]}"
    try:
        listed = tmux.run("list-clients", "-F", "#{client_control_mode}#{client_name}", check=False)
        clients = [line[1:] for line in listed.stdout.split("\n") if line.startswith("0")]
        if not clients:
            return
        tmux.run_all(
            *(
                ["display-message", "-c", c, "-d", "4000", seams.message_text(text)]
                for c in clients
            ),
            check=False,
        )
    except BridgeError:
        pass


def end_state(record: CallRecord) -> tuple[str, int | None]:
    """The job's state and exit status once its call ended: interrupted when it was
    killed or the person's Ctrl-C (or Ctrl-\\) ended it, else exited."""
    status = record.status
    if record.cancelled is not None:
        return "interrupted", status if status is not None else 128 + record.cancelled
    if status in (130, 131):
        return "interrupted", status
    return "exited", status


def _ignore(_message: str) -> None:
    pass


def run_call(call: LiveCall, runtime_dir: str, reply: Reply, typed: bool = False) -> None:
    """Hold ``call`` as a job to its end (``typed``: its line was typed already)."""
    job = Job(call.tmux, runtime_dir, call.record, call.records)
    call.record.job = job.record.job  # a SIGINT now is the job's kill (the status line says so)
    call.sinks = (job.out, job.err)
    lost: str | None = None
    started = time.time()
    try:
        if not typed:
            call.start()
        reply.send({"job": call.record.call_id})
        call.wait(time.monotonic() + MAX_SECONDS)
    except BridgeError as exc:
        lost = f"The pane or its shell went away while the job ran: {exc}"
        if not reply.sent:
            job.end(call.record, lost)
            raise
    finally:
        call.close()
    if call.back_at_prompt():
        call.records.mark_settled(started, call.record.call_id, call.end_row)
    job.end(call.record, lost)


# --- detaching a live call ---------------------------------------------------------------


def forkable() -> bool:
    """Whether this process can fork a keeper: one thread, besides the exit watches of
    the process facts, which a fork carries over (:func:`proc.fork_safe_threads`)."""
    return threading.active_count() - proc.fork_safe_threads() == 1


def detach(call: LiveCall) -> str | None:
    """Make ``call``, which timed out, a job: a keeper forked from this process holds
    it from here on. Returns the job id, or ``None`` when this process has threads
    (the call is interrupted as usual, with a note saying why)."""
    record = call.record
    if not forkable():
        record.notes.append(
            "The command could not become a job: this process runs threads, which a "
            "live call cannot be forked from; it was interrupted instead. Start it as a "
            "job from the start."
        )
        return None
    runtime_dir = os.path.dirname(call.records.path)
    ready = fork_keeper(lambda fd: _hold(call, runtime_dir, fd))
    job_id = await_keeper(ready, time.monotonic() + START_MARGIN)
    record.job = job_id
    record.prompt_back = False
    return job_id


def _hold(call: LiveCall, runtime_dir: str, reply_fd: int) -> None:
    """In the keeper forked from a live call: the call goes on, untimed, as a job. The
    keeper holds the pane's lock (forked with it) until it exits, and says when it lets
    it go, as :func:`~tmux_bridge.infra.runtime.call_lock` does."""
    from ..infra.runtime import mark_let_go, remove_quietly

    reply = Reply(reply_fd)
    call.notice = _ignore
    call.record.timed_out = None
    call.record.options = JOB_OPTIONS
    remove_quietly(call.records.file("inflight"))
    call.records.write_inflight(call.record.command)
    try:
        run_call(call, runtime_dir, reply, typed=True)
    except BridgeError as exc:
        reply.send({"code": exc.code, "message": str(exc)})
    finally:
        mark_let_go(call.records.path)

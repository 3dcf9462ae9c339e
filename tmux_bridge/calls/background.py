"""Jobs started as jobs: the keeper process that runs a command from its start.

:func:`start` makes a keeper (:mod:`tmux_bridge.calls.keeper`) for a command and returns
the job id once the command runs. In a process with one thread (tmux-send) the keeper is
forked; in one with threads (``serve``, ``mcp``), where forking is unsafe, it is a fresh
interpreter (``python -m tmux_bridge.calls.background``, the spec on its stdin, its
reply on its stdout). The keeper finds the pane and holds its lock as any call does, and
refuses as a call would before typing; the refusal is raised to the starter. A far shell
in front of the pane (ssh, su, sudo -i, a container) runs the job as a far call.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

from ..cancel import Cancel, SignalCancel
from ..errors import BridgeError
from ..infra.tmux import Tmux
from ..pane import readiness
from ..pane.front import FarShell, Gateway
from ..results import MAX_SECONDS, CallRecord, RunOptions
from ..target import Target
from ..text.farshell import FarFacts
from ..tuples import NamedTuple
from .command import CommandCall, command_bytes
from .frame import CallFrame, pane_call, shell_front
from .keeper import (
    JOB_OPTIONS,
    START_MARGIN,
    Job,
    Reply,
    await_keeper,
    fork_keeper,
    forkable,
    quiet_stdio,
    run_call,
)


class JobSpec(NamedTuple):
    """What a keeper is asked to run: where, what, the time it may wait for the pane's
    lock (``max_time``), and the job's id."""

    socket: str
    session: str
    pane: str | None
    runtime_dir: str
    command: str | list[str]  # shell code or words (surrogate escapes for bytes)
    max_time: float
    job: str
    agent: str | None = None  # the caller's name, for the header in the pane

    def target(self) -> Target:
        return Target(Tmux(socket_path=self.socket), self.session, self.pane, self.runtime_dir)


def spec_of(
    target: Target,
    command: bytes | str | Sequence[str],
    max_time: float,
    agent: str | None = None,
) -> JobSpec:
    from ..results import new_call_id

    if isinstance(command, bytes):
        text: str | list[str] = command.decode("utf-8", "surrogateescape")
    else:
        text = command if isinstance(command, str) else list(command)
    socket = target.tmux.socket_path()
    return JobSpec(
        socket,
        target.session,
        target.pane,
        target.runtime_dir,
        text,
        max_time,
        new_call_id(),
        agent,
    )


def start(spec: JobSpec) -> str:
    """Start a keeper for ``spec``; return the job id once its command runs. Raises what
    the call would have raised before typing (the pane not ready, busy with a job ...)."""
    ready = fork_keeper(lambda fd: keep(spec, fd)) if forkable() else _spawn(spec)
    return await_keeper(ready, time.monotonic() + spec.max_time + START_MARGIN)


def _spawn(spec: JobSpec) -> int:
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "tmux_bridge.calls.background"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    with proc:  # it forks the keeper and exits: nobody's child is left behind
        proc.stdin.write(json.dumps(spec._asdict()).encode("utf-8", "surrogateescape"))
        proc.stdin.close()
        reply = os.dup(proc.stdout.fileno())
    return reply


def keep(spec: JobSpec, reply_fd: int) -> None:
    """The keeper's whole life: start the command, hold it to its end, record it."""
    reply = Reply(reply_fd)
    target = spec.target()
    with SignalCancel() as cancel:
        try:
            _keep(target, spec, reply, cancel)
        except BridgeError as exc:
            reply.send({"code": exc.code, "message": str(exc)})
        except Exception as exc:  # said to the starter, not lost
            reply.send({"code": "bridge_error", "message": f"{type(exc).__name__}: {exc}"})


def _keep(target: Target, spec: JobSpec, reply: Reply, cancel: Cancel) -> None:
    options = RunOptions(JOB_OPTIONS.idle_timeout, spec.max_time)
    with pane_call(target, options, cancel, _ignore) as frame:
        front = shell_front(frame)
        if isinstance(front, FarShell):
            _keep_far(target, frame, front.gateway, spec, reply, cancel)
            return
        kind, pane = readiness.ready_shell(
            target.tmux, frame.view, frame.records, frame.deadline, cancel
        )
        text = command_bytes(kind, spec.command)
        shown = text.decode("utf-8", "surrogateescape")
        record = CallRecord(
            "command", shown, pane, JOB_OPTIONS._replace(agent=spec.agent), call_id=spec.job
        )
        record.shell = kind
        call = CommandCall(
            target.tmux, pane, kind, frame.records, text, record, (_no, _no), _ignore, cancel
        )
        run_call(call, target.runtime_dir, reply)


def _keep_far(
    target: Target, frame: CallFrame, gateway: Gateway, spec: JobSpec, reply: Reply, cancel: Cancel
) -> None:
    """A job in the far shell in front of the pane (ssh, su, sudo -i, a container, a
    nested shell): the far call of :mod:`tmux_bridge.calls.far`, its output spooled. The
    job exists once the far shell passed its checks and the command is about to be
    typed; a refusal before that is the starter's error."""
    from .far import run_far

    pane = frame.view.pane
    shown = command_bytes("bash", spec.command).decode("utf-8", "surrogateescape")
    record = CallRecord("command", shown, pane, JOB_OPTIONS, call_id=spec.job)
    held: list[Job] = []

    def chooser(facts: FarFacts) -> bytes:
        held.append(Job(target.tmux, target.runtime_dir, record, frame.records))
        reply.send({"job": spec.job})
        return command_bytes(facts.shell, spec.command)

    sinks = (lambda data: held[0].out(data), lambda data: held[0].err(data))
    frame.records.write_inflight(record.command)
    lost: str | None = None
    try:
        run_far(
            target.tmux, pane, gateway, chooser, record, time.monotonic() + MAX_SECONDS,
            (sinks[0], sinks[1], _ignore, cancel), frame.records, frame.view.screen,
        )  # fmt: skip
    except BridgeError as exc:
        if not held:
            raise
        lost = f"The far shell or the pane went away while the job ran: {exc}"
    finally:
        frame.records.clear_inflight()
    held[0].end(record, lost)


def _ignore(_message: str) -> None:
    pass


def _no(_data: bytes) -> None:
    pass


def main() -> None:
    """``python -m tmux_bridge.calls.background``: the spec on stdin; a keeper forked
    from here replies on stdout, once this process has exited."""
    spec = JobSpec(**json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogateescape")))
    reply_fd = os.dup(1)
    if os.fork() != 0:
        os._exit(0)
    quiet_stdio()
    keep(spec, reply_fd)


if __name__ == "__main__":  # pragma: no cover - run by start() in a process with threads
    main()

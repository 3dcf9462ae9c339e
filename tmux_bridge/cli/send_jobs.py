"""tmux-send's job modes: ``--background``, ``--job``, ``--wait``, ``--kill``, ``--jobs``.

Each calls one job method of the facade and prints the job the way a call prints its
command: the job's output exactly (stdout to stdout, stderr to stderr), tmux-send's own
account of its state on stderr, or with ``--json`` the one job document. The exit
status is the job's (0 while it runs; 124 when a wait timed out, the job running on).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..errors import EXIT_SIGINT, Cancelled

if TYPE_CHECKING:
    from ..api import Bridge
    from ..cancel import Cancel
    from ..results import JobResult, RunOptions

Sink = Callable[[bytes], None]


class SendRequest(Protocol):
    """What a job mode needs of :class:`tmux_bridge.cli.request.SendRequest`."""

    @property
    def mode(self) -> str: ...
    @property
    def options(self) -> RunOptions: ...
    @property
    def job(self) -> str | None: ...
    @property
    def everything(self) -> bool: ...


class Output(Protocol):
    """What a job mode needs of :class:`tmux_bridge.cli.request.Output`."""

    as_json: bool
    notes: list[str]

    @property
    def out(self) -> Sink: ...
    @property
    def err(self) -> Sink: ...

    def stdout(self) -> Sink | None: ...
    def stderr(self) -> Sink | None: ...
    def sink(self, name: str) -> Sink: ...
    def fit_document(self, document: dict[str, object], result: JobResult) -> None: ...
    def notice(self, message: str) -> None: ...
    def print_text(self, text: str) -> None: ...
    def print_json(self, document: dict[str, object]) -> None: ...
    def product(self, data: bytes) -> None: ...


JOB_MODES = ("--background", "--job", "--wait", "--kill", "--jobs")


def job_call(
    bridge: Bridge, request: SendRequest, command: object, output: Output, cancel: Cancel
) -> int:
    """Make the job call ``request.mode`` asks for and print it; the exit status."""
    if request.mode == "--jobs":
        return _listing(bridge, output)
    if request.mode == "--background":
        assert isinstance(command, (str, bytes, tuple))
        result = bridge.start_job(command, request.options)
        if not output.as_json:
            output.product(f"{result.job}\n".encode())
            return 0
    elif request.mode == "--wait":
        try:
            result = _wait(bridge, request, output, cancel)
        except Cancelled as exc:
            output.notice(f"tmux-send: the wait was interrupted; job {request.job} runs on.")
            return exc.exit_code or EXIT_SIGINT
    elif request.mode == "--kill":
        result = bridge.kill_job(_id(request))
    else:
        result = bridge.job(_id(request), everything=request.everything)
    return _print(result, request.mode, output)


def _id(request: SendRequest) -> str:
    assert request.job is not None
    return request.job


def _wait(bridge: Bridge, request: SendRequest, output: Output, cancel: Cancel) -> JobResult:
    return bridge.wait_job(
        _id(request),
        request.options,
        stdout=output.stdout(),
        stderr=output.stderr(),
        cancel=cancel,
    )


def _print(result: JobResult, mode: str, output: Output) -> int:
    if output.as_json:
        document = result.document(output.notes)
        totals = {name: document[name + "_bytes"] for name in ("stdout", "stderr")}
        output.fit_document(document, result)  # --first/--last/--max-bytes: this read
        document.update({name + "_bytes": total for name, total in totals.items()})
        output.print_json(document)
        return result.exit_code
    if result.stdout:
        output.sink("stdout")(result.stdout)
    if result.stderr:
        output.sink("stderr")(result.stderr)
    account = describe_job(result)
    if mode != "--wait" or result.timed_out or result.state not in ("exited", "running"):
        output.notice(account)
    for note in result.notes:
        output.notice(f"tmux-send: {note}")
    return result.exit_code


def describe_job(result: JobResult) -> str:
    """One line on the job's state for stderr."""
    if result.timed_out is not None:
        return (
            f"tmux-send: {result.timed_out} timeout: job {result.job} runs on (nothing was "
            f"interrupted); `tmux-send --wait {result.job}` waits on, `--kill` stops it."
        )
    if result.state == "running":
        return (
            f"tmux-send: job {result.job} is running ({result.stdout_bytes} bytes of stdout "
            f"and {result.stderr_bytes} of stderr so far)."
        )
    if result.state == "lost":
        return f"tmux-send: job {result.job} was lost: its pane or shell went away."
    return f"tmux-send: job {result.job} {result.state} with status {result.exit_status}."


def _listing(bridge: Bridge, output: Output) -> int:
    found = bridge.jobs()
    if output.as_json:
        output.print_json({"jobs": [job.document() for job in found], "notes": output.notes})
        return 0
    lines = [f"{'JOB':<10}  {'PANE':<5}  {'STATE':<11}  EXIT  STARTED   ENDED     BYTES  COMMAND"]
    for job in found:
        status = "-" if job.exit_status is None else str(job.exit_status)
        ended = "-" if job.ended is None else _clock(job.ended)
        lines.append(
            f"{job.job:<10}  {job.pane:<5}  {job.state:<11}  {status:>4}  "
            f"{_clock(job.started):<8}  {ended:<8}  {job.stdout_bytes + job.stderr_bytes:>5}  "
            f"{job.command}"
        )
    output.print_text("\n".join(lines) + "\n")
    return 0


def _clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))

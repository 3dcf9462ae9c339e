"""The wait policy every call shares: idle and overall timeouts, looks at whether the
command waits for the person, and the interrupt ladder (Ctrl-C, then Ctrl-\\).

Command mode and REPL mode both wait in ``poll()`` and ask a :class:`CallClock` what
to do next and when to wake; neither spells the policy out itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from ..cancel import Cancel
from ..infra.tmux import Tmux
from ..pane.info import cursor_line
from ..results import CallRecord, RunOptions

INTERRUPT_GRACE = 3.0  # seconds from SIGINT until SIGQUIT (or, in a REPL, giving up)
QUIT_GRACE = 2.0  # seconds from SIGQUIT until we give up and report the survivor
INPUT_CHECK = 0.5  # seconds of silence between looks at whether the command waits for input

Phase = Literal["running", "sent-int", "sent-quit"]
Step = Literal["interrupt", "quit", "give-up"]


def cancelled(record: CallRecord, cancel: Cancel | None) -> bool:
    """Whether the caller cancelled the call: the signal it stands for is noted on
    ``record`` as soon as it is seen (a signal after the end still counts)."""
    if cancel is not None and cancel.signum is not None:
        record.cancelled = cancel.signum
    return record.cancelled is not None


class CallClock:
    """When a call must be interrupted, and when its wait loop must wake next.

    ``ladder`` is the interrupts a call may send: command mode sends SIGINT and then
    SIGQUIT; a REPL only SIGINT (SIGQUIT would end it).
    """

    def __init__(
        self,
        options: RunOptions,
        deadline: float,
        now: float,
        ladder: tuple[Literal["INT", "QUIT"], ...] = ("INT", "QUIT"),
    ) -> None:
        self.idle_timeout = options.idle_timeout
        self.deadline = deadline
        self.ladder = ladder
        self.last_output = now
        self.input_every = min(INPUT_CHECK, options.idle_timeout / 2)
        self.next_input_check = now + self.input_every
        self.phase: Phase = "running"
        self.phase_deadline = math.inf

    @property
    def running(self) -> bool:
        return self.phase == "running"

    def saw_output(self, now: float) -> None:
        self.last_output = now
        self.next_input_check = now + self.input_every

    def input_check_due(self, now: float) -> bool:
        """Whether to look now if the command waits for input (after some silence)."""
        if not self.running or now < self.next_input_check:
            return False
        self.next_input_check = now + self.input_every
        return True

    def hold_idle(self, now: float) -> None:
        """A command waiting for the person is not idle: the idle timeout waits too."""
        self.last_output = now

    def next_step(self, now: float, cancelled: bool, record: CallRecord) -> Step | None:
        """What the wait loop must do now, if anything; a timeout that fires is recorded
        in ``record``."""
        if self.running:
            if cancelled:
                return "interrupt"
            if now >= self.deadline:
                record.timed_out = "overall"
                return "interrupt"
            if now >= self.last_output + self.idle_timeout:
                record.timed_out = "idle"
                return "interrupt"
            return None
        if now < self.phase_deadline:
            return None
        if self.phase == "sent-int" and "QUIT" in self.ladder:
            return "quit"
        return "give-up"

    def interrupted(self, which: Literal["INT", "QUIT"], now: float) -> None:
        """The loop sent SIGINT or SIGQUIT: wait the grace period for the prompt."""
        if which == "INT":
            self.phase, self.phase_deadline = "sent-int", now + INTERRUPT_GRACE
        else:
            self.phase, self.phase_deadline = "sent-quit", now + QUIT_GRACE

    def wake_at(self) -> float:
        if self.running:
            return min(self.deadline, self.last_output + self.idle_timeout, self.next_input_check)
        return self.phase_deadline

    def poll_ms(self, now: float, cap: float = math.inf) -> int:
        """Milliseconds ``poll()`` may sleep: until the next event, at most ``cap`` s."""
        wake = min(self.wake_at(), now + cap)
        return max(0, int((wake - now) * 1000) + 1)


def announce_waiting(
    record: CallRecord, tmux: Tmux, pane_id: str, notice: Callable[[str], None], what: str
) -> None:
    """Say once that ``what`` (the command, the REPL) waits for the person, with the
    prompt it shows."""
    if record.waited_for_input:
        return
    record.waited_for_input = True
    record.input_detected_by = "proc"
    prompt = cursor_line(tmux, pane_id).strip()
    notice(
        f"tmux-send: {what} is waiting for input in the bridge terminal"
        + (f": {prompt}" if prompt else "")
        + " (the idle timeout is paused while it waits)"
    )


def interrupt_reason(record: CallRecord) -> str:
    """Why a call interrupted its command, for the line shown in the pane."""
    if record.cancelled is not None:
        import signal

        if record.job is not None and record.cancelled == signal.SIGINT:
            return "job killed"  # a job's keeper gets SIGINT from a kill (calls/jobwait.py)
        return f"tmux-send got {signal.Signals(record.cancelled).name}"
    if record.timed_out == "idle":
        return "idle timeout"
    return "overall timeout"

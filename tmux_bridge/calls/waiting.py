"""The one wait loop of every call that waits on a pane: a local command (relays), a far
command and a far REPL evaluation (the pane's stream), a local REPL evaluation.

Each turn of the loop asks the call whether it is over, lets it look at the pane (does
the command wait for the person?), asks the :class:`~tmux_bridge.calls.clock.CallClock`
whether a timeout or the caller's cancellation calls for the next interrupt (Ctrl-C, then
Ctrl-\\) or for giving up, and then waits in ``poll()`` for what the call reads. The calls
differ only in those hooks; none spells the loop out itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from ..cancel import Cancel
from ..infra.tmux import Tmux
from ..pane.info import PaneInfo
from ..results import CallRecord
from .clock import CallClock, Step, cancelled

Notice = Callable[[str], None]
Signal = Literal["INT", "QUIT"]


class PaneCall:
    """A call waiting on a pane: what every kind shares, and the loop in :meth:`wait_loop`.

    ``ladder`` is the interrupts the call may send (a REPL sends only SIGINT: SIGQUIT
    would end it). A subclass gives :meth:`over` and :meth:`wait_for_events`, and where
    it differs :meth:`look`, :meth:`interrupt` and :meth:`take`. An ending is a short
    word of the subclass's own ("ended", "gone", ...); ``"gave-up"`` is the loop's when
    the command survived the whole ladder.
    """

    ladder: tuple[Signal, ...] = ("INT", "QUIT")

    def __init__(
        self,
        tmux: Tmux,
        pane: PaneInfo,
        record: CallRecord,
        notice: Notice,
        cancel: Cancel | None,
    ) -> None:
        self.tmux = tmux
        self.pane = pane
        self.record = record
        self.notice = notice
        self.cancel = cancel

    def wait_loop(self, deadline: float) -> str:
        """Wait until the call is over, interrupting on a timeout or a cancellation;
        the ending, from the hook that saw it."""
        clock = CallClock(self.record.options, deadline, time.monotonic(), ladder=self.ladder)
        self.clock = clock
        while True:
            ending = self.over(clock)
            if ending is not None:
                return ending
            now = time.monotonic()
            self.look(clock, now)
            step = clock.next_step(now, cancelled(self.record, self.cancel), self.record)
            if step is not None:
                ending = self.take(step, clock, now)
                if ending is not None:
                    return ending
            ending = self.wait_for_events(clock)
            if ending is not None:
                return ending

    # --- the hooks -----------------------------------------------------------------------

    def over(self, clock: CallClock) -> str | None:
        """The ending when the call is over (its end marker came, say), else ``None``."""
        raise NotImplementedError

    def look(self, clock: CallClock, now: float) -> None:
        """Look at the pane between events: a command waiting for the person holds the
        idle timeout (:meth:`CallClock.hold_idle`)."""

    def take(self, step: Step, clock: CallClock, now: float) -> str | None:
        """Do what the clock says: the next interrupt, or give up (the command survived
        the ladder: the prompt is not back)."""
        if step == "give-up":
            self.record.prompt_back = False
            return "gave-up"
        which: Signal = "INT" if step == "interrupt" else "QUIT"
        self.record.signals_sent.append(f"SIG{which}")
        self.interrupt(which)
        clock.interrupted(which, now)
        return None

    def interrupt(self, which: Signal) -> None:
        """Send the command SIGINT or SIGQUIT (or type Ctrl-C / Ctrl-\\)."""
        raise NotImplementedError

    def wait_for_events(self, clock: CallClock) -> str | None:
        """Wait in ``poll()`` for output, the watched process's exit, a cancellation or
        the clock's next wake-up, and handle what came; an ending when it ends the call."""
        raise NotImplementedError

"""Pure tests of tmux_bridge/calls/clock.py's :class:`CallClock`: the idle and overall
timeouts, the looks for input, and the interrupt ladder, all at explicit times (seconds).

Expected values follow the policy its docstrings state: a call is interrupted once it
has printed nothing for ``idle_timeout`` seconds or at its deadline, whichever comes
first (the overall limit named when both do); after SIGINT it waits 3 s for the prompt,
then (command mode) SIGQUIT and 2 s more before giving up.
"""

from __future__ import annotations

from typing import Literal

import pytest

from tmux_bridge.calls.clock import CallClock
from tmux_bridge.pane.info import PaneInfo
from tmux_bridge.results import CallRecord, RunOptions

PANE = PaneInfo("%1", 1, "/dev/pts/1", False, False, False, 80, 24, "bash", 0, 0, "", False,
                True, "/", False, 0)  # fmt: skip


def record() -> CallRecord:
    return CallRecord("command", "true", PANE, RunOptions())


def clock(
    idle: float = 10.0,
    deadline: float = 100.0,
    ladder: tuple[Literal["INT", "QUIT"], ...] = ("INT", "QUIT"),
) -> CallClock:
    return CallClock(RunOptions(idle_timeout=idle), deadline, now=0.0, ladder=ladder)


@pytest.mark.parametrize(
    ("outputs", "now", "step", "timed_out"),
    [
        ([], 9.99, None, None),
        ([], 10.0, "interrupt", "idle"),  # ten seconds of silence from the start
        ([8.0], 17.9, None, None),  # output at 8 s: silent since then only
        ([8.0], 18.0, "interrupt", "idle"),
        ([8.0, 95.0], 100.0, "interrupt", "overall"),  # output keeps coming: the deadline
    ],
)
def test_timeouts(
    outputs: list[float], now: float, step: str | None, timed_out: str | None
) -> None:
    c, r = clock(), record()
    for at in outputs:
        c.saw_output(at)
    assert (c.next_step(now, cancelled=False, record=r), r.timed_out) == (step, timed_out)


def test_both_timeouts_due_at_once_name_the_overall_limit() -> None:
    c, r = clock(idle=10.0, deadline=10.0), record()
    assert (c.next_step(10.0, False, r), r.timed_out) == ("interrupt", "overall")


def test_cancelling_interrupts_at_once_and_is_no_timeout() -> None:
    c, r = clock(), record()
    assert (c.next_step(0.1, True, r), r.timed_out) == ("interrupt", None)


def test_waiting_for_the_person_holds_the_idle_timeout() -> None:
    c, r = clock(), record()
    c.hold_idle(9.0)
    assert c.next_step(18.9, False, r) is None
    assert c.next_step(19.0, False, r) == "interrupt"


def test_the_command_mode_ladder() -> None:
    c, r = clock(), record()
    c.interrupted("INT", 20.0)
    assert not c.running
    assert c.next_step(22.9, False, r) is None  # 3 s for the prompt after SIGINT
    assert c.next_step(23.0, False, r) == "quit"
    c.interrupted("QUIT", 23.0)
    assert c.next_step(24.9, False, r) is None  # 2 s more after SIGQUIT
    assert c.next_step(25.0, False, r) == "give-up"


def test_a_repl_gives_up_after_sigint_alone() -> None:
    c, r = clock(ladder=("INT",)), record()
    c.interrupted("INT", 20.0)
    assert c.next_step(23.0, False, r) == "give-up"


def test_no_timeout_fires_while_the_ladder_runs() -> None:
    c, r = clock(idle=1.0, deadline=5.0), record()
    c.interrupted("INT", 4.0)
    assert c.next_step(6.0, True, r) is None and r.timed_out is None


@pytest.mark.parametrize(
    ("idle", "every"),
    [(10.0, 0.5), (1.0, 0.5), (0.4, 0.2)],  # every 0.5 s, more often for a short idle
)
def test_looks_for_input_after_some_silence(idle: float, every: float) -> None:
    c = clock(idle=idle)
    assert not c.input_check_due(every - 0.01)
    assert c.input_check_due(every)
    assert not c.input_check_due(every)  # once, then the next look is due later
    assert c.input_check_due(2 * every)


def test_output_puts_the_next_look_off() -> None:
    c = clock()
    c.saw_output(0.8)
    assert not c.input_check_due(1.29)
    assert c.input_check_due(1.3)


def test_no_look_for_input_once_interrupted() -> None:
    c = clock()
    c.interrupted("INT", 0.1)
    assert not c.input_check_due(5.0)


def test_wake_at_the_next_event() -> None:
    c = clock(idle=10.0, deadline=100.0)
    assert c.wake_at() == 0.5  # the first look for input
    c = clock(idle=10.0, deadline=0.3)
    assert c.wake_at() == 0.3  # the deadline first
    c.interrupted("INT", 1.0)
    assert c.wake_at() == 4.0  # the end of SIGINT's grace


@pytest.mark.parametrize(
    ("now", "cap", "ms"),
    [
        (0.0, float("inf"), 501),  # 500 ms to the look for input, rounded up past it
        (0.0, 0.125, 126),  # at most the cap
        (0.25, float("inf"), 251),
        (0.75, float("inf"), 0),  # overdue: do not sleep
    ],
)
def test_poll_ms(now: float, cap: float, ms: int) -> None:
    assert clock().poll_ms(now, cap) == ms

"""Pure tests of tmux_bridge/calls/waiting.py's one wait loop (:class:`PaneCall`), with a
scripted call and a clock that moves only when the call "waits": what the loop does
follows from the policy the docstrings state (interrupt after ``idle_timeout`` seconds
of silence, SIGQUIT 3 s after SIGINT, give up 2 s later; a REPL's ladder stops at
SIGINT), not from the loop's code.
"""

from __future__ import annotations

from typing import Literal

import pytest

from tmux_bridge.calls import waiting
from tmux_bridge.calls.clock import CallClock
from tmux_bridge.calls.waiting import PaneCall, Signal
from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.pane.info import PaneInfo
from tmux_bridge.results import CallRecord, RunOptions

PANE = PaneInfo("%1", 1, "/dev/pts/1", False, False, False, 80, 24, "bash", 0, 0, "", False,
                True, "/", False, 0)  # fmt: skip


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class Scripted(PaneCall):
    """A call whose events come at set times: ``("out", t)`` is output at ``t``,
    ``("end", t)`` its end; ``stops_on`` is the signal that ends the command (it ends
    right after it); with ``waits_for_input`` every look for input the clock asks for
    holds the idle timeout."""

    def __init__(
        self,
        fake: FakeTime,
        events: list[tuple[str, float]],
        idle: float = 10.0,
        max_time: float = 100.0,
        stops_on: Signal | None = None,
        waits_for_input: bool = False,
    ) -> None:
        record = CallRecord("command", "true", PANE, RunOptions(idle, max_time))
        super().__init__(Tmux(socket_path="/nonexistent"), PANE, record, print, None)
        self.fake = fake
        self.events = sorted(events, key=lambda e: e[1])
        self.stops_on = stops_on
        self.waits_for_input = waits_for_input
        self.ended = False
        self.sent: list[tuple[Signal, float]] = []
        self.looks = 0

    def over(self, clock: CallClock) -> str | None:
        return "ended" if self.ended else None

    def look(self, clock: CallClock, now: float) -> None:
        if clock.input_check_due(now):
            self.looks += 1
            if self.waits_for_input:
                clock.hold_idle(now)

    def interrupt(self, which: Signal) -> None:
        self.sent.append((which, self.fake.now))
        if which == self.stops_on:
            self.events.insert(0, ("end", self.fake.now))

    def wait_for_events(self, clock: CallClock) -> str | None:
        wake = clock.wake_at()
        if self.events and self.events[0][1] <= wake:
            what, at = self.events.pop(0)
            self.fake.now = max(self.fake.now, at)
            if what == "out":
                clock.saw_output(self.fake.now)
            else:
                self.ended = True
            return None
        self.fake.now = max(self.fake.now, wake)
        return None


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(waiting, "time", fake)
    return fake


def test_output_then_end_sends_nothing(fake: FakeTime) -> None:
    call = Scripted(fake, [("out", 1.0), ("out", 9.0), ("out", 18.0), ("end", 20.0)])
    assert call.wait_loop(deadline=100.0) == "ended"
    assert call.sent == []
    assert call.record.signals_sent == []
    assert call.record.timed_out is None
    assert fake.now == 20.0


def test_silence_climbs_the_whole_ladder_then_gives_up(fake: FakeTime) -> None:
    call = Scripted(fake, [("out", 2.0)])
    assert call.wait_loop(deadline=100.0) == "gave-up"
    # idle from the last output at 2 s: SIGINT at 12, SIGQUIT 3 s later, give up 2 s later
    assert call.sent == [("INT", 12.0), ("QUIT", 15.0)]
    assert call.record.signals_sent == ["SIGINT", "SIGQUIT"]
    assert call.record.timed_out == "idle"
    assert call.record.prompt_back is False
    assert fake.now == 17.0


def test_a_repl_ladder_stops_at_sigint(fake: FakeTime) -> None:
    call = Scripted(fake, [])
    call.ladder = ("INT",)
    assert call.wait_loop(deadline=100.0) == "gave-up"
    assert call.sent == [("INT", 10.0)]
    assert fake.now == 13.0


def test_a_command_that_stops_on_sigint_ends_normally(fake: FakeTime) -> None:
    call = Scripted(fake, [], idle=5.0, stops_on="INT")
    assert call.wait_loop(deadline=100.0) == "ended"
    assert call.sent == [("INT", 5.0)]
    assert call.record.timed_out == "idle"


def test_the_deadline_is_named_when_it_comes_first(fake: FakeTime) -> None:
    events = [("out", float(t)) for t in range(1, 40)]
    call = Scripted(fake, events, idle=10.0, max_time=30.0, stops_on="INT")
    assert call.wait_loop(deadline=30.0) == "ended"
    assert call.sent == [("INT", 30.0)]
    assert call.record.timed_out == "overall"


def test_waiting_for_input_holds_the_idle_timeout(fake: FakeTime) -> None:
    call = Scripted(fake, [("end", 50.0)], idle=10.0, waits_for_input=True)
    assert call.wait_loop(deadline=100.0) == "ended"
    assert call.sent == []
    assert call.looks > 1


def test_a_cancelled_call_is_interrupted_at_once(fake: FakeTime) -> None:
    call = Scripted(fake, [("end", 50.0)], stops_on="INT")
    call.record.cancelled = 15
    assert call.wait_loop(deadline=100.0) == "ended"
    assert call.sent == [("INT", 0.0)]
    assert call.record.timed_out is None


@pytest.mark.parametrize("which", ["INT", "QUIT"])
def test_the_ending_a_hook_returns_ends_the_loop(
    fake: FakeTime, which: Literal["INT", "QUIT"]
) -> None:
    class Gone(Scripted):
        def wait_for_events(self, clock: CallClock) -> str | None:
            super().wait_for_events(clock)
            return "gone" if self.sent and self.sent[-1][0] == which else None

    call = Gone(fake, [])
    assert call.wait_loop(deadline=100.0) == "gone"
    assert call.sent[-1][0] == which

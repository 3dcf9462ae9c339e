"""Several agents at once: calls are serialized and each gets exactly its own output."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tmux_bridge import Bridge, CallResult
from tmux_bridge.pane.records import PaneDir

from ..support.pane import WAIT, TestPane, target_of


def test_concurrent_calls_each_get_their_own_output(bridge: TestPane) -> None:
    count = 10
    procs = [
        bridge.start_send("--", f"echo begin-{i}; sleep 0.05; echo end-{i} >&2; echo done-{i}")
        for i in range(count)
    ]
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out == f"begin-{i}\ndone-{i}\n".encode()
        # a call that waited may have said so first; its own stderr line comes last
        assert err.endswith(f"end-{i}\n".encode())
    assert bridge.runtime_files() == bridge.between_calls()


def test_a_waiting_call_says_so_and_counts_the_wait(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    holder = bridge.start_send(
        "--", f"echo started; sh -c 'while [ ! -e {go} ]; do sleep 0.02; done'"
    )
    bridge.wait_for_call_start(holder)
    waiter = bridge.start_send("--max-time", "60", "--", "echo second")
    assert waiter.stderr is not None
    notice = bridge.read_line_from(waiter.stderr)
    assert notice.startswith(b"tmux-send: waiting for another tmux-send call to finish")
    assert b"while [ ! -e" in notice  # names what the other call runs
    go.touch()
    out, _ = waiter.communicate(timeout=30)
    assert (waiter.returncode, out) == (0, b"second\n")
    holder.communicate(timeout=30)


def test_waiting_for_the_lock_counts_toward_max_time(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    holder = bridge.start_send(
        "--", f"echo started; sh -c 'while [ ! -e {go} ]; do sleep 0.02; done'"
    )
    bridge.wait_for_call_start(holder)
    code, out, err = bridge.send_text("--max-time", "1.5", "--", "echo never")
    assert code == 125
    assert out == ""
    assert "--max-time" in err
    assert "never" not in bridge.history()
    go.touch()
    holder.communicate(timeout=30)


def test_a_call_that_looked_before_another_ran_looks_again(
    bridge: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call looks at its pane before it takes the pane's lock (a CLI call's look starts
    with the process, while its code loads). When another call took the lock after that
    look and let it go just before this call tried it (so it was free: no wait), the
    pane may have changed meanwhile: the call looks again rather than judge the pane by
    the old screen. Here that screen showed a half-typed line that the person has since
    cleared, and the other call ran: the call must run, not refuse the line. (Both calls
    are this process's: a CLI call's records are named after its own environment's
    default server.)"""
    api = Bridge(target_of(bridge), client="test")
    for _ in range(2):  # the prompt is known: a line that is the prompt and more is typed
        assert api.run("true").status == 0
    bridge.person_types("half typed")
    bridge.wait_for_text("half typed")
    looked, resume = threading.Event(), threading.Event()
    locked = PaneDir.locked

    def after_the_look(self: PaneDir, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is thread:  # the first call, not the other one
            looked.set()
            assert resume.wait(WAIT)
        return locked(self, *args, **kwargs)

    monkeypatch.setattr(PaneDir, "locked", after_the_look)
    results: list[CallResult | BaseException] = []

    def second() -> None:
        try:
            results.append(api.run("echo second"))
        except BaseException as exc:  # shown by the assertion below
            results.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    try:
        assert looked.wait(WAIT)  # it saw the half-typed line
        bridge.person_types("\x15")  # C-u: the person clears it
        bridge.wait_for(lambda: "half typed" not in bridge.screen(), "the line cleared")
        # another call comes, runs and goes while the first waits between look and lock
        first = api.run("echo first")
        assert (first.status, first.stdout, first.stderr) == (0, b"first\n", b"")
    finally:
        resume.set()
        thread.join(WAIT)
    [result] = results
    assert isinstance(result, CallResult), f"{result!r}\n{bridge.screen()}"
    assert (result.status, result.stdout, result.stderr) == (0, b"second\n", b"")

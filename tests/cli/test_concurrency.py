"""Several agents at once: calls are serialized and each gets exactly its own output."""

from __future__ import annotations

from pathlib import Path

from ..support.pane import TestPane


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

"""The live view's watch of a pane (``pane/watch.py``) against a real tmux server: a
``cat`` slow to tell its pid (a loaded machine) keeps its working pipe."""

from __future__ import annotations

import time

import pytest

from ..support.pane import MakeBridge

pytestmark = pytest.mark.tmux


class Seen:
    """A listener that keeps what the watch tells."""

    def __init__(self) -> None:
        self.data = b""
        self.resyncs: list[str] = []

    def output(self, data: bytes) -> None:
        self.data += data

    def resync(self, reason: str) -> None:
        self.resyncs.append(reason)


def test_a_cat_slow_to_tell_its_pid_keeps_its_pipe(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tmux_bridge.infra.tmux import Tmux
    from tmux_bridge.pane import watch as watching

    b = make_bridge("bash")
    b.start()
    monkeypatch.setenv("TMUX_TMPDIR", b.env["TMUX_TMPDIR"])
    # the pid file stays unread for longer than an arming waits and than a check's
    # interval, as when the machine is loaded: the pipe works meanwhile
    monkeypatch.setattr(watching, "PID_WAIT", 0.2)
    read_pid, slow_until = watching._read_pid, time.monotonic() + 1.2
    monkeypatch.setattr(
        watching,
        "_read_pid",
        lambda path: None if time.monotonic() < slow_until else read_pid(path),
    )
    seen = Seen()
    watch = watching.PaneWatch(Tmux(socket_name="default"), b.pane("#{pane_id}"), lambda: None)
    watch.add(seen)
    watch.start()
    try:
        b.tmux("send-keys", "-t", b.target, "echo watched-$((6*7))", "Enter")
        b.wait_for(lambda: b"watched-42" in seen.data, "the watched output")
        b.wait_for(lambda: watch.cat_pid is not None, "a check to read the cat's pid")
        b.tmux("send-keys", "-t", b.target, "echo still-$((6*7))", "Enter")
        b.wait_for(lambda: b"still-42" in seen.data, "the output after the pid was read")
    finally:
        watch.stop()
    assert (seen.resyncs, watch.armings) == ([], 1)

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


def test_a_watch_that_stops_leaves_the_next_watchs_mark(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page reloaded, or a tab closed as another opens: one page's watch of a pane stops
    while the next page's watch of it starts. The pane's mark that it is watched
    (``@tmux-bridge-watch``: a REPL or far call may take a watch's pipe, and the watch
    re-arms after it) must stay the new watch's, or those calls are refused as if a
    logging plugin held the pipe (``pane_piped``)."""
    from tmux_bridge.infra.tmux import Tmux
    from tmux_bridge.pane import watch as watching

    b = make_bridge("bash")
    b.start()
    monkeypatch.setenv("TMUX_TMPDIR", b.env["TMUX_TMPDIR"])
    tmux, pane_id = Tmux(socket_name="default"), b.pane("#{pane_id}")
    old = watching.PaneWatch(tmux, pane_id, lambda: None)
    old.add(Seen())
    old.start()
    new = watching.PaneWatch(tmux, pane_id, lambda: None)
    seen = Seen()
    new.add(seen)
    new.start()  # the old watch's pipe is open: the new one arms at a check after it
    try:
        old.stop()
        assert b.pane("#{@tmux-bridge-watch}") == new.fifo
        b.wait_for(lambda: bool(new.token) and b.pane("#{pane_pipe}") == "1", "the new pipe")
        opened = b.send_text("--repl", "python", "--", "python3 -q")
        assert opened[0] == 0, opened
        assert b.send_text("--close")[0] == 0
        b.wait_for(lambda: seen.resyncs != [] and b.pane("#{pane_pipe}") == "1", "a re-arm")
    finally:
        new.stop()
    assert b.pane("#{@tmux-bridge-watch}") == ""  # the last watch took its mark away

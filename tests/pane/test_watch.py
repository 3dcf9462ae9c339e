"""The live view's watch of a pane (``pane/watch.py``) against a real tmux server: a
``cat`` slow to tell its pid (a loaded machine) keeps its working pipe; a watch that
stops leaves the next one its mark; a pane's new watch arms once the last has stopped."""

from __future__ import annotations

import threading
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


def test_a_panes_new_watch_arms_once_its_last_has_stopped(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last listener of a pane leaves (its watch stops: it closes the pipe and ends
    its ``cat``) as a new one comes (a page reloaded; the view's own redraw after a
    flood): the new watch must arm once the old pipe is closed, not while it is open, or
    it streams nothing until a check re-arms it (half a second, a ``lagging`` event and
    a snapshot to every page). The old watch's stop is held here until the new listener
    waits for it, or has come through without waiting."""
    from tmux_bridge.infra.tmux import Tmux
    from tmux_bridge.pane import watch as watching

    b = make_bridge("bash")
    b.start()
    monkeypatch.setenv("TMUX_TMPDIR", b.env["TMUX_TMPDIR"])
    tmux, pane_id = Tmux(socket_name="default"), b.pane("#{pane_id}")
    watches = watching.Watches()
    first, second = Seen(), Seen()
    old = watches.add(tmux, pane_id, first)
    events: list[str] = []
    added: list[watching.PaneWatch] = []
    adding = threading.Thread(target=lambda: added.append(watches.add(tmux, pane_id, second)))

    def wait_stopped(stopping: threading.Event) -> None:
        events.append("waiting")
        stopping.wait()

    def stop() -> None:  # the old watch's stop, held until the new listener came
        adding.start()
        b.wait_for(lambda: bool(events or added), "the new listener to wait, or to be in")
        real_stop()
        events.append("stopped")

    real_stop = old.stop
    monkeypatch.setattr(watches, "_wait_stopped", wait_stopped)
    monkeypatch.setattr(old, "stop", stop)
    watches.remove(tmux, pane_id, first)
    adding.join(10)
    assert added, "the new listener came in"
    new = added[0]
    try:
        assert events == ["waiting", "stopped"]
        assert new.token and b.pane("#{@tmux-bridge-watch}") == new.fifo  # armed at its start
        b.tmux("send-keys", "-t", b.target, "echo watched-$((6*7))", "Enter")
        b.wait_for(lambda: b"watched-42" in second.data, "the watched output")
    finally:
        watches.remove(tmux, pane_id, second)
    assert (second.resyncs, new.armings) == ([], 1)
    assert b.pane("#{pane_pipe}") == "0"

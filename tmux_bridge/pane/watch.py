"""Watching a pane live: its output bytes as the pane got them, from ``pipe-pane``.

One :class:`PaneWatch` per watched pane, shared by every listener (:class:`Watches`
counts them): tmux pipes the pane's output into ``cat``, which writes to a FIFO in a
private directory (:class:`~tmux_bridge.pane.tap.StreamFifo`, as a call's); a thread
reads the FIFO and hands each chunk to the listeners.
The thread never waits on a listener (a slow one must drop and catch up with a fresh
:func:`snapshot`), so a watched pane is never slowed by a slow watcher.

The pipe is checked twice a second. When it is gone (someone ran ``pipe-pane``, the
``cat`` died, a REPL call took the pane's one pipe) or stalled (the ``cat`` stopped),
it is re-armed as soon as the pane has no pipe, and the listeners are told
(``resync``): bytes may have been missed, so they need a snapshot. Arming never closes
another pipe: it is one ``if-shell -F '#{pane_pipe}'`` inside the tmux server, which
also marks the pipe as ours (``@tmux-bridge-watch-pipe``, a token per arming). Closing is as
careful: only while the pane still carries our token (a REPL call that takes the pipe
clears it), since tmux itself notices a dead ``-O`` reader only when it next writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Protocol

from ..infra.process import proc
from ..infra.tmux import Tmux
from ..tuples import NamedTuple
from .info import WATCH_OPTION
from .tap import StreamFifo, pipe_if_free, unmark_if_ours, unpipe_if_ours

CHECK_EVERY = 0.5  # seconds between checks that our pipe is alive
READ_SIZE = 65536
BURST = 2048  # bytes in one read that mean the pane writes fast: gather more
GATHER = 0.008  # seconds a burst is gathered for at most
DEFAULT_HISTORY = 5000  # rows of scrollback in a snapshot
PID_WAIT = 2.0  # seconds an arming waits for its ``cat`` to write its pid
PID_PATIENCE = 10.0  # seconds an armed pipe's ``cat`` has, in all, before it counts as dead


class Listener(Protocol):
    """What a watch tells; called on the watch's thread, so it must not block."""

    def output(self, data: bytes) -> None: ...

    def resync(self, reason: str) -> None: ...


class Snapshot(NamedTuple):
    """A pane's scrollback and screen as terminal bytes (a reset, the rows with their
    colours, the cursor put back), and its size."""

    data: bytes
    cols: int
    rows: int


def snapshot(tmux: Tmux, pane_id: str, history: int = DEFAULT_HISTORY) -> Snapshot:
    """The pane as a terminal of its size would show it now: ``history`` rows of
    scrollback and the screen, with colours (``capture-pane -e``), after a full reset
    (``ESC c``), the cursor where the pane has it. One tmux call.
    Raises :class:`~tmux_bridge.errors.TmuxError` when the pane is gone."""
    result = tmux.run_all(
        [
            "display-message",
            "-p",
            "-t",
            pane_id,
            "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height}",
        ],
        ["capture-pane", "-p", "-e", "-t", pane_id, "-S", str(-history)],
    )
    head, _, body = result.stdout.partition("\n")
    x, y, cols, rows = (int(v) for v in head.split())
    lines = body.split("\n")[:-1]
    text = "\x1bc" + "\r\n".join(lines) + f"\x1b[0m\x1b[{y + 1};{x + 1}H"
    return Snapshot(text.encode("utf-8", "surrogateescape"), cols, rows)


class PaneWatch:
    """The pipe of one pane and the thread that reads it."""

    def __init__(self, tmux: Tmux, pane_id: str, on_gone: Callable[[], None]) -> None:
        self.tmux = tmux
        self.pane_id = pane_id
        self.on_gone = on_gone  # the pane ended: the registry forgets this watch
        self.listeners: list[Listener] = []
        self.lock = threading.Lock()
        # read only: a writer's end shows as end of file (then a fresh read end)
        self.stream = StreamFifo("tmux-bridge-watch-", keep_open=False)
        self.fifo = self.stream.path
        self.pidfile = os.path.join(self.stream.folder, "pid")
        self.stop_r, self.stop_w = os.pipe()
        self.cat_pid: int | None = None
        self.pid_due = 0.0  # until when an armed pipe's cat may still be telling its pid
        self.token = ""  # the mark of our current arming (on the pane)
        self.armings = 0
        self.rearms = 0  # how often the pipe had to be re-armed (for tests and status)
        self.thread = threading.Thread(target=self._loop, name=f"watch-{pane_id}", daemon=True)
        self.started = threading.Event()  # set once the start is over (see error)
        self.error: BaseException | None = None  # what start() raised

    def start(self) -> None:
        """Arm the pipe (raises when the pane is gone) and start reading."""
        self.tmux.run("set-option", "-p", "-t", self.pane_id, WATCH_OPTION, self.fifo)
        self._arm()
        self.rearms = 0  # the first arming is not a re-arming
        self.thread.start()

    def start_ended(self, error: BaseException | None) -> None:
        """The start is over (``error``: it failed so): listeners that joined meanwhile
        go on, or get the error too."""
        self.error = error
        self.started.set()

    def wait_started(self) -> None:
        """Return once the watch started; raise what its start raised."""
        self.started.wait()
        if self.error is not None:
            raise self.error

    def add(self, listener: Listener) -> None:
        with self.lock:
            self.listeners.append(listener)

    def remove(self, listener: Listener) -> int:
        """Forget ``listener``; how many remain."""
        with self.lock:
            with contextlib.suppress(ValueError):
                self.listeners.remove(listener)
            return len(self.listeners)

    def stop(self) -> None:
        """Stop reading and end our ``cat`` (which closes the pane's pipe; another's
        pipe is never touched)."""
        os.write(self.stop_w, b"x")
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(5)
        self.tmux.run(*unmark_if_ours(self.pane_id, self.fifo), check=False)
        self._close_ours()
        self._kill_cat()
        for fd in (self.stop_r, self.stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.stream.close()

    # --- the thread --------------------------------------------------------------------

    def _loop(self) -> None:
        next_check = time.monotonic() + CHECK_EVERY
        while True:
            wait = max(next_check - time.monotonic(), 0.0)
            ready, _, _ = select.select([self.stream.fd, self.stop_r], [], [], wait)
            if self.stop_r in ready:
                return
            if self.stream.fd in ready:
                self._read()
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + CHECK_EVERY
                if not self._check():
                    self.on_gone()
                    return

    def _read(self) -> None:
        data = self.stream.read(READ_SIZE)
        if data is None:
            return
        if len(data) >= BURST:
            data += self._more(len(data))
        if data:
            with self.lock:
                listeners = list(self.listeners)
            for listener in listeners:
                listener.output(data)
            return
        # end of file: our writer left (the pipe was closed or taken); a new read end
        # (a fresh FIFO "generation") so that the next writer is seen
        self.stream.reopen()
        self.cat_pid = None
        self.pid_due = 0.0
        self._check()

    def _more(self, have: int) -> bytes:
        """In a burst (a read that came back large), what else arrives within
        :data:`GATHER` seconds, up to :data:`READ_SIZE` in all: listeners then get fewer,
        larger pieces (fewer frames to every client) at a cost of milliseconds; a
        line or a keystroke's echo is never held back."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + GATHER
        while have < READ_SIZE:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([self.stream.fd], [], [], wait)[0]:
                break
            chunk = self.stream.read(READ_SIZE - have)
            if not chunk:
                break  # nothing, or end of file: the next read sees it
            chunks.append(chunk)
            have += len(chunk)
        return b"".join(chunks)

    def _check(self) -> bool:
        """Re-arm a pipe that is gone or stalled; ``False`` when the pane is gone."""
        if self.cat_pid is None and self.token and time.monotonic() < self.pid_due:
            self.cat_pid = _read_pid(self.pidfile)  # a loaded machine: the cat is slow
            return True  # armed and not closed: no byte was missed
        if self.cat_pid is not None and _alive(self.cat_pid) and not _stopped(self.cat_pid):
            return True
        # dead or stalled: close the pane's pipe if it is still ours, end our cat
        self._close_ours()
        self._kill_cat()
        state = self.tmux.run(
            "display-message", "-p", "-t", self.pane_id, "#{pane_dead}", check=False
        )
        if state.returncode != 0 or state.stdout.strip() == "1":
            return False
        if self._arm():
            for listener in self._listeners():
                listener.resync("the pane's pipe was closed or stalled and is open again")
        return True

    def _listeners(self) -> list[Listener]:
        with self.lock:
            return list(self.listeners)

    def _arm(self) -> bool:
        """Open our pipe if the pane has none; whether it is ours now. Waits up to
        :data:`PID_WAIT` for the ``cat`` to write its pid; one that is slower (a loaded
        machine) keeps its pipe, and the checks look for its pid until
        :data:`PID_PATIENCE` has passed: closing a working pipe would lose bytes."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.pidfile)
        self.armings += 1
        self.token = f"{os.path.basename(self.stream.folder)}-{self.armings}"
        result = self.tmux.run_all(
            *pipe_if_free(self.pane_id, self.fifo, self.pidfile, self.token), check=False
        )
        if result.returncode != 0 or result.stdout.strip() != self.token:
            self.token = ""
            return False  # another's pipe (or the pane is gone): not ours to touch
        self.rearms += 1
        armed = time.monotonic()
        self.pid_due = armed + PID_PATIENCE
        while True:
            self.cat_pid = _read_pid(self.pidfile)
            if self.cat_pid is not None or time.monotonic() >= armed + PID_WAIT:
                return True
            time.sleep(0.005)

    def _close_ours(self) -> None:
        """Close the pane's pipe if it is still the one we armed (one tmux command, so a
        REPL call that took the pipe in between keeps it)."""
        if not self.token:
            return
        self.tmux.run(*unpipe_if_ours(self.pane_id, self.token), check=False)
        self.token = ""

    def _kill_cat(self) -> None:
        if self.cat_pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.cat_pid, signal.SIGKILL)
            self.cat_pid = None


def _read_pid(path: str) -> int | None:
    try:
        with open(path, "rb") as file:
            text = file.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    return proc.alive(pid)


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (``T``: SIGSTOP, or traced)."""
    stat = proc.proc_stat(pid)
    return stat is not None and stat.state in ("T", "t")


class Watches:
    """Every watch of this process, by tmux server and pane id: the first listener of
    a pane starts its watch, the last one to leave stops it. A pane's new watch starts
    once its last one has stopped: armed while the old pipe was still open, it would
    find the pane piped, and stream only after a check re-armed it (half a second, a
    ``lagging`` event and a snapshot: a page reloaded, a view redrawn after a flood)."""

    def __init__(self) -> None:
        self._watches: dict[tuple[Tmux, str], PaneWatch] = {}
        self._stopping: dict[tuple[Tmux, str], threading.Event] = {}
        self._lock = threading.Lock()

    def add(self, tmux: Tmux, pane_id: str, listener: Listener) -> PaneWatch:
        """Start delivering ``pane_id``'s output to ``listener``. Raises
        :class:`~tmux_bridge.errors.TmuxError` when the pane is gone. Watches of
        different panes start side by side (arming a pipe waits on tmux and ``cat``);
        a listener that joins a watch still starting waits for its start."""
        key = (tmux, pane_id)
        while True:
            with self._lock:
                stopping = self._stopping.get(key)
                if stopping is None:
                    watch = self._watches.get(key)
                    first = watch is None
                    if watch is None:
                        watch = self._watches[key] = PaneWatch(tmux, pane_id, lambda: None)
                        watch.on_gone = functools.partial(self._forget, key, watch)
                    watch.add(listener)
                    break
            self._wait_stopped(stopping)
        if not first:
            watch.wait_started()
            return watch
        try:
            watch.start()
        except BaseException as exc:
            with self._lock:
                retired = self._retire(key) if self._watches.get(key) is watch else None
            watch.start_ended(exc)
            self._stop(key, watch, retired)
            raise
        watch.start_ended(None)
        return watch

    def remove(self, tmux: Tmux, pane_id: str, listener: Listener) -> None:
        key = (tmux, pane_id)
        with self._lock:
            watch = self._watches.get(key)
            if watch is None or watch.remove(listener) > 0:
                return
            retired = self._retire(key)
        self._stop(key, watch, retired)

    def get(self, tmux: Tmux, pane_id: str) -> PaneWatch | None:
        with self._lock:
            return self._watches.get((tmux, pane_id))

    def _forget(self, key: tuple[Tmux, str], watch: PaneWatch) -> None:
        """``watch`` found its pane gone: its listeners are told, and it stops (unless
        it is stopping already)."""
        with self._lock:
            if self._watches.get(key) is not watch:
                return
            retired = self._retire(key)
        for listener in watch._listeners():
            listener.resync("the pane is gone")
        self._stop(key, watch, retired)

    def _retire(self, key: tuple[Tmux, str]) -> threading.Event:
        """(With the lock held.) The pane's watch out of the registry, and stopping: a
        new one waits for the event."""
        del self._watches[key]
        stopping = self._stopping[key] = threading.Event()
        return stopping

    def _stop(
        self, key: tuple[Tmux, str], watch: PaneWatch, retired: threading.Event | None
    ) -> None:
        """Stop ``watch``; then a new watch of its pane may start."""
        try:
            watch.stop()
        finally:
            if retired is not None:
                with self._lock:
                    if self._stopping.get(key) is retired:
                        del self._stopping[key]
                retired.set()

    def _wait_stopped(self, stopping: threading.Event) -> None:
        """Wait for a pane's last watch to stop (it kills its ``cat``: moments)."""
        stopping.wait()


WATCHES = Watches()

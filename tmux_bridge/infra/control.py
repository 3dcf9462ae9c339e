"""One tmux control-mode client that tells when sessions, windows, panes or the
programs in them change: the source of ``subscribe-agents``' lifecycle events.

:class:`ControlClient` attaches ``tmux -C attach-session -t SESSION -f
no-output,ignore-size,read-only`` to any existing session (no pane output, no say in
window sizes, no commands but its own subscription) and calls ``on_change`` with the
notification's name on each lifecycle notification: ``%sessions-changed``,
``%session-changed``, ``%window-add``/``-close``, ``%unlinked-window-add``/``-close``,
``%client-session-changed``, ``%client-detached`` and ``%subscription-changed``. The
subscription (``refresh-client -B``) is a format over every session, window and pane
(each pane's id, pid and current command, each session's attached count): tmux itself
checks it about once a second and notifies when its value changes, so a program
starting or exiting in an existing pane, or a person attaching, is told too.

When its session goes away tmux ends the client (``%exit``); it then attaches to
another session. While no session (or no server) exists at all it looks again every
:data:`NO_SESSION_CHECK` seconds, the only periodic check, and only then. A control
client counts in ``#{session_attached}``: ``pane.py`` counts people without it.

tmux before 3.7 crashes (every session with it) when a session is created, closed or
renamed while a control client is still introducing itself to the server (tmux GitHub
issue 4980, fixed in 3.7; seen here once, a test creating a session right after its
subscription). :meth:`ControlClient.ready` waits until the client is attached, so a face
answers its subscriber only then: what the subscriber does next cannot meet that moment.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable

from ..errors import BridgeError
from .tied import Tied
from .tmux import Tmux

NO_SESSION_CHECK = 2.0  # seconds between looks for a session while there is none
READY_WAIT = 5.0  # seconds a face waits for its client to be attached (ready)
SUBSCRIPTION = "tmux-bridge-lifecycle"
_FORMAT = (
    "#{S:#{session_id}=#{session_attached}"
    "[#{W:#{window_id}(#{P:#{pane_id}=#{pane_pid}/#{pane_dead}/#{pane_current_command};})}]}"
)
LIFECYCLE = frozenset(
    {
        "%sessions-changed",
        "%session-changed",
        "%window-add",
        "%window-close",
        "%unlinked-window-add",
        "%unlinked-window-close",
        "%client-session-changed",
        "%client-detached",
        "%subscription-changed",
    }
)


class ControlClient:
    """The control client of one tmux server, kept attached from :meth:`start` to
    :meth:`stop` on a thread of its own. ``on_change(name)`` runs on that thread, with
    ``"%attached"`` each time it (re)attached (what changed meanwhile is unknown; the
    subscription is sent only then, as tmux 3.3a may run a command it read before the
    attach without a client and fail it) and
    ``"%no-session"`` when it finds no session at all."""

    def __init__(self, tmux: Tmux, on_change: Callable[[str], None]) -> None:
        self.tmux = tmux
        self.on_change = on_change
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.thread = threading.Thread(target=self._run, name="tmux-control", daemon=True)
        self.attached = threading.Event()  # attached once, found no session, or stopped

    def start(self) -> None:
        self.thread.start()

    def ready(self, timeout: float = READY_WAIT) -> bool:
        """Wait until the client has attached for the first time (or found no session to
        attach to, or was stopped); whether it did within ``timeout`` seconds."""
        return self.attached.wait(timeout)

    def stop(self, wait: bool = True) -> None:
        """Kill the client process; ``wait``: and wait for the thread to end (it reaps
        the process)."""
        self.stopped.set()
        self.attached.set()  # nobody waits on a stopped client
        with self.lock:
            process = self.process
        if process is not None and process.poll() is None:
            process.kill()  # its thread sees the end of its output, reaps it and closes up
        if wait and self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()

    def _run(self) -> None:
        told = False  # "%no-session" was said since the last attach
        while not self.stopped.is_set():
            session = self._any_session()
            if session is None:
                if not told:
                    self.on_change("%no-session")
                told = True
                self.attached.set()  # nothing is attaching
                self.stopped.wait(NO_SESSION_CHECK)
                continue
            told = False
            self._attached(session)
            self.stopped.wait(0.05)  # the session just went: no busy loop if it flaps

    def _any_session(self) -> str | None:
        try:
            listed = self.tmux.run("list-sessions", "-F", "#{session_id}", check=False)
        except BridgeError:  # tmux hung or missing: as good as no session
            return None
        ids = listed.stdout.split() if listed.returncode == 0 else []
        return ids[0] if ids else None

    def _attached(self, session: str) -> None:
        """Attach to ``session`` and report until the client ends."""
        argv = self.tmux.argv(
            "-C", "attach-session", "-t", session, "-f", "no-output,ignore-size,read-only"
        )
        with self.lock:
            if self.stopped.is_set():
                return
            tied = Tied(argv)  # killed by its guard if this process is killed
            process = self.process = tied.process
        assert process.stdin is not None and process.stdout is not None
        subscribed = False
        try:
            for line in process.stdout:
                name = line.split(b" ", 1)[0].strip().decode("ascii", "replace")
                if not subscribed and name == "%session-changed":
                    # only now: tmux 3.3a may run a command read before the attach
                    # without a client ("no current client"), measured 2 times in 6
                    process.stdin.write(f"refresh-client -B '{SUBSCRIPTION}::{_FORMAT}'\n".encode())
                    process.stdin.flush()
                    subscribed = True
                    name = "%attached"
                    self.attached.set()
                if name in LIFECYCLE or name == "%attached":
                    self.on_change(name)
        except (OSError, ValueError):  # the client died under us: attach again
            pass
        finally:
            tied.close()  # killed: closing its stdin does not always end a client
            with self.lock:
                self.process = None

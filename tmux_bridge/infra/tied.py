"""Control-mode clients that end with the process that started them, however it ends.

A resident process (``serve``, ``mcp``) keeps tmux control-mode clients
(:mod:`~tmux_bridge.infra.channel`, :mod:`~tmux_bridge.infra.control`). It ends them
itself when it stops; killed (``SIGKILL``, the OOM killer) it cannot, and a client whose
stdin closed does not always leave: tmux 3.3a kept one attached, and a client left
attached keeps its tmux server from ever exiting (``kill-server`` included). So each
client gets a guard: a ``sh`` reading a pipe that only this process writes. When this
process ends, however it ends, the kernel closes the pipe, the guard reads its end and
kills the client. Ended the normal way, the guard is told so (a line) and leaves the
client alone.

A process forked from this one (a job's keeper) must not hold these pipes: the guard and
the client would wait for it, and a write of the child would go down the parent's
channel. In the child they become ``/dev/null`` at once (:func:`os.register_at_fork`),
leaving the parent's clients and guards as they are.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import weakref

# read a line (the process ended its client itself) or the end of the pipe (it ended
# without a word): then kill the client (already gone: nothing to say)
_GUARD = 'read -r _ || kill -s KILL "$1" 2>/dev/null'

_guards: weakref.WeakSet[Tied] = weakref.WeakSet()


class Tied:
    """``argv`` started with pipes on its stdin and stdout (stderr dropped), and its
    guard. :meth:`end` kills and reaps it, and lets the guard go; :meth:`close` also
    closes its pipes."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        try:
            self.guard: subprocess.Popen[bytes] | None = subprocess.Popen(
                ["/bin/sh", "-c", _GUARD, "sh", str(self.process.pid)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the person's Ctrl-C in serve's terminal: not it
            )
        except OSError:
            self.process.kill()
            self.process.wait()
            raise
        self.forked = False  # this object was copied into a forked child
        _guards.add(self)

    def end(self, wait: float | None = None) -> None:
        """Kill the client and reap it (``wait``: at most that many seconds), then let
        the guard go. Its pipes stay open: the caller closes them. In a forked child:
        nothing (the client is the parent's)."""
        if self.forked:
            return
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(wait)
        self._release()

    def close(self) -> None:
        """:meth:`end`, waiting as long as it takes, then close the pipes."""
        self.end()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def _release(self) -> None:
        """Tell the guard to leave without killing (the client is ended: its id is soon
        no longer ours to kill)."""
        guard, self.guard = self.guard, None
        if guard is None or guard.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):  # (closed by another thread)
            guard.stdin.write(b"\n")
        with contextlib.suppress(OSError, ValueError):
            guard.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            guard.wait(1)

    def _forked(self, null: int) -> None:
        """In a forked child: this process's ends of the pipes become ``/dev/null``
        (their file objects stay valid: no number closed twice, nothing flushed into
        the parent's pipe), and nothing is killed or told."""
        self.forked = True
        pipes = [self.process.stdin, self.process.stdout]
        if self.guard is not None:
            pipes.append(self.guard.stdin)
        self.guard = None
        for pipe in pipes:
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    os.dup2(null, pipe.fileno())


def _after_fork_in_child() -> None:
    if not _guards:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for tied in list(_guards):
            tied._forked(null)
    finally:
        os.close(null)
    _guards.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)

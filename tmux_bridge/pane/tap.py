"""The pane's byte stream (``tmux pipe-pane -O``) sent to a FIFO of ours: the one way a
call opens it, reads it, drains it and closes it (far commands, far and local REPL
evaluations), and the FIFO the live view reads (:mod:`tmux_bridge.pane.watch`).

tmux runs the pipe's command (``cat`` into our FIFO) in its own process, so what the
pane got reaches us through that ``cat``: closing the pane's pipe makes it write what
it still holds and exit, which is how :meth:`PaneTap.drain` knows it has everything.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import tempfile
import time
from collections.abc import Callable

from ..infra.process import proc
from ..infra.relay import close_fd
from ..infra.tmux import Tmux
from ..text.output import render_line
from ..text.seams import command_line, pipe_command
from .info import WATCH_OPTION, WATCH_PIPE_OPTION

_TOKEN = re.compile(r"[A-Za-z0-9_-]+")
LOST_DRAIN = 0.3  # seconds to read on after closing the pipe, when its cat is not found
LOST_DRAIN_LIMIT = 1.0  # seconds at most to wait for the cat to pass on what tmux copied
# The screen runs ahead of the stream (tmux draws what the pane's pipe has not brought
# us yet): what the screen shows counts once the stream ends with it too, or once the
# stream has brought nothing for this long since the question was first asked (a prompt
# drawn so that its text is not found in the stream's last line).
SCREEN_AHEAD = 5.0
TAIL = 256  # bytes of the stream kept to see how it ends (a prompt, with its colours)


class StreamFifo:
    """A FIFO in a private directory of its own (a pipe's 64 KiB buffer: fewer wake-ups
    than a pseudo-terminal's). ``keep_open`` opens it read and write, so that it never
    reads as ended (a call's, before and after its ``cat``); otherwise read only, so
    that the end of a writer shows as end of file (the live view re-arms then)."""

    def __init__(self, prefix: str, keep_open: bool = True) -> None:
        self.folder = tempfile.mkdtemp(prefix=prefix)
        self.path = os.path.join(self.folder, "stream")
        os.mkfifo(self.path, 0o600)
        self.keep_open = keep_open
        self.fd = self._open()

    def _open(self) -> int:
        mode = os.O_RDWR if self.keep_open else os.O_RDONLY
        return os.open(self.path, mode | os.O_NONBLOCK | os.O_CLOEXEC)

    def read(self, size: int = 65536) -> bytes | None:
        """What the FIFO has now; ``None`` when nothing is waiting (or it is closed);
        ``b""`` at the end of a writer (read only)."""
        try:
            return os.read(self.fd, size)
        except OSError:  # EAGAIN: nothing yet
            return None

    def reopen(self) -> None:
        """A new read end (a fresh FIFO "generation"), so that the next writer is seen."""
        close_fd(self.fd)
        self.fd = self._open()

    @property
    def real_path(self) -> str:
        """The FIFO's path as the kernel shows a process's open file."""
        return os.path.realpath(self.path)

    def close(self) -> None:
        """Close it and remove its directory (with whatever else was kept there)."""
        self.fd = close_fd(self.fd)
        shutil.rmtree(self.folder, ignore_errors=True)


def take_pipe(pane_id: str, path: str) -> list[list[str]]:
    """The tmux commands that send the pane's output stream (``pipe-pane -O``) to
    ``path`` for one call. A live view's watch may hold the pipe: ours replaces it, and
    the mark goes so that the watch never closes ours (it re-arms when we are done)."""
    return [
        ["set-option", "-p", "-u", "-t", pane_id, WATCH_PIPE_OPTION],
        ["pipe-pane", "-O", "-t", pane_id, pipe_command(["cat"], path)],
    ]


def pipe_if_free(pane_id: str, path: str, pidfile: str, token: str) -> list[list[str]]:
    """The tmux commands that send the pane's stream to ``path`` only if the pane has no
    pipe (one ``if-shell -F`` inside the server, so another's pipe is never closed),
    marking the pipe with ``token``, then print the pane's mark: ``token`` when the
    pipe is ours. The ``cat`` writes its own pid to ``pidfile`` (the live view's)."""
    # exec: the shell tmux started becomes the cat
    script = 'echo $$ > "$1" && exec cat > "$2"'
    command = pipe_command(["/bin/sh", "-c", script, "sh", pidfile, path])
    opened = command_line(
        ["pipe-pane", "-O", "-t", pane_id, command],
        ["set-option", "-p", "-t", pane_id, WATCH_PIPE_OPTION, token],
    )
    return [
        ["if-shell", "-F", "-t", pane_id, "#{pane_pipe}", "", opened],
        ["display-message", "-p", "-t", pane_id, f"#{{{WATCH_PIPE_OPTION}}}"],
    ]


def unpipe_if_ours(pane_id: str, token: str) -> list[str]:
    """The tmux command that closes the pane's pipe if it still carries ``token`` (one
    command, so a call that took the pipe in between keeps it). ``token`` is one of ours:
    letters, digits, ``_`` and ``-`` (tmux reads it inside a format)."""
    if not _TOKEN.fullmatch(token):
        raise ValueError(f"not a pipe token of ours: {token!r}")
    closing = command_line(
        ["pipe-pane", "-t", pane_id],
        ["set-option", "-p", "-u", "-t", pane_id, WATCH_PIPE_OPTION],
    )
    condition = f"#{{==:#{{{WATCH_PIPE_OPTION}}},{token}}}"
    return ["if-shell", "-F", "-t", pane_id, condition, closing]


def unmark_if_ours(pane_id: str, fifo: str) -> list[str]:
    """The tmux command that takes the pane's watch mark (:data:`WATCH_OPTION`, the path of
    the watching FIFO) away if it still names ``fifo`` (one command, so that a watch of the
    pane started meanwhile keeps its own mark). The mark is matched by the FIFO's
    directory and name, ours and random (a token's letters), at the end of the path:
    the directory above them may hold any byte, which a format would read."""
    folder, leaf = os.path.basename(os.path.dirname(fifo)), os.path.basename(fifo)
    if not (_TOKEN.fullmatch(folder) and _TOKEN.fullmatch(leaf)):
        raise ValueError(f"not a watch FIFO of ours: {fifo!r}")
    unmark = command_line(["set-option", "-p", "-u", "-t", pane_id, WATCH_OPTION])
    condition = f"#{{m:*/{folder}/{leaf},#{{{WATCH_OPTION}}}}}"
    return ["if-shell", "-F", "-t", pane_id, condition, unmark]


class PaneTap:
    """One call's hold on a pane's stream: :meth:`open` points it at our FIFO, the call
    reads it, :meth:`drain` takes what is still on its way, :meth:`close` lets it go."""

    def __init__(self, tmux: Tmux, pane_id: str) -> None:
        self.tmux = tmux
        self.pane_id = pane_id
        self.fifo = StreamFifo("tmux-send-far-")
        self.piped = False
        self.tail = b""  # the stream's last bytes, as they came (see ends_as_shown)
        self.ahead_since: float | None = None  # see ends_as_shown

    @property
    def fd(self) -> int:
        return self.fifo.fd

    def open(self, before: list[list[str]], after: list[list[str]]) -> None:
        """Run the tmux commands ``before``, point the pane's stream at our FIFO, then
        run ``after`` (what types into the pane): one tmux call, so nothing the pane
        prints in between is missed."""
        self.piped = True  # closed by :meth:`close` even when tmux failed half way
        self.tmux.run_all(*before, *take_pipe(self.pane_id, self.fifo.path), *after)

    def read(self) -> bytes | None:
        """What the stream holds now; ``None`` when nothing is waiting."""
        data = self.fifo.read()
        if not data:
            return None
        self.tail = data[-TAIL:] if len(data) >= TAIL else (self.tail + data)[-TAIL:]
        self.ahead_since = None
        return data

    def ends_as_shown(self, shown: Callable[[str], bool]) -> bool:
        """Whether the stream read so far ends with a line that is ``shown`` (as a
        terminal draws its unfinished last line), as the screen's is: else the screen may
        be ahead of the stream (a prompt drawn after an end marker still on its way),
        until the stream has brought nothing for :data:`SCREEN_AHEAD` s since this was
        first asked."""
        last = self.tail[self.tail.rfind(b"\n") + 1 :]
        if shown(render_line(last).decode("utf-8", "replace").rstrip()):
            return True
        now = time.monotonic()
        if self.ahead_since is None:
            self.ahead_since = now
        return now - self.ahead_since >= SCREEN_AHEAD

    def read_until(self, done: Callable[[bytes], bool], until: float, pidfd: int = -1) -> bytes:
        """What comes until ``done`` says so of it, the time ``until`` or (when
        ``pidfd`` is a process's) that process's exit, whichever is first."""
        data = b""
        while not done(data):
            remaining = until - time.monotonic()
            if remaining <= 0:
                break
            fds = [self.fd] + ([pidfd] if pidfd >= 0 else [])
            ready, _, _ = select.select(fds, [], [], remaining)
            while (chunk := self.read()) is not None:
                data += chunk
            if pidfd >= 0 and pidfd in ready:
                break
        return data

    def drain(self, feed: Callable[[bytes], None], done: Callable[[], bool]) -> None:
        """Everything tmux copied of the pane before now, handed to ``feed``: the pane's
        pipe is closed, so its ``cat`` writes the rest into our FIFO and exits; read until
        it has (a loaded machine may run it late), at most :data:`LOST_DRAIN_LIMIT` s, or
        until ``done``. Without a ``cat`` to wait for, read for :data:`LOST_DRAIN` s."""
        writer = self._writer()
        if writer is not None:
            self.unpipe()
        until = time.monotonic() + (LOST_DRAIN_LIMIT if writer is not None else LOST_DRAIN)
        while not done():
            writing = writer is not None and proc.has_open(writer, self.fifo.real_path) is not False
            while (chunk := self.read()) is not None:
                feed(chunk)
            now = time.monotonic()
            if (writer is not None and not writing) or now >= until:
                return
            select.select([self.fd], [], [], min(until - now, 0.02))

    def _writer(self) -> int | None:
        """The ``cat`` that tmux started for our pipe: its child with our FIFO open."""
        server = self.tmux.run("display-message", "-p", "#{pid}", check=False).stdout.strip()
        if not server.isdigit():
            return None
        for child in proc.children(int(server)):
            if proc.has_open(child, self.fifo.real_path) is True:
                return child
        return None

    def unpipe(self) -> None:
        """Close the pane's pipe (ours: a call holds the pane's lock while it reads)."""
        if self.piped:
            self.tmux.run("pipe-pane", "-t", self.pane_id, check=False)
            self.piped = False

    def close(self) -> None:
        self.unpipe()
        self.fifo.close()

    def forget(self) -> None:
        """Close our descriptor only: a job's keeper forked from this process holds the
        pipe and its FIFO from here on."""
        self.fifo.fd = close_fd(self.fifo.fd)
        self.piped = False

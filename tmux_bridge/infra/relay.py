"""Pseudo-terminals of ours: the relays a command writes to instead of the pane, and the
mirror that copies what it wrote into the pane so the person sees it live. (The pane's
own stream, ``pipe-pane``, goes to a FIFO: :mod:`tmux_bridge.pane.tap`.)"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import termios
import time

PANE_BACKLOG_LIMIT = 256 * 1024  # stop reading the relays while this much waits for the pane


class Relay:
    """One pseudo-terminal the command writes to (its stdout or its stderr)."""

    def __init__(self, cols: int, rows: int) -> None:
        self.master, self.slave = os.openpty()
        attrs = termios.tcgetattr(self.slave)
        attrs[1] &= ~termios.OPOST  # keep "\n" as "\n" and tabs as tabs
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)  # our acknowledgement is not output
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def read(self, size: int = 65536) -> bytes | None:
        """What the relay has now; ``None`` when nothing is waiting (or it is closed)."""
        try:
            return os.read(self.master, size) or None
        except OSError:  # EAGAIN: nothing yet; EIO: no writer left
            return None

    def close(self) -> None:
        for fd in (self.master, self.slave):
            close_fd(fd)


class PaneMirror:
    """Copies a command's output into the pane's own terminal, raw, without blocking the
    call: what the pane cannot take yet waits in a bounded backlog. With ``own_newlines``
    the newlines go in as :func:`pane_newlines` writes them; without (a program of the
    person's reads the pane's byte stream: a logging ``pipe-pane``), as they are."""

    def __init__(self, tty: str, own_newlines: bool = True) -> None:
        self.own_newlines = own_newlines
        try:
            self.fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            self.fd = -1  # the person will not see the output; the agent still will
        self.backlog = bytearray()
        self.ends_in_newline = True

    @property
    def full(self) -> bool:
        """Whether the call should stop reading the relays until the pane catches up."""
        return len(self.backlog) > PANE_BACKLOG_LIMIT

    @property
    def drained(self) -> bool:
        return len(self.backlog) <= PANE_BACKLOG_LIMIT // 2

    @property
    def wants_to_write(self) -> bool:
        return bool(self.backlog) and self.fd >= 0

    def put(self, data: bytes) -> None:
        if self.fd < 0 or not data:
            return
        self.ends_in_newline = data.endswith(b"\n")
        if self.own_newlines and b"\n" in data:
            data = pane_newlines(data, self._output_modes())
        self.backlog += data
        self.flush(block=False)

    def _output_modes(self) -> int:
        """The pane terminal's output modes now (``c_oflag``; the command or the person
        may change them during the call); 0 when they cannot be read."""
        try:
            return int(termios.tcgetattr(self.fd)[1])
        except termios.error:
            return 0

    def say(self, message: str) -> None:
        """A line of tmux-send's own in the pane (why it interrupts, say)."""
        lead = b"" if self.ends_in_newline else b"\n"
        self.put(lead + f"[tmux-send] {message}\n".encode())
        self.flush(block=True, limit=0.2)

    def end_line(self) -> None:
        """Finish a last line without a newline, so the end marker starts a line."""
        if not self.ends_in_newline:
            self.put(b"\n")

    def flush(self, block: bool, limit: float = 2.0) -> None:
        """Copy the backlog into the pane's terminal; with ``block``, wait up to ``limit``
        seconds for tmux to take it all."""
        give_up = time.monotonic() + limit
        while self.backlog and self.fd >= 0:
            try:
                written = os.write(self.fd, self.backlog)
                del self.backlog[:written]
            except BlockingIOError:
                if not block or time.monotonic() >= give_up:
                    return
                select.select([], [self.fd], [], max(give_up - time.monotonic(), 0))
            except OSError:
                self.backlog.clear()
                self.fd = close_fd(self.fd)

    def close(self) -> None:
        self.fd = close_fd(self.fd)


# The output modes that act on a newline or a carriage return.
_NEWLINE_MODES = termios.OPOST | termios.ONLCR | termios.OCRNL | termios.ONOCR | termios.ONLRET


def pane_newlines(data: bytes, oflag: int) -> bytes:
    """``data`` as the mirror writes it into a pane terminal whose output modes are
    ``oflag``: where the terminal would turn each newline into CR LF (``onlcr``, the
    default, and no other newline mode), each becomes CR VT instead. tmux and xterm.js
    move down one row on VT exactly as on LF, in every parser state (both are C0
    controls of one class), and the kernel counts neither as a column; but it hands the
    pane's reader each CR LF of ``onlcr`` with a write of its own, one per line, where a
    block without LF goes over in one (``seq 1 1000000``: 0.31 s of system time in the
    mirror against 0.1 s). With any other newline mode, ``data`` is written as it is."""
    if oflag & _NEWLINE_MODES != termios.OPOST | termios.ONLCR:
        return data
    return data.replace(b"\n", b"\r\v")


def close_fd(fd: int) -> int:
    """Close ``fd`` if open; returns -1 to store back."""
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
    return -1

"""One persistent tmux control-mode client per server, for a resident process (``serve``,
``mcp``): its tmux commands go down one pipe instead of a new tmux client each (about
3 ms each), and each reply is matched to its command.

A command line is written as tmux's own parser reads it back
(:func:`~tmux_bridge.text.seams.command_line`), followed by a line of its own that prints
a token of ours; everything tmux sends between the previous token and this one is the
command's reply (one ``%begin``/``%end`` block per command it ran, ``%error`` for a failed
one). A line is its own command group, so a failed command never keeps the token from
being printed. Notifications (``%window-add``...) between blocks are skipped; the client
is attached with ``no-output`` (no pane output) and ``ignore-size`` (no say in sizes), and
is not counted as a person (:func:`~tmux_bridge.pane.info.is_person`).

The channel is one client of one session (tmux has no control client without one). With
no session it is not opened and the caller runs tmux as a subprocess; when its session
goes away tmux ends it (``%exit``) and the next command opens it again, on any session.
A command that reads stdin, or writes a file through its client, runs as a subprocess.

A reply may hold text a program in a pane chose (a capture of the screen, a paste
buffer), and tmux passes it on raw: a line of it could mimic the end of its block
(``%end TIME NUMBER FLAGS``) and what follows could pose as more blocks. The reply is
therefore checked before it is believed: the token is random, one per client (only its
replies hold it: no pane shows it, so no program can print it), the token seen anywhere
but as its own block's only line, or a block's end seen twice (tmux always sends the
real one after a forged one), means a forged reply (:class:`ChannelForged`): the channel
is closed and the caller runs the command again as a subprocess. Whether a process uses
channels at all is decided in one place: :func:`tmux_bridge.infra.tmux.use_channels`.
"""

from __future__ import annotations

import os
import secrets
import select
import subprocess
import threading
import time

from ..text.seams import command_line, format_text_timed
from .runtime import write_all
from .tied import Tied

OPEN_WAIT = 2.0  # seconds for a new client to say it is attached


class ChannelClosed(Exception):
    """The channel is not open (no session, the client ended): ``sent`` tells whether
    the command may have reached tmux (then it must not be run again)."""

    def __init__(self, sent: bool) -> None:
        super().__init__("the tmux control channel is closed")
        self.sent = sent


class ChannelForged(Exception):
    """A reply whose framing a program's text imitated (see the module's docstring):
    nothing of it is believed; the command ran (it only looked, or the caller says)."""

    def __init__(self) -> None:
        super().__init__("a reply on the tmux control channel was not framed as tmux frames it")


class Reply:
    """What a command got back: the output of the commands that ran (``out``), the
    errors of one that failed (``err``), as a client prints them on stdout and stderr."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.err: list[bytes] = []
        self.blocks = 0


class Channel:
    """The control client of one server (``argv``: ``tmux -S PATH`` or ``-L NAME``)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.lock = threading.Lock()
        self.tied: Tied | None = None  # the client and its guard (the process ends it)
        self.buffer = b""
        self.count = 0
        self.token = b""  # the open client's token, and the command line that prints it
        self.ask = b""
        self.ended = False  # for good: the process is ending (see :meth:`end`)
        self.readable = select.poll()  # the open client's stdout, to wait on
        self.out_fd = self.in_fd = -1  # the open client's stdout and stdin

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The client's process, while the channel is open."""
        return None if self.tied is None else self.tied.process

    def run(self, commands: list[list[str]], timeout: float | None) -> tuple[int, str, str]:
        """Run ``commands`` (one group, as a chain would) and wait for their reply; the
        exit code, stdout and stderr a tmux client would have given. Raises
        :class:`ChannelClosed` or :class:`TimeoutError` (the channel is then closed)."""
        line = command_line(*commands).encode("utf-8", "surrogateescape")
        with self.lock:
            if self.tied is None or self._ended():
                self._close()
                if self.ended:
                    raise ChannelClosed(sent=False)
                try:
                    self._open(timeout)
                except BaseException:  # TimeoutError: tmux did not answer (stopped?)
                    self._close()
                    raise
            self.count += 1
            try:
                self._write(line + b"\n" + self.ask + b"\n")
            except OSError:
                self._close()
                raise ChannelClosed(sent=False) from None
            try:
                reply = self._read_reply(self.token, timeout)
            except BaseException:  # a timeout, a forged reply: what is left is unknown
                self._close()
                raise
        out, err = (
            b"".join(line + b"\n" for line in lines).decode("utf-8", "surrogateescape")
            for lines in (reply.out, reply.err)
        )
        return (1 if reply.err else 0), out, err

    def close(self) -> None:
        with self.lock:
            self._close()

    def end(self) -> None:
        """End the client now and for good, whatever command is on its way (the lock is
        not waited for: the process is ending): the command's reader sees the end, and
        the channel is not opened again. A client left behind by its process could stay
        attached and keep its tmux server from ever exiting (tmux 3.3a, seen when the
        client's stdin closed with a command on its way)."""
        self.ended = True
        tied = self.tied
        if tied is not None:
            tied.end(1)

    # --- the client ----------------------------------------------------------------------

    def _open(self, timeout: float | None) -> None:
        session = self._any_session(timeout)
        if session is None:
            raise ChannelClosed(sent=False)
        argv = [*self.argv, "-C", "attach-session", "-t", session, "-f", "no-output,ignore-size"]
        self.tied = Tied(argv)  # killed by its guard if this process is killed
        assert self.tied.process.stdout is not None
        assert self.tied.process.stdin is not None
        self.out_fd = self.tied.process.stdout.fileno()
        self.in_fd = self.tied.process.stdin.fileno()
        os.set_blocking(self.out_fd, False)
        self.readable = select.poll()
        self.readable.register(self.out_fd, select.POLLIN)
        self.buffer = b""
        token = f"tmux-bridge-channel-{secrets.token_hex(16)}"
        self.token = token.encode()
        self.ask = command_line(["display-message", "-p", format_text_timed(token)]).encode()
        # a command read before the client is attached may run without one (tmux 3.3a):
        # wait for the attach's own notification first
        deadline = time.monotonic() + min(OPEN_WAIT, timeout or OPEN_WAIT)
        while True:
            line = self._line(deadline)
            if line is None:
                self._close()
                raise ChannelClosed(sent=False)
            if line.startswith(b"%session-changed"):
                return

    def _any_session(self, timeout: float | None) -> str | None:
        """A session to attach to; :class:`TimeoutError` when tmux does not answer
        within ``timeout`` seconds (10 without one)."""
        try:
            listed = subprocess.run(
                [*self.argv, "list-sessions", "-F", "#{session_id}"],
                capture_output=True,
                check=False,
                timeout=timeout or 10,
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError from None
        ids = listed.stdout.split() if listed.returncode == 0 else []
        return ids[0].decode() if ids else None

    def _write(self, data: bytes) -> None:
        write_all(self.in_fd, data)

    def _read_reply(self, token: bytes, timeout: float | None) -> Reply:
        """The blocks up to the one that printed ``token``; :class:`ChannelForged` when
        the framing shows a program's text posing as tmux's."""
        deadline = None if timeout is None else time.monotonic() + timeout
        reply = Reply()
        block: list[bytes] | None = None
        begun = b""  # the open block's "<time> <number> <flags>": its end says the same
        ended: set[bytes] = set()  # the ends of the blocks closed so far
        while True:
            line = self._line(deadline)
            if line is None:
                if reply.blocks:  # the command ran (and ended the client's session)
                    return reply
                raise ChannelClosed(sent=True)
            if line == token and block != []:  # the token is only its own block's line
                raise ChannelForged()
            if block is None:
                if line.startswith(b"%begin "):
                    block, begun = [], line[len(b"%begin ") :]
                elif line.partition(b" ")[2] in ended and line.startswith((b"%end ", b"%error ")):
                    raise ChannelForged()  # a block's real end after a forged one
                continue  # a notification
            if line in (b"%end " + begun, b"%error " + begun):
                if block == [token]:
                    return reply
                ended.add(begun)
                reply.blocks += 1
                if line.startswith(b"%error "):  # as a client says it (it parses first)
                    reply.err += [part.removeprefix(b"parse error: ") for part in block]
                else:
                    reply.out += block
                block = None
            else:
                block.append(line)

    def _ended(self) -> bool:
        """Whether the client has ended since the last command (its session went, the
        server stopped, it was killed): what it said meanwhile, read without waiting,
        holds its ``%exit`` or its end (its stdout closes when it ends: no other process
        holds that pipe). Notifications read on the way are dropped."""
        if not self.readable.poll(0):  # nothing said since: the common case
            return False
        while True:
            try:
                chunk = os.read(self.out_fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                return True
            self.buffer += chunk
        lines = self.buffer.split(b"\n")
        self.buffer = lines.pop()
        return any(line.startswith(b"%exit") for line in lines)

    def _line(self, deadline: float | None) -> bytes | None:
        """The client's next line; ``None`` when it ended (or said ``%exit``)."""
        fd = self.out_fd
        while b"\n" not in self.buffer:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise TimeoutError
            if not self.readable.poll(None if wait is None else wait * 1000):
                continue
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return None if line.startswith(b"%exit") else line

    def _close(self) -> None:
        tied, self.tied = self.tied, None
        if tied is not None:
            tied.close()

"""The one place that runs tmux.

Every tmux call goes through :meth:`Tmux.run`: an argv list (never a shell), always with
the server named explicitly (``-L NAME`` or ``-S PATH``), so the server is the one the
caller chose even when the caller itself runs inside another tmux (``$TMUX`` is ignored
once ``-L`` or ``-S`` is given).

Several tmux commands run in one invocation when chained with :func:`sequence`, which
is the only code that joins them: it escapes every argument that ends in ``;`` so that
no text from an agent (a key name, a line of code) can end one tmux command and start
another.

Processes are started with ``os.posix_spawnp`` rather than :mod:`subprocess`: importing
subprocess costs about 2 ms, and tmux-send's start-up time is part of its latency. For
the same reason a CLI call may start its first look at the pane ahead
(:meth:`Tmux.look_ahead`), while it imports the rest of its code.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..errors import TmuxError, TmuxNotFound, TmuxTimeout
from ..tuples import NamedTuple
from .runtime import write_all as write_all  # (and the faces' way to it)

DEFAULT_SOCKET = "default"


class TmuxResult(NamedTuple):
    """What one tmux invocation did. ``stdout``/``stderr`` are decoded losslessly."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def sequence(*commands: Sequence[str]) -> list[str]:
    """One argv running ``commands`` in order inside the server, each a tmux command
    with its arguments.

    tmux takes an argument that ends in ``;`` as the end of a command (``a;`` is ``a``
    and then a new command) unless the ``;`` is escaped as ``\\;``, in which case one
    backslash is removed. So every argument ending in ``;`` gets one more backslash: an
    agent's ``Escape;`` stays the text ``Escape;`` and a person's own ``x\\;`` stays
    ``x\\;``.
    """
    argv: list[str] = []
    for command in commands:
        if not command:
            continue
        if argv:
            argv.append(";")
        argv.extend(arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in command)
    return argv


def paste_commands(
    buffer: str, pane_id: str, *, bracketed: bool, raw: bool = False, delete: bool = True
) -> tuple[list[str], list[str]]:
    """The one way text is pasted into a pane: the tmux command that loads the text (on
    its stdin) into the paste buffer ``buffer``, and the one that pastes that buffer
    into pane ``pane_id``. ``bracketed`` (``-p``): inside bracketed-paste markers when
    the program asked for them (text for a program's input box: its caller passes it
    through :func:`~tmux_bridge.text.seams.pasted_text`); ``raw`` (``-r``): line breaks
    kept as LF, not made CR; ``delete`` (``-d``): the buffer deleted once pasted."""
    flags = [flag for flag, wanted in (("-d", delete), ("-p", bracketed), ("-r", raw)) if wanted]
    return ["load-buffer", "-b", buffer, "-"], ["paste-buffer", *flags, "-b", buffer, "-t", pane_id]


class Tmux:
    """One tmux server, named by socket name (``-L``) or socket path (``-S``).

    ``timeout`` (seconds) bounds every tmux invocation: one that has not finished by
    then is killed and :class:`TmuxTimeout` raised. ``None`` (tmux-send's choice) waits
    as long as tmux takes; a server that must keep answering sets one.
    """

    __slots__ = ("socket_args", "timeout")

    def __init__(
        self,
        socket_name: str | None = None,
        socket_path: str | None = None,
        timeout: float | None = None,
    ) -> None:
        if socket_path:
            self.socket_args: tuple[str, str] = ("-S", socket_path)
        else:
            self.socket_args = ("-L", socket_name or DEFAULT_SOCKET)
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Tmux({self.socket_args[0]} {self.socket_args[1]})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tmux) and other.socket_args == self.socket_args

    def __hash__(self) -> int:
        return hash(self.socket_args)

    @property
    def is_default(self) -> bool:
        """Whether this is the default server of ``$TMUX_TMPDIR`` (``-L default``)."""
        return self.socket_args == ("-L", DEFAULT_SOCKET)

    def socket_path(self) -> str:
        """The server's socket file, as tmux derives it from ``$TMUX_TMPDIR``."""
        flag, value = self.socket_args
        if flag == "-S":
            return value
        base = os.environ.get("TMUX_TMPDIR") or "/tmp"
        return os.path.join(base, f"tmux-{os.getuid()}", value)

    def argv(self, *args: str) -> list[str]:
        """The full argv for a tmux command on this server (for exec-style use)."""
        return ["tmux", *self.socket_args, *args]

    def run(self, *args: str, check: bool = True, stdin: bytes | None = None) -> TmuxResult:
        """Run one tmux command (or a chain made with :func:`sequence`) and wait for it.

        Blocks until tmux exits (about 2 ms). Raises :class:`TmuxNotFound` when tmux is
        not installed, :class:`TmuxTimeout` when it runs past the server's ``timeout``,
        and :class:`TmuxError` naming the subcommand when tmux exits non-zero and
        ``check`` is true.
        """
        _runs.count = getattr(_runs, "count", 0) + 1
        result = None
        if _channels_on and stdin is None:
            result = _through_channel(self, args)
        if result is None:
            argv = ("tmux", *self.socket_args, *args)
            ahead = _taken_ahead(argv if stdin is None else None)
            if ahead is not None:
                result = _finish(ahead, self.timeout)
            else:
                result = _finish(_start(argv, stdin), self.timeout)
        if check and result.returncode != 0:
            raise TmuxError(result.argv, result.returncode, result.stderr)
        return result

    def run_all(
        self, *commands: Sequence[str], check: bool = True, stdin: bytes | None = None
    ) -> TmuxResult:
        """Run several tmux commands in one invocation, in order (see :func:`sequence`)."""
        return self.run(*sequence(*commands), check=check, stdin=stdin)

    def look_ahead(self, *commands: Sequence[str]) -> None:
        """Start ``commands`` (tmux commands that only look) now, in a client of their own,
        for this thread's next :meth:`run` (or :meth:`run_all`) of exactly these
        commands to take the answer instead of waiting for a new client: a CLI call
        starts the look at its pane before it imports the rest of its code, which hides
        most of a client's 3 ms. The answer is taken only within :data:`AHEAD_FRESH`
        seconds of the start (else it is dropped and the command run again); any other
        command of the thread drops it first. Nothing when this process uses channels
        (see :func:`use_channels`): a command there costs less than the client would."""
        if _channels_on:
            return
        args = sequence(*commands)
        if not all(command[0] in _ONLY_LOOK for command in _split(args)):
            raise ValueError("only commands that change nothing are started ahead")
        drop_look_ahead()
        argv = ("tmux", *self.socket_args, *args)
        with contextlib.suppress(TmuxNotFound):  # the call's own run says so
            _ahead.started = (argv, _start(argv, None), time.monotonic())


AHEAD_FRESH = 0.1  # seconds a look started ahead is good for (a call's imports: ~20 ms)
_ahead = threading.local()  # this thread's look started ahead: (argv, started, when)


def drop_look_ahead() -> None:
    """End this thread's look started ahead, if any (it only looks: its client is
    killed, not waited for, as a stopped server would keep it waiting)."""
    started = getattr(_ahead, "started", None)
    _ahead.started = None
    if started is not None:
        client: _Started = started[1]
        with contextlib.suppress(ProcessLookupError):
            os.kill(client.pid, 9)
        os.waitpid(client.pid, 0)
        os.close(client.out_r)
        os.close(client.err_r)


def look_started() -> float:
    """When (``time.time()``) this thread's next look at tmux began, at the earliest:
    the look started ahead for it (:meth:`Tmux.look_ahead`), if one is on its way, else
    now. What that look shows is at least this new."""
    started = getattr(_ahead, "started", None)
    now = time.time()
    return now if started is None else now - (time.monotonic() - started[2])


def _taken_ahead(argv: tuple[str, ...] | None) -> _Started | None:
    """The client started ahead for ``argv``, still fresh; any other one is dropped."""
    started = getattr(_ahead, "started", None)
    if started is None:
        return None
    if started[0] == argv and time.monotonic() - started[2] <= AHEAD_FRESH:
        _ahead.started = None
        return started[1]  # type: ignore[no-any-return]
    drop_look_ahead()
    return None


_runs = threading.local()  # the tmux commands each thread ran: see :func:`commands_run`


def commands_run() -> int:
    """How many tmux commands this thread has run: the process facts read at a call's
    start answer until it runs its second (:mod:`tmux_bridge.infra.procps`)."""
    return int(getattr(_runs, "count", 0))


# Whether this process sends its tmux commands down one control-mode channel per server
# (:mod:`tmux_bridge.infra.channel`): a resident process (serve, mcp) turns it on; a CLI
# call, which opens a client once or twice, keeps its subprocesses.
_channels_on = False
_channels: dict[tuple[str, str], Any] = {}
_channels_lock = threading.Lock()
# commands that change nothing: run again when a channel ended with the command sent
_ONLY_LOOK = frozenset(
    {
        "display-message", "display", "list-sessions", "ls", "list-windows", "lsw",
        "list-panes", "lsp", "list-clients", "lsc", "show-options", "show",
        "show-environment", "showenv", "has-session", "has", "capture-pane", "capturep",
        "show-buffer", "showb",
    }
)  # fmt: skip
# commands that must have a client of their own: never down a channel
_OWN_CLIENT = frozenset({"save-buffer", "saveb"})  # it writes a file through its client


def use_channels(on: bool) -> None:
    """The one switch of how this process runs tmux: ``True`` for a resident process
    (a control-mode channel per server, a subprocess where a channel cannot serve),
    ``False`` (the default) for a subprocess per call. Turning it off closes the
    channels."""
    global _channels_on
    with _channels_lock:
        _channels_on = on
        if not on:
            for channel in _channels.values():
                channel.close()
            _channels.clear()


def end_channels() -> None:
    """At a resident process's end: its control clients killed now, whatever command is
    on its way, and every command after this run as a subprocess."""
    global _channels_on
    with _channels_lock:  # held briefly by the others: no new channel after this
        _channels_on = False
        ending = list(_channels.values())
        _channels.clear()  # (a command already holding one sees it ended, and runs alone)
    for channel in ending:
        channel.end()


def _forget_channels_in_child() -> None:
    """In a forked child (a job's keeper): the channels are the parent's (their pipes
    are already ``/dev/null`` here, :mod:`~tmux_bridge.infra.tied`): commands run as
    subprocesses, and the lock another thread may have held at the fork is a new one.
    A look started ahead by the parent is its own."""
    global _channels_on, _channels_lock
    _channels_on = False
    _channels.clear()
    _channels_lock = threading.Lock()
    _ahead.started = None  # the parent's client, not this process's to wait for


os.register_at_fork(after_in_child=_forget_channels_in_child)


def _through_channel(tmux: Tmux, args: Sequence[str]) -> TmuxResult | None:
    """``args`` run down the server's channel; ``None`` when it cannot serve them (no
    session to attach to, a command that must have its own client). A channel that ends
    with the command sent (its session or server went away as it was written) leaves no
    way to know whether it ran: commands that only look are run again, others raise
    :class:`TmuxError` (typing twice into a pane is worse than an error)."""
    from . import channel as control_channel  # (a CLI call never needs it)

    commands = _split(args)
    if any(command and command[0] in _OWN_CLIENT for command in commands):
        return None
    with _channels_lock:
        if not _channels_on:  # switched off (or ended) since the caller looked
            return None
        channel = _channels.get(tmux.socket_args)
        if channel is None:
            channel = _channels[tmux.socket_args] = control_channel.Channel(
                ["tmux", *tmux.socket_args]
            )
    for _attempt in (1, 2):
        try:
            code, out, err = channel.run(commands, tmux.timeout)
        except control_channel.ChannelClosed as closed:
            if closed.sent and not all(command[0] in _ONLY_LOOK for command in commands):
                message = "the tmux control channel closed before answering"
                raise TmuxError(tuple(tmux.argv(*args)), 1, message) from None
            continue  # opened anew on the next attempt, else a subprocess
        except control_channel.ChannelForged:
            if not all(command[0] in _ONLY_LOOK for command in commands):
                forged = "a reply on the tmux control channel was forged"
                raise TmuxError(tuple(tmux.argv(*args)), 1, forged) from None
            return None  # looked again through a client of its own
        except TimeoutError:
            raise TmuxTimeout(tuple(tmux.argv(*args)), tmux.timeout or 0.0) from None
        return TmuxResult(("tmux", *tmux.socket_args, *args), code, out, err)
    return None


def _split(args: Sequence[str]) -> list[list[str]]:
    """A chain made by :func:`sequence` back into its commands (its escapes undone)."""
    commands: list[list[str]] = [[]]
    for arg in args:
        if arg == ";":
            commands.append([])
        else:
            commands[-1].append(arg[:-2] + ";" if arg.endswith("\\;") else arg)
    return [command for command in commands if command]


class _Started(NamedTuple):
    """A tmux client on its way: its pid and the read ends of its stdout and stderr."""

    argv: tuple[str, ...]
    pid: int
    out_r: int
    err_r: int


def _start(argv: tuple[str, ...], stdin: bytes | None) -> _Started:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, in_r, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    except FileNotFoundError:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            os.close(fd)
        raise TmuxNotFound() from None
    for fd in (out_w, err_w, in_r):
        os.close(fd)
    if stdin:
        write_all(in_w, stdin)
    os.close(in_w)
    return _Started(argv, pid, out_r, err_r)


def _finish(started: _Started, timeout: float | None) -> TmuxResult:
    """Wait for a started client's answer (``timeout`` seconds at most)."""
    argv, pid, out_r, err_r = started
    try:
        out, err = _collect(out_r, err_r, timeout)
    except TimeoutError:
        os.kill(pid, 9)  # SIGKILL: a stopped server leaves its client stuck too
        os.waitpid(pid, 0)
        raise TmuxTimeout(argv, timeout or 0.0) from None
    _, wait_status = os.waitpid(pid, 0)
    return TmuxResult(
        argv,
        os.waitstatus_to_exitcode(wait_status),
        out.decode("utf-8", "surrogateescape"),
        err.decode("utf-8", "surrogateescape"),
    )


def _collect(out_r: int, err_r: int, timeout: float | None = None) -> tuple[bytes, bytes]:
    """Read both pipes to their end, without either one's buffer filling up. Raises
    TimeoutError (both pipes closed) when they are still open after ``timeout`` s."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = set(chunks)
    deadline = None if timeout is None else time.monotonic() + timeout
    while open_fds:
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0) * 1000
        events = poller.poll(wait)
        if not events and deadline is not None and time.monotonic() >= deadline:
            for fd in open_fds:
                os.close(fd)
            raise TimeoutError
        for fd, _event in events:
            data = os.read(fd, 65536)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_fds.discard(fd)
                os.close(fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def is_no_server_error(stderr: str) -> bool:
    """True when tmux failed because no server (or no session) answered."""
    text = stderr.lower()
    return any(
        phrase in text
        for phrase in (
            "no server running",
            "error connecting",
            "can't find session",
            "can't find pane",
            "can't find window",
            "no such file or directory",
            "server exited",
            "lost server",
        )
    )


def tmux_version() -> str | None:
    """What ``tmux -V`` prints (``tmux 3.3a``), or ``None`` when tmux is not installed."""
    try:
        result = _finish(_start(("tmux", "-V"), None), 10.0)
    except (TmuxNotFound, TmuxTimeout):
        return None
    return result.stdout.strip() or result.stderr.strip() or None

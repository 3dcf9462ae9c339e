"""The one place that runs tmux.

Every tmux call goes through :func:`run_tmux`: an argv list (never a shell), always
``-L default`` so the server is the user's default one under ``$TMUX_TMPDIR`` even when
the caller itself runs inside another tmux (``$TMUX`` is ignored once ``-L`` is given).

Processes are started with ``os.posix_spawnp`` rather than :mod:`subprocess`: importing
subprocess costs about 2 ms, and tmux-send's start-up time is part of its latency.
"""

from __future__ import annotations

import os
import select
from typing import NamedTuple

from .errors import TmuxError, TmuxNotFound

SOCKET_NAME = "default"


class TmuxResult(NamedTuple):
    """What one tmux invocation did. ``stdout``/``stderr`` are decoded losslessly."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def tmux_argv(*args: str) -> list[str]:
    """The full argv for a tmux command on the bridge's server (for exec-style use)."""
    return ["tmux", "-L", SOCKET_NAME, *args]


def run_tmux(*args: str, check: bool = True, stdin: bytes | None = None) -> TmuxResult:
    """Run ``tmux -L default ARGS...`` and wait for it.

    Several tmux commands can be chained in one invocation with a ``";"`` argument;
    they run in order inside the server. Blocks until tmux exits (about 2 ms).

    Raises :class:`TmuxNotFound` when tmux is not installed, and :class:`TmuxError`
    naming the subcommand when tmux exits non-zero and ``check`` is true.
    """
    argv = tuple(tmux_argv(*args))
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
        _write_all(in_w, stdin)
    os.close(in_w)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = set(chunks)
    while open_fds:
        for fd, _event in poller.poll():
            data = os.read(fd, 65536)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_fds.discard(fd)
                os.close(fd)
    _, wait_status = os.waitpid(pid, 0)
    result = TmuxResult(
        argv,
        os.waitstatus_to_exitcode(wait_status),
        b"".join(chunks[out_r]).decode("utf-8", "surrogateescape"),
        b"".join(chunks[err_r]).decode("utf-8", "surrogateescape"),
    )
    if check and result.returncode != 0:
        raise TmuxError(argv, result.returncode, result.stderr)
    return result


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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

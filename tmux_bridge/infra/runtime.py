"""Where the bridge lives: its names, its private runtime directory, and the call lock.

The runtime directory (default ``/tmp/tmux-bridge-$USER``) holds the per-call files the
pane's shell sources. Since anything in it runs in the person's shell, it must be ours
alone: a directory we own, mode 0700, not a symlink. Files in it are created with
O_EXCL and mode 0600 and removed after the call.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import select
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from ..cancel import Cancel
from ..errors import Cancelled, LockTimeout, RuntimeDirError
from ..text import seams

# Per-call files, removed after each call; leftovers of a killed call are swept up.
CALL_FILE_SUFFIXES = (".run", ".cmd", ".scratch", ".code", ".py", ".js", ".sql", ".in", ".out")
INFLIGHT_FILE = "inflight"


def user_name() -> str:
    """``$USER``, else the account name of the effective uid."""
    name = os.environ.get("USER")
    if name:
        return name
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def session_name() -> str:
    """The bridge session: ``$TMUX_BRIDGE_SESSION``, else ``tmux-bridge-$USER``."""
    return os.environ.get("TMUX_BRIDGE_SESSION") or f"tmux-bridge-{user_name()}"


def runtime_dir() -> str:
    """The runtime directory: ``$TMUX_BRIDGE_DIR``, else ``/tmp/tmux-bridge-$USER``."""
    return os.environ.get("TMUX_BRIDGE_DIR") or f"/tmp/tmux-bridge-{user_name()}"


def pane_directory(wanted: str | None) -> tuple[str, str | None]:
    """Where a new pane of ours starts: ``wanted`` when tmux can start a pane exactly
    there (:func:`~tmux_bridge.text.seams.start_directory`) and it is a directory we may
    enter, else the home directory (else ``/``), with a note that says so: tmux itself
    would start the pane in another directory without a word. A few stat calls."""
    if wanted and enterable(wanted):
        return wanted, None
    home = os.path.expanduser("~")
    fallback = home if enterable(home) else "/"
    what = repr(wanted) if wanted else "its directory (which could not be read)"
    return fallback, (
        f"The new shell starts in {fallback}: tmux cannot start one in {what} (it is "
        "gone, may not be entered, or its path is longer than "
        f"{seams.MAX_DIRECTORY_BYTES} bytes)."
    )


def enterable(path: str) -> bool:
    """Whether tmux can start a pane in ``path``: an absolute path it can pass to
    chdir(2) exactly, naming a directory we may enter."""
    try:
        seams.start_directory(path)
    except ValueError:
        return False
    return os.path.isdir(path) and os.access(path, os.X_OK)


def ensure_private_dir(path: str) -> None:
    """Create ``path`` with mode 0700, or check that the existing one is safe to use.

    Raises :class:`RuntimeDirError` when it is a symlink, not a directory, owned by
    another user, or open to group or others. Nothing is changed in that case.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise RuntimeDirError(
            f"cannot create the runtime directory {path}: {exc.strerror}"
        ) from exc
    check_private_dir(path)


def check_private_dir(path: str) -> None:
    """Raise :class:`RuntimeDirError` unless ``path`` is our own 0700 directory."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise RuntimeDirError(f"cannot use the runtime directory {path}: {exc.strerror}") from exc
    hint = "Remove it (or set TMUX_BRIDGE_DIR to another path) and run tmux-bridge again."
    if stat.S_ISLNK(info.st_mode):
        raise RuntimeDirError(f"refusing the runtime directory {path}: it is a symlink. {hint}")
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(f"refusing the runtime directory {path}: not a directory. {hint}")
    if info.st_uid != os.geteuid():
        raise RuntimeDirError(
            f"refusing the runtime directory {path}: it is owned by uid {info.st_uid}, "
            f"not by you (uid {os.geteuid()}). {hint}"
        )
    if info.st_mode & 0o077:
        raise RuntimeDirError(
            f"refusing the runtime directory {path}: its mode is "
            f"{stat.S_IMODE(info.st_mode):04o}, open to other users; it must be 0700. "
            f"Run `chmod 700 {path}` if you trust its contents, or remove it."
        )


def usable_private_dir(path: str) -> bool:
    """Whether ``path`` is our own 0700 directory (made so when missing), for a writer
    that never fails a call (the audit log, the panes' context): it writes nothing when
    this is false. A directory another user made in our place (``/tmp`` is shared) gets
    nothing of ours, not even the text of a refused call."""
    try:
        ensure_private_dir(path)
    except RuntimeDirError:
        return False
    return True


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor (a file, a pipe)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_private_file(path: str, data: bytes) -> None:
    """Create ``path`` exclusively (O_EXCL, mode 0600, no symlink following) and fill it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes) -> None:
    """Replace ``path`` with a new private file holding ``data``, so that a reader sees
    the old content or the new, never a half-written file."""
    temporary = f"{path}.{os.getpid()}.tmp"
    remove_quietly(temporary)
    write_private_file(temporary, data)
    os.replace(temporary, path)


def remove_quietly(path: str) -> None:
    """Unlink ``path``; a file that is already gone is fine."""
    with suppress(FileNotFoundError):
        os.unlink(path)


def sweep_call_files(directory: str) -> bool:
    """Remove per-call files left by a tmux-send that was killed (SIGKILL) mid-call;
    whether there were any (that call may have changed the pane).

    Only call this while holding the call lock: then no other call's files exist.
    """
    swept = False
    with os.scandir(directory) as entries:
        for entry in entries:
            ours = entry.name.endswith(CALL_FILE_SUFFIXES) or entry.name == INFLIGHT_FILE
            if ours and not entry.is_dir(follow_symlinks=False):
                remove_quietly(entry.path)
                swept = True
    return swept


@contextmanager
def call_lock(
    directory: str,
    deadline: float,
    on_wait: Callable[[], None],
    wait_notice_after: float = 1.0,
    cancel: Cancel | None = None,
    since: float | None = None,
) -> Iterator[bool]:
    """Hold a pane's call lock: an exclusive flock on its runtime directory itself.

    Calls to one pane are serialized so that each gets only its own output; calls to
    different panes lock different directories and run in parallel. The kernel drops
    the lock when its holder dies, so a killed tmux-send never blocks the next call.

    The wait polls the lock (every 1 ms at first, every 10 ms at most) and sleeps on
    ``cancel.fd``, so it works on any thread and a cancellation ends it at once with
    :class:`Cancelled`. ``on_wait`` runs once if the lock is still busy after
    ``wait_notice_after`` seconds. Raises :class:`LockTimeout` when ``deadline`` (a
    ``time.monotonic()`` value) passes before the lock is free.

    Yields whether what the caller saw of the pane before may have changed meanwhile:
    it had to wait, or the lock was held and let go after ``since`` (a ``time.time()``
    value: when the caller looked), though it was free when tried. Every holder marks
    its letting go on the directory (its modification time, to the nanosecond), as
    anything else written there does.
    """
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        waited = _acquire(fd, deadline, on_wait, wait_notice_after, cancel)
        try:
            yield waited or (since is not None and os.fstat(fd).st_mtime >= since)
        finally:
            mark_let_go(directory, fd)
    finally:
        os.close(fd)  # closing the last descriptor releases the flock


def mark_let_go(directory: str, fd: int = -1) -> None:
    """Set the directory's times to now: its lock is let go now (see :func:`call_lock`).
    A holder that ends otherwise than by leaving :func:`call_lock` (a job's keeper,
    forked with the lock, exits) calls it itself."""
    now = time.time_ns()
    with suppress(OSError):  # the directory went (a test's, a removed runtime)
        os.utime(fd if fd >= 0 and os.utime in os.supports_fd else directory, ns=(now, now))


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise
        return False
    return True


def _acquire(
    fd: int,
    deadline: float,
    on_wait: Callable[[], None],
    notice_after: float,
    cancel: Cancel | None,
) -> bool:
    if _try_lock(fd):
        return False
    notice_at = time.monotonic() + notice_after
    noticed = False
    pause = 0.001
    while not _try_lock(fd):
        now = time.monotonic()
        if now >= deadline:
            raise LockTimeout(
                "another call kept the pane busy until the overall time limit ran out; "
                "nothing was run. Try again later, or allow more time."
            )
        if not noticed and now >= notice_at:
            noticed = True
            on_wait()
        if _sleep_or_cancelled(min(pause, deadline - now), cancel):
            assert cancel is not None and cancel.signum is not None
            raise Cancelled(cancel.signum)
        pause = min(pause * 2, 0.01)
    return True


def _sleep_or_cancelled(seconds: float, cancel: Cancel | None) -> bool:
    """Sleep ``seconds``; True at once when the call is (or becomes) cancelled."""
    if cancel is None:
        time.sleep(max(seconds, 0))
        return False
    ready, _, _ = select.select([cancel.fd], [], [], max(seconds, 0))
    return bool(ready) or cancel.cancelled

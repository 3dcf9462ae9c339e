"""The process facts from POSIX tools: ``ps``, ``lsof``, termios, ``kill(pid, 0)``, kqueue.

The portable implementation of :class:`tmux_bridge.infra.procfacts.ProcessFacts`, for
macOS and the BSDs (chosen where there is no ``/proc``) and for a pass of the tests on
Linux (``TMUX_BRIDGE_PROCESS=portable``). Written from the ``ps(1)`` pages of procps,
FreeBSD and macOS: the fields ``pid ppid pgid tpgid stat lstart wchan comm args user``
are common to all three. What it cannot see is :class:`~.procfacts.Unknown`:

* without ``lsof``, the files a process has open (and its working directory: callers
  then take tmux's ``pane_current_path``);
* which descriptor a sleeping process reads: a read of the terminal is known from the
  wait channel where it names one (BSD ``ttyin``, ``ttread``, ``ttyraw``, ``ttycan``);
  Linux names it ``wait_woken`` as it names a socket read, so there a process that has
  no socket open (``lsof``) counts as reading the terminal;
* start times have a second's resolution (``lstart``), not a clock tick's;
* one ``ps -A`` answers every question about states, groups, parents and names asked
  within :data:`FRESH` seconds of it, in the thread that asked; at a call's start, every
  question of that start (:func:`begin_call`: the audit log's, the pane's front, its
  readiness, until the call acts): such a fact may be that much older than a read of
  ``/proc`` would be, but one ``ps`` serves a call such as ``tmux-send -- true``, and
  that ``ps`` runs while the call imports its code (:func:`look_ahead`);
* waiting for a process to end is kqueue's ``NOTE_EXIT`` where there is kqueue, else a
  pipe that a thread closes once ``kill(pid, 0)`` fails (polled every 10 ms): either way
  a descriptor that becomes readable when the process ends, as a pidfd does.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
import time
from typing import TYPE_CHECKING, Any

from .procfacts import ProcStat, Unknown
from .procfs import kind_of_name, password_mode, signal_group
from .procfs import line_editor_active as line_editor_active  # termios: POSIX, shared
from .procfs import local_modes as local_modes
from .tmux import commands_run

if TYPE_CHECKING:
    from ..text.shells import ShellKind

NAME = "portable"
FRESH = 0.03  # seconds a snapshot of the process table answers for
AHEAD_FRESH = 0.1  # seconds a call's first reading started ahead is good for (imports)
CALL_START = 1.0  # at most this long, the snapshot of a call's start answers for

# Wait channels of a process blocked reading a terminal (BSD, macOS; Linux before 4.x).
TTY_READS = {"ttyin", "ttread", "ttyraw", "ttycan", "n_tty_read"}
# Linux's name for a read of a terminal and of a socket alike.
AMBIGUOUS_READS = {"wait_woken"}
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
_SOCKETS = {"IPv4", "IPv6", "unix", "sock", "systm"}  # lsof's TYPE of a socket


def limits() -> list[str]:
    """What this implementation cannot see on this machine, as sentences."""
    found = [
        "start times to the second (ps lstart), not to the clock tick",
        "a process's exact arguments: ps joins them with spaces",
        "another process's environment: an agent's own TMUX_BRIDGE_AGENT is not read "
        "(its session's is)",
    ]
    if _which("lsof") is None:
        found.append(
            "no lsof: open files and working directories are unknown (install lsof); "
            "tmux's pane_current_path is used for the directory"
        )
    if not hasattr(select, "kqueue"):
        found.append("no kqueue: the end of a process is seen within 10 ms (polled), not at once")
    return found


def _which(name: str) -> str | None:
    """The path of the command ``name`` on ``PATH`` (shutil's import costs ms)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _run(args: list[str], limit: float = 10.0) -> list[str]:
    """The output lines of a tool run with the C locale; [] when it fails, is absent or
    takes more than ``limit`` s."""
    spawned = _spawn(args)
    return [] if spawned is None else _collect(spawned, limit)


def _spawn(args: list[str]) -> tuple[int, int] | None:
    """Start a tool with the C locale: its pid and the read end of its stdout; ``None``
    when it cannot start. Spawned directly, as infra/tmux.py spawns tmux (the import of
    :mod:`subprocess` costs milliseconds of every call)."""
    env = dict(os.environ, LC_ALL="C")
    out_r, out_w = os.pipe()
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:
        pid = os.posix_spawnp(args[0], args, env, file_actions=actions)
    except OSError:
        os.close(out_r)
        return None
    finally:
        os.close(out_w)
    return pid, out_r


def _collect(spawned: tuple[int, int], limit: float = 10.0) -> list[str]:
    """A spawned tool's output lines, once it ends (killed after ``limit`` s: then what
    it printed so far)."""
    pid, out_r = spawned
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit
    with os.fdopen(out_r, "rb", buffering=0) as out:
        while select.select([out], [], [], max(deadline - time.monotonic(), 0))[0]:
            chunk = out.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, 9)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace").splitlines()


def _ps(fields: str, pids: list[int] | None = None) -> list[list[str]]:
    """``ps -o FIELDS`` of ``pids`` (every process when ``None``), each line split on
    blanks: the last field keeps its blanks (put free text there)."""
    count = fields.count(",") + 1
    select_args = ["-A"] if pids is None else [a for p in pids for a in ("-p", str(p))]
    lines = _run(["ps", *select_args, "-o", ",".join(f"{f}=" for f in fields.split(","))])
    return [line.split(None, count - 1) for line in lines if line.strip()]


def _start(words: list[str]) -> int:
    """``lstart`` (``Thu Nov 26 10:36:28 2026``, C locale) as seconds of the epoch."""
    _, month, day, clock, year = words[:5]
    hour, minute, second = (int(x) for x in clock.split(":"))
    moment = (int(year), _MONTHS.get(month, 1), int(day), hour, minute, second, 0, 0, -1)
    return int(time.mktime(moment))


def _stat(row: list[str], starts: dict[str, int]) -> ProcStat:
    """A row of ``pgid,tpgid,stat`` and ``lstart``'s five words; ``starts`` keeps the
    starts already worked out."""
    tpgid = int(row[1])
    lstart = " ".join(row[3:8])
    start = starts.get(lstart)
    if start is None:
        start = starts[lstart] = _start(row[3:8])
    return ProcStat(row[2][:1], int(row[0]), tpgid if tpgid > 0 else -1, start)


def proc_stat(pid: int) -> ProcStat | None:
    """From the snapshot; a process that ended since is gone, one that started since
    (a job's keeper forked a moment ago) is read anew."""
    row = _table().get(pid)
    if row is None and pid > 0 and alive(pid):
        forget()
        row = _table().get(pid)
    return row[1] if row and alive(pid) else None


class _Moment(threading.local):
    """This thread's snapshot of the process table (one ``ps``): every process's parent
    and stat, its name (``names``) and wait channel (``channels``)."""

    taken = -1.0  # time.monotonic() when it was read; -1: read anew at the next question
    starting = False  # the next snapshot is the call's start (begin_call)
    runs = -1  # for the call's start: the thread's tmux commands when it was read
    table: dict[int, tuple[int, ProcStat]] = {}  # noqa: RUF012 (replaced whole)
    names: dict[int, str] = {}  # noqa: RUF012
    channels: dict[int, str] = {}  # noqa: RUF012 (wait channels: "-" when running)
    # the call's first reading, started ahead (:func:`look_ahead`): the ps (pid, stdout),
    # when it started, the thread's tmux commands then, and the process that started it
    ahead: tuple[tuple[int, int], float, int, int] | None = None


_MOMENT = _Moment()


def look_ahead() -> None:
    """A call is about to start: start the ``ps`` of its first reading now, while it
    imports its code (a CLI's), for :func:`begin_call`'s first snapshot to take; taken
    only within :data:`AHEAD_FRESH` s of its start (else read anew), dropped by
    :func:`forget` and never taken by a forked child. The reading is then as old as the
    ``ps``: still before the call acts, as every reading of its start is."""
    _drop_ahead()
    spawned = _spawn(["ps", "-A", *_TABLE_FIELDS])
    if spawned is not None:
        _MOMENT.ahead = (spawned, time.monotonic(), commands_run(), os.getpid())


def _drop_ahead() -> None:
    ahead, _MOMENT.ahead = _MOMENT.ahead, None
    if ahead is None:
        return
    (pid, out_r), _, _, owner = ahead
    os.close(out_r)
    if owner == os.getpid():  # a forked child leaves its parent's ps alone
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)


def _taken_ahead() -> tuple[tuple[int, int], float, int] | None:
    """The reading started ahead, if it is this process's and fresh (else dropped)."""
    ahead = _MOMENT.ahead
    if ahead is None:
        return None
    if ahead[3] != os.getpid() or time.monotonic() - ahead[1] > AHEAD_FRESH:
        _drop_ahead()
        return None
    _MOMENT.ahead = None
    return ahead[0], ahead[1], ahead[2]


def begin_call() -> None:
    """A call starts: nothing read before it answers its questions (never across calls),
    and its first snapshot answers every question of its start (the audit log's, the
    pane's front, its readiness) until it acts: :func:`forget`, or its second tmux
    command (the first finds the pane), or :data:`CALL_START` s. A reading started
    :func:`ahead <look_ahead>` is kept for it."""
    _MOMENT.taken, _MOMENT.runs, _MOMENT.starting = -1.0, -1, True


def forget() -> None:
    """The call acts, or waits for a change: its next question reads the processes anew.
    :func:`exit_fd` and :func:`signal_foreground` forget too (a caller that watches for a
    process's end, or signals one, asks about change next)."""
    _drop_ahead()
    _MOMENT.taken, _MOMENT.runs, _MOMENT.starting = -1.0, -1, False


def _answers(moment: _Moment) -> bool:
    age = time.monotonic() - moment.taken
    if moment.runs >= 0:  # the call's start
        return age <= CALL_START and commands_run() - moment.runs <= 1
    return age <= FRESH


def _table() -> dict[int, tuple[int, ProcStat]]:
    """Every process: its parent and its stat, from this thread's snapshot."""
    if not _answers(_MOMENT):
        _refresh()
    return _MOMENT.table


def _refresh() -> None:
    """Read the process table (one ``ps``) into this thread's snapshot."""
    moment = _MOMENT
    ahead = _taken_ahead() if moment.starting else None
    spawned: tuple[int, int] | None
    if ahead is not None:  # the call's start, read while the call was imported
        spawned, taken, runs = ahead
    else:
        spawned = _spawn(["ps", "-A", *_TABLE_FIELDS])
        taken, runs = time.monotonic(), commands_run() if moment.starting else -1
    table: dict[int, tuple[int, ProcStat]] = {}
    names: dict[int, str] = {}
    channels: dict[int, str] = {}
    starts: dict[str, int] = {}  # many processes share a second: one mktime each
    for line in [] if spawned is None else _collect(spawned):
        row = line.split(None, 11)  # lstart is five words; comm last keeps its blanks
        try:
            pid = int(row[0])
            table[pid] = (int(row[1]), _stat(row[2:10], starts))
            channels[pid] = row[10]
            names[pid] = row[11].strip() if len(row) > 11 else ""
        except (ValueError, IndexError):
            continue  # the header line (see _TABLE_FIELDS)
    moment.table, moment.names, moment.channels = table, names, channels
    moment.taken, moment.runs, moment.starting = taken, runs, False


# The fields of the snapshot. wchan is titled to make its column wide enough for Linux's
# longest names: procps cuts a column that is not the last to its title's width (the BSDs
# do not cut); the one title makes ps print a title line, skipped. A title is the rest of
# its -o argument (POSIX): the fields after it come in an -o of their own.
_TABLE_FIELDS = (
    "-o", "pid=,ppid=,pgid=,tpgid=,stat=,lstart=", "-o", f"wchan={'WCHAN':_<48}", "-o", "comm="
)  # fmt: skip


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner(pid: int) -> str | None:
    rows = _ps("user", [pid])
    return rows[0][0] if rows else None


def _comm(pid: int) -> str:
    """ps's ``comm``: a name on Linux and the BSDs, the executable's path on macOS."""
    _table()
    return _MOMENT.names.get(pid, "")


def process_name(pid: int) -> str:
    return os.path.basename(_comm(pid))


def command_name(pid: int) -> str:
    return os.path.basename(_comm(pid))


def command_line(pid: int) -> list[str] | None:
    """The arguments split on blanks (ps joins them: an argument with a blank in it
    comes back as two words)."""
    rows = _ps("args", [pid])
    return rows[0][0].split() if rows else None


def shell_executable(pid: int) -> str:
    """The executable's path where ps gives one (macOS), else the name found on PATH
    (tmux starts a login shell as ``-bash``: its arguments name no path either)."""
    comm = _comm(pid)
    if os.path.isabs(comm) and os.access(comm, os.X_OK):
        return comm
    name = os.path.basename(comm).lstrip("-") or "sh"
    return _which(name) or name


def shell_kind(pid: int) -> ShellKind | None:
    return kind_of_name(process_name(pid))


def working_dir(pid: int) -> str | None:
    """From ``lsof``, whose name field escapes what is not printable (``\\xff``, ``\\n``,
    ``\\\\``, and a control character as ``^A``, which a name may also hold as it is):
    the reading of it whose inode is the one lsof gives. ``None`` without lsof or
    without a match (callers take tmux's pane_current_path), never a wrong directory."""
    lines = _run(["lsof", "-w", "-n", "-P", "-a", "-p", str(pid), "-d", "cwd", "-Fin"])
    fields = {line[:1]: line[1:] for line in lines if line[:1] in ("i", "n")}
    if "n" not in fields or not fields.get("i", "").isdigit():
        return None
    for name in {_unescaped(fields["n"], True), _unescaped(fields["n"], False)}:
        try:
            if os.stat(name).st_ino == int(fields["i"]):
                return name
        except (OSError, ValueError):
            continue
    return None


_LSOF_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})|\\([\\ntrbf])|\^([@-_])")
_LSOF_LETTERS = {b"\\": b"\\", b"n": b"\n", b"t": b"\t", b"r": b"\r", b"b": b"\b", b"f": b"\f"}


def _unescaped(text: str, carets: bool) -> str:
    """An lsof name as the path it stands for (``carets``: ``^A`` read as a control
    character, else as it is)."""

    def one(match: re.Match[bytes]) -> bytes:
        code, letter, caret = match.groups()
        if code is not None:
            return bytes([int(code, 16)])
        if letter is not None:
            return _LSOF_LETTERS[letter]
        return bytes([caret[0] - 0x40]) if carets else match.group()

    return os.fsdecode(_LSOF_ESCAPE.sub(one, os.fsencode(text)))


def environment(pid: int) -> dict[str, str]:
    """Empty: no POSIX tool gives another process's environment unambiguously (BSD
    ``ps -E`` appends it to the command line); callers take the session's."""
    return {}


def children(pid: int) -> list[int]:
    """From a new ``ps`` (a child started a moment ago is what a caller looks for:
    the ``cat`` that tmux starts for ``pipe-pane``)."""
    _refresh()
    return sorted(p for p, (parent, _) in _MOMENT.table.items() if parent == pid)


def thread_children(pid: int) -> list[int]:
    return children(pid)  # ps gives a thread's child the process as its parent


def _descendants(table: dict[int, tuple[int, ProcStat]], pid: int, depth: int = 6) -> list[int]:
    found: list[int] = []
    layer = [pid]
    for _ in range(depth):
        layer = [p for p, (parent, _) in table.items() if parent in layer]
        if not layer:
            break
        found.extend(layer)
    return found


def foreground_child(shell_pid: int, tpgid: int, started_after: int = 0) -> int | None:
    """As :func:`tmux_bridge.infra.procfs.foreground_child` (``started_after`` in
    seconds of the epoch, as :func:`ticks_now`)."""
    found: tuple[int, int] | None = None
    for pid, (parent, stat) in _table().items():
        if parent != shell_pid or stat.pgrp != tpgid or stat.start < started_after:
            continue
        if found is None or (stat.start, pid) >= found:
            found = (stat.start, pid)
    return found[1] if found else None


def holds_terminal(pid: int, tpgid: int) -> bool:
    table = _table()
    return any(table[p][1].pgrp == tpgid for p in [pid, *_descendants(table, pid)] if p in table)


def signal_foreground(shell_pid: int, signum: int) -> bool:
    stat = proc_stat(shell_pid)
    forget()
    return signal_group(stat, signum)


def _wait_channel(pid: int) -> str:
    """The process's wait channel (``-`` or empty: running, or not ours to see)."""
    _table()
    return _MOMENT.channels.get(pid, "")


def waits_for_keys(pid: int) -> bool | Unknown:
    """Whether the process sleeps in poll/select (a line editor waiting for keys)."""
    wchan = _wait_channel(pid)
    if wchan in ("", "-"):
        return Unknown("ps shows no wait channel for the shell")
    return _polls(wchan)


def _polls(wchan: str) -> bool:
    return "poll" in wchan or "select" in wchan or wchan == "kqread"


def has_sockets(pid: int) -> bool | Unknown:
    """Whether the process has a network or Unix socket open (``lsof``)."""
    if _which("lsof") is None:
        return Unknown("lsof is not installed")
    lines = _run(["lsof", "-w", "-n", "-P", "-p", str(pid), "-Ft"])
    return any(line[1:] in _SOCKETS for line in lines if line.startswith("t"))


def _reads_terminal(pid: int, wchan: str, tty: str) -> bool | Unknown | None:
    """True when ``pid`` sleeps reading the terminal, False when it sleeps otherwise,
    ``None`` when ps shows nothing, Unknown when the channel does not say which."""
    if wchan in ("", "-"):
        return None
    if wchan in TTY_READS:
        return True
    if wchan in AMBIGUOUS_READS:
        sockets = has_sockets(pid)
        return sockets if isinstance(sockets, Unknown) else not sockets
    return _polls(wchan) and bool(line_editor_active(tty))


def waiting_for_input(shell_pid: int, tty: str) -> bool | Unknown:
    """As :func:`tmux_bridge.infra.procfs.waiting_for_input`, from wait channels."""
    table = _table()
    shell = table.get(shell_pid)
    if shell is None:
        return False
    tpgid = shell[1].tpgid
    candidates = [p for p in _descendants(table, shell_pid) if table[p][1].pgrp == tpgid]
    if tpgid == shell[1].pgrp:
        candidates.append(shell_pid)
    inspected, unknown = False, None
    for pid in candidates:
        reads = _reads_terminal(pid, _wait_channel(pid), tty)
        if isinstance(reads, Unknown):
            unknown = reads
        elif reads is not None:
            inspected = True
            if reads:
                return True
    if unknown is not None:
        return True if password_mode(tty) else unknown
    if not inspected and candidates:
        return password_mode(tty)
    return False


def asks_password(shell_pid: int, tty: str) -> bool | Unknown:
    if not password_mode(tty):
        return False
    return waiting_for_input(shell_pid, tty)


def has_open(pid: int, path: str) -> bool | Unknown:
    """Whether ``pid`` has ``path`` open, from ``lsof`` (Unknown without it)."""
    if _which("lsof") is None:
        return Unknown("lsof is not installed")
    lines = _run(["lsof", "-w", "-n", "-P", "-a", "-p", str(pid), "-Fn"])
    return any(line[1:] == path for line in lines if line.startswith("n"))


def exit_fd(pid: int) -> int:
    """A descriptor that becomes readable once ``pid`` ends: a kqueue with
    ``NOTE_EXIT``, else a watched pipe; -1 when neither can be made. The caller is
    about to act and watch for change: the facts read so far are forgotten."""
    forget()
    if getattr(select, "kqueue", None) is None:
        return _watched_pipe(pid)
    for stale in [fd for fd in _KQUEUES if not _open(fd)]:
        del _KQUEUES[stale]  # closed by its reader
    fd = _kqueue_for(pid)
    if fd >= 0:
        _KQUEUES[fd] = pid
    return fd


# The exit descriptors that are kqueues (BSD, macOS), by number: a fork does not pass
# kqueues on (kqueue(2), fork(2)), so a forked child (a call detached into a job's
# keeper) makes each anew on its number (:func:`_in_forked_child`). Written from the
# manual pages: Linux has no kqueue.
_KQUEUES: dict[int, int] = {}


def _kqueue_for(pid: int) -> int:
    """A kqueue that becomes readable once ``pid`` ends (``NOTE_EXIT``), or -1."""
    queue = vars(select)["kqueue"]()
    try:
        kq: dict[str, Any] = vars(select)  # BSD and macOS only: not in Linux's typeshed
        event = kq["kevent"](pid, kq["KQ_FILTER_PROC"], kq["KQ_EV_ADD"], kq["KQ_NOTE_EXIT"])
        queue.control([event], 0, 0)
        return os.dup(queue.fileno())
    except OSError:
        return -1
    finally:
        queue.close()


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _renew_kqueues() -> None:
    """In a forked child: each exit kqueue the parent held, made anew on its number.
    A number that is open here was passed on, so it is no kqueue of ours: left alone."""
    for fd, pid in list(_KQUEUES.items()):
        if _open(fd):
            del _KQUEUES[fd]
            continue
        fresh = _kqueue_for(pid)
        if fresh >= 0 and fresh != fd:  # (the free number may be the very one)
            os.dup2(fresh, fd)
            os.close(fresh)


# Watched pipes' write ends and their processes: the thread that watches each closes it
# once the process ends (or the reader closed its end). Kept to restart the threads in a
# forked child (a job's keeper), which inherits the pipes but not the threads. The lock
# is held across a fork, so a child never inherits a pipe whose watch was just ending.
_WATCHED: dict[int, int] = {}
_WATCHED_LOCK = threading.Lock()
POLL_EXIT = 0.01  # seconds between two looks at a watched process (a kill(pid, 0))


def _watched_pipe(pid: int) -> int:
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return -1
    if not alive(pid):
        os.close(write_end)
        return read_end
    with _WATCHED_LOCK:
        _WATCHED[write_end] = pid
    _start_watch(write_end, pid)
    return read_end


def _start_watch(write_end: int, pid: int) -> None:
    threading.Thread(target=_watch, args=(write_end, pid), daemon=True, name=_WATCH_NAME).start()


_WATCH_NAME = "tmux-bridge-exit-watch"


def _watch(write_end: int, pid: int) -> None:
    poller = select.poll()
    poller.register(write_end, 0)  # POLLERR alone: the reader closed its end
    try:
        while alive(pid) and not poller.poll(POLL_EXIT * 1000):
            pass
    finally:
        with _WATCHED_LOCK:
            if _WATCHED.pop(write_end, None) is not None:
                os.close(write_end)


def fork_safe_threads() -> int:
    """This module's exit watches running now: a fork carries them over (the child
    restarts them), so they do not make a process unsafe to fork. Each only polls
    ``kill(pid, 0)`` and takes :data:`_WATCHED_LOCK`, which a fork holds."""
    return sum(t.name == _WATCH_NAME for t in threading.enumerate())


def _in_forked_child() -> None:
    """A forked child (a job's keeper): its own moment, and the watches it inherited."""
    forget()
    for write_end, pid in list(_WATCHED.items()):
        _start_watch(write_end, pid)
    _WATCHED_LOCK.release()
    _renew_kqueues()


os.register_at_fork(
    before=_WATCHED_LOCK.acquire,
    after_in_parent=_WATCHED_LOCK.release,
    after_in_child=_in_forked_child,
)


def ticks_now() -> int:
    """Now, in the unit of :class:`ProcStat` ``start`` here: seconds of the epoch."""
    return int(time.time())

"""The process facts from Linux's ``/proc`` and pidfds (and termios, shared with procps).

The Linux implementation of :class:`tmux_bridge.infra.procfacts.ProcessFacts`; the
termios readings and the table of shells' names are POSIX and serve
:mod:`tmux_bridge.infra.procps` too.

Nothing here asks tmux, so none of it works for a shell on another host (ssh): those
panes can only be judged from what tmux reports.

* the shell's kind is read from ``/proc/<pane_pid>/exe``, never from the foreground
  command's name, so it is right while something else runs;
* a program in the foreground shows as the terminal's foreground process group (``tpgid``)
  differing from the shell's;
* bash, zsh and fish switch the terminal out of canonical mode while their line editor
  waits at the prompt, so "foreground is the shell, canonical mode" means the shell is
  busy with a builtin (``read``, a loop) or between commands.
"""

from __future__ import annotations

import os
import termios
from typing import TYPE_CHECKING

from .procfacts import ProcStat

if TYPE_CHECKING:
    from ..text.shells import ShellKind

NAME = "linux"

_SHELLS: dict[str, ShellKind] = {
    "bash": "bash",
    "zsh": "zsh",
    "fish": "fish",
    "dash": "posix",
    "sh": "posix",
    "ash": "posix",
    "ksh": "posix",
    "ksh93": "posix",
    "mksh": "posix",
    "busybox": "posix",
    "yash": "posix",
    "posh": "posix",
}


def limits() -> list[str]:
    """What this implementation cannot see here: nothing (``/proc`` shows it all)."""
    return []


def look_ahead() -> None:
    """A call is about to start: nothing to start (``/proc`` is read at each question)."""


def begin_call() -> None:
    """A call starts: nothing to forget (``/proc`` is read at each question)."""


def forget() -> None:
    """The call acts: nothing to forget (``/proc`` is read at each question)."""


def proc_stat(pid: int) -> ProcStat | None:
    """Fields of ``/proc/<pid>/stat``; ``None`` when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    return ProcStat(fields[0].decode(), int(fields[2]), int(fields[5]), int(fields[19]))


def process_name(pid: int) -> str:
    """The executable's base name (``/proc/<pid>/exe``), else its ``comm``."""
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).removesuffix(" (deleted)")
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def shell_executable(pid: int) -> str:
    """Path of the shell's binary, for syntax checks (``fish -n``, ``sh -n``)."""
    try:
        return os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)")
    except OSError:
        return process_name(pid) or "sh"


def shell_kind(pid: int) -> ShellKind | None:
    """Which shell runs as ``pid``, or ``None`` when it is not a shell we can drive."""
    return kind_of_name(process_name(pid))


def kind_of_name(executable: str) -> ShellKind | None:
    """The shell kind an executable's base name names (``-zsh``, ``bash5.2``), if any."""
    name = executable.lstrip("-")
    kind = _SHELLS.get(name)
    if kind is None:
        for base, candidate in _SHELLS.items():
            if name.startswith(base + "5") or name.startswith(base + "-"):
                return candidate  # bash5.2, zsh-5.9 ...
    return kind


def line_editor_active(tty: str) -> bool | None:
    """Whether the terminal is out of canonical mode, as line editors set it at a prompt.

    ``None`` when the terminal cannot be opened.
    """
    lflag = local_modes(tty)
    return None if lflag is None else not lflag & termios.ICANON


def local_modes(tty: str) -> int | None:
    """The terminal's local mode flags (ICANON, ECHO ...); ``None`` when unreadable."""
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return int(termios.tcgetattr(fd)[3])
    except termios.error:
        return None
    finally:
        os.close(fd)


def working_dir(pid: int) -> str | None:
    """The process's working directory; ``None`` when it is gone or not ours to read."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def environment(pid: int) -> dict[str, str]:
    """The environment ``pid`` started with (empty when it is gone or not ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return {}
    pairs = (item.partition("=") for item in data.split("\0") if item)
    return {key: value for key, _, value in pairs}


def alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def owner(pid: int) -> str | None:
    """The name of the user the process runs as; ``None`` when gone or unnamed."""
    import pwd

    try:
        return pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name
    except (OSError, KeyError):
        return None


def command_line(pid: int) -> list[str] | None:
    """The process's arguments, ``argv[0]`` first; ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    words = raw.decode("utf-8", "replace").split("\0")
    return words[:-1] if words[-1] == "" else words


def thread_children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (a thread pool's too)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children") as f:
                found += [int(child) for child in f.read().split()]
        except OSError:
            continue
    return found


def exit_fd(pid: int) -> int:
    """A pidfd for ``pid`` (readable once it exits), or -1 on kernels without them."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return -1


def fork_safe_threads() -> int:
    """Threads of this module's that a fork carries over: none (a pidfd needs none)."""
    return 0


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def waits_for_keys(pid: int) -> bool:
    """Whether the process sleeps in poll/select (a line editor waiting for keys), as fish
    does at its prompt even while a helper it started in the background runs."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read()
    except OSError:
        return False
    return "poll" in wchan or "select" in wchan


def foreground_child(shell_pid: int, tpgid: int, started_after: int = 0) -> int | None:
    """The shell's newest child in the terminal's foreground process group, if any: the
    program the shell waits for. With ``started_after`` (clock ticks since boot, as in
    ``/proc/<pid>/stat``), only a child started since then: fish keeps helpers it starts
    in the background in its own group too."""
    found: tuple[int, int] | None = None
    for child in children(shell_pid):
        stat = proc_stat(child)
        if stat is None or stat.pgrp != tpgid or stat.start < started_after:
            continue
        if found is None or stat.start >= found[0]:
            found = (stat.start, child)
    return found[1] if found else None


def command_name(pid: int) -> str:
    """The name a program runs under (``/proc/<pid>/comm``: ``sh``, not ``dash``)."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


# --- waiting for the person --------------------------------------------------------------

# Syscall numbers by machine: reading a file descriptor, and waiting on several.
_READS = {"x86_64": {0, 17, 19}, "aarch64": {63, 65, 67}}
_POLLS = {"x86_64": {7, 23, 232, 270, 271, 281}, "aarch64": {22, 72, 73}}


def waiting_for_input(shell_pid: int, tty: str) -> bool:
    """Whether the program in the foreground is blocked reading the terminal: a
    password prompt, ``read``, ``input()``, a [Y/n] question.

    Read from ``/proc/<pid>/syscall`` of each process in the foreground group: a
    ``read`` of the terminal, or a ``poll``/``select`` while the terminal is out of
    canonical mode (a line editor). Processes we may not inspect (``sudo`` runs as
    root) count as waiting when the terminal has echo off in canonical mode, which is how
    password prompts read.
    """
    shell = proc_stat(shell_pid)
    if shell is None:
        return False
    machine = os.uname().machine
    reads, polls = _READS.get(machine, set()), _POLLS.get(machine, set())
    candidates = [pid for pid in _descendants(shell_pid) if _pgrp(pid) == shell.tpgid]
    if shell.tpgid == shell.pgrp:
        candidates.append(shell_pid)  # a builtin such as read, or fish's own group
    inspected = False
    for pid in candidates:
        call = _syscall(pid)
        if call is None:
            continue
        inspected = True
        number, first_arg = call
        if number in reads and _is_terminal(pid, first_arg, tty):
            return True
        if number in polls and line_editor_active(tty):
            return True
    if not inspected and candidates:
        return password_mode(tty)
    return False


def holds_terminal(pid: int, tpgid: int) -> bool:
    """Whether the terminal's foreground group ``tpgid`` is that of ``pid`` or of one
    of its descendants (a nested shell or ``su`` gives the terminal to its own job)."""
    return _pgrp(pid) == tpgid or any(_pgrp(p) == tpgid for p in _descendants(pid))


def _descendants(pid: int, depth: int = 6) -> list[int]:
    found = []
    layer = [pid]
    for _ in range(depth):
        layer = [child for parent in layer for child in children(parent)]
        if not layer:
            break
        found.extend(layer)
    return found


def _pgrp(pid: int) -> int | None:
    stat = proc_stat(pid)
    return stat.pgrp if stat else None


def _syscall(pid: int) -> tuple[int, int] | None:
    """The system call ``pid`` is blocked in, and its first argument; ``None`` when it
    is running or may not be inspected."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            fields = f.read().split()
    except OSError:
        return None
    if len(fields) < 2 or not fields[0].isdigit():
        return None  # "running", or "-1 ..." (not in a system call)
    return int(fields[0]), int(fields[1], 16)


def _is_terminal(pid: int, fd: int, tty: str) -> bool:
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return False
    return target == tty or target == "/dev/tty"


def asks_password(shell_pid: int, tty: str) -> bool:
    """Whether the program in front waits for a password: it reads the terminal with echo
    off in canonical mode (sudo, ssh, passwd)."""
    return password_mode(tty) and waiting_for_input(shell_pid, tty)


def password_mode(tty: str) -> bool:
    """Canonical mode with echo off: how a terminal reads a password."""
    lflag = local_modes(tty)
    return lflag is not None and bool(lflag & termios.ICANON) and not lflag & termios.ECHO


def signal_foreground(shell_pid: int, signum: int) -> bool:
    """Send ``signum`` to the terminal's foreground process group, as the terminal would
    for Ctrl-C; False when there is none or we may not (``sudo`` runs as root)."""
    return signal_group(proc_stat(shell_pid), signum)


def signal_group(stat: ProcStat | None, signum: int) -> bool:
    """:func:`signal_foreground` once the shell's facts are known (either implementation's)."""
    if stat is None or stat.tpgid <= 0:
        return False
    try:
        os.killpg(stat.tpgid, signum)
    except OSError:
        return False
    return True


def has_open(pid: int, path: str) -> bool:
    """Whether process ``pid`` has ``path`` open (from ``/proc/<pid>/fd``)."""
    directory = f"/proc/{pid}/fd"
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(os.path.join(directory, name)) == path:
                return True
        except OSError:
            continue
    return False


def ticks_now() -> int:
    """Now, in the clock ticks since boot that ``/proc/<pid>/stat`` counts starts in."""
    import time

    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))

"""The bridge pane and the shell in it: finding it, and deciding whether it may be typed into.

What tmux reports comes from one ``list-panes`` call; what the shell is doing comes from
``/proc`` and the terminal's own modes, which cost no tmux call:

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
import time
from typing import NamedTuple

from .errors import NoBridgeSession, PaneNotReady, TmuxError
from .runtime import remove_quietly, write_private_file
from .shells import ShellKind
from .tmux import is_no_server_error, run_tmux

# Marks the pane tmux-bridge created, so tmux-send finds it even when the person opens
# more windows or panes in the bridge session.
PANE_MARKER_OPTION = "@tmux-bridge-pane"

_FIELDS = (
    "pane_id",
    "pane_pid",
    "pane_tty",
    "pane_in_mode",
    "alternate_on",
    "pane_dead",
    "pane_width",
    "pane_height",
    "pane_current_command",
    "cursor_x",
    "cursor_y",
    "remain-on-exit",
    PANE_MARKER_OPTION,
    "pane_active",
    "window_active",
    "pane_current_path",
    "pane_pipe",
)
_FORMAT = "\t".join("#{" + name + "}" for name in _FIELDS)

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


class PaneInfo(NamedTuple):
    """One pane as ``list-panes`` described it."""

    pane_id: str
    pid: int
    tty: str
    in_mode: bool
    alternate_on: bool
    dead: bool
    width: int
    height: int
    current_command: str
    cursor_x: int
    cursor_y: int
    remain_on_exit: str
    marked: bool
    active: bool
    current_path: str
    piped: bool  # a pipe-pane is open (REPL mode needs it)


class BridgeView(NamedTuple):
    """The bridge pane, plus its visible screen when it came free with the lookup."""

    pane: PaneInfo
    screen: list[str] | None


def _parse(line: str) -> PaneInfo:
    f = line.split("\t")
    return PaneInfo(
        pane_id=f[0],
        pid=int(f[1] or 0),
        tty=f[2],
        in_mode=f[3] == "1",
        alternate_on=f[4] == "1",
        dead=f[5] == "1",
        width=int(f[6] or 80),
        height=int(f[7] or 24),
        current_command=f[8],
        cursor_x=int(f[9] or 0),
        cursor_y=int(f[10] or 0),
        remain_on_exit=f[11],
        marked=f[12] == "1",
        active=f[13] == "1" and f[14] == "1",
        current_path=f[15],
        piped=f[16] == "1",
    )


def find_bridge(session: str) -> BridgeView:
    """Locate the bridge pane of ``session``: the one tmux-bridge marked, else the active one.

    One tmux call, which also captures the active pane's visible screen (used to look at
    the prompt line). Raises :class:`NoBridgeSession` when there is no such session or no
    tmux server at all.
    """
    result = run_tmux(
        "list-panes", "-s", "-t", f"={session}", "-F", _FORMAT,
        ";", "capture-pane", "-p", "-t", f"={session}:",
        check=False,
    )  # fmt: skip
    lines = result.stdout.split("\n")
    panes = [_parse(line) for line in lines if line.count("\t") == len(_FIELDS) - 1]
    if result.returncode != 0 and not panes:
        if is_no_server_error(result.stderr):
            raise NoBridgeSession()
        raise TmuxError(result.argv, result.returncode, result.stderr)
    if not panes:
        raise NoBridgeSession()
    pane = next((p for p in panes if p.marked), None) or next(
        (p for p in panes if p.active), panes[0]
    )
    screen_lines = [line for line in lines if line.count("\t") != len(_FIELDS) - 1]
    screen = screen_lines[: pane.height] if pane.active and result.returncode == 0 else None
    return BridgeView(pane, screen)


def pane_state(pane_id: str) -> PaneInfo | None:
    """Re-read one pane; ``None`` when it (or its whole server) no longer exists."""
    result = run_tmux("display-message", "-p", "-t", pane_id, "-F", _FORMAT, check=False)
    if result.returncode != 0 or result.stdout.count("\t") != len(_FIELDS) - 1:
        return None
    return _parse(result.stdout.rstrip("\n"))


def capture_screen(pane_id: str, history_lines: int = 0) -> list[str]:
    """The pane's visible rows (plus ``history_lines`` rows of scrollback), wrapped lines
    joined. Empty when the pane is gone."""
    args = ["capture-pane", "-p", "-J", "-t", pane_id]
    if history_lines:
        args += ["-S", str(-history_lines)]
    result = run_tmux(*args, check=False)
    return result.stdout.split("\n")[:-1] if result.returncode == 0 else []


def screen_tail(pane_id: str, count: int = 20) -> list[str]:
    """The last ``count`` lines on the pane's screen, blank rows below them dropped: what
    an error report shows of the bridge terminal."""
    lines = capture_screen(pane_id)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-count:]


# --- the shell, seen through /proc -------------------------------------------------------


class ProcStat(NamedTuple):
    state: str
    pgrp: int
    tpgid: int
    start: int  # clock ticks after boot


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
    name = process_name(pid).lstrip("-")
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
    lflag = _local_modes(tty)
    return None if lflag is None else not lflag & termios.ICANON


def _local_modes(tty: str) -> int | None:
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


# --- readiness ---------------------------------------------------------------------------

_NOT_READY = "The bridge terminal is not ready: "
_HANDS_OFF = "tmux-send does not type into a terminal the person is using."

# How long a shell seen between commands may take to reach its prompt (e.g. the shell of
# the previous call still drawing it) before we call it busy.
PROMPT_WAIT = 0.5


def check_ready(pane: PaneInfo, kind: ShellKind | None, prompt_wait: float = PROMPT_WAIT) -> None:
    """Raise :class:`PaneNotReady` naming what is in the way, unless the shell waits at
    its prompt for a command. Copy mode alone is not in the way: the caller leaves it.

    May wait up to ``prompt_wait`` seconds for a shell that is between commands.
    """
    if pane.dead:
        raise PaneNotReady(
            _NOT_READY + "its shell has exited (the pane is dead). "
            "Ask the person to restart it with `tmux-bridge`."
        )
    if kind is None:
        name = process_name(pane.pid) or pane.current_command
        raise PaneNotReady(
            _NOT_READY + f"it runs `{name}`, not a shell tmux-send can drive "
            "(bash, zsh, fish or a POSIX sh)."
        )
    deadline = time.monotonic() + prompt_wait
    while True:
        problem = _foreground_problem(pane, kind)
        if problem is None:
            return
        if time.monotonic() >= deadline or not problem[1]:
            raise PaneNotReady(_NOT_READY + problem[0] + " " + _HANDS_OFF)
        time.sleep(0.002)


def _foreground_problem(pane: PaneInfo, kind: ShellKind) -> tuple[str, bool] | None:
    """What keeps the shell from its prompt, and whether it may clear up by itself."""
    shell = proc_stat(pane.pid)
    if shell is None:
        return ("its shell has exited.", False)
    what = "a full-screen program" if pane.alternate_on else "a program"
    if shell.tpgid not in (shell.pgrp, -1):
        name = command_name(shell.tpgid) or pane.current_command
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    # fish runs the commands of a sourced file (a REPL tmux-send started, say) in its own
    # process group, so the foreground group alone does not show them
    child = foreground_child(pane.pid, shell.tpgid)
    if child is not None and not (kind == "fish" and _waits_for_keys(pane.pid)):
        name = command_name(child)
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    if pane.alternate_on:
        return (f"a full-screen program is open in it (`{pane.current_command}`).", True)
    if kind != "posix" and line_editor_active(pane.tty) is False:
        return (
            f"its shell ({kind}) is busy and not at its prompt (a builtin such as `read`, "
            "or a loop, is running).",
            True,
        )
    return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _waits_for_keys(pid: int) -> bool:
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
    for child in _children(shell_pid):
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


def check_not_typing(
    pane: PaneInfo, kind: ShellKind, screen: list[str] | None, state_dir: str
) -> None:
    """Refuse when the person seems to have typed something at the prompt and not run it.

    tmux cannot tell typed text from the prompt, so the prompt line is learnt: a line
    seen at the start of two calls in a row is taken as the bare prompt. Later, a prompt
    line that is that text plus more means the person typed the rest. A changed prompt
    (a new directory, a status shown in it) is simply learnt again. Seeing a line twice
    keeps a prompt caught half-drawn from ever being learnt.
    """
    if screen is None or pane.cursor_y >= len(screen):
        return
    line = screen[pane.cursor_y].rstrip()
    if not line:
        return
    if kind == "fish" and line.startswith("read>"):
        # fish's `read` edits its input with the same line editor as the prompt, so only
        # its prompt tells the two apart
        raise PaneNotReady(
            _NOT_READY
            + "its shell (fish) is busy: `read` waits for the person's input. "
            + _HANDS_OFF
        )
    record = os.path.join(state_dir, "prompt")
    try:
        with open(record, encoding="utf-8", errors="surrogateescape") as f:
            known, _, candidate = f.read().partition("\n")
    except OSError:
        known = candidate = ""
    if known and line != known and line.startswith(known):
        typed = line[len(known) :].strip()
        raise PaneNotReady(
            _NOT_READY + f"the person has typed `{typed}` at its prompt and not run it yet. "
            "tmux-send will not overwrite their input; ask them to run or clear it."
        )
    if line == known:
        return
    if line == candidate:
        known, candidate = line, ""
    else:
        candidate = line
    temporary = f"{record}.{os.getpid()}"
    remove_quietly(temporary)
    write_private_file(temporary, f"{known}\n{candidate}".encode("utf-8", "surrogateescape"))
    os.replace(temporary, record)


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
        return _password_mode(tty)
    return False


def _descendants(pid: int, depth: int = 6) -> list[int]:
    found = []
    layer = [pid]
    for _ in range(depth):
        layer = [child for parent in layer for child in _children(parent)]
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


def _password_mode(tty: str) -> bool:
    lflag = _local_modes(tty)
    return lflag is not None and bool(lflag & termios.ICANON) and not lflag & termios.ECHO


def cursor_line(pane_id: str) -> str:
    """The text of the line the cursor is on (a prompt, say)."""
    result = run_tmux(
        "display-message", "-p", "-t", pane_id, "#{cursor_y}", ";",
        "capture-pane", "-p", "-t", pane_id,
        check=False,
    )  # fmt: skip
    row, _, screen = result.stdout.partition("\n")
    lines = screen.split("\n")
    index = int(row) if row.strip().isdigit() else -1
    return lines[index].rstrip() if 0 <= index < len(lines) else ""

"""What a call may ask about the processes in a pane, as one interface with two answers.

The facts: a shell's kind and executable, the terminal's foreground process group,
children, whether a process waits on the terminal, its working directory, its open
files, its start time, waiting for it to end. :mod:`tmux_bridge.infra.procfs` answers
from Linux's ``/proc`` and pidfds; :mod:`tmux_bridge.infra.procps` from POSIX tools
(``ps``, ``lsof``, termios, ``kill(pid, 0)``, kqueue). :mod:`tmux_bridge.infra.process`
chooses one. A fact an implementation cannot see on this machine is :class:`Unknown`,
never a guess: the feature that needs it says what it could not tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Protocol

    from ..text.shells import ShellKind


class ProcStat(NamedTuple):
    state: str  # R, S, T, Z ... (the first letter of ps's ``stat``)
    pgrp: int
    tpgid: int  # -1: no controlling terminal
    start: int  # in the implementation's unit: comparable with its ``ticks_now`` only


class Unknown:
    """A fact this machine's implementation cannot see, and why. It has no truth value
    (a caller must say what it does without the fact, never read it as yes or no)."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why

    def __bool__(self) -> bool:
        raise TypeError(f"an unknown fact has no truth value ({self.why})")

    def __repr__(self) -> str:
        return f"Unknown({self.why!r})"


if TYPE_CHECKING:  # for mypy only: a class made at import would cost tmux-send's start-up

    class ProcessFacts(Protocol):
        """The interface; both implementations are modules that fit it (checked by mypy in
        :mod:`tmux_bridge.infra.process`)."""

        NAME: str

        def limits(self) -> list[str]: ...
        def proc_stat(self, pid: int) -> ProcStat | None: ...
        def alive(self, pid: int) -> bool: ...
        def owner(self, pid: int) -> str | None: ...
        def process_name(self, pid: int) -> str: ...
        def command_name(self, pid: int) -> str: ...
        def command_line(self, pid: int) -> list[str] | None: ...
        def shell_executable(self, pid: int) -> str: ...
        def shell_kind(self, pid: int) -> ShellKind | None: ...
        def line_editor_active(self, tty: str) -> bool | None: ...
        def local_modes(self, tty: str) -> int | None: ...
        def working_dir(self, pid: int) -> str | None: ...
        def children(self, pid: int) -> list[int]: ...
        def thread_children(self, pid: int) -> list[int]: ...
        def waits_for_keys(self, pid: int) -> bool | Unknown: ...
        def foreground_child(
            self, shell_pid: int, tpgid: int, started_after: int = 0
        ) -> int | None: ...
        def waiting_for_input(self, shell_pid: int, tty: str) -> bool | Unknown: ...
        def asks_password(self, shell_pid: int, tty: str) -> bool | Unknown: ...
        def holds_terminal(self, pid: int, tpgid: int) -> bool: ...
        def signal_foreground(self, shell_pid: int, signum: int) -> bool: ...
        def has_open(self, pid: int, path: str) -> bool | Unknown: ...
        def exit_fd(self, pid: int) -> int: ...
        def ticks_now(self) -> int: ...

"""What tmux-send remembers between calls: the REPL it started in the bridge pane."""

from __future__ import annotations

import os
from typing import NamedTuple

from . import pane as panes
from . import procfs
from .errors import ReplError
from .runtime import remove_quietly, write_private_file

STATE_FILE = "repl"


class ReplState(NamedTuple):
    """The REPL tmux-send started: its preset name, process and pane."""

    name: str
    pid: int
    pane_id: str
    ready: str  # the prompt regex
    quit: str


def read_state(directory: str) -> ReplState | None:
    try:
        with open(os.path.join(directory, STATE_FILE), encoding="utf-8") as f:
            name, pid, pane_id, ready, quit_text = f.read().split("\n", 4)
        return ReplState(name, int(pid), pane_id, ready, quit_text)
    except (OSError, ValueError):
        return None


def write_state(directory: str, state: ReplState) -> None:
    path = os.path.join(directory, STATE_FILE)
    temporary = f"{path}.{os.getpid()}"
    remove_quietly(temporary)
    write_private_file(temporary, "\n".join(map(str, state)).encode())
    os.replace(temporary, path)


def clear_state(directory: str) -> None:
    remove_quietly(os.path.join(directory, STATE_FILE))


def repl_in_front(state: ReplState, pane: panes.PaneInfo) -> bool:
    """Whether the recorded REPL still runs and is the program in the pane's foreground."""
    if state.pane_id != pane.pane_id:
        return False
    repl = procfs.proc_stat(state.pid)
    shell = procfs.proc_stat(pane.pid)
    return repl is not None and shell is not None and repl.pgrp == shell.tpgid


def check_no_repl(directory: str, pane: panes.PaneInfo) -> None:
    """For command mode: refuse while a REPL tmux-send started is open; forget a stale one."""
    state = read_state(directory)
    if state is None:
        return
    if repl_in_front(state, pane):
        raise ReplError(
            f"a {state.name} REPL is open in the bridge terminal (tmux-send started it). "
            f"Pass --repl {state.name} to evaluate code in it, or --close to quit it first."
        )
    clear_state(directory)

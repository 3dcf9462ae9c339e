"""``tmux-bridge status``: what the bridge is doing, for the person (or an agent)."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from . import pane as panes
from . import procfs, readiness
from .errors import NoBridgeSession, PaneNotReady
from .runtime import INFLIGHT_FILE, runtime_dir, session_name
from .shells import ShellKind
from .state import read_state, repl_in_front


def bridge_status() -> dict[str, Any]:
    """The session, its shell and working directory, what is in front, the open REPL and
    a tmux-send call in flight. Never raises for a missing session: ``running`` says."""
    name = session_name()
    status: dict[str, Any] = {"session": name, "running": False}
    try:
        pane = panes.find_bridge(name).pane
    except NoBridgeSession:
        return status
    status["running"] = True
    kind = procfs.shell_kind(pane.pid)
    status["pane"] = pane.pane_id
    status["shell"] = kind or procfs.command_name(pane.pid) or pane.current_command
    status["shell_pid"] = pane.pid
    status["cwd"] = _cwd(pane.pid) or pane.current_path
    status["foreground"] = _foreground(pane, kind)
    directory = runtime_dir()
    state = read_state(directory)
    status["repl"] = (
        {"name": state.name, "pid": state.pid}
        if state is not None and repl_in_front(state, pane)
        else None
    )
    status["in_flight"] = _in_flight(directory)
    return status


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def _foreground(pane: panes.PaneInfo, kind: ShellKind | None) -> str | None:
    """The program in front, or None when the shell waits at its prompt."""
    if pane.dead:
        return "(the shell has exited)"
    if kind is None:
        return pane.current_command
    try:
        readiness.check_ready(pane, kind, prompt_wait=0)
    except PaneNotReady:
        shell = procfs.proc_stat(pane.pid)
        if shell is not None:
            child = procfs.foreground_child(pane.pid, shell.tpgid)
            if child is not None:
                return procfs.command_name(child)
        return pane.current_command
    return None


def _in_flight(directory: str) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError):
        with open(os.path.join(directory, INFLIGHT_FILE), encoding="utf-8", errors="replace") as f:
            pid, since, command = f.read().split("\n", 2)
        if procfs.proc_stat(int(pid)) is None:
            return None  # a killed call's leftover
        return {
            "pid": int(pid),
            "elapsed_s": round(time.time() - float(since), 1),
            "command": command,
        }
    return None

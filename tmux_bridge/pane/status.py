"""What a pane is doing, for the person (``tmux-bridge status``) or an agent."""

from __future__ import annotations

from ..errors import NoBridgeSession, PaneNotReady
from ..infra.process import proc
from ..target import Target
from ..text.shells import ShellKind
from . import readiness
from .front import repl_shown
from .info import TRANSCRIPT_OPTION, PaneInfo, find_pane
from .records import PaneDir
from .shapes import BridgeStatus, StatusRepl


def bridge_status(target: Target) -> BridgeStatus:
    """The session, its shell and working directory, what is in front, the open REPL and
    a call in flight. Never raises for a missing session: ``running`` says."""
    try:
        pane = find_pane(target.tmux, target.session, target.pane).pane
    except NoBridgeSession:
        return BridgeStatus(target.session, False)
    kind = proc.shell_kind(pane.pid)
    shell = kind or proc.command_name(pane.pid) or pane.current_command
    cwd = proc.working_dir(pane.pid) or pane.current_path
    foreground = _foreground(pane, kind)
    records = PaneDir(target.runtime_dir, target.tmux, pane.pane_id)
    state = records.read_repl()
    shown = state is not None and repl_shown(target.tmux, state, pane)
    repl = StatusRepl(state.name, state.pid) if state is not None and shown else None
    flight = records.read_inflight()
    note = transcript_note(pane)
    return BridgeStatus(
        target.session,
        True,
        pane.pane_id,
        shell,
        pane.pid,
        cwd,
        foreground,
        repl,
        flight,
        "clean" if note is None else "verbose",
        note,
    )


def transcript_note(pane: PaneInfo) -> str | None:
    """Why calls in ``pane`` show tmux-send's plumbing to the person (its typed line,
    its markers), or None when they leave the clean transcript (every REPL preset
    hides its markers, python and node in a far shell too)."""
    if pane.transcript == "verbose":
        return (
            f"the tmux option {TRANSCRIPT_OPTION} is 'verbose' here: calls show tmux-send's "
            f"typed line and markers (unset it for the clean transcript: "
            f"tmux set-option -u {TRANSCRIPT_OPTION}, with -g, -s or -w where it was set)"
        )
    return None


def _foreground(pane: PaneInfo, kind: ShellKind | None) -> str | None:
    """The program in front, or None when the shell waits at its prompt."""
    if pane.dead:
        return "(the shell has exited)"
    if kind is None:
        return pane.current_command
    try:
        readiness.check_ready(pane, kind, prompt_wait=0)
    except PaneNotReady:
        shell = proc.proc_stat(pane.pid)
        if shell is not None:
            child = proc.foreground_child(pane.pid, shell.tpgid)
            if child is not None:
                return proc.command_name(child)
        return pane.current_command
    return None

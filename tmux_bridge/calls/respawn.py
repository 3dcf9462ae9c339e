"""A command that ended the pane's shell (``exit 3``, ``exec prog``, ``set -e; false``):
report the status it ended with, and give the person a new shell in the same pane."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import SessionClosed
from ..infra.runtime import pane_directory
from ..infra.tmux import Tmux
from ..pane.info import PaneInfo, pane_state
from ..results import CallRecord
from ..text import seams
from ..text.markers import SENTINEL_EXIT
from ..text.output import SentinelScanner


def respawn_after_exit(
    tmux: Tmux, pane: PaneInfo, record: CallRecord, drain: Callable[[], list[SentinelScanner]]
) -> None:
    """The pane's shell process ended: the command ended it, or the session died.

    ``drain`` hands over what is left in the relays and returns their scanners, whose
    exit sentinels carry the status (tmux 3.3a often loses ``pane_dead_status``).
    Raises :class:`SessionClosed` when the pane is gone altogether.
    """
    record.shell_exited = True
    for scanner in drain():
        kind, _, status = (scanner.body or "").partition(":")
        if kind == SENTINEL_EXIT and status.isdigit():
            record.status = int(status)
    if _wait_until_dead(tmux, pane.pane_id) is None:
        raise SessionClosed()
    if record.status is None:
        record.status = _dead_status(tmux, pane.pane_id)
    # the directory the shell was in; tmux would take "~" as a relative path
    directory, moved = pane_directory(pane.current_path)
    tmux.run_all(["respawn-pane", "-t", pane.pane_id, "-c", seams.start_directory(directory)])
    record.shell_restarted = True
    if record.status is None:
        record.notes.append(
            "The command ended the bridge's shell and tmux did not report its exit status."
        )
    ended = "The command ended the bridge's shell" + (
        f" (exit status {record.status})" if record.status is not None else ""
    )
    record.notes.append(
        f"{ended}. A new shell now runs in the same pane, started in {directory}; the "
        "old shell's variables, functions and other state are gone."
    )
    if moved:
        record.notes.append(moved)


def _wait_until_dead(tmux: Tmux, pane_id: str, limit: float = 1.0) -> PaneInfo | None:
    """The pane once tmux has marked it dead; ``None`` when it is gone altogether."""
    give_up = time.monotonic() + limit
    while True:
        state = pane_state(tmux, pane_id)
        if state is None or state.dead or time.monotonic() >= give_up:
            return state
        time.sleep(0.005)


def _dead_status(tmux: Tmux, pane_id: str, limit: float = 0.5) -> int | None:
    """The dead pane's exit status from tmux, which sometimes never reports it."""
    give_up = time.monotonic() + limit
    while True:
        result = tmux.run(
            "display-message",
            "-p",
            "-t",
            pane_id,
            "#{pane_dead_status}:#{pane_dead_signal}",
            check=False,
        )
        status, _, signum = result.stdout.strip().partition(":")
        if status.isdigit():
            return int(status)
        if signum.isdigit():
            return 128 + int(signum)
        if time.monotonic() >= give_up:
            return None
        time.sleep(0.01)

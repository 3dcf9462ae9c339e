"""The pane as tmux reports it: finding it, its state, its screen.

Only tmux queries live here (one ``list-panes`` call finds a pane and captures its
screen); what the shell inside is doing is read from ``/proc`` in
:mod:`tmux_bridge.procfs`.
"""

from __future__ import annotations

from typing import NamedTuple

from .errors import NoBridgeSession, NoSuchPane, TmuxError
from .tmux import Tmux, is_no_server_error

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
    "session_activity",
    "session_last_attached",
)
_FORMAT = "\t".join("#{" + name + "}" for name in _FIELDS)


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
    # the last key an attached client sent the session (or its attach), whole seconds;
    # send-keys does not count; 0 when no client ever attached (so no key was ever sent)
    keys_at: int


class PaneView(NamedTuple):
    """A pane, plus its visible screen when it came free with the lookup."""

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
        keys_at=int(f[17]) if f[18] and f[17].isdigit() else 0,
    )


def find_pane(tmux: Tmux, session: str, pane: str | None) -> PaneView:
    """The pane a target names, with its visible screen, in one tmux call.

    ``pane`` ``None`` means the bridge pane of ``session``: the one tmux-bridge marked,
    else the active one. Raises :class:`NoBridgeSession` when there is no such session
    or no tmux server at all, :class:`NoSuchPane` when a named pane does not exist.
    """
    if pane is None:
        return _find_bridge(tmux, session)
    result = tmux.run_all(
        ["display-message", "-p", "-t", pane, "-F", _FORMAT],
        ["capture-pane", "-p", "-t", pane],
        check=False,
    )
    if result.returncode != 0 or result.stdout.count("\t") < len(_FIELDS) - 1:
        if "no server running" in result.stderr or "error connecting" in result.stderr:
            raise NoBridgeSession()
        raise NoSuchPane(f"no pane {pane!r} on this tmux server ({result.stderr.strip()}).")
    first, _, screen = result.stdout.partition("\n")
    info = _parse(first)
    return PaneView(info, screen.split("\n")[: info.height])


def _find_bridge(tmux: Tmux, session: str) -> PaneView:
    result = tmux.run_all(
        ["list-panes", "-s", "-t", f"={session}", "-F", _FORMAT],
        ["capture-pane", "-p", "-t", f"={session}:"],
        check=False,
    )
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
    return PaneView(pane, screen)


def pane_state(tmux: Tmux, pane_id: str) -> PaneInfo | None:
    """Re-read one pane; ``None`` when it (or its whole server) no longer exists."""
    result = tmux.run("display-message", "-p", "-t", pane_id, "-F", _FORMAT, check=False)
    if result.returncode != 0 or result.stdout.count("\t") != len(_FIELDS) - 1:
        return None
    return _parse(result.stdout.rstrip("\n"))


def capture_screen(tmux: Tmux, pane_id: str, history_lines: int = 0) -> list[str]:
    """The pane's visible rows (plus ``history_lines`` rows of scrollback), wrapped lines
    joined. Empty when the pane is gone."""
    args = ["capture-pane", "-p", "-J", "-t", pane_id]
    if history_lines:
        args += ["-S", str(-history_lines)]
    result = tmux.run(*args, check=False)
    return result.stdout.split("\n")[:-1] if result.returncode == 0 else []


def screen_tail(tmux: Tmux, pane_id: str, count: int = 20) -> list[str]:
    """The last ``count`` lines on the pane's screen, blank rows below them dropped: what
    an error report shows of the bridge terminal."""
    lines = capture_screen(tmux, pane_id)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-count:]


def cursor_line(tmux: Tmux, pane_id: str) -> str:
    """The text of the line the cursor is on (a prompt, say)."""
    result = tmux.run_all(
        ["display-message", "-p", "-t", pane_id, "#{cursor_y}"],
        ["capture-pane", "-p", "-t", pane_id],
        check=False,
    )
    row, _, screen = result.stdout.partition("\n")
    lines = screen.split("\n")
    index = int(row) if row.strip().isdigit() else -1
    return lines[index].rstrip() if 0 <= index < len(lines) else ""

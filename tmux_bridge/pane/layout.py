"""Several panes: labels, new panes beside the bridge pane, and what runs where.

A label lives on the pane itself as the tmux user option ``@tmux-bridge-label``, so tmux
can show it and it outlives every tmux-bridge process; labels are unique on a tmux
server. What is remembered between calls (the platform, the last command) comes from
:mod:`tmux_bridge.pane.context`; everything else is read fresh from tmux and ``/proc``.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from ..cancel import Cancel, check_not_cancelled
from ..errors import BridgeError, InvalidRequest, LabelTaken, PaneNotReady
from ..infra.process import proc
from ..infra.runtime import pane_directory
from ..target import Target
from ..text import seams
from ..text.seams import is_name
from .context import prune, read_context, renew_pane
from .front import NESTED, REMOTE, repl_shown
from .info import LABEL_OPTION, PaneInfo, Place, find_pane, list_places
from .readiness import check_ready, check_shell, split_at_column
from .records import PaneDir, pane_dir_name
from .shapes import PaneEntry, PaneFront

# How long a new pane's shell may take to show its prompt before COMMAND is typed.
NEW_SHELL_WAIT = 15.0
# How long a new shell's screen must stay unchanged to count as its prompt: a line
# editor turns the terminal raw just before it draws the prompt, so a screen with nothing
# left of the cursor yet is believed only after a while (a prompt may be empty).
SETTLED = 0.02
SETTLED_EMPTY = 0.5


def check_label(name: str) -> str:
    """``name`` when it is a valid label, else raise :class:`InvalidRequest`."""
    if not is_name(name):  # the alphabet sender names share (seams)
        raise InvalidRequest(
            f"Invalid pane label {name!r}: use 1 to 40 letters, digits, '_', '.' or '-'."
        )
    return name


def set_label(target: Target, name: str | None) -> PaneInfo:
    """Give the target's pane the label ``name`` (``None`` removes its label). Raises
    :class:`LabelTaken` when another pane of the server has it."""
    pane = find_pane(target.tmux, target.session, target.pane).pane
    if name is None:
        target.tmux.run("set-option", "-p", "-u", "-t", pane.pane_id, LABEL_OPTION)
        return pane._replace(label="")
    _check_free(target, check_label(name), pane.pane_id)
    target.tmux.run("set-option", "-p", "-t", pane.pane_id, LABEL_OPTION, name)
    return pane._replace(label=name)


def _check_free(target: Target, name: str, pane_id: str) -> None:
    for place in list_places(target.tmux):
        if place.label == name and place.pane_id != pane_id:
            raise LabelTaken(
                f"The label {name!r} is already on pane {place.pane_id} ({place.target}); "
                "labels are unique. Remove it there first or pick another."
            )


def split(target: Target, label: str | None, horizontal: bool) -> tuple[PaneInfo, str | None]:
    """Open a new pane beside the target's pane, in its directory, running the person's
    login shell; the person's focus stays where it is. Returns the new pane, and a note
    when its shell had to start in the home directory instead (tmux cannot start a pane
    in the other pane's directory: see :func:`~tmux_bridge.infra.runtime.pane_directory`)."""
    from .sessions import user_shell

    base = find_pane(target.tmux, target.session, target.pane).pane
    if label is not None:
        _check_free(target, check_label(label), "")
    directory, note = pane_directory(base.current_path)
    result = target.tmux.run_all(
        ["split-window", "-d", "-h" if horizontal else "-v", "-t", base.pane_id,
         "-c", seams.start_directory(directory), "-P", "-F", "#{pane_id}",
         "--", user_shell(), "-l"],
    )  # fmt: skip
    pane_id = result.stdout.strip()
    if label is not None:
        target.tmux.run("set-option", "-p", "-t", pane_id, LABEL_OPTION, label)
    return find_pane(target.tmux, target.session, pane_id).pane, note


def wait_for_new_shell(target: Target, pane_id: str, cancel: Cancel | None) -> PaneInfo:
    """Wait until a pane's new shell shows its prompt (its line editor waits, nothing
    runs, the screen stays the same for :data:`SETTLED`, or :data:`SETTLED_EMPTY` while
    nothing is left of the cursor), and learn that line as its bare prompt: no one has
    typed there yet. Raises :class:`PaneNotReady` when it does not within
    :data:`NEW_SHELL_WAIT`, or runs no shell to wait for."""
    deadline = time.monotonic() + NEW_SHELL_WAIT
    seen: tuple[list[str] | None, float] = (None, 0.0)
    while True:
        view = find_pane(target.tmux, target.session, pane_id)
        pane, now = view.pane, time.monotonic()
        at_prompt = _at_prompt(pane)
        if not at_prompt and _runs_no_shell(pane):
            check_shell(pane, None)  # raises: it is dead, or what runs there
        if at_prompt and view.screen is not None and view.screen == seen[0]:
            settle = SETTLED if _prompt_line(pane, view.screen) else SETTLED_EMPTY
            if now - seen[1] >= settle:
                _learn_prompt(target, pane, view.screen)
                return pane
        else:
            seen = (view.screen, now)
        if now > deadline:
            raise PaneNotReady(f"The new pane {pane_id} shows no shell prompt yet.")
        check_not_cancelled(cancel)
        time.sleep(SETTLED)


def _runs_no_shell(pane: PaneInfo) -> bool:
    """Whether a new pane will show no prompt of a shell tmux-send drives: it is dead,
    or runs another program than tmux's own fork (which has yet to start the shell)."""
    if pane.dead:
        return True
    if proc.shell_kind(pane.pid) is not None:
        return False
    name = proc.process_name(pane.pid)
    server = pane.server.rpartition("-")[2]
    return bool(name) and not (server.isdigit() and name == proc.process_name(int(server)))


def _at_prompt(pane: PaneInfo) -> bool:
    kind = proc.shell_kind(pane.pid)
    if kind is None:
        return False
    try:
        check_ready(pane, kind, prompt_wait=0)
    except PaneNotReady:
        return False
    return True


def _prompt_line(pane: PaneInfo, screen: list[str]) -> str:
    """The cursor line's text left of the cursor (the prompt, in a new shell)."""
    if pane.cursor_y >= len(screen):
        return ""
    return split_at_column(screen[pane.cursor_y], pane.cursor_x)[0].rstrip()


def _learn_prompt(target: Target, pane: PaneInfo, screen: list[str]) -> None:
    left = _prompt_line(pane, screen)
    if left:
        records = PaneDir(target.runtime_dir, target.tmux, pane.pane_id)
        records.ensure()
        # named for its server (as a call does), or the first call drops it as the
        # record of another server's pane of that id
        if records.renew(pane.server):
            renew_pane(target.runtime_dir, pane_dir_name(target.tmux, pane.pane_id), pane.server)
        records.write_prompt(records.read_prompt().learnt(left))


# --- what runs where ------------------------------------------------------------------


def list_panes(target: Target, every_session: bool = False) -> list[PaneEntry]:
    """One entry per pane of the target's session (``every_session``: of the server),
    with live facts and the remembered context; drops the context of gone panes."""
    places = list_places(target.tmux)
    keys = {p.pane_id: pane_dir_name(target.tmux, p.pane_id) for p in places}
    prune(target.runtime_dir, set(keys.values())) if places else None
    context = read_context(target.runtime_dir)
    bridge = _bridge_pane_id(target)
    entries = []
    for place in places:
        if every_session or place.session == target.session:
            facts = context.get(keys[place.pane_id], {})
            entries.append(describe_pane(target, place, facts, place.pane_id == bridge))
    return entries


def _bridge_pane_id(target: Target) -> str | None:
    try:
        return find_pane(target.tmux, target.session, None).pane.pane_id
    except BridgeError:  # no bridge session: no bridge pane to mark
        return None


def describe_pane(
    target: Target, place: Place, facts: dict[str, Any], is_bridge: bool
) -> PaneEntry:
    """One pane's entry: where it is, its label, its shell and what is in front."""
    try:
        pane = find_pane(target.tmux, target.session, place.pane_id).pane
    except BridgeError:  # gone since it was listed
        return PaneEntry(place.pane_id, place.target, gone=True)
    if facts.get("server") != pane.server:  # learnt on a server since restarted
        facts = {}
    kind = proc.shell_kind(pane.pid)
    records = PaneDir(target.runtime_dir, target.tmux, pane.pane_id)
    flight = records.read_inflight()
    user, host = _owner(pane.pid), socket.gethostname()
    cwd = proc.working_dir(pane.pid) or pane.current_path
    in_front = front(target, pane, kind, records)
    far, far_left = far_facts(pane, facts.get("far"))
    return PaneEntry(
        pane=pane.pane_id,
        target=pane.target,
        label=pane.label or None,
        bridge=is_bridge,
        shell=kind,
        shell_pid=pane.pid,
        user=user,
        host=host,
        cwd=cwd,
        front=in_front,
        in_flight=flight,
        attached=pane.attached > 0,
        platform=facts.get("platform"),
        last_command=facts.get("last_command"),
        far=far,
        far_left=far_left,
    )


def far_facts(
    pane: PaneInfo, far: dict[str, Any] | None
) -> tuple[dict[str, object] | None, str | None]:
    """The far shell tmux-send last ran a command in (through ssh, su, sudo ...), while
    the program that leads there is still in front; else when the person left it."""
    if not far:
        return None, None
    shell = proc.proc_stat(pane.pid)
    if shell is not None and shell.tpgid == far.get("gateway_pid"):
        return far, None
    where = f"{far.get('user')}@{far.get('host')}"
    left = (
        f"the person left the far shell ({far.get('via')} to {where}) "
        "since tmux-send's last command there"
    )
    return None, left


def front(target: Target, pane: PaneInfo, kind: str | None, records: PaneDir) -> PaneFront:
    """What is in front of the pane: ``prompt``, ``repl``, ``nested_shell``,
    ``remote_shell``, ``program`` or ``dead``, and the program's name."""
    if pane.dead:
        return PaneFront("dead", None)
    if kind is None:
        return PaneFront("program", pane.current_command)
    if _at_prompt(pane):
        return PaneFront("prompt", None)
    repl = records.read_repl()
    if repl is not None and repl_shown(target.tmux, repl, pane):
        return PaneFront("repl", repl.name)
    name = _foreground_name(pane) or pane.current_command
    base = os.path.basename(name)
    if base in REMOTE:
        return PaneFront("remote_shell", base)
    if base in NESTED:
        return PaneFront("nested_shell", base)
    return PaneFront("program", name)


def _foreground_name(pane: PaneInfo) -> str | None:
    shell = proc.proc_stat(pane.pid)
    if shell is None:
        return None
    child = proc.foreground_child(pane.pid, shell.tpgid)
    return proc.command_name(child) if child is not None else None


def _owner(pid: int) -> str | None:
    return proc.owner(pid)

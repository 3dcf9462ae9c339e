"""Short notices for the person, on tmux's own status line.

A notice is shown with ``display-message -c CLIENT`` on every client attached to the
tmux server that is not in control mode (the person's terminals): it takes no focus
and types nothing. It is also kept in the global user option ``@tmux-bridge-notice``
with its time (every ``#`` doubled, as the status line draws it: ``#[...]`` in a name
is text there, not a style), so a person can show the latest one in their status bar
permanently::

    set -g status-right '#{@tmux-bridge-notice} %H:%M'

Sent when a message is delivered, fails or expires, and by ``tmux-bridge serve`` when an
agent stops working and waits for the person, or the bridge terminal asks for a password,
and when an unreadable inbox was moved aside.
Never fails the call that sends it.
"""

from __future__ import annotations

import time

from ..errors import BridgeError
from ..infra.tmux import Tmux
from ..text import seams

NOTICE_OPTION = "@tmux-bridge-notice"
SHOW_MS = 4000  # how long display-message shows it
MAX_CHARS = 120


def notify(tmux: Tmux, text: str) -> list[str]:
    """Show ``text`` (one line, cut to MAX_CHARS) to every attached client for SHOW_MS
    ms and keep it in ``@tmux-bridge-notice``; returns the clients it was shown on.
    One tmux call to find the clients, one to show it; tmux failures are ignored."""
    line = " ".join(text.split())
    if len(line) > MAX_CHARS:
        line = line[: MAX_CHARS - 3] + "..."
    kept = f"[{time.strftime('%H:%M')}] {line}"
    try:
        # control-mode clients (serve's lifecycle client) have no screen to show it on
        listed = tmux.run("list-clients", "-F", "#{client_control_mode}#{client_name}", check=False)
        lines = listed.stdout.split("\n") if listed.returncode == 0 else []
        clients = [line[1:] for line in lines if line.startswith("0")]
        # kept as tmux draws it in the person's status-right (#{@tmux-bridge-notice}: the
        # value is not expanded, but #[...] in it is a style); the message is expanded too
        commands = [["set-option", "-g", NOTICE_OPTION, seams.drawn_text(kept)]]
        commands += [
            ["display-message", "-c", c, "-d", str(SHOW_MS), seams.message_text(line)]
            for c in clients
        ]
        tmux.run_all(*commands, check=False)
    except BridgeError:
        return []
    return clients


def message_notice(recipient: str, sender: str, message_id: int, state: str) -> str:
    """The text of a notice about a message: delivered, failed or expired."""
    if state in ("failed", "expired"):
        return f"tmux-bridge: message #{message_id} from {sender} to {recipient} {state}"
    return f"tmux-bridge: {sender} -> {recipient}: message #{message_id} delivered"


def waiting_notices(
    before: dict[str, tuple[str, str]], now: dict[str, tuple[str, str]]
) -> list[str]:
    """Notices for agents that stopped working since ``before``: each map is pane id ->
    (agent name, state). Working -> idle: it waits for the person's input; working ->
    unknown: it shows something other than its input box (a question, a menu). The entry
    ``"bridge"`` (not a pane id) is ``("bridge", "password")`` while the bridge pane's
    program asks for a password: noticed when it appears."""
    notices = []
    for pane, (name, state) in now.items():
        if pane == "bridge" and state == "password" and before.get(pane) != now[pane]:
            notices.append("tmux-bridge: the bridge terminal waits for your password")
        if before.get(pane, ("", ""))[1] != "working":
            continue
        if state == "idle":
            notices.append(f"tmux-bridge: {name} is done and waits for your input")
        elif state == "unknown":
            notices.append(f"tmux-bridge: {name} asks you something")
    return notices

"""Keys, text and the screen: for whatever is in the bridge pane's foreground.

These never take the call lock, so an agent can answer a prompt of its own running
command (or a pager, a [Y/n] question) from a second tmux-send.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from . import pane as panes
from .runtime import session_name
from .tmux import run_tmux

SETTLE = 0.15  # seconds the screen must stay the same to count as settled
UNCHANGED = 0.3  # seconds after which a screen that never changed counts as settled
SETTLE_LIMIT = 2.0  # seconds to wait at most for it to settle


def bridge_pane() -> panes.PaneInfo:
    """The bridge pane; raises NoBridgeSession when there is none."""
    return panes.find_bridge(session_name()).pane


def send_keys(keys: Sequence[str]) -> str:
    """Send tmux key names (``C-c``, ``Enter``, ``Up``, ``q``) to the pane, then wait for
    the screen to settle (up to 2 s) and return it. Copy mode is left first."""
    pane = bridge_pane()
    before = _screen(pane.pane_id)
    run_tmux("copy-mode", "-q", "-t", pane.pane_id, ";", "send-keys", "-t", pane.pane_id, *keys)
    return settle(pane.pane_id, before)


def type_text(text: str, enter: bool) -> str:
    """Type ``text`` literally (no key names), optionally press Enter, and return the
    settled screen. The text goes through a paste buffer, which tmux never parses (a
    trailing ";" would be its command separator in send-keys)."""
    pane = bridge_pane()
    before = _screen(pane.pane_id)
    buffer = f"tmux-send-type-{pane.pid}-{time.monotonic_ns()}"
    run_tmux("load-buffer", "-b", buffer, "-", stdin=text.encode("utf-8", "surrogateescape"))
    args = ["copy-mode", "-q", "-t", pane.pane_id, ";"]
    args += ["paste-buffer", "-d", "-r", "-b", buffer, "-t", pane.pane_id]
    if enter:
        args += [";", "send-keys", "-t", pane.pane_id, "Enter"]
    run_tmux(*args)
    return settle(pane.pane_id, before)


def screen(lines: int = 0) -> str:
    """The visible screen, or the last ``lines`` lines of history and screen, as plain
    text with wrapped lines joined and trailing blank lines dropped."""
    pane = bridge_pane()
    return _trim(panes.capture_screen(pane.pane_id, history_lines=lines))


def settle(pane_id: str, before: list[str]) -> str:
    """Wait until the screen has changed and then stayed the same for SETTLE seconds, or
    did not change for UNCHANGED seconds; at most SETTLE_LIMIT in all. Return it."""
    started = time.monotonic()
    last = before
    stable_since = started
    while True:
        now = time.monotonic()
        current = _screen(pane_id)
        if current != last:
            last, stable_since = current, now
        changed = current != before
        if (changed and now - stable_since >= SETTLE) or (
            not changed and now - started >= UNCHANGED
        ):
            break
        if now - started >= SETTLE_LIMIT:
            break
        time.sleep(0.02)
    return _trim(last)


def _screen(pane_id: str) -> list[str]:
    return panes.capture_screen(pane_id)


def _trim(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return "\n".join(line.rstrip() for line in lines) + "\n" if lines else ""

"""Keys, text and the screen: for whatever is in a pane's foreground.

These never take the call lock, so an agent can answer a prompt of its own running
command (or a pager, a [Y/n] question) from a second call. Keys must be tmux key names
and literal text holds no control characters unless asked for, so neither can do more
than a person typing could (tmux commands are never chained from them).
"""

from __future__ import annotations

import re
import select
import signal
import time
from collections.abc import Callable, Sequence

from ..cancel import Cancel
from ..errors import Cancelled, InvalidRequest, WaitTimeout
from ..infra.tmux import paste_commands
from ..target import Target
from .info import PaneInfo, capture_screen, find_pane
from .records import PaneDir

SETTLE = 0.15  # seconds the screen must stay the same to count as settled
UNCHANGED = 0.3  # seconds after which a screen that never changed counts as settled
SETTLE_LIMIT = 2.0  # seconds to wait at most for it to settle
MAX_KEYS = 200  # keys in one request
POLL = 0.1  # seconds between two looks at the screen while waiting for something on it

# tmux's key names (key-string.c), matched without regard to case, with C-, M- and S-
# modifiers; any one character; ^X for a control key; 0xNN for a byte.
_NAMED = (
    "Enter|Escape|Space|BSpace|Tab|BTab|Up|Down|Left|Right|Home|End|IC|Insert|DC|Delete"
    "|PPage|PageUp|PgUp|NPage|PageDown|PgDn|F(?:[1-9]|1[0-2])"
    "|KP(?:/|\\*|-|\\+|\\.|Enter|[0-9])"
)
KEY_NAME = re.compile(rf"(?:[CMS]-)*(?:{_NAMED}|[^\s]|\^[@-_a-z?])|0x[0-9a-fA-F]{{1,4}}", re.I)


def check_keys(keys: Sequence[str]) -> None:
    """Raise :class:`InvalidRequest` unless every key is a tmux key name."""
    if not keys:
        raise InvalidRequest("no keys given; name at least one key, e.g. Enter.")
    if len(keys) > MAX_KEYS:
        raise InvalidRequest(f"{len(keys)} keys in one request; at most {MAX_KEYS}.")
    bad = [key for key in keys if not KEY_NAME.fullmatch(key)]
    if bad:
        raise InvalidRequest(
            f"not tmux key names: {', '.join(repr(key) for key in bad)}. Keys are names "
            "such as Enter, Escape, C-c, Up, F1, q or y; type literal text as text."
        )


def check_text(text: str, allow_control: bool) -> None:
    """Raise :class:`InvalidRequest` when literal text holds control characters (they
    would act as keys: Ctrl-C, Enter) and they were not explicitly allowed."""
    if allow_control:
        return
    control = sorted({f"0x{ord(c):02x}" for c in text if ord(c) < 0x20 or ord(c) == 0x7F})
    if control:
        raise InvalidRequest(
            f"the text holds control characters ({', '.join(control)}); send keys such as "
            "Enter or C-c as keys, or allow control characters explicitly to type them as "
            "they are."
        )


def send_keys(target: Target, keys: Sequence[str]) -> tuple[PaneInfo, str]:
    """Send tmux key names (``C-c``, ``Enter``, ``Up``, ``q``) to the pane, then wait for
    the screen to settle (up to 2 s) and return it. Copy mode is left first."""
    check_keys(keys)
    pane = find_pane(target.tmux, target.session, target.pane).pane
    before = capture_screen(target.tmux, pane.pane_id)
    _mark_typed(target, pane)
    target.tmux.run_all(
        ["copy-mode", "-q", "-t", pane.pane_id], ["send-keys", "-t", pane.pane_id, *keys]
    )
    return pane, settle(target, pane.pane_id, before)


def _mark_typed(target: Target, pane: PaneInfo) -> None:
    """Keys sent by tmux-send do not count as the person's for tmux: remember them, so
    the next command call checks the line for typed text."""
    PaneDir(target.runtime_dir, target.tmux, pane.pane_id).mark_typed()


def type_text(
    target: Target, text: str, enter: bool, allow_control: bool = False
) -> tuple[PaneInfo, str]:
    """Type ``text`` literally (no key names), optionally press Enter, and return the
    settled screen. The text goes through a paste buffer, which tmux never parses."""
    check_text(text, allow_control)
    pane = find_pane(target.tmux, target.session, target.pane).pane
    before = capture_screen(target.tmux, pane.pane_id)
    buffer = f"tmux-send-type-{pane.pid}-{time.monotonic_ns()}"
    tmux = target.tmux
    _mark_typed(target, pane)
    load, paste = paste_commands(buffer, pane.pane_id, bracketed=False, raw=True)
    tmux.run(*load, stdin=text.encode("utf-8", "surrogateescape"))
    commands = [["copy-mode", "-q", "-t", pane.pane_id], paste]
    if enter:
        commands.append(["send-keys", "-t", pane.pane_id, "Enter"])
    tmux.run_all(*commands)
    return pane, settle(target, pane.pane_id, before)


def screen(target: Target, lines: int = 0, join: bool = True) -> tuple[PaneInfo, str]:
    """The visible screen, with ``lines`` lines of history above it, as plain
    text with wrapped lines joined (unless ``join`` is false) and trailing blank lines
    dropped. One tmux call when the pane is its window's active pane."""
    view = find_pane(target.tmux, target.session, target.pane, lines, join)
    rows = view.screen
    if rows is None:  # not the active pane: its screen did not come with the lookup
        rows = capture_screen(target.tmux, view.pane.pane_id, lines, join)
    return view.pane, _trim(rows)


def send_input(
    target: Target, text: str | None, keys: Sequence[str], enter: bool, wait: bool = False
) -> tuple[PaneInfo, str]:
    """Type ``text`` literally (no control characters), then send the tmux key names
    ``keys``, then Enter if asked, to whatever is in front, in that order. Nothing is
    sent unless every part is valid. With ``wait``, wait for the screen to settle (as
    :func:`send_keys` does) and return it; else return at once with no screen."""
    if text:
        check_text(text, allow_control=False)
    if keys:
        check_keys(keys)
    if not (text or keys or enter):
        raise InvalidRequest("nothing to send: give text, keys or Enter.")
    pane = find_pane(target.tmux, target.session, target.pane).pane
    before = capture_screen(target.tmux, pane.pane_id) if wait else []
    _mark_typed(target, pane)
    commands = [["copy-mode", "-q", "-t", pane.pane_id]]
    buffer = f"tmux-send-type-{pane.pid}-{time.monotonic_ns()}"
    if text:
        encoded = text.encode("utf-8", "surrogateescape")
        load, paste = paste_commands(buffer, pane.pane_id, bracketed=False, raw=True)
        target.tmux.run(*load, stdin=encoded)
        commands.append(paste)
    if keys:
        commands.append(["send-keys", "-t", pane.pane_id, *keys])
    if enter:
        commands.append(["send-keys", "-t", pane.pane_id, "Enter"])
    target.tmux.run_all(*commands)
    return pane, settle(target, pane.pane_id, before) if wait else ""


def wait_for_screen(
    target: Target,
    matches: Callable[[str], bool],
    timeout: float,
    lines: int = 0,
    join: bool = True,
    cancel: Cancel | None = None,
) -> tuple[PaneInfo, str]:
    """Capture the pane (as :func:`screen` does) every POLL seconds until ``matches``
    says yes; return it. Raises :class:`WaitTimeout` after ``timeout`` seconds, and
    :class:`Cancelled` as soon as ``cancel`` fires. ``matches`` runs on this thread and
    must bound its own time."""
    deadline = time.monotonic() + timeout
    while True:
        pane, shown = screen(target, lines, join)
        if matches(shown):
            return pane, shown
        left = deadline - time.monotonic()
        if left <= 0:
            raise WaitTimeout(f"what was waited for did not show within {timeout:g} s.")
        if cancel is None:
            time.sleep(min(POLL, left))
        elif select.select([cancel.fd], [], [], min(POLL, left))[0]:
            raise Cancelled(cancel.signum or signal.SIGINT)


def settle(target: Target, pane_id: str, before: list[str]) -> str:
    """Wait until the screen has changed and then stayed the same for SETTLE seconds, or
    did not change for UNCHANGED seconds; at most SETTLE_LIMIT in all. Return it."""
    started = time.monotonic()
    last = before
    stable_since = started
    while True:
        now = time.monotonic()
        current = capture_screen(target.tmux, pane_id)
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


def _trim(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return "\n".join(line.rstrip() for line in lines) + "\n" if lines else ""

"""The marker grammar: the one definition of every marker a call prints or scans for.

Two kinds of marks:

* the start and end markers, text the person sees in the pane around each call
  (``___TMUXSEND_START_<id>___`` and ``___TMUXSEND_END_<id> <status>___``); REPL mode
  also finds its output between them in the pane's stream;
* the sentinel, an invisible APC string (``ESC _ tmux-send:<id>:<kind>:<status> ESC \\``)
  the runner writes to each relay terminal after the command's last byte.

A call id is 10 hex digits, so no marker can be matched by chance, and the marker text
is never typed (it is printed by code loaded from a file, or, in a far shell or a far
REPL, put together from pieces at run time), so its echo never matches.
"""

from __future__ import annotations

import re

_START = "___TMUXSEND_START_{id}___"
_END = "___TMUXSEND_END_{id}{status}___"

SENTINEL_DONE = "done"  # the command finished (or was interrupted); the shell lives on
SENTINEL_EXIT = "exit"  # the shell itself is exiting, with this status
SENTINEL_END = b"\x1b\\"


def start_marker(call_id: str) -> str:
    """The line printed before a call's output."""
    return _START.format(id=call_id)


def end_marker(call_id: str, status: str = "") -> str:
    """The end marker with ``status`` after a space (``"%d"``, ``"%s"`` for a format),
    or with no status (a REPL whose status comes from what it printed)."""
    return _END.format(id=call_id, status=f" {status}" if status else "")


def end_prefix(call_id: str) -> bytes:
    """What every end marker of this call starts with, with or without a status."""
    return f"___TMUXSEND_END_{call_id}".encode()


def end_pattern(call_id: str) -> re.Pattern[bytes]:
    """The end marker in a raw stream; group 1 is the status when there is one."""
    return re.compile(re.escape(end_prefix(call_id)) + rb"(?: (\d+))?___")


def sentinel_format(call_id: str, kind: str) -> str:
    """The sentinel as ``printf(1)`` must see it, with ``%d`` for the status."""
    return rf"\033_tmux-send:{call_id}:{kind}:%d\033\\"


def sentinel_prefix(call_id: str) -> bytes:
    """The bytes every sentinel of this call starts with."""
    return f"\x1b_tmux-send:{call_id}:".encode()

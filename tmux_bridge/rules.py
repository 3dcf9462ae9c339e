"""The core's checks of what a call is given, public so that a face refuses early.

A server validates a request before any action runs (and the stub, which makes no
call, validates alike; the WebSocket checks a window's size); these are the very
functions the calls apply, so a face that checks early refuses with the same code and
message as the call would.
"""

from __future__ import annotations

from .pane.keys import MAX_KEYS, check_keys, check_text
from .pane.sessions import check_directory, check_session_name
from .pane.termio import check_size

__all__ = [
    "MAX_KEYS",
    "check_directory",
    "check_keys",
    "check_repl_name",
    "check_session_name",
    "check_size",
    "check_text",
]


def check_repl_name(name: str) -> None:
    """Raise :class:`~tmux_bridge.errors.InvalidRequest` for a name that is no REPL
    name, :class:`~tmux_bridge.errors.ReplError` when no preset is called ``name``."""
    from .calls.repl import ReplRequest, preset_for

    preset_for(ReplRequest(name))

"""Where the browser tests write their screenshots: ``$TMUX_BRIDGE_SCREENSHOTS`` when it
is set (``TMUX_BRIDGE_SCREENSHOTS=docs`` refreshes the ones the docs show), else the
test's own temporary directory, so a test run leaves the tree clean."""

from __future__ import annotations

import os
from pathlib import Path


def screenshots(default: Path) -> Path:
    """The directory for screenshots (made if missing): the variable's, else ``default``."""
    where = os.environ.get("TMUX_BRIDGE_SCREENSHOTS")
    path = Path(where) if where else default
    path.mkdir(parents=True, exist_ok=True)
    return path

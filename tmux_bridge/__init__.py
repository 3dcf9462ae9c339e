"""tmux-bridge: an agent runs commands in a terminal that a person watches and can type into."""

from __future__ import annotations

__version__ = "0.1.0"

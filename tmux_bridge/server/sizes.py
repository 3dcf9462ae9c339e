"""Which ``/ws`` connections resized which panes, so that a closed tab gives the size back.

A browser's resize (frame 0x03) is applied only while nobody is attached (see
:meth:`~tmux_bridge.api.Bridge.fit`), but a detached window keeps the size it was given:
after the tab closed, an agent's pane would stay 23 columns wide, cutting what the agent
draws (and what its state is read from). So each applied resize is remembered with the
connection that asked; when that connection ends, the pane takes the size of the
newest other connection that resized it, or with none left its own size back
(:meth:`~tmux_bridge.api.Bridge.give_back_size`: the attached clients', else its
session's ``default-size``).
"""

from __future__ import annotations

import logging
import threading

from ..api import Bridge
from ..errors import BridgeError
from ..tuples import NamedTuple

LOG = logging.getLogger("tmux_bridge.server")


class _Held(NamedTuple):
    bridge: Bridge
    cols: int
    rows: int


class Sizes:
    """For every pane resized through ``/ws``: the connections that resized it, in the
    order of their latest resize, each with the size it asked for. Thread-safe (the
    resizes run on worker threads)."""

    def __init__(self) -> None:
        self.held: dict[str, dict[object, _Held]] = {}  # pane id -> connection -> size
        self.lock = threading.Lock()

    def resized(self, conn: object, bridge: Bridge, cols: int, rows: int) -> None:
        """``conn`` had the pane of ``bridge`` resized to ``cols`` x ``rows`` (applied).
        Makes one tmux call (the pane's id)."""
        pane_id = bridge.pane_id()
        with self.lock:
            holders = self.held.setdefault(pane_id, {})
            holders.pop(conn, None)  # the newest resize goes last
            holders[conn] = _Held(bridge, cols, rows)

    def release(self, conn: object) -> None:
        """``conn`` is gone: each pane it resized gets the newest remaining size, or its
        own back. Blocking (tmux calls): run it on a worker thread. A pane gone since is
        skipped."""
        with self.lock:
            mine = [pane for pane, holders in self.held.items() if conn in holders]
            undo: list[tuple[_Held, _Held | None]] = []
            for pane_id in mine:
                holders = self.held[pane_id]
                gone = holders.pop(conn)
                if not holders:
                    del self.held[pane_id]
                undo.append((gone, list(holders.values())[-1] if holders else None))
        for gone, newest in undo:
            try:
                if newest is None:
                    gone.bridge.give_back_size()
                else:
                    newest.bridge.fit(newest.cols, newest.rows)
            except BridgeError as exc:  # the pane or tmux gone: nothing to give back
                LOG.info("no size given back: %s", exc)

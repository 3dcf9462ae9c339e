"""The background task of ``tmux-bridge serve`` in tmux mode: every INTERVAL seconds,
:meth:`Bridge.tend_agents` (pending messages delivered to idle agents, notices for
agents that stopped working). A thread of its own, so no request waits on it."""

from __future__ import annotations

import contextlib
import threading

from ..api import Bridge
from ..errors import BridgeError
from ..target import Target

INTERVAL = 2.0


class Tending:
    """The task; :meth:`start` and :meth:`stop` (waits for a pass in progress)."""

    def __init__(self, target: Target, interval: float = INTERVAL) -> None:
        self.bridge = Bridge(target, client="tmux-bridge serve")
        self.interval = interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tmux-bridge-tending", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=30)

    def _run(self) -> None:
        seen: dict[str, tuple[str, str]] = {}
        while not self.stopped.wait(self.interval):
            with contextlib.suppress(BridgeError, OSError):
                seen = self.bridge.tend_agents(seen)

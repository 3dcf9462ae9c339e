"""The background task of ``tmux-bridge serve`` in tmux mode: every INTERVAL seconds,
:meth:`Bridge.tend_agents` (pending messages delivered to idle agents, notices for
agents that stopped working). A thread of its own, so no request waits on it.

No failure ends it: a pass that raises (tmux gone, an inbox that cannot be used, a fault
of ours) is logged and the next one comes after a wait that doubles with each failure
in a row, up to MAX_BACKOFF seconds, and is INTERVAL again after a pass that worked."""

from __future__ import annotations

import logging
import threading

from ..api import Bridge
from ..errors import BridgeError
from ..target import Target

INTERVAL = 2.0
MAX_BACKOFF = 30.0  # seconds between passes at most while they keep failing
LOG = logging.getLogger("tmux_bridge.server")


class Tending:
    """The task; :meth:`start` and :meth:`stop` (waits for a pass in progress)."""

    def __init__(self, target: Target, interval: float = INTERVAL) -> None:
        self.bridge = Bridge(target, client="tmux-bridge serve")
        self.interval = interval
        self.failures = 0  # passes in a row that raised
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tmux-bridge-tending", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=30)

    def wait(self) -> float:
        """Seconds until the next pass: INTERVAL, doubled for each failure in a row."""
        return min(self.interval * (1 << min(self.failures, 16)), max(MAX_BACKOFF, self.interval))

    def _run(self) -> None:
        seen: dict[str, tuple[str, str]] = {}
        while not self.stopped.wait(self.wait()):
            try:
                seen = self.bridge.tend_agents(seen)
            except BridgeError as exc:  # tmux not running, an inbox moved aside ...
                self.failures += 1
                LOG.warning("background pass failed (next in %.0f s): %s", self.wait(), exc)
            except Exception:  # a fault of ours: logged whole, and tending goes on
                self.failures += 1
                LOG.exception("background pass failed (next in %.0f s)", self.wait())
            else:
                self.failures = 0

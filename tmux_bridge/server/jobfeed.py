"""``subscribe-jobs`` of ``/ws``: the jobs of the runtime directory, and an event when
one starts or ends.

A job's keeper is a process of its own that may have been started by anyone (a
``tmux-send --background``, another face), so the feed looks at the job store: while at
least one connection is subscribed, one task lists the jobs every :data:`POLL` seconds
(a directory listing and a small file per job, on a worker thread) and tells each
subscriber what changed since what it last saw (:meth:`~tmux_bridge.api.Bridge.job_changes`).
No subscriber, no look.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..api import Bridge
from ..errors import BridgeError
from ..results import JobResult

POLL = 0.5  # seconds between two looks at the job store while someone is subscribed


class Subscriber(Protocol):
    """A connection, as the feed writes to it."""

    def send(self, document: dict[str, Any]) -> None: ...


class JobFeed:
    """The one job watch of a server, shared by its connections."""

    def __init__(self, jobs: Callable[[], list[JobResult]], poll: float = POLL) -> None:
        self.jobs = jobs
        self.poll = poll
        self.seen: dict[Subscriber, dict[str, JobResult]] = {}
        self.task: asyncio.Future[None] | None = None
        self.lock = threading.Lock()  # a connection ends on a worker thread

    async def subscribe(self, conn: Subscriber) -> list[JobResult]:
        """The jobs now; from here on ``conn`` is told of every change."""
        current = await asyncio.to_thread(self.jobs)
        with self.lock:
            self.seen[conn] = {job.job: job for job in current}
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._watch())
        return current

    def unsubscribe(self, conn: Subscriber) -> bool:
        """Whether ``conn`` was subscribed (the watch ends with its last subscriber;
        safe from any thread)."""
        with self.lock:
            return self.seen.pop(conn, None) is not None

    async def _watch(self) -> None:
        while self.seen:
            await asyncio.sleep(self.poll)
            try:
                now = await asyncio.to_thread(self.jobs)
            except (BridgeError, OSError):  # the runtime directory moved aside: next look
                continue
            for conn, before in list(self.seen.items()):
                for event in Bridge.job_changes(before, now):
                    conn.send(event)
                with self.lock:
                    if conn in self.seen:
                        self.seen[conn] = {job.job: job for job in now}

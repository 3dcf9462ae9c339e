"""``/mcp`` in ``serve``, built on its first request: the MCP SDK (about half of an idle
server's memory) is not imported until a client uses it.

The SDK's session manager must run, as an async context, for as long as it serves, and
be left by the task that entered it. So the server's lifespan starts one task that
waits for the first ``/mcp`` request, then imports and builds the MCP server on a worker
thread, enters its session manager and holds it until the server stops; requests wait
for it to be ready (or for the error that kept it from starting: a 503 with the reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable

from starlette.types import Receive, Scope, Send

from ..web.mount import McpMount

LOG = logging.getLogger("tmux_bridge.server")


class LazyMcp:
    """An :class:`McpMount` whose app, lifespan and cancellation stand in for the one
    ``build`` makes on first use (``path`` is the mount's, known without the SDK)."""

    def __init__(self, path: str, build: Callable[[], McpMount]) -> None:
        self.path = path
        self.build = build
        self.mount: McpMount | None = None
        self.error = ""
        self.wanted = asyncio.Event()
        self.ready = asyncio.Event()
        self.stopping = asyncio.Event()

    def as_mount(self) -> McpMount:
        return McpMount(self.path, self, self.lifespan, self.cancel_all)  # an ASGI app: all methods

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self.wanted, self.ready, self.stopping = asyncio.Event(), asyncio.Event(), asyncio.Event()
        holder = asyncio.ensure_future(self._hold())
        try:
            yield
        finally:
            self.stopping.set()
            self.wanted.set()
            await holder

    async def _hold(self) -> None:
        await self.wanted.wait()
        if self.stopping.is_set():
            return
        try:
            mount = await asyncio.to_thread(self.build)
        except Exception as exc:  # an SDK that will not import or build: said to clients
            LOG.exception("the MCP server could not start")
            self.error = f"the MCP server could not start: {type(exc).__name__}: {exc}"
            self.ready.set()
            return
        async with mount.lifespan():
            self.mount = mount
            self.ready.set()
            await self.stopping.wait()
        self.mount = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.mount is None and not self.stopping.is_set():
            self.wanted.set()
            await self.ready.wait()
        mount = self.mount
        if mount is None:
            await _unavailable(send, self.error or "the server is stopping.")
            return
        await mount.app(scope, receive, send)

    def cancel_all(self, signum: int) -> None:
        mount = self.mount
        if mount is not None:
            mount.cancel_all(signum)


async def _unavailable(send: Send, error: str) -> None:
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})

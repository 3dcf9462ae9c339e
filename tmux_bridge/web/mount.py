"""An ASGI application the server mounts behind its gates: the MCP server over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..tuples import NamedTuple


class McpMount(NamedTuple):
    """The MCP server over Streamable HTTP (``tmux_bridge.mcp.http``), served at
    ``path`` behind the gates: its ASGI app, its lifespan (the SDK's session manager)
    and the cancellation of its calls in flight."""

    path: str
    app: Any  # an ASGI application
    lifespan: Callable[[], AbstractAsyncContextManager[None]]
    cancel_all: Callable[[int], None]

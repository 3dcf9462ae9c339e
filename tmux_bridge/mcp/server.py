"""Building the MCP server (the SDK's ``MCPServer``) and serving it on stdio.

``tmux-bridge mcp`` serves stdio: a client starts it as a subprocess. SIGINT, SIGTERM
and SIGHUP stop it after interrupting the calls in flight (as Ctrl-C would); a client
that closes its end interrupts what it started (the SDK cancels its requests).
"""

from __future__ import annotations

import signal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from .. import __version__
from ..target import Target
from .live import Calls
from .texts import INSTRUCTIONS, TOOLS
from .tools import Tools

NAME = "tmux-bridge"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def build_server(base: Target, readonly: bool = False, calls: Calls | None = None) -> MCPServer:
    """The server with every tool, or with ``readonly`` only those that change nothing,
    for the tmux server, session and runtime directory of ``base``."""
    tools = Tools(base, calls if calls is not None else Calls())
    server: MCPServer = MCPServer(
        NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for text in TOOLS:
        if readonly and not text.read_only:
            continue
        annotations = ToolAnnotations(
            title=text.title,
            read_only_hint=text.read_only,
            destructive_hint=None if text.read_only else text.destructive,
            idempotent_hint=True if text.read_only else None,
        )
        server.add_tool(
            getattr(tools, text.name),
            name=text.name,
            title=text.title,
            description=text.description,
            annotations=annotations,
        )
    return server


async def serve_stdio(base: Target, readonly: bool = False) -> None:
    """Serve on stdin and stdout until the client closes them or a signal stops us."""
    calls = Calls()
    server = build_server(base, readonly, calls)
    try:
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(*SIGNALS) as received:
                    async for signum in received:
                        calls.cancel_all(signum)
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            await server.run_stdio_async()
            group.cancel_scope.cancel()
    finally:
        calls.pool.shutdown(wait=True)


def main(base: Target, readonly: bool = False) -> int:
    """``tmux-bridge mcp``: serve stdio; 0 once the client is gone or we were stopped."""
    anyio.run(serve_stdio, base, readonly)
    return 0

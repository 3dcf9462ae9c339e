"""Building the MCP server (the SDK's ``MCPServer``) and serving it on stdio.

``tmux-bridge mcp`` serves stdio: a client starts it as a subprocess. A client that
closes its end interrupts what it started (the SDK cancels its requests, and each tool
waits for its command to be interrupted). SIGINT, SIGTERM and SIGHUP interrupt the calls
in flight (as Ctrl-C would), wait for them to end, and exit 0 at once: the SDK reads
stdin on a thread that nothing can cancel while the client keeps it open.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from .. import __version__
from ..api import NO_ORIGIN, Origin
from ..infra.patterns import use_time_limit
from ..infra.tmux import end_channels, use_channels
from ..target import Target
from .progress import Calls
from .texts import INSTRUCTIONS, TOOLS
from .tools import AgentTools

NAME = "tmux-bridge"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE = 15.0  # seconds a stop waits for interrupted calls to end before giving up on them
PATTERN_TIME = 0.1  # seconds one search with a client's pattern (a REPL's prompt) may take


def build_server(
    base: Target, readonly: bool = False, calls: Calls | None = None, origin: Origin = NO_ORIGIN
) -> MCPServer:
    """The server with every tool, or with ``readonly`` only those that change nothing,
    for the tmux server, session and runtime directory of ``base``; ``origin`` sends a
    message that names no sender (none for a server over HTTP)."""
    tools = AgentTools(base, calls if calls is not None else Calls(), origin)
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
    """Serve on stdin and stdout until the client closes them or a signal stops us. A
    client's patterns (a REPL's prompt) are searched under a time limit
    (:func:`~tmux_bridge.infra.patterns.use_time_limit`): the server's threads share one
    interpreter, which a backtracking ``re`` search would hold for ever."""
    use_time_limit(PATTERN_TIME)
    use_channels(True)  # resident: tmux commands down one control-mode client per server
    calls = Calls()
    server = build_server(base, readonly, calls, Origin.from_env(os.environ))  # the agent's
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_stop_on_signal, calls)
            await server.run_stdio_async()
            group.cancel_scope.cancel()
    finally:
        calls.pool.shutdown(wait=True)
        end_channels()  # our control clients end with us, not left to tmux


async def _stop_on_signal(calls: Calls) -> None:
    """At the first signal, interrupt the calls in flight, wait until they are over
    (polled, at most :data:`GRACE` seconds), and exit 0."""
    with anyio.open_signal_receiver(*SIGNALS) as received:
        async for signum in received:
            calls.cancel_all(signum)
            deadline = time.monotonic() + GRACE
            while len(calls) and time.monotonic() < deadline:
                await anyio.sleep(0.02)
            end_channels()
            sys.stderr.flush()
            os._exit(0)


def main(base: Target, readonly: bool = False) -> int:
    """``tmux-bridge mcp``: serve stdio; 0 once the client is gone or we were stopped."""
    anyio.run(serve_stdio, base, readonly)
    return 0

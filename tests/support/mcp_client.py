"""Driving the MCP server from tests: the SDK's in-memory client against a real private
tmux server (the conftest fixtures), and the stdio subprocess."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp import Client
from mcp_types import CallToolResult, Implementation

from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.mcp.server import build_server
from tmux_bridge.target import Target

from ..conftest import Bridge as Pane

CLIENT = Implementation(name="test-client", version="1.0")
T = TypeVar("T")


def target_of(bridge: Pane, pane: str | None = None) -> Target:
    """The test bridge's terminal, named explicitly (nothing from the environment)."""
    socket = bridge.tmpdir / f"tmux-{os.getuid()}" / "default"
    return Target(Tmux(socket_path=str(socket)), bridge.session, pane, str(bridge.runtime))


def with_client(
    bridge: Pane,
    use: Callable[[Client], Awaitable[T]],
    readonly: bool = False,
    mode: str = "auto",
) -> T:
    """``use(client)`` with an in-memory client of a server for ``bridge``'s terminal."""

    async def go() -> T:
        server = build_server(target_of(bridge), readonly)
        async with Client(server, client_info=CLIENT, mode=mode) as client:
            return await use(client)

    return asyncio.run(go())


def call(
    bridge: Pane, tool: str, arguments: dict[str, Any] | None = None, readonly: bool = False
) -> CallToolResult:
    """One tool call through a fresh in-memory client."""

    async def use(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments or {})

    return with_client(bridge, use, readonly)


def document(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a result, checked to be a JSON object."""
    content = result.structured_content
    assert isinstance(content, dict), result
    return content


def text(result: CallToolResult) -> str:
    """The text of a result's one content block."""
    assert len(result.content) == 1, result
    block = result.content[0]
    assert block.type == "text", block
    return block.text

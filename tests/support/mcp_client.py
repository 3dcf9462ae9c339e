"""Driving the MCP server from tests: the SDK's in-memory client against a real private
tmux server (the fixtures of tests/support/plugin.py), and the stdio subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp_types import CallToolResult, Implementation

from tmux_bridge.mcp.server import build_server

from . import tmuxserver
from .pane import TestPane, target_of

CLIENT = Implementation(name="test-client", version="1.0")
T = TypeVar("T")
ALL_TOOLS = [
    "run", "start_repl", "evaluate", "close_repl", "send_keys", "type_text", "read_screen",
    "status", "list_panes", "pane_info", "read_file", "write_file", "edit_file",
    "read_output", "list_agents", "send_prompt", "send_message", "start_job", "read_job",
    "wait_job", "kill_job", "list_jobs",
    "stat_file", "list_backups", "restore_file", "edit_lines", "check_content",
]  # fmt: skip
READ_ONLY = {
    "read_screen", "status", "list_panes", "pane_info", "read_file", "read_output", "list_agents",
    "read_job", "wait_job", "list_jobs",
    "stat_file", "list_backups", "check_content",
}  # fmt: skip
SLEEPER = "sh -c 'echo started; exec sleep 30'"


def bash(command: str) -> subprocess.CompletedProcess[str]:
    """What bash itself gives for ``command`` (the expected values)."""
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)


class Progress:
    """The progress notifications of one call: when each came, its count and text."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float, str]] = []
        self.started = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((time.monotonic(), progress, message or ""))
        if "started" in (message or ""):
            self.started.set()

    @property
    def text(self) -> str:
        return "".join(message for _, _, message in self.seen)


def at_prompt(pane: TestPane) -> bool:
    """Whether the pane shows its bare prompt ``$`` on its last non-empty line."""
    return tmuxserver.at_prompt(pane.screen())


def with_client(
    bridge: TestPane,
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
    bridge: TestPane, tool: str, arguments: dict[str, Any] | None = None, readonly: bool = False
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

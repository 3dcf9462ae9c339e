"""Stopping a real ``tmux-bridge serve`` while clients hold it open: MCP sessions over
Streamable HTTP (the SDK's own client), one of them with a command in flight, more
sessions holding their event stream open (``GET /mcp``, as every Streamable HTTP client
does between calls), and WebSocket clients watching a pane, one of which resized it.
SIGTERM stops it within :data:`PROMISE` seconds, exit 0, nothing on stderr; the command
in flight is interrupted, the pane is back at its prompt and has its own size back."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import ClientConnection, connect

from tmux_bridge.audit.log import read

from ..support.mcp_client import CLIENT, SLEEPER, Progress, at_prompt
from ..support.pane import WAIT, MakeBridge, TestPane
from ..support.serve import TOKEN, Server, running, wait_until
from ..support.ws_client import event, request

pytestmark = pytest.mark.tmux
PROMISE = 2.0  # seconds from SIGTERM to the exit: the product's promise (docs/http-api.md)
SESSIONS = 4  # MCP sessions open at the stop
WATCHERS = 3  # WebSocket clients subscribed to the pane at the stop
STREAMS = 3  # MCP sessions opened by hand, holding their GET event stream open
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "streamer", "version": "0"}}}  # fmt: skip


@contextlib.asynccontextmanager
async def mcp_session(server: Server) -> AsyncIterator[Client]:
    """An initialized MCP session over HTTP; whatever its end raises (the server is
    gone) is the client's business, not the test's (the test's timeout bounds it)."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    stack = contextlib.AsyncExitStack()
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60))
    transport = streamable_http_client(server.base_url + "/mcp", http_client=http)
    client = await stack.enter_async_context(Client(transport, client_info=CLIENT))
    try:
        yield client
    finally:
        with contextlib.suppress(BaseException):
            await stack.aclose()


async def watcher(server: Server, pane: TestPane, number: int) -> ClientConnection:
    url = server.base_url.replace("http://", "ws://") + "/ws"
    ws = await connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"})
    reply = await request(ws, {"id": f"w{number}", "type": "subscribe-output",
                               "agent": pane.session})  # fmt: skip
    assert reply["ok"] is True, reply
    return ws


async def event_stream(server: Server, stack: contextlib.AsyncExitStack) -> None:
    """A session opened by hand whose ``GET /mcp`` event stream is open (its headers
    in): the stream a client keeps between calls for what the server sends unasked."""
    headers = {"Authorization": f"Bearer {TOKEN}",
               "Accept": "application/json, text/event-stream"}  # fmt: skip
    http = await stack.enter_async_context(
        httpx2.AsyncClient(base_url=server.base_url, headers=headers, timeout=60)
    )
    answer = await http.post("/mcp", json=INITIALIZE)
    session = {"mcp-session-id": answer.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-06-18"}  # fmt: skip
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post("/mcp", headers=session, json=note)).status_code == 202
    stream = http.stream("GET", "/mcp", headers={**session, "Accept": "text/event-stream"})
    response = await stack.enter_async_context(_quietly_closed(stream))
    assert response.status_code == 200


@contextlib.asynccontextmanager
async def _quietly_closed(
    stream: contextlib.AbstractAsyncContextManager[httpx2.Response],
) -> AsyncIterator[httpx2.Response]:
    """``stream`` entered; what its end raises (the server is gone) is ignored, what the
    test raised meanwhile is not."""
    response = await stream.__aenter__()
    try:
        yield response
    finally:
        with contextlib.suppress(Exception):
            await stream.__aexit__(None, None, None)


async def stop_with_clients_open(server: Server, pane: TestPane) -> float:
    """Open the clients, start a command through one MCP session, send SIGTERM; the
    seconds the server took to exit (failing past the promise)."""
    progress = Progress()
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(mcp_session(server)) for _ in range(SESSIONS)]
        for client in sessions:
            assert (await client.list_tools()).tools
        watchers = [await watcher(server, pane, n) for n in range(WATCHERS)]
        await watchers[0].send(b"\x03" + pane.session.encode() + b"\x0023:10")
        resized = await event(watchers[0], lambda message: message.get("type") == "resize")
        assert resized["applied"] is True, resized
        for _ in range(STREAMS):
            await event_stream(server, stack)
        call = asyncio.ensure_future(
            sessions[0].call_tool("run", {"command": SLEEPER}, None, progress)
        )
        await asyncio.wait_for(progress.started.wait(), WAIT)
        loop = asyncio.get_running_loop()
        started = loop.time()
        server.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.to_thread(server.proc.wait, PROMISE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not stop within {PROMISE} s of SIGTERM")
        took = loop.time() - started
        call.cancel()
        with contextlib.suppress(BaseException):
            await call
        for ws in watchers:
            await ws.close()
    return took


def test_sigterm_stops_serve_within_its_promise_with_clients_open(
    make_bridge: MakeBridge,
) -> None:
    pane = make_bridge("bash")
    pane.start()
    own = pane.tmux("show-options", "-A", "-v", "-t", pane.session, "default-size").strip()
    with running(pane.env) as server:
        asyncio.run(stop_with_clients_open(server, pane))
        out, err = server.proc.communicate(timeout=WAIT)
    assert server.proc.returncode == 0, err
    assert out.decode().strip().splitlines()[-1] == "tmux-bridge serve: stopped."
    assert err.decode() == ""  # no traceback, no error line
    wait_until(lambda: read(str(pane.runtime), None) != [], "the call's log entry")
    entries: list[dict[str, Any]] = read(str(pane.runtime), None)
    assert [(e["command"], e["exit_status"]) for e in entries] == [(SLEEPER, 143)]
    wait_until(lambda: at_prompt(pane), "the prompt")
    assert pane.pane("#{window_width}x#{window_height}") == own != "23x10"

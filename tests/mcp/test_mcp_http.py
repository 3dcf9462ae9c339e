"""The MCP server over Streamable HTTP at ``/mcp`` on a real ``tmux-bridge serve``,
behind its gates: the SDK's HTTP client with the token runs a command; forged Host and
Origin headers and a missing token are refused before the SDK sees anything (and run
nothing); a stopping server interrupts an MCP call in flight."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tmux_bridge.audit.log import read

from ..support.mcp_client import CLIENT, SLEEPER, Progress, at_prompt, document
from ..support.pane import WAIT, MakeBridge, TestPane
from ..support.serve import TOKEN, Server, running, wait_until

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "forger", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    b = make_bridge("bash")
    b.start()
    yield b


@pytest.fixture
def server(pane: TestPane) -> Iterator[Server]:
    with running(pane.env) as started:
        yield started


def over_http(server: Server, use: Any, token: str = TOKEN) -> Any:
    """``use(client)`` with the SDK's Streamable HTTP client, sending the token."""

    async def go() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(
                streamable_http_client(server.base_url + "/mcp", http_client=http),
                client_info=CLIENT,
            ) as client,
        ):
            return await use(client)

    return anyio.run(go)


def test_a_command_runs_over_streamable_http_with_the_token(pane: TestPane, server: Server) -> None:
    async def use(client: Client) -> dict[str, Any]:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert "run" in tools and "read_file" in tools
        return document(await client.call_tool("run", {"command": "echo over; echo err >&2"}))

    got = over_http(server, use)
    assert (got["stdout"], got["stderr"], got["exit_status"]) == ("over\n", "err\n", 0)
    assert [e["client"] for e in read(str(pane.runtime), None)] == ["test-client"]
    with server.client() as http:
        assert http.get("/health").json()["mcp"] == "/mcp"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"Host": "evil.example"}, 403, "forbidden_host"),
        ({"Host": "127.0.0.1.evil.example:80"}, 403, "forbidden_host"),
        ({"Origin": "http://evil.example"}, 403, "forbidden_origin"),
        ({"Origin": "null"}, 403, "forbidden_origin"),
        ({"Authorization": "Bearer wrong-token-0123456789"}, 401, "unauthorized"),
    ],
    ids=["host", "host-prefix", "origin", "null-origin", "token"],
)
def test_forged_requests_to_mcp_are_refused_by_the_gates(
    pane: TestPane, server: Server, tmp_path: Path, headers: dict[str, str], status: int, code: str
) -> None:
    marker = tmp_path / "ran"
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "run", "arguments": {"command": f"touch {marker}"}},
    }
    with server.client(headers={**MCP_HEADERS, **headers}) as http:
        for body in (INITIALIZE, call):
            answer = http.post("/mcp", json=body)
            assert answer.status_code == status, answer.text
            assert answer.json()["metadata"]["error_code"] == code
    assert not marker.exists() and read(str(pane.runtime), None) == []


def test_no_token_no_mcp(server: Server) -> None:
    with server.client(token=None, headers=MCP_HEADERS) as http:
        answer = http.post("/mcp", json=INITIALIZE)
    assert answer.status_code == 401 and answer.json()["metadata"]["error_code"] == "unauthorized"


def test_a_stopping_server_interrupts_an_mcp_call_in_flight(pane: TestPane, server: Server) -> None:
    progress = Progress()

    async def use(client: Client) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: client.call_tool("run", {"command": SLEEPER}, None, progress))
            with anyio.fail_after(WAIT):
                await progress.started.wait()
            server.proc.send_signal(signal.SIGTERM)
            pane.wait_for(lambda: read(str(pane.runtime), None) != [], "the call to end")
            group.cancel_scope.cancel()

    over_http(server, use)
    started = time.monotonic()
    out, err = server.proc.communicate(timeout=30)
    assert server.proc.returncode == 0 and b"stopped" in out, err
    assert time.monotonic() - started < 5  # not the 15 s grace of a stuck connection
    entries = read(str(pane.runtime), None)
    assert [(e["command"], e["exit_status"]) for e in entries] == [(SLEEPER, 143)]
    wait_until(lambda: at_prompt(pane), "the prompt")
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.base_url + "/health", timeout=5)


def test_no_mcp_leaves_mcp_out(pane: TestPane) -> None:
    with running(pane.env, "--no-mcp") as server:
        assert any("mcp:     not served (--no-mcp)" in line for line in server.banner)
        with server.client(headers=MCP_HEADERS) as http:
            answer = http.post("/mcp", json=INITIALIZE)
            assert answer.status_code == 404, answer.text
            assert http.get("/health").json()["mcp"] is None


def open_session(http: httpx.Client) -> dict[str, str]:
    """Initialize a session by hand; its headers."""
    answer = http.post("/mcp", json=INITIALIZE)
    session = {"mcp-session-id": answer.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    http.post("/mcp", headers=session, json={"jsonrpc": "2.0",
              "method": "notifications/initialized"})  # fmt: skip
    return session


SLEEP_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "run", "arguments": {"command": SLEEPER}}}  # fmt: skip


def interrupted_once(pane: TestPane) -> None:
    """The pane is back at its prompt within 1 s, the call logged as Ctrl-C ended it."""
    pane.wait_for(lambda: at_prompt(pane), "the prompt", timeout=1.0)
    pane.wait_for(lambda: read(str(pane.runtime), None) != [], "the call's log entry")
    entries = read(str(pane.runtime), None)
    assert [(e["client"], e["command"], e["exit_status"]) for e in entries] == [
        ("forger", SLEEPER, 130)
    ]


def test_a_dropped_connection_interrupts_the_call_it_carried(
    pane: TestPane, server: Server
) -> None:
    """No event store: a dropped answer can never be resumed, so its command stops."""
    with server.client(headers=MCP_HEADERS) as http:
        session = open_session(http)
        with (
            server.client(headers={**MCP_HEADERS, **session}) as caller,
            caller.stream("POST", "/mcp", json=SLEEP_CALL),
        ):
            pane.wait_for(lambda: pane.foreground() == "sleep", "the command to run")
            assert read(str(pane.runtime), None) == []
        interrupted_once(pane)
        # the session lives on: the next call runs
        answer = http.post("/mcp", headers=session, json={**SLEEP_CALL, "id": 3, "params": {
            "name": "run", "arguments": {"command": "echo after"}}})  # fmt: skip
        assert '\\"stdout\\": \\"after\\\\n\\"' in answer.text, answer.text


def test_a_client_that_ends_its_session_interrupts_what_it_started(
    pane: TestPane, server: Server
) -> None:
    with server.client(headers=MCP_HEADERS) as http:
        session = open_session(http)
        with (
            server.client(headers={**MCP_HEADERS, **session}) as caller,
            caller.stream("POST", "/mcp", json=SLEEP_CALL),
        ):
            pane.wait_for(lambda: pane.foreground() == "sleep", "the command to run")
            assert http.delete("/mcp", headers=session).status_code == 200
            interrupted_once(pane)


def test_an_oversized_body_is_refused(server: Server) -> None:
    from tmux_bridge.mcp.http import MAX_BODY

    with server.client(headers=MCP_HEADERS) as http:
        answer = http.post("/mcp", content=b"[" + b" " * MAX_BODY + b"]")
    assert answer.status_code == 413 and "larger than" in answer.json()["error"]["message"]

"""``tmux-bridge mcp`` as a real stdio subprocess: driven by the SDK's stdio client
(initialize, the tool list, progress while a command prints, cancellation mid-``sleep``)
and by hand-written JSON-RPC lines (a client that goes away, a SIGTERM)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import IO, Any, TypeVar

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tmux_bridge import __version__
from tmux_bridge.audit.log import read

from ..support.mcp_client import (
    ALL_TOOLS,
    CLIENT,
    READ_ONLY,
    SLEEPER,
    Progress,
    at_prompt,
    document,
)
from ..support.pane import BIN, WAIT, MakeBridge, TestPane

T = TypeVar("T")
PROTOCOL = "2025-11-25"


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    b = make_bridge("bash")
    b.start()
    yield b


def over_stdio(bridge: TestPane, use: Callable[[Client], Awaitable[T]], *args: str) -> T:
    """``use(client)`` with the SDK's stdio client of ``tmux-bridge mcp ARGS``, started
    in the test bridge's environment, with the initialize handshake."""
    params = StdioServerParameters(
        command=str(BIN / "tmux-bridge"), args=["mcp", *args], env=bridge.env
    )

    async def go() -> T:
        async with Client(params, client_info=CLIENT, mode="legacy") as client:
            return await use(client)

    return anyio.run(go)


def test_initialize_and_the_tool_lists(pane: TestPane) -> None:
    async def use(client: Client) -> tuple[Any, list[str]]:
        return client.server_info, [tool.name for tool in (await client.list_tools()).tools]

    info, names = over_stdio(pane, use)
    assert (info.name, info.version, names) == ("tmux-bridge", __version__, ALL_TOOLS)
    _, names = over_stdio(pane, use, "--readonly")
    assert set(names) == READ_ONLY


def test_progress_arrives_while_the_command_prints(pane: TestPane) -> None:
    progress = Progress()

    async def use(client: Client) -> tuple[dict[str, Any], float]:
        arguments = {"command": "echo first; sleep 1; echo second"}
        result = await client.call_tool("run", arguments, progress_callback=progress)
        return document(result), time.monotonic()

    got, answered = over_stdio(pane, use)
    assert (got["stdout"], got["exit_status"]) == ("first\nsecond\n", 0)
    assert progress.seen[0][2] == "first\n"
    assert progress.seen[0][0] < answered - 0.5  # while `sleep 1` ran
    assert progress.text == got["stdout"]
    assert [entry["client"] for entry in read(str(pane.runtime), None)] == ["test-client"]


def test_cancellation_mid_sleep_interrupts_and_the_prompt_is_back_within_1_s(
    pane: TestPane,
) -> None:
    progress = Progress()

    async def use(client: Client) -> None:
        async with anyio.create_task_group() as group:
            arguments = {"command": SLEEPER}
            group.start_soon(lambda: client.call_tool("run", arguments, None, progress))
            with anyio.fail_after(WAIT):
                await progress.started.wait()
            group.cancel_scope.cancel()  # the client sends notifications/cancelled
        pane.wait_for(lambda: at_prompt(pane), "the prompt", timeout=1.0)
        # the server took the next call at once: the pane was free
        again = await client.call_tool("run", {"command": "echo next"})
        assert document(again)["stdout"] == "next\n"

    over_stdio(pane, use)
    entries = read(str(pane.runtime), None)
    assert [(e["command"], e["exit_status"]) for e in entries] == [
        (SLEEPER, 130),
        ("echo next", 0),
    ]


# --- by hand: a client that goes away, a signal -------------------------------------------


def _send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    stdin.flush()


def _start_call(pane: TestPane) -> subprocess.Popen[bytes]:
    """``tmux-bridge mcp`` with the initialize handshake done by hand and a ``run`` of
    the sleeper under way."""
    server = subprocess.Popen(
        [str(BIN / "tmux-bridge"), "mcp"],
        env=pane.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    hello = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "by-hand",
             "version": "0"}}  # fmt: skip
    _send(server.stdin, {"id": 1, "method": "initialize", "params": hello})
    answer = json.loads(pane.read_line_from(server.stdout))
    assert answer["result"]["serverInfo"]["name"] == "tmux-bridge", answer
    _send(server.stdin, {"method": "notifications/initialized"})
    run = {"name": "run", "arguments": {"command": SLEEPER}}
    _send(server.stdin, {"id": 2, "method": "tools/call", "params": run})
    pane.wait_for(lambda: pane.foreground() == "sleep", "the command to run")
    return server


def _ended(pane: TestPane, server: subprocess.Popen[bytes], status: int) -> None:
    """The server exited 0, the pane is at its prompt, the call logged with ``status``."""
    assert server.stdout is not None and server.stderr is not None
    try:
        server.wait(timeout=WAIT)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        err = server.stderr.read().decode("utf-8", "replace")
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    assert server.returncode == 0, err
    assert at_prompt(pane)
    entries = read(str(pane.runtime), None)
    assert [(e["client"], e["command"], e["exit_status"]) for e in entries] == [
        ("by-hand", SLEEPER, status)
    ]


def test_a_client_that_disconnects_interrupts_what_it_started(pane: TestPane) -> None:
    server = _start_call(pane)
    assert server.stdin is not None
    server.stdin.close()  # the client is gone
    _ended(pane, server, 130)


def test_sigterm_interrupts_the_calls_in_flight_and_stops(pane: TestPane) -> None:
    server = _start_call(pane)
    server.send_signal(signal.SIGTERM)
    _ended(pane, server, 128 + signal.SIGTERM)


def test_the_servers_agent_name_comes_before_the_clients(pane: TestPane) -> None:
    """A stdio server started with ``TMUX_BRIDGE_AGENT`` in its environment (the
    agent's own, as tmux-send reads it) names that agent in the pane's header."""
    pane.env["TMUX_BRIDGE_AGENT"] = "codex"

    async def use(client: Client) -> dict[str, Any]:
        return document(await client.call_tool("run", {"command": "echo named"}))

    assert over_stdio(pane, use)["stdout"] == "named\n"
    pane.wait_for(lambda: "$ [tmux-send: codex] echo named" in pane.history(), "the header")

"""Live progress and cancellation through the SDK's in-memory client, on a real private
tmux server: output reaches the client while the command runs (at most a few
notifications a second), and a cancelled call is interrupted like Ctrl-C, the pane back
at its prompt before the call is over."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from tmux_bridge.audit.log import read
from tmux_bridge.mcp.progress import INTERVAL

from ..support.mcp_client import SLEEPER, Progress, at_prompt, bash, document, with_client
from ..support.pane import WAIT, MakeBridge, TestPane


# Prints "started" from the program in the foreground, so a cancellation right after it
# meets that program, not the shell between two commands.
@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    b = make_bridge("bash")
    b.start()
    yield b


def test_output_arrives_as_progress_while_the_command_runs(pane: TestPane) -> None:
    command = "for i in $(seq 1 30); do echo line$i; sleep 0.05; done"
    expected = bash(command).stdout
    progress = Progress()

    async def use(client: Client) -> tuple[dict[str, Any], float]:
        result = await client.call_tool("run", {"command": command}, progress_callback=progress)
        return document(result), time.monotonic()

    got, answered = with_client(pane, use)
    assert got["stdout"] == progress.text == expected
    counts = [count for _, count, _ in progress.seen]
    assert counts == sorted(set(counts)) and counts[-1] == len(expected)
    assert len(progress.seen) >= 3  # live, not all at the end
    assert progress.seen[0][0] < answered - 1.0  # the first line long before the answer
    gaps = [b[0] - a[0] for a, b in zip(progress.seen, progress.seen[1:], strict=False)]
    assert all(gap >= INTERVAL * 0.9 for gap in gaps[:-1]), gaps  # at most a few a second


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_cancelled_call_is_interrupted_and_the_pane_is_back(pane: TestPane, mode: str) -> None:
    progress = Progress()

    async def use(client: Client) -> float:
        async with anyio.create_task_group() as group:
            arguments = {"command": SLEEPER}
            group.start_soon(lambda: client.call_tool("run", arguments, None, progress))
            with anyio.fail_after(WAIT):
                await progress.started.wait()
            group.cancel_scope.cancel()
        return time.monotonic()

    cancelled = with_client(pane, use, mode=mode)
    # in process the call ends once the pane is back; over JSON-RPC the client stops
    # waiting at once and the server interrupts the command meanwhile
    pane.wait_for(lambda: at_prompt(pane), "the prompt", timeout=0 if mode == "auto" else 1)
    assert time.monotonic() - cancelled < 1.0 + 0.5
    pane.wait_for(lambda: len(read(str(pane.runtime), None)) == 1, "the call's log entry")
    entry = read(str(pane.runtime), None)[0]
    assert (entry["command"], entry["exit_status"]) == (SLEEPER, 130)
    assert "sleep" not in pane.foreground()

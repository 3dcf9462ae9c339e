"""The job tools through the SDK's in-memory client, on a real private tmux server:
start a job, read it, wait for it with progress, cancel a wait (the job runs on), kill
it, list the jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mcp import Client

from ..support.mcp_client import Progress, call, document, with_client
from ..support.pane import MakeBridge, TestPane


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    """A started bash bridge at its prompt."""
    b = make_bridge("bash")
    b.start()
    yield b


def test_a_job_through_the_tools(pane: TestPane) -> None:
    go = pane.root / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    command = f"echo started; echo warn >&2; {wait}; echo done; exit 5"
    started = document(call(pane, "start_job", {"command": command}))
    job = started["job"]
    assert started["state"] == "running"
    refused = call(pane, "run", {"command": "true"})
    assert refused.is_error and document(refused)["error_code"] == "pane_busy"
    pane.wait_for(
        lambda: document(call(pane, "read_job", {"job": job, "all": True}))["stderr"] == "warn\n",
        "the job's stderr",
    )
    progress = Progress()

    async def use(client: Client) -> dict[str, object]:
        waiting = asyncio.create_task(
            client.call_tool("wait_job", {"job": job}, progress_callback=progress)
        )
        await asyncio.sleep(0)  # let the call start; the job waits for `go` meanwhile
        go.write_text("")
        result = await waiting
        assert not result.is_error, result
        content = result.structured_content
        assert isinstance(content, dict)
        return content

    ended = with_client(pane, use)
    assert (ended["state"], ended["exit_status"]) == ("exited", 5)
    assert ended["stdout"] == "started\ndone\n" and ended["stderr"] == "warn\n"
    assert "done" in progress.text
    listed = document(call(pane, "list_jobs"))["jobs"]
    assert [entry["job"] for entry in listed] == [job]


def test_a_cancelled_wait_leaves_the_job_running(pane: TestPane) -> None:
    job = document(call(pane, "start_job", {"command": "echo started; exec sleep 60"}))["job"]
    progress = Progress()

    async def use(client: Client) -> None:
        waiting = asyncio.create_task(
            client.call_tool("wait_job", {"job": job}, progress_callback=progress)
        )
        await asyncio.wait_for(progress.started.wait(), 15)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    with_client(pane, use)
    assert document(call(pane, "read_job", {"job": job}))["state"] == "running"
    killed = document(call(pane, "kill_job", {"job": job}))
    assert (killed["state"], killed["exit_status"]) == ("interrupted", 130)
    unknown = call(pane, "read_job", {"job": "0123456789"})
    assert unknown.is_error and document(unknown)["error_code"] == "no_such_job"

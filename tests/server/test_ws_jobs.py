"""The job messages of ``/ws`` (``list-jobs``, ``subscribe-jobs``): a real ``tmux-bridge
serve``, a real WebSocket client, jobs started by ``tmux-send --background`` (another
process than the server) and ending on their own, by ``--kill``, or by their pane going
away."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from ..support.pane import MakeBridge, TestPane
from ..support.serve import TOKEN, running
from ..support.ws_client import event, request

pytestmark = pytest.mark.tmux


def _background(b: TestPane, *args: str) -> str:
    code, out, err = b.send_when_ready("--background", *args)
    assert code == 0, err
    return out.strip()


def _about(job: str, kind: str) -> Any:
    return lambda e: e.get("type") == kind and e.get("job", {}).get("job") == job


def test_subscribers_are_told_when_jobs_start_and_end(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    go = b.root / "go"
    gated = f"echo started; while [ ! -e {go} ]; do sleep 0.05; done; exit 3"
    earlier = _background(b, "--", "echo", "earlier")
    assert b.send_text("--wait", earlier)[0] == 0
    split = b.bridge_cli("split", "--json", "--label", "work")
    assert split.returncode == 0, split.stderr
    pane = json.loads(split.stdout)["pane"]

    with running(b.env) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {TOKEN}"}

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with connect(url, additional_headers=headers) as ws:
                seen["sub"] = await request(ws, {"id": "1", "type": "subscribe-jobs"})
                job = await asyncio.to_thread(_background, b, "--", "sh", "-c", gated)
                seen["job"] = job
                seen["started"] = await event(ws, _about(job, "job-started"))
                go.write_text("")
                seen["ended"] = await event(ws, _about(job, "job-ended"))
                sleeper = await asyncio.to_thread(_background, b, "--", "sleep", "60")
                await event(ws, _about(sleeper, "job-started"))
                await asyncio.to_thread(b.send, "--kill", sleeper)
                seen["killed"] = await event(ws, _about(sleeper, "job-ended"))
                other = await asyncio.to_thread(_background, b, "-p", "work", "--", "sleep", "60")
                await event(ws, _about(other, "job-started"))
                b.tmux("kill-pane", "-t", pane)
                seen["lost"] = await event(ws, _about(other, "job-ended"))
                seen["list"] = await request(ws, {"id": "2", "type": "list-jobs"})
                seen["unsub"] = await request(ws, {"id": "3", "type": "unsubscribe-jobs"})
                seen["again"] = await request(ws, {"id": "4", "type": "unsubscribe-jobs"})
            return seen

        seen = asyncio.run(scenario())

    assert seen["sub"]["ok"] is True
    assert [(j["job"], j["state"]) for j in seen["sub"]["jobs"]] == [(earlier, "exited")]
    assert seen["started"]["job"]["state"] == "running"
    ended = seen["ended"]["job"]
    assert (ended["state"], ended["exit_status"]) == ("exited", 3)
    assert ended["ended"] is not None and ended["stdout_bytes"] == len("started\n")
    killed = seen["killed"]["job"]
    assert (killed["state"], killed["exit_status"]) == ("interrupted", 130)
    assert seen["lost"]["job"]["state"] == "lost"
    listed = {j["job"]: j["state"] for j in seen["list"]["jobs"]}
    assert listed[seen["job"]] == "exited" and len(listed) == 4
    assert seen["unsub"]["ok"] is True
    assert seen["again"]["ok"] is False and "no subscribe-jobs" in seen["again"]["error"]

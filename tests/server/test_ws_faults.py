"""A fault of the server's own while it answers a ``/ws`` request: the client is still
answered (``ok: false``, ``internal_error``) and the connection goes on, and the log has
the traceback. The real ``tmux-bridge serve``, started through a small launcher that makes
one request's handler raise, and a real WebSocket client."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import Any

import pytest
from websockets.asyncio.client import connect

from ..support.pane import WAIT, TestPane
from ..support.serve import TOKEN, running

pytestmark = pytest.mark.tmux

# Runs ``tmux-bridge serve`` (the rest of argv) with list-agents made to raise.
LAUNCHER = r"""
import runpy, sys
from tmux_bridge.server import ws

async def broken(conn, message):
    raise RuntimeError("a fault of the server's own")

ws._HANDLERS["list-agents"] = broken  # the page's mission control asks for it first
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_fault_of_ours_is_answered_and_logged(pane: TestPane) -> None:
    async def ask(url: str) -> list[dict[str, Any]]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with connect(url, additional_headers=headers) as ws:
            answers: list[dict[str, Any]] = []
            for n, kind in enumerate(["list-agents", "list-panes"]):
                await ws.send(json.dumps({"id": str(n), "type": kind}))
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), WAIT)))
            return answers

    with running(pane.env, wrap=[sys.executable, "-c", LAUNCHER]) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        failed, listed = asyncio.run(ask(url))
        server.proc.send_signal(signal.SIGTERM)
        _, err = server.proc.communicate(timeout=WAIT)
    assert failed == {
        "id": "0",
        "type": "list-agents",
        "ok": False,
        "error": "the server failed; its log says why.",
        "code": "internal_error",
    }
    assert listed["id"] == "1" and listed["ok"] is True, listed  # the connection goes on
    log = err.decode()
    assert "websocket request list-agents failed" in log, log
    assert "RuntimeError: a fault of the server's own" in log, log

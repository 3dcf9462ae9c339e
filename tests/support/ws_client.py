"""Talking to ``/ws`` from tests: a request and its reply, an event awaited."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection

from .pane import WAIT


async def request(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    """Send ``message``; its reply (other events and binary frames before it skipped)."""
    await ws.send(json.dumps(message))
    while True:
        frame = await asyncio.wait_for(ws.recv(), WAIT)
        reply = json.loads(frame) if isinstance(frame, str) else {}
        if reply.get("id") == message["id"]:
            return dict(reply)


async def event(ws: ClientConnection, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first event ``wanted`` accepts; others before it, and binary frames (a
    pane's output), are skipped."""
    async with asyncio.timeout(WAIT):
        while True:
            frame = await ws.recv()
            message = json.loads(frame) if isinstance(frame, str) else None
            if message is not None and wanted(message):
                return dict(message)

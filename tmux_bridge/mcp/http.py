"""The MCP server over Streamable HTTP, for ``tmux-bridge serve`` at ``/mcp``.

Served behind serve's own gates (loopback peer, Host and Origin allow-lists, the bearer
token), which check every request before the SDK sees it; the SDK's own DNS-rebinding
check is therefore off, so that one set of rules (``--allowed-hosts``,
``--allowed-origins``) decides. The calls' cancellations join the server's, so a
stopping server interrupts them too.

A ``tools/call`` whose connection drops before its answer is interrupted (as Ctrl-C):
the SDK would let it run on, but with no event store its answer can never be resumed,
so a command the agent can no longer see the end of would hold the person's pane.
Ending the session (``DELETE``) interrupts its calls as well.
"""

from __future__ import annotations

import json

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Message, Receive, Scope, Send

from ..target import Target
from ..web.mount import McpMount
from ..web.security import ASGIApp
from .progress import Calls, Key
from .server import build_server

PATH = "/mcp"
MAX_BODY = 4 * 1024 * 1024  # bytes of one request: the SDK's own limit


def streamable_http(base: Target, readonly: bool = False) -> McpMount:
    """The ASGI app answering ``/mcp``, the session manager's lifespan, and a way to
    cancel every call in flight."""
    calls = Calls()
    server = build_server(base, readonly, calls)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    watched = DropWatch(app, calls)
    return McpMount(PATH, watched, server.session_manager.run, calls.cancel_all)


def tool_calls(headers: list[tuple[bytes, bytes]], body: bytes) -> list[Key]:
    """The keys of the ``tools/call`` requests in a POST body (one message or a batch)."""
    session = dict(headers).get(b"mcp-session-id", b"").decode("latin-1")
    try:
        message = json.loads(body)
    except ValueError:
        return []  # the SDK answers it
    messages = message if isinstance(message, list) else [message]
    return [
        (session, str(m["id"]))
        for m in messages
        if isinstance(m, dict) and m.get("method") == "tools/call" and "id" in m
    ]


class DropWatch:
    """Around the SDK's app: reads a POST's body first (at most :data:`MAX_BODY` bytes),
    hands it on, and listens on the connection meanwhile; when it goes before the whole
    answer was sent, the tool calls the body carried are dropped (:meth:`Calls.drop`)."""

    def __init__(self, app: ASGIApp, calls: Calls) -> None:
        self.app = app
        self.calls = calls

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            body, ended = await _read_body(receive)
        except _TooLarge:
            await _too_large(send)
            return
        keys = [] if ended else tool_calls(scope["headers"], body)
        gone = anyio.Event()
        if ended:
            gone.set()
        if not keys:
            await self.app(scope, _replay(body, gone), send)
            return
        await self._watched(scope, receive, send, _replay(body, gone), gone, keys)

    async def _watched(
        self, scope: Scope, receive: Receive, send: Send, replay: Receive, gone: anyio.Event,
        keys: list[Key],
    ) -> None:  # fmt: skip
        answered = anyio.Event()

        async def listen() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()
            if not answered.is_set():
                for key in keys:
                    self.calls.drop(key)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()
            await send(message)

        async with anyio.create_task_group() as group:
            group.start_soon(listen)
            await self.app(scope, replay, sending)
            group.cancel_scope.cancel()


class _TooLarge(Exception):
    pass


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request's body, and whether the client went while sending it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _TooLarge()
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks), False


async def _too_large(send: Send) -> None:
    error = {"code": -32600, "message": f"the request body is larger than {MAX_BODY} bytes."}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, gone: anyio.Event) -> Receive:
    """A ``receive`` that gives ``body`` once, then waits for ``gone`` (the connection's
    end, seen by the listener) and says so."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent and not gone.is_set():
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    return receive

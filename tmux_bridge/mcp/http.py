"""The MCP server over Streamable HTTP, for ``tmux-bridge serve`` at ``/mcp``.

Served behind serve's own gates (loopback peer, Host and Origin allow-lists, the bearer
token), which check every request before the SDK sees it; the SDK's own DNS-rebinding
check is therefore off, so that one set of rules (``--allowed-hosts``,
``--allowed-origins``) decides. The calls' cancellations join the server's, so a
stopping server interrupts them too.
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecuritySettings

from ..server.app import McpMount
from ..target import Target
from .live import Calls
from .server import build_server

PATH = "/mcp"


def streamable_http(base: Target, readonly: bool = False) -> McpMount:
    """The ASGI app answering ``/mcp``, the session manager's lifespan, and a way to
    cancel every call in flight."""
    calls = Calls()
    server = build_server(base, readonly, calls)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return McpMount(PATH, app, server.session_manager.run, calls.cancel_all)

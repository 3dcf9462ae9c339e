"""The browser view and ``/ws`` as routes: ``/`` (our page), ``/view.js``,
``/tiles.js``, ``/mission.js``, ``/view.css``, ``/vendor/...`` (xterm.js and the
terminal's fonts, third-party, unmodified; see ``scripts/fetch-xterm`` and
``scripts/fetch-fonts``) and the WebSocket.
Served with no network: all files are package data."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from ..api import Bridge
from ..target import Target
from ..web.security import Gates
from .ws import Agents, FacadeAgents, endpoint

STATIC = os.path.join(os.path.dirname(__file__), "static")
HEADERS = {
    "content-security-policy": "default-src 'self'; connect-src 'self'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache",
}


def _file(name: str) -> Callable[[Request], Awaitable[Response]]:
    async def serve_file(_request: Request) -> Response:
        return FileResponse(os.path.join(STATIC, name), headers=HEADERS)

    return serve_file


def bridge_for(target: Target) -> Callable[[str], Bridge]:
    """A facade for a name from a client: a session's name means that session's
    bridge pane (or its active one); anything else is a pane target (``%N``, a label,
    ``SESSION:W.P``); empty means the bridge's own. A name starting with ``%`` is a pane
    id, as tmux reads a target."""

    def make(name: str) -> Bridge:
        if not name:
            return Bridge(target, "serve-ws")
        # a pane id (what the tiles name) is what tmux resolves first: no session lookup
        if not name.startswith("%") and name in Bridge(target).sessions():
            return Bridge(target._replace(session=name, pane=None), "serve-ws")
        return Bridge(target.with_pane(name), "serve-ws")

    return make


def routes(target: Target, gates: Gates, agents: Agents | None = None) -> list[BaseRoute]:
    """``/``, its files, the vendored xterm.js, and ``/ws``."""
    make = bridge_for(target)
    ws = endpoint(make, gates, agents or FacadeAgents(lambda: make("")))
    return [
        Route("/", _file("index.html"), methods=["GET"]),
        Route("/view.js", _file("view.js"), methods=["GET"]),
        Route("/view.css", _file("view.css"), methods=["GET"]),
        Route("/tiles.js", _file("tiles.js"), methods=["GET"]),
        Route("/mission.js", _file("mission.js"), methods=["GET"]),
        Mount("/vendor", StaticFiles(directory=os.path.join(STATIC, "vendor"))),
        WebSocketRoute("/ws", ws),
    ]

"""The Starlette application: ``GET /health`` and ``POST /v1/tmux``, behind the gates.

Each action runs on a worker thread with its own :class:`~tmux_bridge.cancel.Cancel`,
which fires when the client disconnects (the command is interrupted as by Ctrl-C) or
when the server is stopped (:meth:`Calls.cancel_all`, from the signal handler).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .. import __version__
from ..cancel import Cancel, InFlight
from ..errors import BridgeError, InvalidRequest
from ..web.mount import McpMount
from ..web.replies import SERVER_FAILED, error_reply
from ..web.security import AUTHORIZED, READING_ACTIONS, ROLE, ASGIApp, GateMiddleware, Gates
from .actions import error_metadata
from .contract import (
    ACTIONS,
    COMPILE_TIME,
    MAX_BODY,
    Request,
    decode,
    parse_fields,
    screen_matcher,
)

# Actions that may wait long (a command, a REPL, wait_for) get their own threads, so that
# however many of them wait (on a pane's lock, say), the quick ones (keys to answer a
# prompt, a capture) still find a thread.
SLOW_ACTIONS = frozenset(
    {"run", "start_repl", "evaluate", "close_repl", "send_and_capture", "start_job", "wait_job"}
    | {"kill_job"}
)
SLOW_WORKERS = 32
QUICK_WORKERS = 8
COMPILE_WORKERS = 2  # wait_for compiled off the event loop (milliseconds each)
LOG = logging.getLogger("tmux_bridge.server")
MESSAGES = {  # for errors raised without a message of their own
    "no_bridge": "no such session on the tmux server; list_sessions shows those that run, "
    "create_session makes one.",
    "cancelled": "the call was cancelled (the server is stopping) before anything was typed.",
}


class Backend(Protocol):
    """What tmux mode and stub mode both provide."""

    mode: str

    def handle(self, request: Request, cancel: Cancel) -> dict[str, Any]: ...

    def health(self) -> dict[str, Any]: ...


Calls = InFlight  # the server's calls in flight (the MCP server's among ``also``)


async def _disconnected(request: HttpRequest) -> None:
    """Return once the client has gone (the body was read before)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


class Pools:
    """The worker threads: one pool for slow actions, one for quick ones, one for
    compiling ``wait_for``."""

    def __init__(self) -> None:
        self.slow = ThreadPoolExecutor(SLOW_WORKERS, thread_name_prefix="tmux-bridge-slow")
        self.quick = ThreadPoolExecutor(QUICK_WORKERS, thread_name_prefix="tmux-bridge-quick")
        self.compile = ThreadPoolExecutor(COMPILE_WORKERS, thread_name_prefix="tmux-bridge-re")

    def for_action(self, action: str) -> ThreadPoolExecutor:
        return self.slow if action in SLOW_ACTIONS else self.quick

    def shutdown(self) -> None:
        self.slow.shutdown(wait=False)
        self.quick.shutdown(wait=False)
        self.compile.shutdown(wait=False)


async def with_matcher(request: Request, pool: ThreadPoolExecutor) -> Request:
    """``request`` with its ``wait_for`` compiled on a thread of ``pool`` (never on the
    event loop), when its action uses it; :class:`InvalidRequest` for a pattern that
    does not compile, or that takes more than COMPILE_TIME seconds (its bounds make it
    milliseconds: this is the second line of defence)."""
    if request.action != "send_and_capture" or request.wait_for is None:
        return request
    work = asyncio.get_running_loop().run_in_executor(pool, screen_matcher, request.wait_for)
    try:
        matcher = await asyncio.wait_for(work, COMPILE_TIME)
    except asyncio.TimeoutError:
        raise InvalidRequest(
            f"wait_for took more than {COMPILE_TIME:g} s to compile; use a simpler pattern."
        ) from None
    return request._replace(matcher=matcher)


async def call_in_thread(
    request: HttpRequest,
    calls: Calls,
    pool: ThreadPoolExecutor,
    action: Callable[[Cancel], dict[str, Any]],
) -> dict[str, Any]:
    """Run ``action`` on a thread of ``pool``; if the client disconnects first, cancel it
    (SIGINT: the command is interrupted) and wait for it to wind up."""
    cancel = Cancel()
    calls.add(cancel)
    loop = asyncio.get_running_loop()
    work = asyncio.ensure_future(loop.run_in_executor(pool, action, cancel))
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            cancel.cancel(signal.SIGINT)
        return await asyncio.shield(work)
    except asyncio.CancelledError:  # the server gave up waiting (a forced stop)
        cancel.cancel(signal.SIGTERM)
        raise
    finally:
        watch.cancel()
        calls.discard(cancel)
        if work.done():  # else the thread still polls its pipe: leave it open
            cancel.close()


async def read_body(request: HttpRequest) -> bytes:
    """The body, at most MAX_BODY bytes; :class:`_TooLarge` past that (also when
    ``Content-Length`` says so, before reading)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        raise _TooLarge()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _TooLarge()
    return bytes(body)


class _TooLarge(Exception):
    pass


class _Reply(JSONResponse):
    """JSON as UTF-8; a document holding a lone surrogate (tmux's text for a name that
    is no UTF-8, a directory called ``$'\\xff'``) has it escaped (``\\udcff``) instead of
    failing the reply."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


def _json(status: int, document: dict[str, Any]) -> Response:
    return _Reply(document, status_code=status)


def _error(action: str | None, error: BridgeError, request: Request | None = None) -> Response:
    message = str(error) or MESSAGES.get(error.code, error.render())
    metadata = error_metadata(request, error) if request is not None else {}
    return _json(*error_reply(action, error.code, message, metadata))


async def parse(request: HttpRequest, pools: Pools) -> Request | Response:
    """The request of a ``POST /v1/tmux``, or the error reply for it. In this order: the
    role (the gates set it in the scope), the action, then the fields, and last
    ``wait_for`` compiled off the event loop (:func:`with_matcher`)."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        error = InvalidRequest("send the request as JSON (Content-Type: application/json).")
        return _error(None, error)
    try:
        action, payload = decode(await read_body(request))
    except _TooLarge:
        message = f"the request body is larger than {MAX_BODY} bytes."
        return _json(*error_reply(None, "body_too_large", message))
    except BridgeError as exc:
        return _error(None, exc)
    except ClientDisconnect:  # gone mid-body (or closed by serve's request deadline)
        return Response(status_code=400)
    if request.scope.get(ROLE) == "read" and action not in READING_ACTIONS:
        message = (
            f"the read-only token may call {', '.join(sorted(READING_ACTIONS))} only, not {action}."
        )
        return _json(*error_reply(action, "read_only", message))
    try:
        return await with_matcher(parse_fields(action, payload), pools.compile)
    except BridgeError as exc:
        return _error(action, exc)


def create_app(
    backend: Backend,
    gates: Gates,
    calls: Calls,
    mcp: McpMount | None = None,
    live: list[BaseRoute] | None = None,
) -> ASGIApp:
    """The application, wrapped in the gates; with ``mcp``, the MCP server too; with
    ``live``, the WebSocket and the browser view (``view.routes``)."""

    async def health(request: HttpRequest) -> Response:
        document: dict[str, Any] = {"ok": True}
        if request.scope.get(AUTHORIZED):
            document.update(mode=backend.mode, version=__version__, actions=list(ACTIONS))
            document.update(mcp=mcp.path if mcp is not None else None)
            document.update(backend.health())
        return _json(200, document)

    async def tmux(request: HttpRequest) -> Response:
        parsed = await parse(request, pools)
        if isinstance(parsed, Response):
            return parsed
        try:
            document = await call_in_thread(
                request,
                calls,
                pools.for_action(parsed.action),
                lambda cancel: backend.handle(parsed, cancel),
            )
        except BridgeError as exc:
            return _error(parsed.action, exc, parsed)
        except Exception:
            LOG.exception("action %s failed", parsed.action)
            return _json(*error_reply(parsed.action, "internal_error", SERVER_FAILED))
        return _json(200, document)

    pools = Pools()
    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        Route("/v1/tmux", tmux, methods=["POST"]),
        *(live or []),
    ]
    return GateMiddleware(_starlette(routes, pools, calls, mcp), gates)


async def _http_error(_request: HttpRequest, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "internal_error")
    return _json(*error_reply(None, code, "no such endpoint or method: GET /health, "
                              "POST /v1/tmux (and /mcp in tmux mode) are served."))  # fmt: skip


def _starlette(
    routes: list[BaseRoute], pools: Pools, calls: Calls, mcp: McpMount | None
) -> Starlette:
    """The Starlette app of ``routes``, with the MCP server at its path when given (its
    session manager running for the app's life, its calls cancelled with the others)."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp is not None:
                await stack.enter_async_context(mcp.lifespan())
            yield
        pools.shutdown()

    if mcp is not None:
        calls.also.append(mcp.cancel_all)
        routes = [*routes, Route(mcp.path, mcp.app)]
    return Starlette(
        routes=routes,
        exception_handlers={404: _http_error, 405: _http_error},
        lifespan=lifespan,
    )

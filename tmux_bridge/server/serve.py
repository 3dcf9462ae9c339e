"""Running the server: the listening socket, the token, uvicorn, and a clean stop.

The socket is bound here, not by uvicorn: a Unix socket is created with mode 0600 from
the start (uvicorn would make it 0666), and a TCP port of 0 is known before the banner
is printed. SIGINT, SIGTERM and SIGHUP stop the server: the calls in flight are
cancelled first (their commands interrupted as by Ctrl-C), the streams under way (MCP
event streams) are closed as if their clients had gone, WebSocket clients get a close
frame, the replies are sent, the socket file is removed, and the process exits 0.

uvicorn times out a connection idle between requests, but not one that never finishes
its request: :class:`TimedH11` gives every request :data:`REQUEST_TIME` seconds from its
first byte to the end of its body, and lets at most :data:`MAX_PENDING` connections be
sending one at a time (a slowloris client holds neither for long).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import signal
import socket
import stat
import sys
from collections.abc import Iterator
from types import FrameType
from typing import ClassVar

import h11
import uvicorn
from starlette.routing import BaseRoute
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import InvalidRequest, RuntimeDirError
from ..infra.patterns import use_time_limit
from ..infra.tmux import end_channels, use_channels
from ..target import Target
from ..tuples import NamedTuple
from ..web.mount import McpMount
from ..web.replies import error_reply
from ..web.security import DEFAULT_HOSTS, Gates, load_token, token_file
from .app import Backend, Calls, create_app
from .contract import REGEX_TIME
from .ws import MAX_FRAME

SEND_BUFFER = 256 * 1024  # bytes of socket send buffer per connection (SO_SNDBUF)
GRACE = 15.0  # seconds a stop waits for interrupted calls to end before giving up on them
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
REQUEST_TIME = 10.0  # seconds from a request's first byte to the end of its body
MAX_PENDING = 256  # connections sending a request at once (as the listen backlog)
MCP_PATH = "/mcp"  # mcp.http's PATH (not imported: the SDK loads on first use)
STREAM_PATHS = (MCP_PATH,)  # whose responses may be streams


class ServeOptions(NamedTuple):
    """What ``tmux-bridge serve`` was asked for (see its --help)."""

    host: str = "127.0.0.1"
    port: int = 3337
    uds: str | None = None
    mode: str = "tmux"
    token_file: str | None = None
    no_token: bool = False
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = DEFAULT_HOSTS
    tls_cert: str | None = None
    tls_key: str | None = None
    socket: str | None = None  # the tmux server's socket name or path
    tmux_timeout: float = 10.0
    no_mcp: bool = False  # leave /mcp out (the SDK is not loaded)
    read_only_token_file: str | None = None  # a token that may watch and read only


class _Token(NamedTuple):
    value: str | None
    where: str  # how a client gets it, for the banner


def check_options(options: ServeOptions) -> None:
    """Refuse what cannot be served safely; raises :class:`InvalidRequest`."""
    if options.uds is None and not _loopback_host(options.host):
        raise InvalidRequest(
            f"--host {options.host} is not a loopback address; the server takes requests "
            "from this machine only (127.0.0.1, ::1 or localhost)."
        )
    if options.no_token and options.uds is None:
        raise InvalidRequest(
            "--no-token needs --uds: on a TCP port any user of this machine could run "
            "commands as you; a Unix socket of mode 0600 lets only you connect."
        )
    if options.no_token and (options.token_file or os.environ.get("TMUX_BRIDGE_TOKEN")):
        raise InvalidRequest("--no-token goes without --token-file and TMUX_BRIDGE_TOKEN.")
    if (options.tls_cert is None) != (options.tls_key is None):
        raise InvalidRequest("--tls-cert and --tls-key go together.")
    if any(host.strip() in ("*", "*:*") for host in options.allowed_hosts):
        raise InvalidRequest("--allowed-hosts '*' would let any web site in (DNS rebinding).")


def _loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_token(options: ServeOptions) -> _Token:
    """``TMUX_BRIDGE_TOKEN``, else the token file's (made in tmux mode when missing),
    else none (``--no-token``, or stub mode without a file asked for)."""
    if options.no_token:
        return _Token(None, f"none (only you can connect to {options.uds}, mode 0600)")
    from_env = os.environ.get("TMUX_BRIDGE_TOKEN", "").strip()
    if from_env:
        if len(from_env) < 16:
            raise RuntimeDirError("TMUX_BRIDGE_TOKEN must be at least 16 characters long.")
        return _Token(from_env, "the value of TMUX_BRIDGE_TOKEN")
    if options.mode == "stub" and options.token_file is None:
        return _Token(None, "none (stub mode runs nothing; set TMUX_BRIDGE_TOKEN to ask one)")
    if options.token_file is not None:
        path = options.token_file
        return _Token(load_token(path, create=True), f"in {path}")
    directory = Target.from_env().runtime_dir
    path = token_file(directory)
    return _Token(load_token(path, create=True, private_dir=directory), f"in {path}")


@contextlib.contextmanager
def listening(options: ServeOptions) -> Iterator[socket.socket]:
    """The bound, listening socket; a Unix socket file is removed afterwards."""
    if options.uds is None:
        with _tcp_socket(options) as sock:
            yield sock
        return
    path = options.uds
    _clear_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the file is 0600 from its first moment
    try:
        sock.bind(path)
    finally:
        os.umask(old_umask)
    try:
        info = os.lstat(path)
        if stat.S_IMODE(info.st_mode) & 0o077 or info.st_uid != os.geteuid():
            raise RuntimeDirError(f"the socket {path} is not private (mode 0600, yours).")
        sock.listen(256)
        with sock:
            yield sock
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _tcp_socket(options: ServeOptions) -> socket.socket:
    """A listening TCP socket. Made with IPPROTO_TCP named, so that asyncio sets
    TCP_NODELAY on the connections it accepts (it checks the protocol number): without
    it, a reply written in two pieces waits out the client's delayed ACK, 40 ms."""
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    host = "127.0.0.1" if options.host == "localhost" else options.host
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # what the kernel holds for one connection: so that a slow /ws reader lags after
        # live.LAG_LIMIT and this, not after several more MB that loopback's send buffer
        # tuning would give it (the accepted connections inherit it)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        sock.bind((host, options.port))
        sock.listen(256)
    except OSError:
        sock.close()
        raise
    return sock


def _clear_stale_socket(path: str) -> None:
    """Remove a socket file nobody listens on (a killed server's); refuse anything else
    in the way."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise RuntimeDirError(f"{path} exists and is not a socket; choose another --uds path.")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)
        return
    finally:
        probe.close()
    raise RuntimeDirError(f"another server listens on {path}.")


class TimedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline per request: the head and the body must
    have arrived :data:`REQUEST_TIME` seconds after the request's first byte (after the
    connection, for the first request), else the client gets 408 (``request_timeout``)
    and the connection is closed. At most :data:`MAX_PENDING` connections are between
    a request's first byte and its end; a new one closes the longest-waiting one. Once
    the request is in, the deadline is gone: an action may take as long as it takes, a
    WebSocket stays open."""

    pending: ClassVar[dict[TimedH11, asyncio.TimerHandle]] = {}  # oldest first

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and self not in self.pending:
            self._arm()  # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        state = self.conn.their_state
        switched = self.transport.get_protocol() is not self  # upgraded to a WebSocket
        if switched or state not in (h11.IDLE, h11.SEND_BODY):
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        while len(self.pending) >= MAX_PENDING:
            next(iter(self.pending))._expire()
        self.pending[self] = self.loop.call_later(REQUEST_TIME, self._expire)

    def _disarm(self) -> None:
        timer = self.pending.pop(self, None)
        if timer is not None:
            timer.cancel()

    def drop_stream(self, close: bool = True) -> bool:
        """At a stop: mark the response as one whose client went, if it is a stream
        under way (an MCP event stream, a tool call's progress), and (``close``) close
        the connection; a reply not begun yet (an HTTP call being interrupted) is left
        to be sent. Whether it was such a stream."""
        cycle = self.cycle
        if cycle is None or str(cycle.scope.get("path")) not in STREAM_PATHS:
            return False
        if not cycle.response_started or cycle.response_complete:
            return False
        cycle.disconnected = True  # the app sees the end; uvicorn logs no error for it
        if close:
            self.transport.close()
        return True

    def _expire(self) -> None:
        """The request did not arrive in time (or a newer one needs the place): a 408
        unless a response has begun, and the connection closed."""
        self._disarm()
        if self.transport.is_closing():
            return
        cycle = self.cycle if self.conn.their_state is not h11.IDLE else None
        if cycle is None or not cycle.response_started:
            message = (
                f"the request did not arrive within {REQUEST_TIME:g} s (head and body); "
                "send it whole, at once."
            )
            status, document = error_reply(None, "request_timeout", message)
            body = json.dumps(document).encode()
            head = (
                f"HTTP/1.1 {status} Request Timeout\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
        self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, stopping our way: cancel the calls in flight at the first
    signal, and exit normally afterwards (uvicorn would re-raise the signal)."""

    def __init__(self, config: uvicorn.Config, calls: Calls) -> None:
        super().__init__(config)
        self.calls = calls

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {signum: signal.signal(signum, self.handle_exit) for signum in SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Cancel the calls, and mark the streams under way as gone before uvicorn's
        handler runs: the SDK's event streams (``sse_starlette``, which wraps that
        handler once imported) end at once on it, and a stream that ends unmarked is
        logged as an error. The connections are closed by :meth:`shutdown`."""
        self.calls.cancel_all(sig)
        for connection in list(self.server_state.connections):
            if isinstance(connection, TimedH11):
                connection.drop_stream(close=False)
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's graceful stop, once the streams under way are dropped: an event
        stream would otherwise hold the stop until the SDK's own drain (or GRACE)."""
        for connection in list(self.server_state.connections):
            if isinstance(connection, TimedH11):
                connection.drop_stream()
        await super().shutdown(sockets)


def make_backend(options: ServeOptions) -> Backend:
    if options.mode == "stub":
        from .stub import StubBackend

        return StubBackend(Target.from_env().session)
    from .actions import TmuxBackend

    return TmuxBackend(Target.from_env(socket=options.socket, timeout=options.tmux_timeout))


def make_mcp(options: ServeOptions) -> McpMount | None:
    """The MCP server at ``/mcp``, in tmux mode when its SDK is installed (the ``mcp``
    extra); ``None`` otherwise. The SDK is imported on the first ``/mcp`` request
    (:mod:`tmux_bridge.server.lazymcp`), not at start: an idle server without MCP
    clients does not carry it."""
    if options.mode == "stub" or options.no_mcp:
        return None
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return None
    from .lazymcp import LazyMcp

    target = Target.from_env(socket=options.socket, timeout=options.tmux_timeout)

    def build() -> McpMount:
        from ..mcp.http import streamable_http

        return streamable_http(target)

    return LazyMcp(MCP_PATH, build).as_mount()


def make_live(options: ServeOptions, gates: Gates) -> list[BaseRoute] | None:
    """``/ws`` and the browser view, in tmux mode."""
    if options.mode == "stub":
        return None
    from .view import routes

    return routes(Target.from_env(socket=options.socket, timeout=options.tmux_timeout), gates)


@contextlib.contextmanager
def _tending(options: ServeOptions) -> Iterator[None]:
    """In tmux mode, the background task (pending messages, notices) while serving."""
    if options.mode == "stub":
        yield
        return
    from .tending import Tending

    task = Tending(Target.from_env(socket=options.socket, timeout=options.tmux_timeout))
    task.start()
    try:
        yield
    finally:
        task.stop()


def banner(
    options: ServeOptions, sock: socket.socket, token: _Token, mcp: McpMount | None = None
) -> str:
    """What the person reads on start: where, which mode, how to get the token."""
    scheme = "https" if options.tls_cert else "http"
    if options.uds is not None:
        where = f"{scheme} on the Unix socket {options.uds}"
        curl = f"curl --unix-socket {options.uds} {scheme}://localhost/health"
    else:
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        where = f"{scheme}://{shown}:{port}"
        curl = f"curl {where}/health"
    tmux = "simulated (nothing runs)" if options.mode == "stub" else "your own tmux server"
    if token.value is not None:
        header = '-H "Authorization: Bearer $TOKEN" '
        curl = curl.replace("curl ", f"curl {header}", 1)
    if mcp is not None:
        served = f"{mcp.path} on the same socket" if options.uds else f"{where}{mcp.path}"
        mcp_line = f"  mcp:     {served} (Streamable HTTP, the same token)"
    elif options.mode == "stub":
        mcp_line = "  mcp:     not in stub mode"
    elif options.no_mcp:
        mcp_line = "  mcp:     not served (--no-mcp)"
    else:
        mcp_line = "  mcp:     not served (pip install 'tmux-bridge[mcp]')"
    lines = [
        f"tmux-bridge serve: listening on {where}",
        f"  mode:    {options.mode} ({tmux})",
        f"  token:   {token.where}",
        f"  try:     {curl}",
        mcp_line,
        *(
            [f"  view:    {where}/ (a browser; it asks for the token), /ws"]
            if options.mode == "tmux" and options.uds is None
            else []
        ),
        "  stop:    Ctrl-C",
    ]
    return "\n".join(lines) + "\n"


def serve(options: ServeOptions) -> int:
    """Serve until stopped; the process's exit status (0 after a requested stop)."""
    check_options(options)
    use_time_limit(REGEX_TIME)  # a REPL's prompt too (through /mcp): regex, time-limited
    use_channels(True)  # resident: tmux commands down one control-mode client per server
    token = resolve_token(options)
    read_only = None
    if options.read_only_token_file is not None:
        read_only = load_token(options.read_only_token_file, create=True)
    gates = Gates(
        token.value,
        options.allowed_hosts,
        options.allowed_origins,
        options.uds is not None,
        read_only,
    )
    calls = Calls()
    mcp = make_mcp(options)
    app = create_app(make_backend(options), gates, calls, mcp, make_live(options, gates))
    with listening(options) as sock:
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            http=TimedH11,
            ws="websockets-sansio" if options.mode == "tmux" else "none",
            ws_max_size=MAX_FRAME,
            ws_per_message_deflate=False,
            loop="asyncio",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=int(GRACE),
            ssl_certfile=options.tls_cert,
            ssl_keyfile=options.tls_key,
        )
        server = _Server(config, calls)
        sys.stdout.write(banner(options, sock, token, mcp))
        sys.stdout.flush()
        try:
            with _tending(options):
                server.run(sockets=[sock])
        finally:
            end_channels()  # our control clients end with us, not left to tmux
    print("tmux-bridge serve: stopped.", flush=True)
    return 0

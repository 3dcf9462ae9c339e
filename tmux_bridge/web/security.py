"""The gates every request passes before any action runs, and the token.

In order: the peer must be on loopback (TCP; a Unix socket is guarded by its mode
0600), ``Host`` must be an allowed host (against DNS rebinding: a web page whose name
now points at 127.0.0.1 still sends its own name), an ``Origin``, when there is one,
must be an allowed origin (browsers always send it on cross-origin requests and cannot
forge it; native clients such as curl send none), and the bearer token must match,
compared in constant time. CORS headers go only to allowed origins.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from ..errors import RuntimeDirError
from ..target import ensure_private_dir, write_private_file
from ..tuples import NamedTuple
from .replies import error_reply

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
TOKEN_FILE = "token"
AUTHORIZED = "tmux_bridge.authorized"  # scope key: the request carried the right token
ROLE = "tmux_bridge.role"  # scope key: "full", "read" (the read-only token) or None
# no token (/health less): the page and its own files
PUBLIC_PATHS = ("/health", "/", "/view.js", "/tiles.js", "/mission.js", "/view.css")
PUBLIC_PREFIXES = ("/vendor/",)  # the browser view's third-party files
DEFAULT_WS_ORIGINS = ("localhost:*",)  # besides the page's own origin
READING_ACTIONS = frozenset({"list_sessions", "capture_pane", "status", "screen", "jobs"})


class Gates(NamedTuple):
    """What the gates let through. ``token`` ``None`` means no token is asked for
    (stub mode without one, or ``--no-token`` on a private Unix socket)."""

    token: str | None
    allowed_hosts: tuple[str, ...] = DEFAULT_HOSTS
    allowed_origins: tuple[str, ...] = ()
    unix_socket: bool = False
    read_only_token: str | None = None  # may watch and call the reading actions only


# --- the token ---------------------------------------------------------------------------


def load_token(path: str, create: bool, private_dir: str | None = None) -> str:
    """The token in file ``path``; when it does not exist and ``create``, a new random
    one written there (mode 0600; ``private_dir``, the runtime directory, is made or
    checked to be ours and 0700 first). Refuses a file that is a symlink, not ours, or
    open to other users. Raises :class:`RuntimeDirError` with what to do."""
    if private_dir is not None:
        ensure_private_dir(private_dir)
    if create and not os.path.exists(path):
        with contextlib.suppress(FileExistsError):  # another server made it meanwhile
            write_private_file(path, (secrets.token_urlsafe(32) + "\n").encode())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise RuntimeDirError(f"cannot read the token file {path}: {exc.strerror}.") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise RuntimeDirError(f"refusing the token file {path}: not a file of yours.")
        if info.st_mode & 0o077:
            raise RuntimeDirError(
                f"refusing the token file {path}: other users may read it (mode "
                f"{stat.S_IMODE(info.st_mode):04o}). Run `chmod 600 {path}` or remove it."
            )
        token = file.read(4096).decode("utf-8", "replace").strip()
    if len(token) < 16:
        raise RuntimeDirError(f"the token in {path} is shorter than 16 characters.")
    return token


def token_file(runtime_dir: str) -> str:
    """The default token file: ``token`` in the runtime directory."""
    return os.path.join(runtime_dir, TOKEN_FILE)


# --- the checks (pure) -------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether an address is on loopback (127.0.0.0/8, ::1, or IPv4-mapped 127.x)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    """Whether a ``Host`` header names an allowed host: ``NAME:*`` allows NAME with any
    port (or none), anything else must match exactly; case does not matter."""
    host = host.strip().lower()
    for pattern in allowed:
        pattern = pattern.strip().lower()
        if pattern.endswith(":*"):
            name = pattern[:-2]
            port = host[len(name) + 1 :]
            if host == name or (host.startswith(name + ":") and port.isdigit()):
                return True
        elif host == pattern:
            return True
    return False


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """Whether an ``Origin`` is one of the allowed origins (scheme://host[:port])."""
    return origin.strip().lower().rstrip("/") in {o.strip().lower().rstrip("/") for o in allowed}


def ws_origin_allowed(origin: str, host: str, allowed: Sequence[str]) -> bool:
    """Whether a WebSocket's ``Origin`` may connect: the page's own origin (its host
    passed the Host gate), an allowed origin, or a host of :data:`DEFAULT_WS_ORIGINS`
    (``NAME:*``: that name, any port)."""
    origin = origin.strip().lower().rstrip("/")
    scheme, _, where = origin.partition("://")
    if scheme not in ("http", "https"):
        return False
    if where == host.strip().lower() or origin_allowed(origin, allowed):
        return True
    return host_allowed(where, DEFAULT_WS_ORIGINS)


def role_of(given: str | None, gates: Gates) -> str | None:
    """``"full"`` for the token, ``"read"`` for the read-only token (both compared in
    constant time), ``None`` otherwise; ``"full"`` when no token is asked for."""
    if gates.token is None:
        return "full"
    supplied = (given or "").strip().encode("utf-8", "replace")
    if hmac.compare_digest(supplied, gates.token.encode("utf-8")):
        return "full"
    if gates.read_only_token is not None and hmac.compare_digest(
        supplied, gates.read_only_token.encode("utf-8")
    ):
        return "read"
    return None


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or ``None``."""
    scheme, _, given = (header or "").strip().partition(" ")
    return given.strip() if scheme.lower() == "bearer" else None


def token_matches(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header is ``Bearer TOKEN`` (the scheme's case does
    not matter, as in RFC 9110); the token is compared in constant time."""
    scheme, _, given = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("latin-1"), token.encode("utf-8"))


def refusal(scope: Scope, gates: Gates) -> tuple[str, str] | None:
    """Why the request in ``scope`` is refused (an error code and a sentence), or
    ``None``. The token is checked last, and only where the path needs it."""
    headers = _headers(scope)
    client = scope.get("client")
    if not gates.unix_socket and (client is None or not is_loopback(str(client[0]))):
        return "forbidden_peer", "requests are taken from this machine (loopback) only."
    host = headers.get("host")
    if host is None or not host_allowed(host, gates.allowed_hosts):
        return (
            "forbidden_host",
            f"the Host {str(host)[:100]!r} is not an allowed host; start the server with "
            "--allowed-hosts to allow it.",
        )
    origin = headers.get("origin")
    if (
        origin is not None
        and not origin_allowed(origin, gates.allowed_origins)
        and not _own_page_file(scope, origin, host)
    ):
        return (
            "forbidden_origin",
            f"the origin {origin[:100]!r} is not allowed; start the server with "
            "--allowed-origins to allow it.",
        )
    # a preflight carries no token (and runs nothing); /health tells less without one,
    # but a token given there must be right, so that a client can check its token
    path = str(scope.get("path"))
    public = path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)
    needed = not public or "authorization" in headers
    if (
        needed
        and scope.get("method") != "OPTIONS"
        and role_of(bearer(headers.get("authorization")), gates) is None
    ):
        return "unauthorized", _TOKEN_HELP
    return None


def _own_page_file(scope: Scope, origin: str, host: str) -> bool:
    """Whether this is the page fetching one of its own files (``GET`` under
    ``/vendor/``) from its own origin: a browser fetches a font in CORS mode, with an
    ``Origin``, even from the page's own server. Such a file runs nothing and needs no
    token; no CORS header goes with it."""
    scheme, _, where = origin.strip().lower().rstrip("/").partition("://")
    return (
        scope.get("method") in ("GET", "HEAD")
        and str(scope.get("path")).startswith(PUBLIC_PREFIXES)
        and scheme in ("http", "https")
        and where == host.strip().lower()
    )


def ws_refusal(scope: Scope, gates: Gates) -> str | None:
    """Why a WebSocket upgrade is refused before it is accepted (peer, Host, Origin,
    and a token given in the header or ``?token=`` that is wrong), or ``None``. A
    WebSocket without a token may still give it in its first message."""
    headers = _headers(scope)
    client = scope.get("client")
    if not gates.unix_socket and (client is None or not is_loopback(str(client[0]))):
        return "forbidden_peer"
    host = headers.get("host")
    if host is None or not host_allowed(host, gates.allowed_hosts):
        return "forbidden_host"
    origin = headers.get("origin")
    if origin is not None and not ws_origin_allowed(origin, host, gates.allowed_origins):
        return "forbidden_origin"
    given = ws_token(scope)
    if given is not None and role_of(given, gates) is None:
        return "unauthorized"
    return None


def ws_token(scope: Scope) -> str | None:
    """The token a WebSocket upgrade carries: ``Authorization: Bearer``, else
    ``?token=``; ``None`` when neither."""
    from urllib.parse import parse_qs

    given = bearer(_headers(scope).get("authorization"))
    if given is not None:
        return given
    query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
    return query["token"][0] if query.get("token") else None


_TOKEN_HELP = (
    "a valid token is required: send the header Authorization: Bearer TOKEN, with the "
    "token the server printed where to find when it started."
)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers, names lower-cased; for a repeated header, the first."""
    found: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found


# --- the middleware ----------------------------------------------------------------------


class GateMiddleware:
    """ASGI middleware: refuses what :func:`refusal` refuses before the app sees it,
    answers CORS preflights for allowed origins, and marks requests that carried the
    right token (``scope[AUTHORIZED]``) for ``/health``."""

    def __init__(self, app: ASGIApp, gates: Gates) -> None:
        self.app = app
        self.gates = gates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            refused = ws_refusal(scope, self.gates)
            if refused is not None:  # before accepting: the client gets HTTP 403
                await send({"type": "websocket.close", "code": 1008, "reason": refused})
                return
            given = ws_token(scope)
            scope[ROLE] = role_of(given, self.gates) if given is not None else None
            if self.gates.token is None:
                scope[ROLE] = "full"
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        reason = refusal(scope, self.gates)
        if reason is not None:
            await _respond(send, *error_reply(None, *reason), _cors(scope, self.gates))
            return
        headers = _headers(scope)
        scope[ROLE] = role_of(bearer(headers.get("authorization")), self.gates)
        scope[AUTHORIZED] = scope[ROLE] == "full"
        if scope[ROLE] == "read" and str(scope.get("path")).startswith("/mcp"):
            message = "the read-only token may watch (/ws) and read (/v1/tmux), not use /mcp."
            await _respond(send, *error_reply(None, "read_only", message), [])
            return
        cors = _cors(scope, self.gates)
        if scope["method"] == "OPTIONS" and cors:
            await _respond(send, 204, None, cors + _preflight(headers))
            return
        await self.app(scope, receive, _with_headers(send, cors))


def _cors(scope: Scope, gates: Gates) -> list[tuple[bytes, bytes]]:
    """CORS headers for an allowed origin; none otherwise."""
    origin = _headers(scope).get("origin")
    if origin is None or not origin_allowed(origin, gates.allowed_origins):
        return []
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", b"Mcp-Session-Id"),
        (b"vary", b"Origin"),
    ]


def _preflight(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    extra = [
        (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
        (
            b"access-control-allow-headers",
            b"Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
        ),
        (b"access-control-max-age", b"600"),
    ]
    if headers.get("access-control-request-private-network") == "true":
        extra.append((b"access-control-allow-private-network", b"true"))  # Chrome's PNA
    return extra


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    if not extra:
        return send

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return wrapped


async def _respond(
    send: Send,
    status: int,
    document: dict[str, Any] | None,
    extra: list[tuple[bytes, bytes]],
) -> None:
    body = b"" if document is None else json.dumps(document, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": body})

"""``/ws``: the WebSocket adapter protocol (docs/websocket.md; the spec it follows:
docs/specs/websocket-adapter.md).

JSON text frames with ``id`` for requests; binary frames ``type + name + 0x00 +
payload``: 0x01 output (server to client), 0x02 keyboard VT bytes, 0x03 ``cols:rows``,
0x04 ``fileName 0x00 mimeType 0x00 bytes``. A name is any pane target (a session, a
label, ``%N``, ``SESSION:W.P``), the bridge pane included.

The stream never lies: each subscription queues at most :data:`LAG_LIMIT` bytes for
its client; past that its output is dropped, and once the client has read what was
queued it gets a ``lagging`` event and a fresh snapshot (also when the watch re-armed a
stalled pipe). The gates ran before the upgrade was accepted (``security.py``); a
client without a token gives it in its first message, ``{"type": "auth", "token"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from starlette.websockets import WebSocket, WebSocketDisconnect

from ..api import Bridge, ServerWatch
from ..errors import BridgeError, InvalidRequest, NotDelivered
from ..web.replies import SERVER_FAILED
from ..web.security import ROLE, Gates, role_of
from .contract import check_encodable
from .frames import join_frame, parse_size, split_frame
from .jobfeed import JobFeed
from .sizes import Sizes

LOG = logging.getLogger("tmux_bridge.server")

if TYPE_CHECKING:
    from ..api import Agent

OUTPUT, KEYS, RESIZE, UPLOAD = 0x01, 0x02, 0x03, 0x04
LAG_LIMIT = 4 * 1024 * 1024  # bytes of output queued per subscription before dropping
AUTH_WAIT = 10.0  # seconds a client without a token has to send it
MAX_FRAME = 8 * 1024 * 1024 + 64 * 1024  # the largest frame read (an 8 MiB upload)
MAX_TEXT_FRAME = 256 * 1024  # characters of a JSON message (as the HTTP API's body)
MAX_NAME = 200  # characters of a pane or agent name
MAX_HISTORY = 5000  # rows of scrollback in a snapshot (the default)
MAX_WAITING = 64  # connections waiting to give their token in a first message
WRITING = frozenset({"send-prompt"})  # messages the read-only token may not send


COALESCE = 0.05  # seconds of tmux notifications that make one look at the agents
RETRIES = 3  # looks in a row that may fail (tmux slow) before waiting for the next change


class Agents(Protocol):
    """Agent detection and prompt delivery: ``list-agents``, ``subscribe-agents`` and
    ``send-prompt`` go through this."""

    def list(self) -> list[Agent]: ...

    def send_prompt(self, name: str, prompt: str) -> dict[str, Any]: ...

    def watch(self, on_change: Callable[[str], None]) -> ServerWatch:
        """A watch on the tmux server the agents run on (not started yet): it tells of
        changes (:meth:`~tmux_bridge.api.Bridge.server_changes`)."""
        ...


class FacadeAgents:
    """The facade's agents (``Bridge.agents``, ``Bridge.send_prompt``)."""

    def __init__(self, bridge: Callable[[], Bridge]) -> None:
        self.bridge = bridge

    def list(self) -> list[Agent]:
        return self.bridge().agents()

    def watch(self, on_change: Callable[[str], None]) -> ServerWatch:
        return self.bridge().server_changes(on_change)

    def send_prompt(self, name: str, prompt: str) -> dict[str, Any]:
        """``ok`` only when the agent showed it took the prompt; the receipt either way."""
        try:
            receipt = self.bridge().send_prompt(name, prompt)
        except NotDelivered as exc:
            shown = getattr(exc.receipt, "document", None)
            return {"ok": False, "error": str(exc), "code": exc.code,
                    "receipt": shown() if callable(shown) else None}  # fmt: skip
        return {"ok": receipt.delivered, "receipt": receipt.document()}


class AgentFeed:
    """``subscribe-agents`` for every connection of the server: while at least one
    subscribed, one tmux control-mode client (:meth:`~tmux_bridge.api.Bridge.server_changes`)
    tells when sessions, windows, panes or their programs changed; each burst of
    notifications (coalesced over :data:`COALESCE` seconds) is one look at the agents
    (one tmux call and a look at ``/proc``, on a worker thread), and each subscriber is
    told what changed since what it last saw. No periodic look."""

    def __init__(self, agents: Agents) -> None:
        self.agents = agents
        self.seen: dict[Connection, dict[str, Agent]] = {}
        self.control: ServerWatch | None = None
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Future[None] | None = None
        self.again = False  # notified while a look was under way: look once more

    async def subscribe(self, conn: Connection) -> list[Agent]:
        self.loop = asyncio.get_running_loop()
        current = await asyncio.to_thread(self.agents.list)
        self.seen[conn] = {agent.name: agent for agent in current}
        with self.lock:
            if self.control is None:  # it says "%attached" once attached: a look then
                self.control = self.agents.watch(self._notified)
                self.control.start()
            control = self.control
        # answered once the control client is attached: a session the subscriber creates
        # next cannot meet it half attached (tmux before 3.7 crashes then)
        await asyncio.to_thread(control.ready)
        return current

    def unsubscribe(self, conn: Connection) -> bool:
        found = self.seen.pop(conn, None) is not None
        if not self.seen:
            with self.lock:
                control, self.control = self.control, None
            if control is not None:
                control.stop(wait=False)  # killed now; its thread reaps it
        return found

    def _notified(self, _name: str) -> None:
        """On the control client's thread: have the loop look (soon)."""
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: serve is ending
                loop.call_soon_threadsafe(self._poke)

    def _poke(self) -> None:
        if self.task is not None and not self.task.done():
            self.again = True
        else:
            self.task = asyncio.ensure_future(self._look())

    async def _look(self) -> None:
        failures = 0
        self.again = True
        while self.again and self.seen:
            self.again = False
            await asyncio.sleep(COALESCE)
            try:
                now = await asyncio.to_thread(self.agents.list)
            except (BridgeError, OSError):  # tmux slow, a process vanished: once more
                failures += 1
                self.again = failures < RETRIES
                continue
            for conn, before in list(self.seen.items()):
                for event in Bridge.agent_changes(before, now):
                    conn.send(event)
                if conn in self.seen:
                    self.seen[conn] = {agent.name: agent for agent in now}


class Sub:
    """One client's subscription to one pane's output."""

    def __init__(self, conn: Connection, name: str, bridge: Bridge) -> None:
        self.conn = conn
        self.name = name
        self.bridge = bridge
        self.pane_id = ""
        self.active = True
        self.queued = 0  # bytes of output in the client's outbox
        self.lagging = False
        self.seq = 0  # output chunks queued so far
        self.skip_below = 0  # chunks before this are in a snapshot already
        # the size the client was last told with its snapshot (the ack's, a ``size``
        # event's): a resize answer queued behind a snapshot does not count
        self.told = (0, 0)
        self.history = MAX_HISTORY  # rows of scrollback in each snapshot

    # called on the watch's thread
    def output(self, data: bytes) -> None:
        self.conn.loop.call_soon_threadsafe(self._queue, data)

    def resync(self, reason: str) -> None:
        self.conn.loop.call_soon_threadsafe(self._lag, reason)

    def _queue(self, data: bytes) -> None:
        if not self.active or self.lagging:
            return
        if self.queued + len(data) > LAG_LIMIT:
            self._lag(f"the client reads slower than the pane writes ({LAG_LIMIT} bytes behind)")
            return
        self.queued += len(data)
        self.seq += 1
        self.conn.outbox.put_nowait(("out", self, (self.seq, data)))

    def _lag(self, reason: str) -> None:
        if self.active and not self.lagging:
            self.lagging = True
            self.conn.outbox.put_nowait(("resync", self, reason))


class Connection:
    """One WebSocket client: its subscriptions and the one task that writes to it."""

    def __init__(
        self,
        ws: WebSocket,
        bridge_for: Callable[[str], Bridge],
        feed: AgentFeed,
        role: str,
        sizes: Sizes | None = None,
        jobs: JobFeed | None = None,
    ) -> None:
        self.ws = ws
        self.jobs = jobs or JobFeed(lambda: bridge_for("").jobs())
        self.sizes = sizes or Sizes()  # the panes this client resized: given back at its end
        self.bridge_for = bridge_for
        self.feed = feed
        self.agents = feed.agents
        self.role = role
        self.loop = asyncio.get_running_loop()
        self.outbox: asyncio.Queue[tuple[str, Any, Any]] = asyncio.Queue()
        self.subs: dict[str, Sub] = {}
        # one subscription change at a time: the tiles' unsubscribe of a pane (named by its
        # id) came while that subscription was still being made, the focused view then
        # subscribed it by the same id, and both streamed it: every byte twice
        self.changing = asyncio.Lock()
        self.closed = False  # set on the loop before close(): a subscription under way ends
        self.tasks: set[asyncio.Future[None]] = set()

    async def write_loop(self) -> None:
        while True:
            kind, sub, item = await self.outbox.get()
            if kind == "json":
                await self.ws.send_text(json.dumps(item))
            elif kind == "out" and sub.active:
                seq, data = item
                sub.queued -= len(data)
                if seq >= sub.skip_below:
                    await self.ws.send_bytes(join_frame(OUTPUT, sub.name, data))
            elif kind == "bytes":
                await self.ws.send_bytes(item)
            elif kind == "resync" and sub.active:
                await self._snapshot(sub, item)

    async def _snapshot(self, sub: Sub, reason: str | None) -> None:
        """A ``lagging`` event (unless this is the first snapshot), a ``size`` event when
        the pane's size is not the one the client was last told (it was resized since:
        a snapshot drawn at another size scrolls or wraps), then the snapshot; output
        queued before it is dropped (the snapshot holds it)."""
        if reason is not None:
            await self.ws.send_text(
                json.dumps({"type": "lagging", "agent": sub.name, "reason": reason})
            )
        sub.skip_below = sub.seq + 1
        sub.lagging = False
        try:
            shot = await asyncio.to_thread(sub.bridge.snapshot, sub.history)
        except BridgeError as exc:
            await self.ws.send_text(
                json.dumps({"type": "output-ended", "agent": sub.name, "error": str(exc)})
            )
            self.drop(sub.name)
            return
        if (shot.cols, shot.rows) != sub.told:  # resized since the client was told
            sub.told = (shot.cols, shot.rows)
            size = {"type": "size", "agent": sub.name, "cols": shot.cols, "rows": shot.rows}
            await self.ws.send_text(json.dumps(size))
        await self.ws.send_bytes(join_frame(OUTPUT, sub.name, shot.data))

    def send(self, document: dict[str, Any]) -> None:
        self.outbox.put_nowait(("json", None, document))

    def drop(self, name: str) -> None:
        sub = self.subs.pop(name, None)
        if sub is not None:
            sub.active = False
            if sub.pane_id:
                sub.bridge.unwatch(sub.pane_id, sub)

    def close(self) -> None:
        self.feed.unsubscribe(self)
        self.jobs.unsubscribe(self)
        for name in list(self.subs):
            self.drop(name)
        self.sizes.release(self)

    # --- requests ----------------------------------------------------------------------

    async def request(self, message: dict[str, Any]) -> None:
        """Answer one JSON message: its type (the action) and the connection's role are
        checked before any other field is read."""
        kind = str(message.get("type"))
        reply: dict[str, Any] = {"id": message.get("id"), "type": kind}
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.send({**reply, "ok": False, "error": f"unknown message type {kind[:40]!r}."})
            return
        try:
            _check_message(kind, self.role, message)
            result = await handler(self, message)
            if result is not None:
                self.send({**reply, **result})
        except BridgeError as exc:
            self.send({**reply, "ok": False, "error": str(exc) or exc.render(), "code": exc.code})
        except Exception:  # a fault of ours: logged whole; the client is answered all the same
            LOG.exception("websocket request %s failed", kind)
            self.send({**reply, "ok": False, "error": SERVER_FAILED, "code": "internal_error"})

    async def subscribe(self, message: dict[str, Any]) -> None:
        """Ack, then a snapshot, then (unless ``stream`` is false) live output."""
        name = _name(message)
        history = _history(message)
        bridge = self.bridge_for(name)
        ack = {"id": message.get("id"), "type": "subscribe-output", "ok": True}
        if message.get("stream") is False:
            shot = await asyncio.to_thread(bridge.snapshot, history)
            self.send({**ack, "cols": shot.cols, "rows": shot.rows, "stream": False})
            self.outbox.put_nowait(("bytes", None, join_frame(OUTPUT, name, shot.data)))
            return
        async with self.changing:
            if name in self.subs:  # its watch may stop (tmux, a process ended): not on the loop
                await asyncio.to_thread(self.drop, name)
            sub = Sub(self, name, bridge)
            sub.history = history
            sub.lagging = True  # dropped until the first snapshot, which holds it
            sub.pane_id = await asyncio.to_thread(bridge.watch, sub)
            if self.closed:  # the client left meanwhile: close() did not see this one
                sub.active = False
                await asyncio.to_thread(bridge.unwatch, sub.pane_id, sub)
                return
            self.subs[name] = sub
        size = await asyncio.to_thread(bridge.snapshot, 0)
        sub.told = (size.cols, size.rows)
        self.send({**ack, "pane": sub.pane_id, "cols": size.cols, "rows": size.rows})
        self.outbox.put_nowait(("resync", sub, None))

    async def binary(self, frame: bytes) -> None:
        try:
            _check_frame(frame[0] if frame else 0, self.role)  # before the name or payload
            kind, name, payload = split_frame(frame)
            if len(name) > MAX_NAME:
                raise InvalidRequest(f"the name in a frame is longer than {MAX_NAME} characters.")
            bridge = self.bridge_for(name)
            if kind == KEYS:
                await asyncio.to_thread(bridge.terminal_input, payload)
            elif kind == RESIZE:
                cols, rows = parse_size(payload)
                fitted = await asyncio.to_thread(bridge.fit, cols, rows)
                if fitted.applied:
                    await asyncio.to_thread(self.sizes.resized, self, bridge, cols, rows)
                self.send({"type": "resize", "agent": name, **fitted.document()})
            else:
                file_name, _, rest = payload.partition(b"\x00")
                mime, _, data = rest.partition(b"\x00")
                saved = await asyncio.to_thread(
                    bridge.upload,
                    file_name.decode("utf-8", "replace"),
                    mime.decode("ascii", "replace"),
                    data,
                )
                self.send({"type": "upload", "agent": name, "ok": True, **saved.document()})
        except BridgeError as exc:
            self.send({"type": "error", "frame": frame[0] if frame else None, "ok": False,
                       "error": str(exc) or exc.render(), "code": exc.code})  # fmt: skip


def _check_message(kind: str, role: str, message: dict[str, Any]) -> None:
    """The role first, then the fields: no lone surrogate in a string (JSON can say
    ``"\\ud800"``; no pane name or prompt can hold it)."""
    if kind in WRITING and role != "full":
        raise BridgeError(f"this token may watch only: no {kind}.")
    for field, value in message.items():
        if isinstance(value, str):
            check_encodable(str(field)[:40], value)


def _check_frame(kind: int, role: str) -> None:
    if kind not in (KEYS, RESIZE, UPLOAD):
        raise BridgeError(f"a client sends frames 0x02, 0x03 and 0x04, not {kind:#04x}.")
    if role != "full":
        raise BridgeError("this token may watch only: no typing, resizing or uploads.")


def _history(message: dict[str, Any]) -> int:
    """``history``: rows of scrollback in a subscription's snapshots (a tile wants none)."""
    history = message.get("history", MAX_HISTORY)
    if type(history) is not int or not 0 <= history <= MAX_HISTORY:
        raise InvalidRequest(f"history is a whole number of rows, 0 to {MAX_HISTORY}.")
    return history


def _name(message: dict[str, Any]) -> str:
    name = message.get("agent")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise BridgeError("name the pane or agent in `agent` (a session, label, %N or S:W.P).")
    return name


async def _unsubscribe(conn: Connection, message: dict[str, Any]) -> dict[str, Any]:
    name = _name(message)
    async with conn.changing:  # after a subscription to it still under way
        if name not in conn.subs:
            raise BridgeError(f"no subscription to {name!r} on this connection.")
        await asyncio.to_thread(conn.drop, name)
    return {"ok": True}


async def _list_panes(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    panes = await asyncio.to_thread(conn.bridge_for("").panes, True)
    return {"ok": True, "panes": [entry.document() for entry in panes]}


async def _list_agents(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    agents = await asyncio.to_thread(conn.agents.list)
    return {"ok": True, "agents": [agent.document() for agent in agents]}


async def _subscribe_agents(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    agents = await conn.feed.subscribe(conn)
    return {"ok": True, "agents": [agent.document() for agent in agents]}


async def _unsubscribe_agents(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    if not conn.feed.unsubscribe(conn):
        raise BridgeError("no subscribe-agents on this connection.")
    return {"ok": True}


async def _send_prompt(conn: Connection, message: dict[str, Any]) -> dict[str, Any]:
    if conn.role != "full":
        raise BridgeError("this token may watch only: no prompts.")
    prompt = message.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        raise BridgeError("send-prompt needs a `prompt` (text).")
    return await asyncio.to_thread(conn.agents.send_prompt, _name(message), prompt)


async def _list_jobs(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    jobs = await asyncio.to_thread(conn.bridge_for("").jobs)
    return {"ok": True, "jobs": [job.document() for job in jobs]}


async def _subscribe_jobs(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    jobs = await conn.jobs.subscribe(conn)
    return {"ok": True, "jobs": [job.document() for job in jobs]}


async def _unsubscribe_jobs(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    if not conn.jobs.unsubscribe(conn):
        raise BridgeError("no subscribe-jobs on this connection.")
    return {"ok": True}


async def _subscribe(conn: Connection, message: dict[str, Any]) -> None:
    await conn.subscribe(message)


_HANDLERS: dict[str, Callable[[Connection, dict[str, Any]], Awaitable[dict[str, Any] | None]]] = {
    "subscribe-output": _subscribe,
    "unsubscribe-output": _unsubscribe,
    "list-panes": _list_panes,
    "list-agents": _list_agents,
    "send-prompt": _send_prompt,
    "subscribe-agents": _subscribe_agents,
    "unsubscribe-agents": _unsubscribe_agents,
    "list-jobs": _list_jobs,
    "subscribe-jobs": _subscribe_jobs,
    "unsubscribe-jobs": _unsubscribe_jobs,
}


MAX_LISTED = 100  # the newest messages a list request answers with


async def _list_messages(conn: Connection, _message: dict[str, Any]) -> dict[str, Any]:
    """The messages between agents (``Bridge.inbox``, a look that delivers nothing), the
    newest :data:`MAX_LISTED`, oldest first, with their states."""
    bridge = conn.bridge_for("")
    messages = await asyncio.to_thread(lambda: bridge.inbox(deliver=False))
    return {"ok": True, "messages": [message.document() for message in messages[-MAX_LISTED:]]}


_HANDLERS["list-messages"] = _list_messages


async def _authenticate(ws: WebSocket, gates: Gates) -> str | None:
    """The role of a connection; a client without a token must send
    ``{"type": "auth", "token": ...}`` first (within :data:`AUTH_WAIT` s)."""
    role = ws.scope.get(ROLE)
    if role is not None:
        return str(role)
    try:
        text = await asyncio.wait_for(ws.receive_text(), AUTH_WAIT)
        message = json.loads(text)
        role = (
            role_of(str(message.get("token", "")), gates) if message.get("type") == "auth" else None
        )
    except (TimeoutError, ValueError, KeyError, AttributeError, WebSocketDisconnect):
        role = None
    if role is None:
        with contextlib.suppress(Exception):
            await ws.send_text(
                json.dumps({"type": "auth", "ok": False, "error": "a valid token is required."})
            )
            await ws.close(4401)
        return None
    await ws.send_text(json.dumps({"type": "auth", "ok": True, "role": role}))
    return role


def endpoint(
    bridge_for: Callable[[str], Bridge], gates: Gates, agents: Agents
) -> Callable[[WebSocket], Any]:
    """The ``/ws`` endpoint."""
    feed = AgentFeed(agents)
    sizes = Sizes()
    jobs = JobFeed(lambda: bridge_for("").jobs())

    waiting: set[WebSocket] = set()  # accepted, their token not given yet

    async def ws_endpoint(ws: WebSocket) -> None:
        if ws.scope.get(ROLE) is None and len(waiting) >= MAX_WAITING:
            await ws.close(1013, "too many connections wait to authenticate")  # HTTP 403
            return
        await ws.accept()
        waiting.add(ws)
        try:
            role = await _authenticate(ws, gates)
        finally:
            waiting.discard(ws)
        if role is None:
            return
        conn = Connection(ws, bridge_for, feed, role, sizes, jobs)
        writer = asyncio.ensure_future(conn.write_loop())
        try:
            await _read_loop(ws, conn, writer)
        finally:
            writer.cancel()
            conn.closed = True
            await asyncio.to_thread(conn.close)

    return ws_endpoint


async def _read_loop(ws: WebSocket, conn: Connection, writer: asyncio.Future[None]) -> None:
    while not writer.done():
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("bytes") is not None:
            await conn.binary(message["bytes"])
            continue
        text = message.get("text") or ""
        if len(text) > MAX_TEXT_FRAME:
            error = f"a text frame is longer than {MAX_TEXT_FRAME} characters."
            conn.send({"type": "error", "ok": False, "error": error, "code": "invalid_request"})
            continue
        try:
            request = json.loads(text)
            assert isinstance(request, dict)
        except (ValueError, AssertionError, RecursionError):
            conn.send({"type": "error", "ok": False, "error": "send JSON objects as text frames."})
            continue
        task = asyncio.ensure_future(conn.request(request))
        conn.tasks.add(task)
        task.add_done_callback(conn.tasks.discard)

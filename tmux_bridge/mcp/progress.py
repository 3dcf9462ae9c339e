"""A tool's call on a worker thread: its :class:`Cancel` fired by the client's
cancellation, a disconnect or a stopping server, and its output sent on as progress.

Cancellation: the SDK cancels a tool's task when the client sends
``notifications/cancelled`` or goes away (stdio). Over HTTP the SDK lets a request run on
when the connection that carried it drops; with no event store to resume from, its
answer would be lost, so :class:`Calls` lets that connection's end (``mcp.http``)
interrupt it too. :func:`in_thread` then fires the call's
:class:`Cancel` (the command is interrupted as by Ctrl-C) and waits, shielded, until the
facade returns, so the pane is back at its prompt before the task ends.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import anyio

from ..cancel import Cancel, InFlight

T = TypeVar("T")
WORKERS = 32  # threads for calls: a call waiting on a pane's lock holds one
INTERVAL = 0.25  # seconds between two progress notifications of a call, at least
MAX_MESSAGE = 16 * 1024  # characters of new output in one notification (the rest: its tail)

Report = Callable[[float, str], Awaitable[None]]


Key = tuple[str, str]  # (MCP session id, JSON-RPC request id) of a call over HTTP
REMEMBERED = 256  # connections dropped before their call began, kept for it to see


class Calls(InFlight):
    """The MCP server's calls in flight, and the worker threads they run on; over HTTP
    each call's :class:`Cancel` is also found by its :data:`Key`, so that the connection
    that carried the request interrupts it by going away (:meth:`drop`)."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="tmux-bridge-mcp")
        self._keyed: dict[Key, Cancel] = {}
        self._dropped: dict[Key, None] = {}  # insertion-ordered: the oldest go first

    def add_keyed(self, cancel: Cancel, key: Key | None) -> None:
        """Add ``cancel``; fire it at once if its connection has already gone."""
        self.add(cancel)
        if key is None:
            return
        with self._lock:
            self._keyed[key] = cancel
            gone = self._dropped.pop(key, 0) is None
        if gone:
            cancel.cancel(signal.SIGINT)

    def discard_keyed(self, cancel: Cancel, key: Key | None) -> None:
        self.discard(cancel)
        with self._lock:
            if key is not None and self._keyed.get(key) is cancel:
                del self._keyed[key]

    def drop(self, key: Key) -> None:
        """The connection that carried request ``key`` went before its answer: interrupt
        the call (as Ctrl-C), or remember it for a call that has not begun yet."""
        with self._lock:
            cancel = self._keyed.get(key)
            if cancel is None:
                self._dropped[key] = None
                while len(self._dropped) > REMEMBERED:
                    del self._dropped[next(iter(self._dropped))]
        if cancel is not None:
            cancel.cancel(signal.SIGINT)


async def in_thread(
    calls: Calls, work: Callable[[Cancel], T], live: Live | None = None, key: Key | None = None
) -> T:
    """``work(cancel)`` on a worker thread, its output pumped by ``live`` meanwhile. When
    this task is cancelled (or the connection of request ``key`` drops), fire ``cancel``
    (SIGINT) and wait for ``work`` to end before letting the cancellation through."""
    cancel = Cancel()
    calls.add_keyed(cancel, key)
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(calls.pool, work, cancel)
    pump = asyncio.ensure_future(live.pump()) if live is not None else None
    try:
        result = await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.cancel(signal.SIGINT)
        await _outlast(future)
        raise
    finally:
        if pump is not None:
            pump.cancel()
        calls.discard_keyed(cancel, key)
        if future.done():  # else the thread still polls its pipe: leave it open
            cancel.close()
    if live is not None and pump is not None:
        await asyncio.wait([pump])  # cancelled above: no report is half sent
        with contextlib.suppress(Exception):  # the client went: the result may still go
            await live.flush()
    return result


async def _outlast(future: asyncio.Future[T]) -> None:
    """Wait until ``future`` is done, whatever cancels this task meanwhile (the SDK's
    cancel scope, or a plain ``Task.cancel``)."""
    with anyio.CancelScope(shield=True):
        while not future.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])


class Live:
    """Output as it arrives on the worker thread: kept whole for the result, and its new
    text reported to the client at most every :data:`INTERVAL` seconds (the first chunk
    at once). ``report(progress, message)`` gets the bytes seen so far and the text."""

    def __init__(self, report: Report) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._report = report
        self._pending = bytearray()
        self._seen = 0
        self._lock = threading.Lock()
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def out(self, chunk: bytes) -> None:
        """The stdout sink (called on the worker thread)."""
        self._add(self.stdout, chunk)

    def err(self, chunk: bytes) -> None:
        """The stderr sink (called on the worker thread)."""
        self._add(self.stderr, chunk)

    def _add(self, whole: bytearray, chunk: bytes) -> None:
        with self._lock:
            whole += chunk
            self._pending += chunk
        self._loop.call_soon_threadsafe(self._wake.set)

    async def pump(self) -> None:
        """Report new output until cancelled; a client that cannot take it any more ends
        the reports, not the call."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.flush()
            except Exception:
                return
            await asyncio.sleep(INTERVAL)  # a rate limit, not a wait for anything

    async def flush(self) -> None:
        """Report what arrived since the last report, if anything did."""
        with self._lock:
            data, self._pending = bytes(self._pending), bytearray()
        if not data:
            return
        self._seen += len(data)
        text = self._decoder.decode(data)
        if len(text) > MAX_MESSAGE:
            cut = len(text) - MAX_MESSAGE
            text = f"[... {cut} characters ...]\n" + text[cut:]
        await self._report(self._seen, text)

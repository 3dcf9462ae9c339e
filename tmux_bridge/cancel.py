"""Cancellation owned by the caller.

The core never installs signal handlers. Every wait in it (the call lock, the command,
a REPL evaluation) polls :attr:`Cancel.fd` beside its other descriptors, so a call is
cancelled from any thread, from an asyncio task (through ``asyncio.to_thread``), or from
a signal handler, and reacts at once: the command is interrupted exactly as if the
person had pressed Ctrl-C, and the result says which signal the cancellation stood for.

The CLI maps SIGINT, SIGTERM and SIGHUP onto a :class:`Cancel` with
:class:`SignalCancel`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType

from .errors import Cancelled


class Cancel:
    """A one-shot cancellation: :meth:`cancel` from anywhere, :attr:`fd` to poll.

    Once cancelled, ``fd`` stays readable (level-triggered), so every wait that polls it
    after that returns at once; ``signum`` holds the signal the cancellation stands for
    (SIGINT unless the caller said otherwise). Safe to call from any thread and from a
    signal handler: it only sets an attribute and writes one byte to a pipe.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    @property
    def fd(self) -> int:
        """A descriptor that becomes readable when the call is cancelled."""
        return self._read

    @property
    def cancelled(self) -> bool:
        return self.signum is not None

    def cancel(self, signum: int = signal.SIGINT) -> None:
        """Cancel the call; the first signal number given is the one reported."""
        if self.signum is None:
            self.signum = signum
        with contextlib.suppress(OSError):  # already written: the pipe is full or closed
            os.write(self._write, b"x")

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Cancel:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()


def check_not_cancelled(cancel: Cancel | None) -> None:
    """Raise :class:`Cancelled` when the caller cancelled before anything was typed."""
    if cancel is not None and cancel.signum is not None:
        raise Cancelled(cancel.signum)


class SignalCancel(Cancel):
    """A :class:`Cancel` triggered by SIGINT, SIGTERM and SIGHUP to this process, for a
    command-line face. Use as a context manager on the main thread: while it is active
    these signals no longer end the process; the call in progress is cancelled instead
    and reports ``128 + N``."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        super().__init__()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> SignalCancel:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self.close()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.cancel(signum)


class InFlight:
    """The cancellations of a server's calls in flight, so a stopping server interrupts
    them all. :meth:`cancel_all` is safe in a signal handler (it only writes to pipes);
    ``also`` are more of its kind (another face's calls, served by the same process)."""

    def __init__(self) -> None:
        self._cancels: set[Cancel] = set()
        self._lock = threading.Lock()
        self.stopping: int | None = None  # the signal that stops the server
        self.also: list[Callable[[int], None]] = []

    def add(self, cancel: Cancel) -> None:
        with self._lock:
            self._cancels.add(cancel)
        if self.stopping is not None:
            cancel.cancel(self.stopping)

    def discard(self, cancel: Cancel) -> None:
        with self._lock:
            self._cancels.discard(cancel)

    def cancel_all(self, signum: int) -> None:
        self.stopping = signum
        for cancel in list(self._cancels):  # no lock: may run inside add() on this thread
            cancel.cancel(signum)
        for cancel_all in self.also:
            cancel_all(signum)

    def __len__(self) -> int:
        return len(self._cancels)

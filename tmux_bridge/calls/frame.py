"""The frame of every call that types into a pane: find the pane, hold its lock.

Calls to one pane are serialized by that pane's lock, so each gets only its own output
and never types while another call runs there; calls to different panes run in
parallel. Keys, typed text and the screen take no lock (see :mod:`tmux_bridge.pane.keys`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

from ..cancel import Cancel
from ..errors import BridgeError, ReplMismatch
from ..infra.process import proc
from ..infra.runtime import ensure_private_dir, remove_quietly, write_private_file
from ..infra.tmux import Tmux, look_started
from ..pane.front import FarShell, Front, LocalShell, OpenRepl, pane_front
from ..pane.info import PaneInfo, PaneView, find_pane
from ..pane.records import PaneDir, pane_dir_name
from ..results import CallRecord, Mode, RunOptions
from ..target import Target
from ..tuples import NamedTuple

Notice = Callable[[str], None]
Sink = Callable[[bytes], None]


class CallFrame(NamedTuple):
    """A pane held for one call: what tmux showed of it once the lock was held, its
    records, when the call started and its overall deadline (``time.monotonic()``), and
    what is in front of its shell (decided once, :func:`~tmux_bridge.pane.front.pane_front`)."""

    view: PaneView
    records: PaneDir
    started: float
    deadline: float
    front: Front


# Per thread (every call runs on one): the pane locks of the calls made inside
# :func:`locks_kept`, let go at its end.
_kept = threading.local()


@contextlib.contextmanager
def locks_kept() -> Iterator[None]:
    """Calls made inside this ``with`` keep their pane's lock until its end (or until
    the next call inside it starts), so what the caller does last happens while the
    pane is still the call's: the facade logs a call's end there, and one pane's
    entries in the audit log are in the order its calls ran."""
    kept: list[contextlib.ExitStack] = []
    outer = _kept_locks()
    _kept.locks = kept
    try:
        yield
    finally:
        _kept.locks = outer
        _let_go(kept)


def _kept_locks() -> list[contextlib.ExitStack] | None:
    locks: list[contextlib.ExitStack] | None = getattr(_kept, "locks", None)
    return locks


def _let_go(kept: list[contextlib.ExitStack]) -> None:
    while kept:
        kept.pop().close()


@contextlib.contextmanager
def pane_call(
    target: Target, options: RunOptions, cancel: Cancel | None, notice: Notice
) -> Iterator[CallFrame]:
    """Find the target's pane and hold its call lock for the body of the ``with``
    (inside :func:`locks_kept`, until its end).

    The pane is looked at before the lock is taken (to know which lock), and again
    once it is held if another call held it after that look (the lock busy, or let go
    just before it was tried), since the other call (or the person) may have changed
    the pane meanwhile. Raises :class:`NoBridgeSession`,
    :class:`NoSuchPane`, :class:`RuntimeDirError`, :class:`LockTimeout` or
    :class:`Cancelled` before anything is typed.
    """
    kept = _kept_locks()
    if kept:
        _let_go(kept)  # an earlier call of the same request: its turn is over
    started = time.monotonic()
    deadline = started + options.max_time
    ensure_private_dir(target.runtime_dir)
    looked = look_started()
    view = find_pane(target.tmux, target.session, target.pane)
    records = PaneDir(target.runtime_dir, target.tmux, view.pane.pane_id)
    hold = contextlib.ExitStack()
    try:
        refuse_if_job(records)
        lock = records.locked(deadline, cancel, lambda: _lock_busy(records, notice), looked)
        with hold:
            changed = hold.enter_context(lock)
            if changed:
                proc.forget()  # the other call changed the pane's processes meanwhile
                view = find_pane(target.tmux, target.session, view.pane.pane_id)
            if records.renew(view.pane.server):  # a pane of a restarted server: start clean
                from ..pane.context import renew_pane

                renew_pane(target.runtime_dir, pane_dir_name(target.tmux, view.pane.pane_id),
                           view.pane.server)  # fmt: skip
            front = pane_front(target.tmux, view.pane, records)
            try:
                yield CallFrame(view, records, started, deadline, front)
            finally:
                if kept is not None:
                    kept.append(hold.pop_all())  # let go by locks_kept
    except BridgeError as exc:
        exc.pane = exc.pane or view.pane.pane_id  # the audit log names the pane
        raise


def shell_front(frame: CallFrame) -> LocalShell | FarShell:
    """The shell in front of the pane (its own or a far one), for the modes that type
    shell code: refuses while a REPL tmux-send started is open there (raises its
    :class:`ReplMismatch`, or for a far REPL what its line shows); a REPL record no
    longer in front is forgotten."""
    front = frame.front
    if isinstance(front, OpenRepl):
        state = front.record
        raise front.refusal or ReplMismatch(
            f"a {state.name} REPL tmux-send started is open in the bridge terminal; "
            "evaluate code in it, or close it first.",
            repl=state.name,
        )
    if front.gone is not None:
        frame.records.clear_repl()
    return front


def refuse_if_job(records: PaneDir) -> None:
    """Raise :class:`PaneBusy` naming the job when a job holds the pane
    (:mod:`tmux_bridge.calls.jobs`); one ``stat`` when none does."""
    if os.path.exists(records.file("job")):
        from .jobs import refuse_if_job as refuse

        refuse(records)


def _lock_busy(records: PaneDir, notice: Notice) -> None:
    """The lock is still busy after a while: a job that took the pane meanwhile is a
    refusal, another call a notice."""
    refuse_if_job(records)
    notice(lock_holder_note(records))


def lock_holder_note(records: PaneDir) -> str:
    """The notice for a call that waits for another one to finish."""
    holder = records.read_inflight()
    if holder is None:
        return "tmux-send: waiting for another tmux-send call to finish"
    age = time.time() - holder.since
    return (
        f"tmux-send: waiting for another tmux-send call to finish "
        f"(pid {holder.pid}, running for {age:.0f} s: {holder.command[:80]!r})"
    )


class ReplContext:
    """One REPL request on a held pane: what the local REPL calls
    (:mod:`tmux_bridge.calls.repl`) and the far ones (:mod:`tmux_bridge.calls.farrepl`)
    share. ``pane`` is the frame's, or tmux's view of it once the shell was found ready;
    ``files`` are the call's own files, removed by :meth:`done`. (A plain class: the
    ``dataclasses`` module costs tmux-send's start-up about 10 ms.)"""

    def __init__(
        self,
        tmux: Tmux,
        frame: CallFrame,
        pane: PaneInfo,
        options: RunOptions,
        stdout: Sink,
        notice: Notice,
        cancel: Cancel | None,
    ) -> None:
        self.tmux = tmux
        self.frame = frame
        self.pane = pane
        self.options = options
        self.stdout = stdout
        self.notice = notice
        self.cancel = cancel
        self.files: list[str] = []

    @property
    def records(self) -> PaneDir:
        return self.frame.records

    def record(self, mode: Mode, command: str, repl: str) -> CallRecord:
        """A new call record of ``mode`` (``repl_start``, ``repl_eval``, ``repl_close``)."""
        record = CallRecord(mode, command, self.pane, self.options)
        record.repl = repl
        return record

    def done(self, record: CallRecord) -> CallRecord:
        """The call's files removed, its duration set: ``record``, finished."""
        for path in self.files:
            remove_quietly(path)
        record.duration = time.monotonic() - self.frame.started
        return record

    def write(self, path: str, content: bytes) -> str:
        """A 0600 file of the call's, removed by :meth:`done`."""
        write_private_file(path, content)
        self.files.append(path)
        return path

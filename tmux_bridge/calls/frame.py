"""The frame of every call that types into a pane: find the pane, hold its lock.

Calls to one pane are serialized by that pane's lock, so each gets only its own output
and never types while another call runs there; calls to different panes run in
parallel. Keys, typed text and the screen take no lock (see :mod:`tmux_bridge.pane.keys`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ..cancel import Cancel
from ..errors import BridgeError, Cancelled
from ..infra.runtime import ensure_private_dir
from ..pane.info import PaneView, find_pane
from ..pane.records import PaneDir
from ..results import RunOptions
from ..target import Target

Notice = Callable[[str], None]


class CallFrame(NamedTuple):
    """A pane held for one call: what tmux showed of it once the lock was held, its
    records, when the call started and its overall deadline (``time.monotonic()``)."""

    view: PaneView
    records: PaneDir
    started: float
    deadline: float


@contextlib.contextmanager
def pane_call(
    target: Target, options: RunOptions, cancel: Cancel | None, notice: Notice
) -> Iterator[CallFrame]:
    """Find the target's pane and hold its call lock for the body of the ``with``.

    The pane is looked at again when the lock was busy, since the person (or the other
    call) may have changed it meanwhile. Raises :class:`NoBridgeSession`,
    :class:`NoSuchPane`, :class:`RuntimeDirError`, :class:`LockTimeout` or
    :class:`Cancelled` before anything is typed.
    """
    started = time.monotonic()
    deadline = started + options.max_time
    ensure_private_dir(target.runtime_dir)
    view = find_pane(target.tmux, target.session, target.pane)
    records = PaneDir(target.runtime_dir, target.tmux, view.pane.pane_id)
    try:
        with records.locked(deadline, cancel, lambda: notice(lock_holder_note(records))) as waited:
            if waited:
                view = find_pane(target.tmux, target.session, view.pane.pane_id)
            yield CallFrame(view, records, started, deadline)
    except BridgeError as exc:
        exc.pane = exc.pane or view.pane.pane_id  # the audit log names the pane
        raise


def check_not_cancelled(cancel: Cancel | None) -> None:
    """Raise :class:`Cancelled` when the caller cancelled before anything was typed."""
    if cancel is not None and cancel.signum is not None:
        raise Cancelled(cancel.signum)


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

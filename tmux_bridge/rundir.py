"""What is kept for one pane between calls, in a directory of its own.

Each pane a call targets gets ``<runtime dir>/pane-<N>`` (for pane id ``%N``; prefixed
with the server's socket name when that is not ``default``), mode 0700, holding:

* the call lock (an flock on the directory itself), so calls to one pane are serialized
  and calls to different panes run in parallel;
* ``inflight``: the call running now (pid, start time, command), for the next caller's
  wait notice and for ``tmux-bridge status``;
* ``prompt``: the prompt line learnt by the half-typed-line check;
* ``repl``: the REPL tmux-send started in the pane;
* the per-call files a call's shell sources, removed after the call (and swept up under
  the lock when a killed call left them).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

from .cancel import Cancel
from .runtime import (
    INFLIGHT_FILE,
    atomic_write,
    call_lock,
    ensure_private_dir,
    remove_quietly,
    sweep_call_files,
    write_private_file,
)
from .tmux import Tmux

PROMPT_FILE = "prompt"
REPL_FILE = "repl"


class InFlight(NamedTuple):
    """The call that holds a pane now."""

    pid: int
    since: float  # time.time()
    command: str


class ReplRecord(NamedTuple):
    """The REPL tmux-send started in a pane: its name, process, prompt and quit text."""

    name: str
    pid: int
    pane_id: str
    prompt_re: str
    quit: str


def pane_dir_name(tmux: Tmux, pane_id: str) -> str:
    """``pane-3`` for pane ``%3`` of the default server; ``<socket>-pane-3`` otherwise.

    Named by the socket's path, so that one server reached by name (``-L``) or by path
    (``-S``) keeps one lock per pane."""
    name = "pane-" + pane_id.lstrip("%")
    socket = tmux.socket_path()
    if socket == Tmux().socket_path():
        return name
    tag = "".join(c if c.isalnum() else "_" for c in socket)[-40:]
    return f"{tag}-{name}"


class PaneDir:
    """The runtime directory of one pane."""

    def __init__(self, root: str, tmux: Tmux, pane_id: str) -> None:
        self.root = root
        self.pane_id = pane_id
        self.path = os.path.join(root, pane_dir_name(tmux, pane_id))

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def ensure(self) -> None:
        """Create (or check) the private runtime directory and this pane's directory."""
        ensure_private_dir(self.root)
        ensure_private_dir(self.path)

    @contextlib.contextmanager
    def locked(
        self, deadline: float, cancel: Cancel | None, on_wait: Callable[[], None]
    ) -> Iterator[bool]:
        """Hold the pane's call lock; leftovers of a killed call are swept once held.
        Yields whether the lock was busy at first."""
        self.ensure()
        with call_lock(self.path, deadline, on_wait, cancel=cancel) as waited:
            sweep_call_files(self.path)
            yield waited

    # --- the call in flight -------------------------------------------------------------

    def write_inflight(self, command: str) -> None:
        text = f"{os.getpid()}\n{time.time()}\n{command}"
        write_private_file(self.file(INFLIGHT_FILE), text.encode("utf-8", "surrogateescape"))

    def read_inflight(self) -> InFlight | None:
        """The call in flight, or ``None`` (none, or a killed call's leftover)."""
        try:
            with open(self.file(INFLIGHT_FILE), encoding="utf-8", errors="replace") as f:
                pid, since, command = f.read().split("\n", 2)
            record = InFlight(int(pid), float(since), command)
        except (OSError, ValueError):
            return None
        return record if os.path.exists(f"/proc/{record.pid}") else None

    def clear_inflight(self) -> None:
        remove_quietly(self.file(INFLIGHT_FILE))

    # --- the learnt prompt --------------------------------------------------------------

    def read_prompt(self) -> tuple[str, str]:
        """The known prompt line and the candidate seen once (both empty at first)."""
        try:
            with open(self.file(PROMPT_FILE), encoding="utf-8", errors="surrogateescape") as f:
                known, _, candidate = f.read().partition("\n")
        except OSError:
            return "", ""
        return known, candidate

    def write_prompt(self, known: str, candidate: str) -> None:
        atomic_write(
            self.file(PROMPT_FILE), f"{known}\n{candidate}".encode("utf-8", "surrogateescape")
        )

    # --- the REPL tmux-send started -----------------------------------------------------

    def read_repl(self) -> ReplRecord | None:
        path = self.file(REPL_FILE)
        if not os.path.exists(path):
            return None  # the common case: no json import on the hot path
        import json

        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            return ReplRecord(
                str(data["name"]),
                int(data["pid"]),
                str(data["pane_id"]),
                str(data["prompt_re"]),
                str(data["quit"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write_repl(self, record: ReplRecord) -> None:
        import json

        atomic_write(self.file(REPL_FILE), json.dumps(record._asdict()).encode())

    def clear_repl(self) -> None:
        remove_quietly(self.file(REPL_FILE))

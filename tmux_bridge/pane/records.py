"""What is kept for one pane between calls, in a directory of its own.

Each pane a call targets gets ``<runtime dir>/pane-<N>`` (for pane id ``%N``; prefixed
with the server's socket name when that is not ``default``), mode 0700, holding:

* the call lock (an flock on the directory itself), so calls to one pane are serialized
  and calls to different panes run in parallel;
* ``inflight``: the call running now (pid, start time, command), for the next caller's
  wait notice and for ``tmux-bridge status``;
* ``prompt``: what the half-typed-line check knows of the shell's prompt, and apart
  from it of a far shell's (see :class:`PromptMemory`);
* ``repl``: the REPL tmux-send started in the pane;
* ``server``: the tmux server these belong to (its start time and pid): a pane id is
  reused by a restarted server, whose pane starts clean (:meth:`PaneDir.renew`);
* the per-call files a call's shell sources, removed after the call (and swept up under
  the lock when a killed call left them).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..cancel import Cancel
from ..infra.process import proc
from ..infra.runtime import (
    INFLIGHT_FILE,
    atomic_write,
    call_lock,
    ensure_private_dir,
    remove_quietly,
    sweep_call_files,
    usable_private_dir,
    write_private_file,
)
from ..infra.tmux import Tmux
from ..tuples import NamedTuple

PROMPT_FILE = "prompt"
REPL_FILE = "repl"
SERVER_FILE = "server"


class InFlight(NamedTuple):
    """The call that holds a pane now."""

    pid: int
    since: float  # time.time()
    command: str
    job: str | None = None  # the job whose keeper holds the pane (docs/jobs.md)

    def document(self) -> dict[str, object]:
        """The call as ``status`` and ``panes`` show it: pid, seconds so far, command,
        and the job it is (null for a call)."""
        return {
            "pid": self.pid,
            "elapsed_s": round(time.time() - self.since, 1),
            "command": self.command,
            "job": self.job,
        }


MAX_KNOWN_PROMPTS = 8


class PromptMemory(NamedTuple):
    """What is known of a pane's prompt line (the text left of the cursor at the prompt).

    ``settled`` is when (``time.time()``) the last command call that ended back at the
    prompt started, ``call_id`` that call's id; ``typed_at`` when tmux-send last sent
    keys or text to the pane. When no key reached the session since that call started
    (tmux's ``session_activity``, whole seconds, is older), tmux-send typed nothing
    since, and the cursor is within a prompt's rows of ``end_row``, where that call
    ended (nothing ran since), the line at the cursor is the bare prompt the shell drew
    after that call. A far shell's
    prompt is kept apart (``far_pid``, ``far_prompt``), so the two never mix.
    """

    known: tuple[str, ...] = ()  # bare prompt lines, newest first
    candidate: str = ""  # a line seen once, learnt when seen again
    settled: float = 0.0
    typed_at: float = 0.0
    call_id: str = ""
    # a far shell's prompt (behind ssh, su ...), kept apart from the pane's own shell's:
    # the line seen at the start of the last far call, through the program ``far_pid``
    far_pid: int = 0
    far_prompt: str = ""
    # the pane's row (scrollback rows counted) where the last call ended, -1 unknown
    end_row: int = -1

    def quiet_since_last_call(self, keys_at: int) -> bool:
        """Whether nothing can have been typed since the last call (``keys_at``: the
        session's last key press, whole seconds; 0 for none ever)."""
        return self.settled > self.typed_at and keys_at < int(self.settled)

    def far_known(self, pid: int) -> tuple[str, ...]:
        """The far prompt known for the far shell behind the program ``pid`` (none
        when the last far call went through another)."""
        return (self.far_prompt,) if self.far_prompt and self.far_pid == pid else ()

    def learnt(self, line: str) -> PromptMemory:
        """This memory with ``line`` known as a bare prompt."""
        known = (line, *[k for k in self.known if k != line])[:MAX_KNOWN_PROMPTS]
        return self._replace(known=known, candidate="")


class ReplRecord(NamedTuple):
    """The REPL tmux-send started in a pane: its name, process, prompt and quit text."""

    name: str
    pid: int
    pane_id: str
    prompt_re: str
    quit: str
    # a REPL in a far shell (behind ssh, su ...): ``pid`` is the gateway's; here the
    # far facts (``document``), the far shell's prompt and the id of the call that
    # started the REPL (its end marker shows when the REPL exits)
    far: dict[str, Any] | None = None


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
        self,
        deadline: float,
        cancel: Cancel | None,
        on_wait: Callable[[], None],
        since: float | None = None,
    ) -> Iterator[bool]:
        """Hold the pane's call lock; leftovers of a killed call are swept once held.
        Yields whether the pane may have changed since the caller looked at it at
        ``since`` (a ``time.time()`` value; see :func:`call_lock`), or since a killed
        call left its files."""
        self.ensure()
        with call_lock(self.path, deadline, on_wait, cancel=cancel, since=since) as changed:
            swept = sweep_call_files(self.path)
            yield changed or swept

    def renew(self, server: str) -> bool:
        """Whether the records were of another tmux server than ``server`` (the pane's
        :attr:`~tmux_bridge.pane.info.PaneInfo.server`), or of none named: they are then
        dropped (prompt memory, REPL record) and ``server`` kept. Under the lock."""
        path = self.file(SERVER_FILE)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                if f.read() == server:
                    return False
        except OSError:
            pass
        remove_quietly(self.file(PROMPT_FILE))
        remove_quietly(self.file(REPL_FILE))
        atomic_write(path, server.encode("utf-8", "replace"))
        return True

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
        if not proc.alive(record.pid):
            return None
        try:  # a job's keeper holds the pane: which job (calls/jobs.py writes the file)
            with open(self.file("job"), encoding="ascii") as f:
                return record._replace(job=f.read().strip() or None)
        except (OSError, ValueError):
            return record

    def clear_inflight(self) -> None:
        remove_quietly(self.file(INFLIGHT_FILE))

    # --- the learnt prompt --------------------------------------------------------------

    def read_prompt(self) -> PromptMemory:
        """The prompt memory (empty at first, or when the file is unreadable)."""
        try:
            with open(self.file(PROMPT_FILE), encoding="utf-8", errors="surrogateescape") as f:
                head, candidate, far_prompt, *known = f.read().split("\n")
            settled, typed_at, call_id, far_pid, end_row = [*head.split(" "), "-1"][:5]
            times = float(settled), float(typed_at)
            memory = PromptMemory(tuple(k for k in known if k), candidate, *times, call_id)
            return memory._replace(
                far_pid=int(far_pid), far_prompt=far_prompt, end_row=int(end_row)
            )
        except (OSError, ValueError):
            return PromptMemory()

    def write_prompt(self, memory: PromptMemory) -> None:
        head = (
            f"{memory.settled} {memory.typed_at} {memory.call_id} {memory.far_pid} {memory.end_row}"
        )
        lines = [head, memory.candidate, memory.far_prompt, *memory.known]
        atomic_write(self.file(PROMPT_FILE), "\n".join(lines).encode("utf-8", "surrogateescape"))

    def remember_far_prompt(self, pid: int, prompt: str) -> None:
        """Keep the far prompt that passed the half-typed-line check, seen through the
        program ``pid``, for the next far call (not an empty line: a far shell still
        starting, typed ahead of its prompt)."""
        if prompt:
            with contextlib.suppress(OSError):
                self.write_prompt(self.read_prompt()._replace(far_pid=pid, far_prompt=prompt))

    def mark_settled(self, started: float, call_id: str, end_row: int = -1) -> None:
        """A command call that started at ``started`` ended back at the prompt, on the
        pane's row ``end_row`` (scrollback rows counted; -1 unknown)."""
        memory = self.read_prompt()  # read again: keys may have been sent meanwhile
        self.write_prompt(memory._replace(settled=started, call_id=call_id, end_row=end_row))

    def mark_typed(self) -> None:
        """tmux-send sent keys or text to the pane: the line may hold anything now.
        Kept only where a call has made the pane's private directory."""
        if os.path.isdir(self.path) and all(map(usable_private_dir, (self.root, self.path))):
            self.write_prompt(self.read_prompt()._replace(typed_at=time.time()))

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
                data["far"] if isinstance(data.get("far"), dict) else None,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write_repl(self, record: ReplRecord) -> None:
        import json

        atomic_write(self.file(REPL_FILE), json.dumps(record._asdict()).encode())

    def clear_repl(self) -> None:
        remove_quietly(self.file(REPL_FILE))

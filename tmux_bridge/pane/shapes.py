"""The typed results of the pane layer: a session's status, its panes, a new pane or session.

Each is frozen and has ``document()``, the JSON form every face prints or returns
(``tmux-bridge ... --json``, the HTTP API, the MCP tools, ``/ws``). Pure: no imports at
run time, so :mod:`tmux_bridge.results` names them for the faces at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..tuples import NamedTuple

if TYPE_CHECKING:
    from .records import InFlight


class StatusRepl(NamedTuple):
    """The REPL open in a pane: its name and the pid of its program (``None``: unknown)."""

    name: str
    pid: int | None

    def document(self) -> dict[str, object]:
        return {"name": self.name, "pid": self.pid}


class BridgeStatus(NamedTuple):
    """What ``status`` tells of a session: whether it runs and, when it does, its pane,
    shell (kind, else the program's name) and its pid, directory, the program in front
    (``None``: the shell's prompt), the open REPL and the call in flight."""

    session: str
    running: bool
    pane: str | None = None
    shell: str | None = None
    shell_pid: int | None = None  # None only for a stand-in (the stub backend) with no pid
    cwd: str | None = None
    foreground: str | None = None
    repl: StatusRepl | None = None
    in_flight: InFlight | None = None
    # what the person sees of a call: "clean", or "verbose" (tmux-send's typed line and
    # markers show) with why in the note
    transcript: str = "clean"
    transcript_note: str | None = None

    def document(self) -> dict[str, object]:
        """The status as JSON: ``session`` and ``running``, then, while it runs, the rest
        (``shell_pid`` when known)."""
        if not self.running:
            return {"session": self.session, "running": False}
        document: dict[str, object] = {"session": self.session, "running": True}
        document["pane"] = self.pane
        document["shell"] = self.shell
        if self.shell_pid is not None:
            document["shell_pid"] = self.shell_pid
        document["cwd"] = self.cwd
        document["foreground"] = self.foreground
        document["repl"] = self.repl.document() if self.repl is not None else None
        document["in_flight"] = self.in_flight.document() if self.in_flight else None
        document["transcript"] = self.transcript
        document["transcript_note"] = self.transcript_note
        return document


class NewSession(NamedTuple):
    """A session just made: its name, its pane's id and target, its directory."""

    session: str
    pane: str
    target: str
    cwd: str

    def document(self) -> dict[str, object]:
        return dict(self._asdict())


class PaneLabel(NamedTuple):
    """A pane just labelled or opened: its id, target and label; for a new pane, a
    ``note`` when its shell had to start in the home directory."""

    pane: str
    target: str
    label: str | None
    note: str | None = None

    def document(self) -> dict[str, object]:
        """``pane``, ``target``, ``label``, and ``note`` when there is one."""
        document: dict[str, object] = {"pane": self.pane, "target": self.target}
        document["label"] = self.label
        if self.note:
            document["note"] = self.note
        return document


class PaneFront(NamedTuple):
    """What is in front of a pane: ``prompt``, ``repl``, ``nested_shell``,
    ``remote_shell``, ``program`` or ``dead``, and the program's name."""

    kind: str
    program: str | None

    def document(self) -> dict[str, object]:
        return {"kind": self.kind, "program": self.program}


class PaneEntry(NamedTuple):
    """One pane as ``panes`` lists it: where it is, its label, its shell and user, what is
    in front, a call in flight, and what the context remembers of it (its platform, the
    last command, the far shell tmux-send last used, or why that is left). A pane gone
    since it was listed has only ``pane``, ``target`` and ``gone``."""

    pane: str
    target: str
    gone: bool = False
    label: str | None = None
    bridge: bool = False
    shell: str | None = None
    shell_pid: int = 0
    user: str | None = None
    host: str = ""
    cwd: str | None = None
    front: PaneFront | None = None
    in_flight: InFlight | None = None
    attached: bool = False
    platform: dict[str, object] | None = None
    last_command: dict[str, object] | None = None
    far: dict[str, object] | None = None
    far_left: str | None = None

    def document(self) -> dict[str, object]:
        """The entry as JSON (``far_left`` only when the person left the far shell)."""
        if self.gone:
            return {"pane": self.pane, "target": self.target, "gone": True}
        document: dict[str, object] = {
            "pane": self.pane,
            "target": self.target,
            "label": self.label,
            "bridge": self.bridge,
            "shell": self.shell,
            "shell_pid": self.shell_pid,
            "user": self.user,
            "host": self.host,
            "cwd": self.cwd,
            "front": self.front.document() if self.front else None,
            "in_flight": self.in_flight.document() if self.in_flight else None,
            "attached": self.attached,
            "platform": self.platform,
            "last_command": self.last_command,
            "far": self.far,
        }
        if self.far_left is not None:
            document["far_left"] = self.far_left
        return document


class FitResult(NamedTuple):
    """A window asked to fit a terminal: whether it was applied (no person attached),
    the pane's size now, and why not (``reason``)."""

    applied: bool
    cols: int
    rows: int
    reason: str | None

    def document(self) -> dict[str, object]:
        return dict(self._asdict())


class Upload(NamedTuple):
    """A file dropped on the terminal: where it was saved, its size in bytes, and what
    was pasted (``text``, ``image-path`` or ``path``)."""

    path: str
    size: int
    pasted: str

    def document(self) -> dict[str, object]:
        """``path``, ``bytes`` (the size) and ``pasted``."""
        return {"path": self.path, "bytes": self.size, "pasted": self.pasted}

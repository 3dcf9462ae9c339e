"""Typed results: what every call of the core returns, whatever the face.

A call builds a :class:`CallRecord` while it runs (the engines fill it in) and returns
the frozen :class:`CallResult`; :func:`tmux_bridge.report.to_document` turns a result
into the one JSON document that ``--json``, the HTTP API and the MCP server all give.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from .errors import InvalidRequest, exit_status
from .tuples import NamedTuple

if TYPE_CHECKING:
    from .pane.info import PaneInfo
    from .pane.shapes import BridgeStatus as BridgeStatus
    from .pane.shapes import FitResult as FitResult
    from .pane.shapes import NewSession as NewSession
    from .pane.shapes import PaneEntry as PaneEntry
    from .pane.shapes import PaneFront as PaneFront
    from .pane.shapes import PaneLabel as PaneLabel
    from .pane.shapes import StatusRepl as StatusRepl
    from .pane.shapes import Upload as Upload

# The typed results of the pane-wide operations (status, panes, labels, sessions, fit,
# upload) live in :mod:`tmux_bridge.pane.shapes` and are part of this vocabulary; they are
# imported when first asked for, since a command call never needs them (start-up).
_SHAPES = frozenset(
    {
        "BridgeStatus", "FitResult", "NewSession", "PaneEntry", "PaneFront", "PaneLabel",
        "StatusRepl", "Upload",
    }
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _SHAPES:
        from .pane import shapes

        return getattr(shapes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Mode = Literal[
    "command", "repl_start", "repl_eval", "repl_close", "keys", "type", "screen",
    "write", "read", "edit", "job", "stat", "backups", "restore",
]  # fmt: skip
TimeoutKind = Literal["idle", "overall"]


MAX_SECONDS = 7 * 24 * 3600  # the longest time limit: a week

# The most tmux-send moves through a pane in one call, either way. tmux-send holds the
# bytes in memory (peak RSS 1.1 x the size; 5 x for a binary file read with --json, its
# base64 and JSON text) and the local transport keeps a copy in the runtime directory
# during the call. Measured here, 256 MiB took 3.5-4.5 s either way: well inside the
# default overall timeout, which is the only one that applies (the work is silent).
MAX_FILE_BYTES = 256 * 1024 * 1024


class RunOptions(NamedTuple):
    """How to run one command or evaluation. Times are in seconds, above 0 and at most
    ``MAX_SECONDS`` (:func:`check_options`)."""

    idle_timeout: float = 10.0  # without output before the command is interrupted
    max_time: float = 120.0  # in all, counting any wait for the pane's lock
    raw: bool = False  # output byte for byte, terminal control sequences kept
    # at a timeout, interrupt the command, or let it run on as a job ("detach")
    on_timeout: Literal["interrupt", "detach"] = "interrupt"
    # show tmux-send's plumbing in the pane (the typed line, markers), for debugging
    verbose_transcript: bool = False
    # the calling agent's name (a face passes it: tmux-send its $TMUX_BRIDGE_AGENT), shown
    # in the header of the call in the pane; ignored unless a name (text.seams.is_name)
    agent: str | None = None


def check_options(options: RunOptions) -> None:
    """Raise :class:`~tmux_bridge.errors.InvalidRequest` unless both time limits are
    numbers of seconds above 0 and at most ``MAX_SECONDS`` (a week): not NaN, not
    infinite, nothing the waits cannot count down. The facade calls this for every call
    before anything else, so every face refuses alike (``invalid_request``)."""
    for name, what, value in (
        ("idle_timeout", "The idle timeout", options.idle_timeout),
        ("max_time", "The overall time limit", options.max_time),
    ):
        number = value if isinstance(value, (int, float)) else float("nan")
        if not 0 < number <= MAX_SECONDS:  # False for NaN
            raise InvalidRequest(
                f"{what} ({name}) must be a positive number of seconds, at most "
                f"{MAX_SECONDS} (a week); it was {value!r}. Nothing was run."
            )


class FileFacts(NamedTuple):
    """A file as the pane's shell saw it once it was written, read or edited.

    ``path`` is the path as given (relative to the shell's directory), ``abs_path`` the
    same joined to that directory (not resolved further). ``mode`` holds the permission
    bits and ``mtime`` seconds since the epoch, ``None`` when the far side's ``stat``
    could not tell. ``backup`` is where the old content was copied before a write (in
    the backup directory of the pane's host), ``status`` what a write, edit or restore
    did (``created``, ``updated``, ``unchanged``; ``None`` for a read or stat), ``md5``
    the MD5 a stat found (``None`` otherwise, or when the host has no MD5 tool).
    """

    path: str
    abs_path: str
    size: int
    sha256: str
    mode: int | None
    mtime: int | None
    backup: str | None
    status: str | None = None
    md5: str | None = None


class BackupEntry(NamedTuple):
    """One backup kept on the pane's host (``tmux-send --backups``): ``id`` (its file's
    name in ``directory``), the ``path`` of the file it was copied from (absolute, its
    directory resolved), ``time`` in seconds since the epoch, its ``sha256`` and
    ``size``."""

    id: str
    path: str
    time: int
    sha256: str
    size: int
    directory: str


class LineEdit(NamedTuple):
    """A line edit (``tmux-send --edit PATH --line N``): ``replace`` line ``line``
    (1-based) with ``text``, ``insert`` ``text`` before it, ``delete`` it, or
    ``append`` ``text`` to the end of the file exactly (``line`` then unused). A
    replaced or inserted ``text`` gets a line end unless it has one."""

    action: Literal["replace", "insert", "delete", "append"]
    line: int = 0
    text: bytes = b""


class CallResult(NamedTuple):
    """What happened to one call.

    ``status`` is the command's own status (``None`` when unknown); ``exit_status`` is
    the one a command-line face exits with (see :func:`tmux_bridge.errors.exit_status`).
    ``stdout``/``stderr`` hold the output when the caller gave no sink to stream it to
    (``None`` when it was streamed). ``cancelled`` is the signal the caller's
    cancellation stood for. ``screen`` is what keys, typed text or a screen request left
    on the screen. ``file`` holds the facts of the file a write, read or edit handled
    (``stdout`` then holds the bytes read, the summary of a write, or an edit's diff).
    """

    mode: Mode
    call_id: str
    command: str
    pane: str
    shell: str | None  # the pane's shell kind (bash, zsh, fish, posix)
    repl: str | None  # the REPL's name, in REPL modes
    status: int | None
    exit_status: int
    timed_out: TimeoutKind | None
    cancelled: int | None
    signals_sent: tuple[str, ...]
    prompt_back: bool
    shell_exited: bool
    shell_restarted: bool
    waited_for_input: bool
    stdout: bytes | None
    stderr: bytes | None
    stdout_bytes: int
    stderr_bytes: int
    duration: float
    options: RunOptions
    pane_tail: tuple[str, ...]
    notes: tuple[str, ...]
    screen: str | None
    target: str = ""  # SESSION:WINDOW.PANE of ``pane`` when the call was made
    label: str = ""  # the pane's label, if it has one
    file: FileFacts | None = None
    # a far shell (ssh, su, sudo, a nested shell): how it was reached and what it said
    far: dict[str, str | int] | None = None
    stderr_merged: bool = False  # stderr could not be told from stdout
    input_detected_by: str | None = None  # "proc" (this machine's kernel) or "screen"
    job: str | None = None  # the job a timed-out call became (``on_timeout`` "detach")
    backups: tuple[BackupEntry, ...] | None = None  # what --backups listed


class CheckResult(NamedTuple):
    """What a dry run found (``tmux-send --check``). ``resolves_as`` is one of
    :data:`~tmux_bridge.text.syntax.RESOLUTIONS`, or ``None`` when the command has no
    command word (empty, comments, assignments only);
    ``parses`` is ``None`` when no syntax check could be made (no shell tmux-send can
    drive). ``would_exit`` is the status the real call would exit with (0: it would
    run); ``typed_lookup`` whether a lookup was typed into the pane. ``parsed_by`` is
    the binary of this machine that checked the syntax; ``far`` (a far shell in front:
    ``via``, ``gateway_pid``, ``shell``, and ``kind_from``: ``last_call`` or ``probe``)
    says whose syntax that was. A check by kind (:func:`~tmux_bridge.calls.validate.check_content`)
    fills ``kind``, ``validator``, ``valid`` and ``error`` (``parses`` is ``valid``,
    ``parse_error`` the error as one line; ``would_exit`` 1 when not valid)."""

    command: str
    pane: str
    shell: str | None
    parses: bool | None
    parse_error: str | None
    first_word: str | None
    resolves_as: str | None
    ready: bool
    reason: str | None
    error_code: str | None
    would_exit: int
    typed_lookup: bool
    parsed_by: str | None = None
    far: dict[str, Any] | None = None
    # a check by kind (--check --as KIND, --write PATH --check): the kind ("unknown"
    # when neither --as nor the extension named one; None for a command's check), the validator
    # the pane's host used (None: none there), whether the text is valid (None: not
    # checked) and the first error (line, column: None when the validator gave none)
    kind: str | None = None
    validator: str | None = None
    valid: bool | None = None
    error: dict[str, Any] | None = None


def new_call_id() -> str:
    """Ten hex digits: unique enough that no marker is ever matched by chance."""
    return os.urandom(5).hex()


_KEPT = frozenset(CallResult._fields) - {"exit_status"}  # what a CallRecord holds as it is


class CallRecord:
    """A call's result while it is being made; :meth:`freeze` gives the typed result."""

    def __init__(
        self, mode: Mode, command: str, pane: PaneInfo, options: RunOptions, call_id: str = ""
    ) -> None:
        self.mode: Mode = mode
        self.call_id = call_id or new_call_id()
        self.command = command
        self.pane = pane.pane_id
        self.target = pane.target
        self.label = pane.label
        self.options = options
        self.shell: str | None = None
        self.repl: str | None = None
        self.status: int | None = None
        self.timed_out: TimeoutKind | None = None
        self.cancelled: int | None = None
        self.signals_sent: list[str] = []
        self.prompt_back = True
        self.shell_exited = False
        self.shell_restarted = False
        self.waited_for_input = False
        self.stdout: bytes | None = None
        self.stderr: bytes | None = None
        self.stdout_bytes = 0
        self.stderr_bytes = 0
        self.duration = 0.0
        self.pane_tail: list[str] = []
        self.notes: list[str] = []
        self.screen: str | None = None
        self.file: FileFacts | None = None
        self.far: dict[str, str | int] | None = None
        self.stderr_merged = False
        self.input_detected_by: str | None = None
        self.job: str | None = None
        self.backups: tuple[BackupEntry, ...] | None = None

    def freeze(self) -> CallResult:
        """The call as it ended: each field of :class:`CallResult` is the attribute of
        the same name (lists made tuples); ``exit_status`` is made from the status."""
        fields = {name: getattr(self, name) for name in CallResult._fields if name in _KEPT}
        for name in ("signals_sent", "pane_tail", "notes"):
            fields[name] = tuple(fields[name])
        status = exit_status(self.status, self.timed_out, self.cancelled)
        return CallResult(exit_status=status, **fields)


JobState = Literal["running", "exited", "interrupted", "lost"]


class JobResult(NamedTuple):
    """A job (:meth:`tmux_bridge.api.Bridge.start_job`) as one call found it: its state,
    and what this call read of its output (``stdout``/``stderr``: since the last read,
    or all of it; empty for a call that reads nothing). ``stdout_bytes`` and
    ``stderr_bytes`` are the totals kept so far, ``dropped_bytes`` what did not fit in
    the job's spool. ``started`` and ``ended`` are ``time.time()`` values;
    ``exit_status`` is ``None`` while it runs (and when it was lost). ``timed_out`` is
    set when a wait for it timed out (the job runs on)."""

    job: str
    pane: str
    target: str
    command: str
    state: str
    exit_status: int | None
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    started: float
    ended: float | None
    dropped_bytes: int = 0
    notes: tuple[str, ...] = ()
    timed_out: TimeoutKind | None = None

    @property
    def exit_code(self) -> int:
        """What a command-line face exits with: 0 while the job runs, 124 when a wait
        timed out, the job's own status once it ended, 125 when it was lost."""
        if self.timed_out is not None:
            return 124
        if self.state == "running":
            return 0
        return 125 if self.exit_status is None else self.exit_status

    def document(self, notes: list[str] | None = None) -> dict[str, Any]:
        """The job document every face gives (``--json``, HTTP, MCP): times as ISO 8601,
        output as text, with ``stdout_b64``/``stderr_b64`` beside it when not UTF-8."""
        document: dict[str, Any] = {
            "job": self.job,
            "pane": self.pane,
            "target": self.target,
            "command": self.command,
            "state": self.state,
            "exit_status": self.exit_status,
            "timed_out": self.timed_out,
            "stdout_bytes": self.stdout_bytes,
            "stderr_bytes": self.stderr_bytes,
            "dropped_bytes": self.dropped_bytes,
            "started": _iso(self.started),
            "ended": None if self.ended is None else _iso(self.ended),
        }
        for name, data in (("stdout", self.stdout), ("stderr", self.stderr)):
            try:
                document[name] = data.decode("utf-8")
            except UnicodeDecodeError:
                import base64

                document[name] = data.decode("utf-8", "replace")
                document[name + "_b64"] = base64.b64encode(data).decode("ascii")
        document["notes"] = [*(notes or []), *self.notes]
        return document


def _iso(when: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(when))

"""The audit log: JSON lines in the runtime directory, for the person.

``log.jsonl`` (mode 0600) gets a line for every command, REPL call and keys sent. A call
that types and waits (a command, a REPL call, a file through the pane) gets two: one
when it starts, before anything is typed (``"event": "start"``, a ``call`` key, the
``pid`` and its start time ``pid_start`` of the process making it, ``mode``, ``pane`` as
asked for, ``client``, ``command``), and its entry when it ends, with the same ``call``.
A call whose process was killed (SIGKILL) or died keeps only its start. :func:`read`
gives each call once: an ended call as its end entry and, when asked, one that has not
ended as its start with ``running`` (whether its process still runs).

A command longer than ``MAX_COMMAND`` characters is kept as its start and its end with
a line saying what is left out (:func:`~tmux_bridge.text.seams.excerpt`), and the entry says
how long it was and its SHA-256 (:func:`command_facts`).

When the file passes ``MAX_BYTES`` it becomes ``log.jsonl.1`` (replacing the older one),
so the two together never hold much more than twice that.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from enum import Enum
from typing import Any

from ..infra.runtime import usable_private_dir
from ..text.seams import excerpt
from ..tuples import NamedTuple

LOG_FILE = "log.jsonl"
MAX_BYTES = 1024 * 1024
MAX_COMMAND = 4000  # characters of a command kept in the log


class Absent(Enum):
    """The value of a field an entry does not have: not written (``None`` is, as null)."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT


class AuditEntry(NamedTuple):
    """One line of the audit log, of every kind: a call's start (``event``), its end or
    what stopped it, a dry run, a prompt or a message, a session made or ended. A field
    left :data:`ABSENT` is not written; the fields' order is the order of the keys."""

    event: str | Absent = ABSENT
    call: str | Absent = ABSENT
    pid: int | Absent = ABSENT
    pid_start: int | Absent | None = ABSENT
    id: str | Absent | None = ABSENT
    mode: str | Absent = ABSENT
    pane: str | Absent | None = ABSENT
    target: str | Absent | None = ABSENT
    label: str | Absent | None = ABSENT
    agent: str | Absent = ABSENT
    client: str | Absent = ABSENT
    command: str | Absent = ABSENT
    exit_status: int | Absent | None = ABSENT
    timed_out: str | Absent | None = ABSENT
    duration_s: float | Absent = ABSENT
    enters: int | Absent = ABSENT
    stdout_bytes: int | Absent = ABSENT
    stderr_bytes: int | Absent = ABSENT
    error: str | Absent | None = ABSENT
    error_code: str | Absent | None = ABSENT
    typed_lookup: bool | Absent = ABSENT
    file: dict[str, Any] | Absent = ABSENT
    message_id: int | Absent = ABSENT
    sender: str | Absent = ABSENT
    state: str | Absent = ABSENT
    # where the call ran: the host and OS of the shell (a far shell's when one answered)
    host: str | Absent = ABSENT
    platform: str | Absent = ABSENT

    def document(self) -> dict[str, Any]:
        """The entry as the log's JSON object holds it (without its time)."""
        return {key: value for key, value in self._asdict().items() if value is not ABSENT}


class LoggedCall(NamedTuple):
    """One call as :func:`read` gives it: its end entry, or its start (``started``) with
    ``running``. ``fields`` is the JSON object as logged (every key in its order, those of
    older versions too); the others are the fields a face shows, typed (``None``: absent,
    or not of that type)."""

    fields: dict[str, object]
    time: str | None
    mode: str | None
    command: str | None
    exit_status: int | None
    timed_out: str | None
    duration_s: float | None
    started: bool  # only its start is logged: it has not ended
    running: bool  # a start whose process still runs

    @classmethod
    def of(cls, fields: dict[str, object]) -> LoggedCall:
        """The call whose log entry is ``fields``."""
        duration = fields.get("duration_s")
        status = fields.get("exit_status")
        return cls(
            fields,
            _string(fields.get("time")),
            _string(fields.get("mode")),
            _string(fields.get("command")),
            status if isinstance(status, int) and not isinstance(status, bool) else None,
            _string(fields.get("timed_out")),
            float(duration) if isinstance(duration, (int, float)) else None,
            fields.get("event") == "start",
            bool(fields.get("running")),
        )

    def document(self) -> dict[str, object]:
        """The entry as the log holds it (with ``running`` for a start)."""
        return dict(self.fields)


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def record(directory: str, entry: AuditEntry | dict[str, Any]) -> None:
    """Append ``entry`` with the current time. Never fails the call: a log that cannot
    be written is skipped, and so is one whose directory is not our own private one
    (:func:`~tmux_bridge.infra.runtime.usable_private_dir`): it is checked before anything is
    written."""
    if not usable_private_dir(directory):
        return
    path = os.path.join(directory, LOG_FILE)
    entry = entry.document() if isinstance(entry, AuditEntry) else entry
    command = entry.get("command")
    if isinstance(command, str):
        entry.update(command_facts(command))
    line = json.dumps({"time": _now(), **entry}, ensure_ascii=False) + "\n"
    with contextlib.suppress(OSError):
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_size > MAX_BYTES:
                os.replace(path, path + ".1")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogateescape"))  # one write: one line
        finally:
            os.close(fd)


def command_facts(command: str) -> dict[str, Any]:
    """The command as the log keeps it: whole up to ``MAX_COMMAND`` characters. A longer
    one is kept as its first 3000 and last 1000 characters with the line ``[... L lines
    and C characters not shown, of N lines and M characters ...]`` between them, and the
    entry gets ``command_chars`` and ``command_lines`` (of the whole command),
    ``command_omitted`` (the characters left out) and ``command_sha256`` (of the whole
    command's bytes: UTF-8, bytes that were not UTF-8 as they came), so the person can
    tell which script it was."""
    kept = excerpt(command, MAX_COMMAND, MAX_COMMAND + 1)  # characters count, not lines
    if not kept.omitted:
        return {"command": command}
    import hashlib

    data = command.encode("utf-8", "surrogateescape")
    return {
        "command": kept.text,
        "command_chars": len(command),
        "command_lines": command.count("\n") + 1,
        "command_omitted": kept.omitted,
        "command_sha256": hashlib.sha256(data).hexdigest(),
    }


def start_entry(mode: str, pane: str | None, client: str, command: str) -> AuditEntry:
    """The entry that says a call starts: ``call`` is the key its end repeats; ``pid``
    and ``pid_start`` (its start, as the process facts give it: clock ticks after
    boot on Linux, seconds of the epoch on the portable path) name the process making
    the call, so that a reader tells a call that still runs from one whose process is
    gone; ``pane`` is the target as asked for (``None``: the bridge pane)."""
    from ..infra.process import proc
    from ..results import new_call_id

    me = proc.proc_stat(os.getpid())
    return AuditEntry(
        event="start",
        call=new_call_id(),
        pid=os.getpid(),
        pid_start=me.start if me is not None else None,
        mode=mode,
        pane=pane,
        client=client,
        command=command,
    )


def read(directory: str, count: int | None, unfinished: bool = False) -> list[dict[str, Any]]:
    """The last ``count`` calls (all of them for ``None``), oldest first, from the
    rotated file too: each call once, by its end entry; with ``unfinished`` also the
    calls that have not ended, by their start (:func:`fold`). Lines that are not JSON
    objects are skipped."""
    path = os.path.join(directory, LOG_FILE)
    lines: list[str] = []
    for name in (path + ".1", path):
        with (
            contextlib.suppress(FileNotFoundError),
            open(name, encoding="utf-8", errors="replace") as f,
        ):
            lines.extend(f.read().splitlines())
    entries = []
    for line in lines:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    calls = fold(entries)
    if not unfinished:
        calls = [call for call in calls if call.get("event") != "start"]
    if count is not None:
        calls = calls[-count:] if count > 0 else []
    return calls


def fold(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call once, in the log's order: a start whose end is logged is dropped (the
    end says it all); a start without an end stays where it is, with ``running`` true
    while the process that made it still runs (the same pid, started at the same
    time), false once it is gone (killed, or the machine went down: the call never
    ended)."""
    ended = {
        entry["call"]
        for entry in entries
        if entry.get("event") != "start" and isinstance(entry.get("call"), str)
    }
    calls = []
    for entry in entries:
        if entry.get("event") == "start":
            if entry.get("call") in ended:
                continue
            entry = {**entry, "running": _still_running(entry)}
        calls.append(entry)
    return calls


def _still_running(start: dict[str, Any]) -> bool:
    from ..infra.process import proc

    pid = start.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    process = proc.proc_stat(pid)
    return process is not None and process.start == start.get("pid_start")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")

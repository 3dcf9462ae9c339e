"""Files kept safe through the pane: a file's facts without its content (stat), the
backups a write left on the pane's host (list, restore) and line edits.

Everything runs :data:`tmux_bridge.calls.files.SCRIPT` in the pane's shell, as the
write, read and edit of :mod:`tmux_bridge.calls.files` do, so it works the same in a
local and a far shell. Backups live on the pane's host, in
``$HOME/.cache/tmux-bridge/backups`` there: a copy named by its time (seconds since the
epoch) and a random part, and a line in its ``index`` (id, time, SHA-256, size, the
absolute path in hex). A restore is a write from that copy, so it backs the file up
first: it can itself be undone.
"""

from __future__ import annotations

import time
from typing import BinaryIO

from ..cancel import Cancel
from ..errors import BackupNotFound, EditNoLine, FileError, InvalidRequest
from ..results import BackupEntry, CallRecord, LineEdit, RunOptions
from ..target import Target
from .files import (
    Change,
    _again,
    _Call,
    _check_path,
    _file_options,
    _finish,
    _Run,
    _run_script,
    _visible,
    check_sha256,
    write_arguments,
)
from .frame import Notice, pane_call

_BACKUPS_MAGIC = b"tmux-send-backups 1"


def stat_file(
    target: Target, path: str, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CallRecord:
    """The facts of the file at ``path`` (size, mode, mtime, SHA-256, MD5) as the pane's
    shell finds them, without its content travelling: ``file`` holds them and
    ``stdout`` says them one to a line. Raises what
    :func:`~tmux_bridge.calls.files.read_file` raises."""
    _check_path(path)
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path, options, notice, cancel)
        run = _run_script(call, ["stat", path], None, f"stat {_visible(path)}")
        return _finish(call, "stat", run, _stat_text(run))


def _stat_text(run: _Run) -> bytes:
    facts = run.header
    if facts is None:
        return b""
    mode = "?" if facts.mode is None else f"{facts.mode:04o}"
    lines = [
        f"path: {facts.abs_path}",
        f"size: {facts.size}",
        f"mode: {mode}",
        f"mtime: {'?' if facts.mtime is None else facts.mtime}",
        f"sha256: {facts.sha256}",
        f"md5: {facts.md5 or '?'}",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


# --- backups -------------------------------------------------------------------------------


def list_backups(
    target: Target, path: str | None, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CallRecord:
    """The backups kept on the pane's host, oldest first: all of them, or those of the
    file at ``path`` (matched by its absolute path, directory resolved). ``backups``
    holds them and ``stdout`` lists them one to a line (id, time, size, SHA-256, path)."""
    if path is not None:
        _check_path(path)
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path or "", options, notice, cancel)
        record, entries = _backups(call, f"backups {_visible(path or '')}".rstrip())
        record.mode = "backups"
        record.command = path or ""
        if entries is not None:
            record.backups = tuple(entries)
            record.stdout = _backups_text(entries)
            record.stdout_bytes = len(record.stdout)
            record.stderr = b""
        return record


def _backups(call: _Call, shown: str) -> tuple[CallRecord, list[BackupEntry] | None]:
    """Run the script's ``backups``: the record, and the backups of ``call.path`` (all
    when it is empty); ``None`` for an interrupted run."""
    run = _run_script(call, ["backups", call.path], None, shown, _raw)
    if run.record.status != 0 or run.record.timed_out:
        return run.record, None
    return run.record, _parse_backups(run.data, call.path)


def _raw(stream: BinaryIO, _path: str) -> tuple[None, bytes]:
    return None, stream.read()


def _parse_backups(data: bytes, path: str) -> list[BackupEntry]:
    """The script's account: its magic, the directory, the path resolved, then one line
    per backup (``ID TIME SHA256 SIZE HEXPATH``); only those of that path when given."""
    fields = data.split(b"\0", 3)
    if len(fields) < 4 or fields[0] != _BACKUPS_MAGIC:
        raise FileError(f"the pane's shell gave no account of its backups: {data[:80]!r}.")
    directory = fields[1].decode("utf-8", "surrogateescape")
    wanted = fields[2].hex() if path else None
    entries = []
    for line in fields[3].decode("ascii", "replace").splitlines():
        words = line.split(" ")
        if len(words) != 5 or not (words[1].isdigit() and words[3].isdigit()):
            continue  # a line the shell could not have written whole
        if wanted is not None and words[4] != wanted:
            continue
        try:
            where = bytes.fromhex(words[4]).decode("utf-8", "surrogateescape")
        except ValueError:
            continue
        entries.append(
            BackupEntry(words[0], where, int(words[1]), words[2], int(words[3]), directory)
        )
    return entries


def _backups_text(entries: list[BackupEntry]) -> bytes:
    lines = []
    for entry in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
        lines.append(f"{entry.id}  {when}  {entry.size:>10}  {entry.sha256[:12]}  {entry.path}")
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


def restore_file(
    target: Target,
    path: str,
    backup_id: str | None,
    if_sha256: str | None,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> CallRecord:
    """Put back the content of a backup of the file at ``path``: the newest, or the one
    ``backup_id`` names. It is written as :func:`~tmux_bridge.calls.files.write_file`
    writes (SHA-256 checked against the backup's, the current file backed up first, so
    the restore can be undone; ``unchanged`` when the file already holds it). With
    ``if_sha256`` the file must still have that SHA-256. Raises
    :class:`BackupNotFound`, and what ``write_file`` raises."""
    _check_path(path)
    guard = check_sha256(if_sha256)
    if backup_id is not None and (not backup_id or "/" in backup_id or backup_id[0] == "."):
        raise InvalidRequest(f"{backup_id!r} is not a backup id; `--backups PATH` lists them.")
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path, options, notice, cancel)
        record, entries = _backups(call, f"restore {_visible(path)}: find the backup")
        if entries is None:
            record.mode, record.command = "restore", path
            return record
        entry = _chosen(call, path, backup_id, entries)
        call = _again(call)
        source = f"{entry.directory}/{entry.id}"
        arguments = write_arguments(path, entry.sha256, True, guard, source)
        shown = f"restore {_visible(path)} from {entry.id} ({entry.size} bytes)"
        run = _run_script(call, arguments, None, shown)
        done = _finish(call, "restore", run, b"")
        if run.header is not None:
            done.stdout = _restore_summary(run, entry)
            done.stdout_bytes = len(done.stdout)
        return done


def _chosen(call: _Call, path: str, backup_id: str | None, mine: list[BackupEntry]) -> BackupEntry:
    """The backup to restore: ``backup_id`` (of any file), else the newest of ``path``."""
    if backup_id is None:
        if not mine:
            raise BackupNotFound(
                f"no backup of {path} is kept on the pane's host; `--backups` lists those that are."
            )
        return mine[-1]
    found = [entry for entry in mine if entry.id == backup_id]
    if not found:  # a backup of another file, restored here
        everything = _backups(call._replace(path=""), f"restore {_visible(path)}: find it")[1]
        found = [entry for entry in everything or [] if entry.id == backup_id]
    if not found:
        raise BackupNotFound(
            f"no backup {backup_id} is kept on the pane's host; `--backups {path}` lists "
            f"the backups of {path}."
        )
    return found[0]


def _restore_summary(run: _Run, entry: BackupEntry) -> bytes:
    facts = run.header
    assert facts is not None
    if facts.status == "unchanged":
        text = f"unchanged: {facts.abs_path} already holds backup {entry.id}"
    else:
        text = f"restored {facts.abs_path} from backup {entry.id} ({facts.size} bytes"
        text += f", SHA-256 {facts.sha256} checked)"
        if facts.backup:
            text += f"; the content it replaced is in {facts.backup}"
    return (text + "\n").encode("utf-8", "surrogateescape")


# --- line edits ----------------------------------------------------------------------------


def line_change(edit: LineEdit) -> Change:
    """The change a :class:`LineEdit` makes. Raises :class:`InvalidRequest` at once for
    a line number below 1 or an action it does not know; the change raises
    :class:`EditNoLine` for a line the file does not have."""
    if edit.action not in ("replace", "insert", "delete", "append"):
        raise InvalidRequest(
            f"{edit.action!r} is not a line edit (replace, insert, delete, append)."
        )
    if edit.action != "append" and edit.line < 1:
        raise InvalidRequest(f"line numbers start at 1; {edit.line} names no line.")

    def change(path: str, before: bytes) -> bytes:
        if edit.action == "append":
            return before + edit.text
        lines = before.split(b"\n")
        ends = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        last = len(ends) + (1 if edit.action == "insert" else 0)
        if edit.line > last:
            raise EditNoLine(
                f"{path} has {len(ends)} lines, so there is no line {edit.line} to "
                f"{edit.action}{' before' if edit.action == 'insert' else ''}; it was not changed."
            )
        return b"".join(_lines_after(ends, edit))

    return change


def _lines_after(ends: list[bytes], edit: LineEdit) -> list[bytes]:
    """``ends`` (the file's lines, each with its line end) after ``edit``."""
    at = edit.line - 1
    text = edit.text if edit.text.endswith(b"\n") else edit.text + b"\n"
    if edit.action == "delete":
        return ends[:at] + ends[at + 1 :]
    if edit.action == "insert":
        if at == len(ends) and ends and not ends[-1].endswith(b"\n"):
            ends = [*ends[:-1], ends[-1] + b"\n"]  # a new last line, not glued to the old one
        return [*ends[:at], text, *ends[at:]]
    if not ends[at].endswith(b"\n") and not edit.text.endswith(b"\n"):
        text = edit.text  # the last line had no line end; its replacement gets none
    return [*ends[:at], text, *ends[at + 1 :]]

"""The audit log: one JSON line per call in the runtime directory, for the person.

``log.jsonl`` (mode 0600) gets a line for every command, REPL call and keys sent. When
it passes ``MAX_BYTES`` it becomes ``log.jsonl.1`` (replacing the older one), so the two
together never hold much more than twice that.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from .runtime import usable_private_dir

LOG_FILE = "log.jsonl"
MAX_BYTES = 1024 * 1024
MAX_COMMAND = 4000  # characters of a command kept in the log


def record(directory: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` with the current time. Never fails the call: a log that cannot
    be written is skipped, and so is one whose directory is not our own private one
    (:func:`~tmux_bridge.runtime.usable_private_dir`): it is checked before anything is
    written."""
    if not usable_private_dir(directory):
        return
    path = os.path.join(directory, LOG_FILE)
    command = entry.get("command")
    if isinstance(command, str) and len(command) > MAX_COMMAND:
        entry["command"] = command[:MAX_COMMAND] + f"... ({len(command)} characters)"
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


def read(directory: str, count: int | None) -> list[dict[str, Any]]:
    """The last ``count`` entries (all of them for ``None``), oldest first, from the
    rotated file too. Lines that are not JSON are skipped."""
    path = os.path.join(directory, LOG_FILE)
    lines: list[str] = []
    for name in (path + ".1", path):
        with (
            contextlib.suppress(FileNotFoundError),
            open(name, encoding="utf-8", errors="replace") as f,
        ):
            lines.extend(f.read().splitlines())
    if count is not None:
        lines = lines[-count:] if count > 0 else []
    entries = []
    for line in lines:
        with contextlib.suppress(ValueError):
            entries.append(json.loads(line))
    return entries


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")

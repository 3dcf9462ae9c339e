"""Output that fits a model: each stream of a result document capped at a number of
bytes, its head and tail kept around a marker that says how much was cut, and the whole
stream saved in a private file whose path is in the document.

The files (mode 0600) live in ``mcp-output`` in the runtime directory; those older than
a day are removed whenever another one is saved. The exit status and the other fields
are never touched.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from ..target import ensure_private_dir, write_private_file

DEFAULT_CAP = 64 * 1024  # bytes of each stream in a document
MIN_CAP, MAX_CAP = 1024, 16 * 1024 * 1024
KEEP_FOR = 24 * 3600  # seconds a saved stream is kept
DIRECTORY = "mcp-output"


def cap_stream(
    document: dict[str, Any], name: str, data: bytes, limit: int, runtime_dir: str
) -> None:
    """Cap ``document[name]`` (``stdout`` or ``stderr``, whose bytes are ``data``) at
    ``limit`` bytes: the first and last halves, decoded as UTF-8 (U+FFFD for what is
    not), around a marker; ``NAME_file`` is the file with all of it, ``NAME_bytes`` its
    size. Base64 beside the text goes (the file has the exact bytes). Nothing changes
    when ``data`` fits."""
    if len(data) <= limit:
        return
    path = save(runtime_dir, document.get("id") or os.urandom(5).hex(), name, data)
    end = _boundary(data, limit // 2, -1)
    start = _boundary(data, len(data) - (limit - limit // 2), +1)
    head = data[:end].decode("utf-8", "replace")
    tail = data[start:].decode("utf-8", "replace")
    marker = (
        f"\n[tmux-bridge: {start - end} bytes of {name} cut here, {len(data)} in all; the "
        f"whole {name} is in {path}]\n"
    )
    document[name] = head + marker + tail
    document.pop(name + "_b64", None)
    document[name + "_file"] = path
    document[name + "_bytes"] = len(data)


def _boundary(data: bytes, at: int, step: int) -> int:
    """``at`` moved by ``step`` (at most 3 times) off UTF-8 continuation bytes, so that
    no character is split by the cut."""
    for _ in range(3):
        if 0 < at < len(data) and 0x80 <= data[at] < 0xC0:
            at += step
    return at


def save(runtime_dir: str, call_id: str, name: str, data: bytes) -> str:
    """Save ``data`` as ``CALL_ID.NAME`` in the output directory (made 0700 when
    missing, checked otherwise); returns its path. Old files go first."""
    directory = os.path.join(runtime_dir, DIRECTORY)
    ensure_private_dir(runtime_dir)
    ensure_private_dir(directory)
    sweep(directory, time.time() - KEEP_FOR)
    path = os.path.join(directory, f"{call_id}.{name}")
    if os.path.lexists(path):  # the same call capped twice (never by the tools)
        path = os.path.join(directory, f"{call_id}-{os.urandom(3).hex()}.{name}")
    write_private_file(path, data)
    return path


def sweep(directory: str, before: float) -> None:
    """Remove the saved streams last changed before ``before`` (seconds since the epoch)."""
    with os.scandir(directory) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):  # gone meanwhile: another server swept it
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < before:
                    os.unlink(entry.path)

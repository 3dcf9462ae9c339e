"""Spool files: a job's output appended to private files, bounded, read from a cursor.

The job keeper appends what a command printed (:class:`SpoolWriter`); readers in other
processes read from the cursor they keep up to the size the file has at that moment
(:func:`read_span`), which is always whole data: the keeper only appends, and Linux
grows a file's size only once the bytes are in it.
"""

from __future__ import annotations

import os

DEFAULT_LIMIT = 1024**3  # bytes kept per job (both streams together); the rest is counted


class SpoolWriter:
    """Appends to one private spool file (0600, created exclusively), at most what
    ``budget`` still allows; what does not fit is counted in ``dropped``."""

    def __init__(self, path: str, budget: list[int]) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(path, flags, 0o600)
        self.budget = budget  # shared by the job's streams: [bytes left]
        self.dropped = 0

    def __call__(self, data: bytes) -> None:
        keep = data[: max(self.budget[0], 0)]
        self.dropped += len(data) - len(keep)
        self.budget[0] -= len(keep)
        view = memoryview(keep)
        while view:
            view = view[os.write(self.fd, view) :]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def spool_size(path: str) -> int:
    """The bytes in the spool file now (0 when it is missing)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def read_span(path: str, start: int, end: int) -> bytes:
    """The bytes of ``path`` from ``start`` up to ``end``."""
    if end <= start:
        return b""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def utf8_end(data: bytes) -> int:
    """Where ``data`` ends without cutting a UTF-8 character in two: its length, less
    the one to three bytes of a character whose remaining bytes have not come yet."""
    for back in range(1, min(4, len(data) + 1)):
        byte = data[-back]
        if byte < 0x80 or byte >= 0xF8:  # ASCII, or no UTF-8 at all
            return len(data)
        if byte >= 0xC0:  # the lead byte of the last character
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)

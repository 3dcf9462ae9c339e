"""Saved streams: the whole of a cut stdout or stderr, kept in private files to page through.

When a face cuts a stream to fit (:mod:`tmux_bridge.text.fit`), the whole stream goes to
``<runtime dir>/output/<id>.stdout`` (or ``.stderr``): mode 0600 in a 0700 folder,
written as it comes (never held whole in memory for this), named by the call's id once
the call is done. Nothing is saved for a stream that was not cut. Saving prunes the
folder: files older than :data:`KEEP_FOR` go, then the oldest until the folder holds at
most :data:`MAX_TOTAL` bytes. :func:`resolve` and :func:`read_page` read a saved stream
back; they refuse any file outside the folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable
from typing import Any

from ..errors import BridgeError, InvalidRequest, NoSavedOutput
from ..text.fit import Fitted, Limits, StreamFit, fit, joined
from ..tuples import NamedTuple
from .runtime import ensure_private_dir, write_all

DIRECTORY = "output"
KEEP_FOR = 24 * 3600  # seconds a saved stream is kept
MAX_TOTAL = 256 * 1024 * 1024  # bytes all saved streams may take together
STREAMS = ("stdout", "stderr")
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def output_dir(runtime_dir: str) -> str:
    """The folder of saved streams (made 0700 when missing, checked otherwise)."""
    directory = os.path.join(runtime_dir, DIRECTORY)
    ensure_private_dir(runtime_dir)
    ensure_private_dir(directory)
    return directory


def prune(directory: str, keep_for: float = KEEP_FOR, max_total: int = MAX_TOTAL) -> None:
    """Remove saved streams older than ``keep_for`` seconds, then the oldest until the
    rest take at most ``max_total`` bytes."""
    files: list[tuple[float, int, str]] = []
    before = time.time() - keep_for
    with os.scandir(directory) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):  # gone meanwhile: another call pruned it
                info = entry.stat(follow_symlinks=False)
                if not entry.is_file(follow_symlinks=False):
                    continue
                if info.st_mtime < before:
                    os.unlink(entry.path)
                else:
                    files.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= max_total:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
        total -= size


def _create(directory: str, stem: str, name: str) -> tuple[int, str]:
    """A new private file ``STEM.NAME`` (another name when it exists)."""
    path = os.path.join(directory, f"{stem}.{name}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o600), path
    except FileExistsError:
        path = os.path.join(directory, f"{stem}-{os.urandom(3).hex()}.{name}")
        return os.open(path, flags, 0o600), path


def save(runtime_dir: str, stem: str, name: str, data: bytes) -> str:
    """Save the whole stream ``data`` as ``STEM.NAME``; its path. Prunes first."""
    directory = output_dir(runtime_dir)
    prune(directory)
    fd, path = _create(directory, stem, name)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    return path


class FittedStream:
    """One stream cut to ``limits`` as it comes: the head goes to ``sink`` at once,
    the tail is held in a bounded ring, and from the moment a cut is certain the whole
    stream goes to a saved file. :meth:`finish` sends the cut line and the tail."""

    def __init__(
        self, runtime_dir: str, name: str, limits: Limits, sink: Callable[[bytes], None]
    ) -> None:
        self.runtime_dir, self.name, self.sink = runtime_dir, name, sink
        self.stream = StreamFit(limits)
        self.early: list[bytes] = []  # the stream until a cut is certain (bounded)
        self.fd: int | None = None
        self.path: str | None = None
        self.failed = False  # the file could not be written: the cut line says so
        self.sent = 0  # bytes of the head sent so far

    def __call__(self, data: bytes) -> None:
        head = self.stream.feed(data)
        if head:
            self.sent += len(head)
            self.sink(head)
        if self.fd is not None:
            self._write(data)
        elif self.failed:
            return  # nothing to save to: the cut line says so
        elif self.stream.cutting:
            self._open(data)
        else:
            self.early.append(data)

    def _open(self, data: bytes) -> None:
        early, self.early = b"".join(self.early) + data, []
        try:
            directory = output_dir(self.runtime_dir)
            prune(directory)
            self.fd, self.path = _create(directory, f".partial-{os.urandom(5).hex()}", self.name)
        except (OSError, BridgeError):
            self.failed = True
            return
        self._write(early)

    def _write(self, data: bytes) -> None:
        assert self.fd is not None
        try:
            write_all(self.fd, data)
        except OSError:  # a full disk, say: no half a stream left behind as if whole
            self._close()
            with contextlib.suppress(OSError):
                os.unlink(str(self.path))
            self.failed, self.path = True, None

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def finish(self, stem: str, who: str = "tmux-send") -> tuple[Fitted, str | None]:
        """Send what is left (the end of the head, the cut line, the tail) and name the
        saved file after ``stem`` (the call's id); the account and the file's path."""
        fitted = self.stream.finish()
        if fitted.truncated and self.fd is None and not self.failed:
            self._open(b"")  # cut at the end: the whole stream is still in ``early``
        self.early = []
        self._close()
        if self.path is not None:
            final = os.path.join(os.path.dirname(self.path), f"{stem}.{self.name}")
            if not os.path.lexists(final):
                os.replace(self.path, final)
                self.path = final
        rest = joined(self.name, fitted, self.path, who)[self.sent :]
        if rest:
            self.sink(rest)
        return fitted, self.path


def fit_document(
    document: dict[str, Any],
    name: str,
    data: bytes,
    limits: Limits,
    runtime_dir: str,
    who: str = "tmux-bridge",
) -> Fitted:
    """Cut ``document[name]`` (whose bytes are ``data``) to ``limits``: head, cut line
    and tail as UTF-8 text (U+FFFD for what is not), the whole saved; sets
    ``NAME_truncated``, ``NAME_file``, ``NAME_lines`` and ``NAME_bytes``. Base64
    beside a cut text goes (the file has the exact bytes)."""
    fitted = fit(data, limits)
    document[f"{name}_lines"] = fitted.lines
    document[f"{name}_bytes"] = fitted.bytes
    if not fitted.truncated:
        return fitted
    stem = document.get("id") or os.urandom(5).hex()
    path = save(runtime_dir, str(stem), name, data)
    document[f"{name}_truncated"] = True
    document[f"{name}_file"] = path
    document[name] = joined(name, fitted, path, who).decode("utf-8", "replace")
    document.pop(name + "_b64", None)
    return fitted


# --- reading back ----------------------------------------------------------------------


class Page(NamedTuple):
    """Lines ``offset`` to ``offset + len`` of a saved stream (``data``, exact bytes)."""

    path: str
    data: bytes
    offset: int
    lines: int  # lines in ``data``
    total_lines: int
    total_bytes: int

    @property
    def more(self) -> bool:
        return self.offset + self.lines < self.total_lines


def resolve(runtime_dir: str, path_or_id: str) -> str:
    """The saved stream ``path_or_id`` names: a path inside the output folder, or an id
    (``3f6b2a91c0`` for its stdout, ``3f6b2a91c0.stderr``). Raises
    :class:`InvalidRequest` for anything else, :class:`NoSavedOutput` when it is gone."""
    directory = os.path.realpath(os.path.join(runtime_dir, DIRECTORY))
    if "/" not in path_or_id:
        stem, _, stream = path_or_id.partition(".")
        if not _ID.fullmatch(stem) or stream not in ("", *STREAMS):
            raise InvalidRequest(
                f"{path_or_id!r} is neither a saved output's path nor an id such as "
                "3f6b2a91c0 or 3f6b2a91c0.stderr."
            )
        path_or_id = os.path.join(directory, f"{stem}.{stream or 'stdout'}")
    path = os.path.realpath(path_or_id)  # no symlink, no .. out of the folder
    if os.path.dirname(path) != directory:
        raise InvalidRequest(
            f"{path_or_id!r} is not a saved output: only the files in {directory} are "
            "read back (the paths a cut line or stdout_file gives)."
        )
    if not os.path.isfile(path):
        raise NoSavedOutput(
            f"no saved output {path}: it was never saved (nothing was cut), or it was "
            f"removed (saved streams are kept {KEEP_FOR // 3600} h)."
        )
    return path


def read_page(runtime_dir: str, path_or_id: str, offset: int, limit: int) -> Page:
    """Lines ``offset`` (from 0) to ``offset + limit`` of a saved stream, read without
    holding more than the page."""
    path = resolve(runtime_dir, path_or_id)
    kept: list[bytes] = []
    total = 0
    with open(path, "rb") as file:
        for index, line in enumerate(file):
            total = index + 1
            if offset <= index < offset + limit:
                kept.append(line)
        size = file.tell()
    return Page(path, b"".join(kept), offset, len(kept), total, size)


def _size(document: dict[str, Any]) -> int:
    """Bytes of the document's JSON text (as the MCP tools send it)."""
    import json

    return len(json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _shares(sizes: dict[str, int], budget: int) -> dict[str, int]:
    """Bytes for each stream out of ``budget``: a small stream keeps all of it, the
    others share the rest evenly."""
    shares: dict[str, int] = {}
    left = dict(sizes)
    while left:
        even = max(budget, 0) // len(left)
        small = {name: size for name, size in left.items() if size <= even}
        if not small:
            shares.update({name: even for name in left})
            break
        shares.update(small)
        budget -= sum(small.values())
        left = {name: size for name, size in left.items() if name not in small}
    return shares


def fit_document_within(
    document: dict[str, Any],
    streams: dict[str, bytes],
    max_document: int,
    runtime_dir: str,
    who: str = "tmux-bridge",
) -> None:
    """Cut the ``streams`` of ``document`` (name -> bytes) by the same rule as
    :func:`fit_document`, each by bytes, until the document's JSON text takes at most
    ``max_document`` bytes (an MCP result that a client keeps inline); the whole of a
    cut stream is saved. The other fields are never cut."""
    if sum(map(len, streams.values())) <= max_document and _size(document) <= max_document:
        return
    bare = {k: v for k, v in document.items() if not k.endswith("_b64")}
    base = _size({**bare, **{name: "" for name in streams}})
    stem = str(document.get("id") or "0" * 10)
    budget = max_document - base - 2 * 200  # the cut lines, besides their paths
    sizes = {name: len(data) for name, data in streams.items()}
    for _ in range(8):
        shares = _shares(sizes, budget)
        trial = dict(document)
        for name, data in streams.items():
            fitted = fit(data, Limits(max_bytes=shares[name]))
            if fitted.truncated:
                trial.pop(name + "_b64", None)
                path = os.path.join(runtime_dir, DIRECTORY, f"{stem}-000000.{name}")
                trial[name] = joined(name, fitted, path, who).decode("utf-8", "replace")
                trial[name + "_file"] = path
        size = _size(trial)
        if size <= max_document or budget <= 0:
            break
        # escapes (\n, \u0001) took more than a byte each: scale the budget by what the
        # streams took in the document against what they may take
        budget = budget * (max_document - base - 64) // max(size - base, 1) - 16
    for name, data in streams.items():
        fit_document(document, name, data, Limits(max_bytes=max(shares[name], 0)), runtime_dir, who)

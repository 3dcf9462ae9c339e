"""A remote terminal's input for a pane: VT bytes as keys, files dropped in, a size.

What a browser terminal (xterm.js) sends is what a terminal would: bytes, with escape
sequences for special keys. Known sequences become tmux key names (so that tmux encodes
them as the pane's program expects, e.g. in application cursor mode); everything else
goes byte for byte (``send-keys -H``). A file dropped on it is saved, and its one line
of text or its path pasted: never a line break, so nothing runs. A window is resized
only while nobody is attached to its session, and its ``window-size`` option is put
back right away, so the person's terminal is never shrunk or pinned to a browser's size;
:func:`give_back` returns the window to its own size when the browser is gone.
"""

from __future__ import annotations

import os
import re
import time

from ..errors import InvalidRequest
from ..infra.runtime import ensure_private_dir, write_private_file
from ..infra.tmux import Tmux, paste_commands, sequence
from ..text.seams import pasted_text
from .info import LIST_CLIENTS, people_attached
from .shapes import FitResult, Upload

MAX_UPLOAD = 8 * 1024 * 1024  # bytes of one file
MAX_INLINE = 256 * 1024  # text up to this size is pasted as it is
MIN_SIZE, MAX_COLS, MAX_ROWS = 2, 1000, 500

# VT sequences -> tmux key names (xterm's, in normal and application modes)
KEYS: dict[bytes, str] = {
    b"\x1b[A": "Up", b"\x1b[B": "Down", b"\x1b[C": "Right", b"\x1b[D": "Left",
    b"\x1bOA": "Up", b"\x1bOB": "Down", b"\x1bOC": "Right", b"\x1bOD": "Left",
    b"\x1b[H": "Home", b"\x1b[F": "End", b"\x1bOH": "Home", b"\x1bOF": "End",
    b"\x1b[1~": "Home", b"\x1b[4~": "End", b"\x1b[2~": "IC", b"\x1b[3~": "DC",
    b"\x1b[5~": "PPage", b"\x1b[6~": "NPage", b"\x1b[Z": "BTab",
    b"\x1bOP": "F1", b"\x1bOQ": "F2", b"\x1bOR": "F3", b"\x1bOS": "F4",
    b"\x1b[15~": "F5", b"\x1b[17~": "F6", b"\x1b[18~": "F7", b"\x1b[19~": "F8",
    b"\x1b[20~": "F9", b"\x1b[21~": "F10", b"\x1b[23~": "F11", b"\x1b[24~": "F12",
}  # fmt: skip
_KEY_RE = re.compile(b"|".join(re.escape(k) for k in sorted(KEYS, key=len, reverse=True)))


def key_commands(pane_id: str, data: bytes) -> list[list[str]]:
    """The ``send-keys`` commands that type ``data`` into ``pane_id``: key names for
    the known sequences, the other bytes exactly (hex)."""
    commands: list[list[str]] = []
    at = 0
    for found in _KEY_RE.finditer(data):
        if found.start() > at:
            commands.append(_hex(pane_id, data[at : found.start()]))
        commands.append(["send-keys", "-t", pane_id, KEYS[found.group()]])
        at = found.end()
    if at < len(data):
        commands.append(_hex(pane_id, data[at:]))
    return commands


def _hex(pane_id: str, chunk: bytes) -> list[str]:
    return ["send-keys", "-t", pane_id, "-H", *(f"{b:02x}" for b in chunk)]


def send_terminal_input(tmux: Tmux, pane_id: str, data: bytes) -> None:
    """Type ``data`` (VT bytes, at most 64 KiB) into the pane, in one tmux call."""
    if len(data) > 65536:
        raise InvalidRequest("send at most 64 KiB of keyboard input at a time.")
    commands = key_commands(pane_id, data)
    if commands:
        tmux.run(*sequence(["copy-mode", "-q", "-t", pane_id], *commands))


def check_size(cols: int, rows: int) -> None:
    """Raise :class:`InvalidRequest` unless a window may be ``cols`` x ``rows``."""
    if not (MIN_SIZE <= cols <= MAX_COLS and MIN_SIZE <= rows <= MAX_ROWS):
        raise InvalidRequest(
            f"a size is {MIN_SIZE}-{MAX_COLS} columns, {MIN_SIZE}-{MAX_ROWS} rows."
        )


def fit(tmux: Tmux, pane_id: str, cols: int, rows: int) -> FitResult:
    """Resize the pane's window to ``cols`` x ``rows`` when nobody is attached to its
    session (a person's terminal decides otherwise); the window's ``window-size``
    option is restored at once, so the next person to attach gets their own size.
    Returns whether it was applied and the pane's size now."""
    fields = "#{session_name}\t#{window_id}"
    listed = tmux.run_all(LIST_CLIENTS, ["display-message", "-p", "-t", pane_id, fields])
    people, lines = people_attached(listed.stdout.split("\n"))
    session, _, window = lines[0].partition("\t")
    applied = people.get(session, 0) == 0  # serve's control client is no person
    if applied:
        tmux.run(
            *sequence(
                ["resize-window", "-t", window, "-x", str(cols), "-y", str(rows)],
                ["set-option", "-w", "-u", "-t", window, "window-size"],
            )
        )
    size = tmux.run("display-message", "-p", "-t", pane_id, "#{pane_width} #{pane_height}")
    width, height = size.stdout.split()
    reason = None if applied else "a person is attached: their terminal keeps its size"
    return FitResult(applied, int(width), int(height), reason)


def give_back(tmux: Tmux, pane_id: str) -> FitResult:
    """Give the pane's window back the size it would have had without :func:`fit`: the
    largest attached client's, or with none attached, its session's ``default-size``
    (``resize-window -A``; tmux 3.3a keeps a detached window's size otherwise). The
    ``window-size`` option that ``resize-window`` sets is removed in the same call."""
    size = tmux.run(
        *sequence(
            ["resize-window", "-A", "-t", pane_id],  # a pane's id names its window
            ["set-option", "-w", "-u", "-t", pane_id, "window-size"],
            ["display-message", "-p", "-t", pane_id, "#{pane_width} #{pane_height}"],
        )
    )
    width, height = size.stdout.split()
    return FitResult(True, int(width), int(height), None)


def upload(tmux: Tmux, pane_id: str, directory: str, name: str, mime: str, data: bytes) -> Upload:
    """Save a file dropped on the terminal into ``directory`` (private, 0700; the file
    0600) and paste into the pane: a text of one line (UTF-8, up to 256 KiB; a final
    newline dropped) as that line, anything else (several lines, an image, other bytes)
    as the file's absolute path. Both through :func:`~tmux_bridge.text.seams.pasted_text`
    and without a newline, so nothing runs: whatever is in front (a shell without
    bracketed paste too) only gets a line to edit, until the person presses Enter.
    Raises :class:`InvalidRequest` past 8 MiB or for a bad name."""
    if len(data) > MAX_UPLOAD:
        raise InvalidRequest(f"a file may be at most {MAX_UPLOAD} bytes ({len(data)} sent).")
    base = os.path.basename(name.replace("\\", "/")).strip()
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", base)[:100].lstrip(".")
    if not safe:
        raise InvalidRequest("the file needs a name.")
    ensure_private_dir(directory)
    path = os.path.join(directory, f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{safe}")
    write_private_file(path, data)
    line = _as_line(mime, data)
    pasted = "text" if line is not None else ("image-path" if mime.startswith("image/") else "path")
    _paste(tmux, pane_id, line if line is not None else path)
    return Upload(path, len(data), pasted)


def _as_line(mime: str, data: bytes) -> str | None:
    """The file as one line of text to paste; ``None`` for anything else."""
    if mime.startswith("image/") or len(data) > MAX_INLINE or b"\x00" in data:
        return None
    try:
        text = pasted_text(data.decode("utf-8")).removesuffix("\n")
    except UnicodeDecodeError:
        return None
    return None if "\n" in text else text


def _paste(tmux: Tmux, pane_id: str, text: str) -> None:
    """Paste ``text`` (through the seam) into the pane, out of copy mode first."""
    buffer = f"tmux-bridge-upload-{time.monotonic_ns()}"
    load, paste = paste_commands(buffer, pane_id, bracketed=True)
    tmux.run(*load, stdin=pasted_text(text).encode())
    tmux.run(*sequence(["copy-mode", "-q", "-t", pane_id], paste))

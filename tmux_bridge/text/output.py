"""Turning what a program wrote to its terminal into what an agent should read. Pure code.

:class:`SentinelScanner` finds the end of a call in a relay stream. :class:`TerminalText`
removes terminal control sequences and reduces carriage-return redraws (progress bars)
to the text left visible on the line, working line by line on a stream.

Plain text (no ESC, CR, BS, BEL, SO or SI) passes through byte for byte: tabs, trailing
spaces, long lines, invalid UTF-8 and a missing final newline are kept exactly.
"""

from __future__ import annotations

import functools
import re

from .markers import HIDDEN_CLOSE, HIDDEN_OPEN

# Bytes that make a line need the slow path (ESC, CR, BS, BEL, SO, SI).
_SPECIAL_BYTES = (b"\x1b", b"\r", b"\x08", b"\x07", b"\x0e", b"\x0f")
_SPECIAL = re.compile(b"[" + b"".join(_SPECIAL_BYTES) + b"]")

# One control token inside a line (ECMA-48 shapes).
_TOKEN_PATTERN = (
    rb"\x1b\[(?P<csi_params>[0-?]*)[ -/]*(?P<csi_final>[@-~])"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    rb"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    rb"|\x1b[ -/]*[0-~]"  # other escapes: ESC ( B, ESC =, ESC 7, ESC M ...
    rb"|[\r\x08\x07\x0e\x0f]"
)


@functools.cache
def _token() -> re.Pattern[bytes]:
    """:data:`_TOKEN_PATTERN` compiled, on first use: compiling it takes about 1 ms, which
    a tmux-send call whose output holds no control byte never needs."""
    return re.compile(_TOKEN_PATTERN)


# An escape sequence that may still be incomplete at the end of what we have so far.
_INCOMPLETE_TAIL = re.compile(
    rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?\Z"
)

# A line with no newline yet is held back (a carriage return may still rewrite it); past
# this size it is passed on as it is, so memory stays bounded on endless lines.
MAX_HELD_LINE = 64 * 1024
MAX_ESCAPE = 4096  # an "escape sequence" longer than this is taken as text


class TerminalText:
    """Streaming cleaner: ``feed`` raw terminal bytes, get back clean text bytes.

    Complete lines come out as soon as their newline arrives; the unfinished last line is
    held until its newline or :meth:`finish`.
    """

    def __init__(self) -> None:
        self._held = b""  # the unfinished line, raw

    def feed(self, data: bytes) -> bytes:
        data = self._held + data if self._held else data
        cut = data.rfind(b"\n") + 1
        complete, rest = data[:cut], data[cut:]
        out = _clean_lines(complete) if _has_special(complete) else complete
        if len(rest) > MAX_HELD_LINE:
            # pass the line on, but keep a short unfinished escape sequence for later
            tail = _INCOMPLETE_TAIL.search(rest, len(rest) - MAX_ESCAPE)
            keep = tail.start() if tail else len(rest)
            out += render_line(rest[:keep])
            rest = rest[keep:]
        self._held = rest
        return out

    def pending(self) -> bytes:
        """The unfinished last line as it shows now (a prompt, say), without taking it."""
        return render_line(self._held) if self._held else b""

    def finish(self) -> bytes:
        """Everything still held, cleaned; the stream is over."""
        held, self._held = self._held, b""
        return render_line(held) if held else b""


def clean(data: bytes) -> bytes:
    """Clean a whole output at once."""
    text = TerminalText()
    return text.feed(data) + text.finish()


def _has_special(block: bytes) -> bool:
    """Whether ``block`` holds a byte of ``_SPECIAL``: six ``memchr`` scans, several times
    faster on a block of plain text (every relay read of a command's output) than the
    pattern's byte-by-byte search (2.7 against 19 ms for ``seq 1 1000000`` in 4 KiB
    reads); the pattern stays for single lines, where it is the quicker."""
    return any(byte in block for byte in _SPECIAL_BYTES)


def _clean_lines(block: bytes) -> bytes:
    lines = block.split(b"\n")
    # block ends with a newline, so the last element is empty
    return b"\n".join(render_line(line) if _SPECIAL.search(line) else line for line in lines)


def render_line(line: bytes) -> bytes:
    """The text a terminal would leave visible after drawing ``line`` (no newline in it).

    Carriage return moves to column 0 and later text overwrites; backspace and cursor
    left/right/column sequences move; erase-in-line blanks; every other control
    sequence is dropped. East Asian wide characters take two columns and a tab runs to
    the next multiple of 8, as on a terminal, but a tab is kept as a tab in the text.
    """
    if not _SPECIAL.search(line):
        return line
    row = _Row()
    pos = 0
    for match in _token().finditer(line):
        start, end = match.span()
        if start > pos:
            row.put(line[pos:start])
        pos = end
        token = match.group()
        if token == b"\r":
            row.col = 0
        elif token == b"\x08":
            row.col = max(row.col - 1, 0)
        elif match.group("csi_final") is not None:
            row.csi(match.group("csi_params"), match.group("csi_final"))
    if pos < len(line):
        row.put(line[pos:])
    return row.text()


_LEADING_NUMBER = re.compile(rb"\d+")
_CONTINUED = ""  # a cell covered by the wide character or tab to its left


class _Row:
    """One terminal row: a list of cells and a cursor column."""

    def __init__(self) -> None:
        self.cells: list[str | None] = []  # None: a blank nothing was written to
        self.col = 0

    def put(self, raw: bytes) -> None:
        # a lone ESC that starts no known sequence is dropped, the rest kept
        for ch in raw.replace(b"\x1b", b"").decode("utf-8", "surrogateescape"):
            if ch == "\t" and self.col < len(self.cells):
                self.col += 8 - self.col % 8  # a tab over text only moves the cursor
                continue
            width = 8 - self.col % 8 if ch == "\t" else _width(ch)
            self._clear(self.col, width)
            if self.col + width > len(self.cells):
                self.cells.extend([None] * (self.col + width - len(self.cells)))
            self.cells[self.col] = ch
            for i in range(self.col + 1, self.col + width):
                self.cells[i] = _CONTINUED
            self.col += width

    def _clear(self, col: int, width: int) -> None:
        """Blank whatever wide character or tab overlaps columns col..col+width-1."""
        cells = self.cells
        first = col
        while 0 < first < len(cells) and cells[first] == _CONTINUED:
            first -= 1
        last = col + width
        while last < len(cells) and cells[last] == _CONTINUED:
            last += 1
        for i in range(first, min(last, len(cells))):
            cells[i] = None

    def csi(self, params: bytes, final: bytes) -> None:
        if params.startswith((b"?", b">", b"<", b"=")):
            return  # private modes (cursor visibility, bracketed paste ...)
        digits = _LEADING_NUMBER.match(params)
        n = int(digits.group()) if digits else 0
        if final == b"C":  # cursor forward
            self.col += max(n, 1)
        elif final == b"D":  # cursor back
            self.col = max(self.col - max(n, 1), 0)
        elif final == b"G":  # cursor to column
            self.col = max(n, 1) - 1
        elif final == b"K":  # erase in line: 0 to the end, 1 to the start, 2 all
            if n == 0:
                self._clear(self.col, 1)
                del self.cells[self.col :]
            elif n == 1:
                self._clear(self.col, 1)
                for i in range(min(self.col + 1, len(self.cells))):
                    self.cells[i] = None
            elif n == 2:
                self.cells.clear()

    def text(self) -> bytes:
        cells = self.cells
        while cells and cells[-1] is None:
            cells.pop()
        return "".join(" " if c is None else c for c in cells).encode("utf-8", "surrogateescape")


def _width(ch: str) -> int:
    """Columns a character takes on a terminal: 2 for East Asian wide ones, else 1."""
    if ch < "\u1100":
        return 1
    import unicodedata  # only lines with redraws get here

    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


class SentinelScanner:
    """Finds this call's end sentinel in one relay stream, across chunk boundaries.

    ``feed`` returns the bytes that belong to the command's output; once the sentinel has
    been seen, ``body`` holds its text (``"done:0"``) and everything after it is ignored
    (a background job still writing).
    """

    def __init__(self, prefix: bytes, end: bytes) -> None:
        self._prefix = prefix
        self._end = end
        self._held = b""
        self.body: str | None = None

    @property
    def seen(self) -> bool:
        return self.body is not None

    def feed(self, data: bytes) -> bytes:
        if self.body is not None:
            return b""
        buf = self._held + data if self._held else data
        self._held = b""
        start = buf.find(self._prefix)
        if start >= 0:
            stop = buf.find(self._end, start + len(self._prefix))
            if stop >= 0:
                self.body = buf[start + len(self._prefix) : stop].decode("ascii", "replace")
            else:
                self._held = buf[start:]
            return buf[:start]
        # keep a tail that could be the beginning of the sentinel
        esc = buf.rfind(b"\x1b", max(0, len(buf) - len(self._prefix) + 1))
        if esc >= 0 and self._prefix.startswith(buf[esc:]):
            self._held = buf[esc:]
            return buf[:esc]
        return buf

    def leftover(self) -> bytes:
        """What was held as a possible sentinel start when the stream ended without one."""
        held, self._held = self._held, b""
        return held


HIDDEN_END = HIDDEN_CLOSE.encode()  # what ends a hidden marker
HIDDEN_START = HIDDEN_OPEN.encode()  # what starts one


class MarkerScanner:
    """Cuts one evaluation's output out of a pane's raw output stream.

    The stream (from ``tmux pipe-pane``) holds everything the terminal was sent: the
    echo of what was typed, prompts, then the line with the start marker, the output,
    and the end marker, which the REPL itself printed after ``lead`` (a line end of its
    own). ``feed`` returns only the output between the markers, as soon as it cannot be
    part of ``lead`` and the end marker; ``ended`` and ``status`` tell when it has come.

    A REPL that can print a bare carriage return leads with ``"\r\n"``, which the
    terminal turns into ``"\r\r\n"``: ordinary line ends (``"\r\n"``) then stream at
    once. Others lead with ``"\n"`` (``"\r\n"``), so each line end waits for the next byte.
    """

    def __init__(
        self, start: bytes, end: re.Pattern[bytes], end_prefix: bytes, lead: bytes = b"\r\n"
    ) -> None:
        self._start = start
        self._end = end
        self._lead = lead
        # what may come before the end marker: the lead, or a hidden marker's start
        # (the runner of a command prints its hidden end marker right after the output)
        self._tails = (lead + end_prefix, HIDDEN_START + end_prefix)
        self._buf = b""
        self.started = False
        self.ended = False
        self.status: int | None = None

    def feed(self, data: bytes) -> bytes:
        if self.ended:
            return b""
        buf = self._buf + data
        if not self.started:
            at = buf.find(self._start)
            if at < 0:
                self._buf = buf[-len(self._start) :]
                return b""
            after = at + len(self._start)
            if buf[after : after + 1] == HIDDEN_END:  # a hidden marker: output follows it
                line_end = after
            else:
                line_end = buf.find(b"\n", at) if len(buf) > after else -1
            if line_end < 0:
                self._buf = buf[at:]
                return b""
            self.started = True
            buf = buf[line_end + 1 :]
        match = self._end.search(buf)
        if match:
            self.ended = True
            self._buf = b""
            if match.group(1) is not None:
                self.status = int(match.group(1))
            return self._output_before(buf[: match.start()])
        keep = min(_held_from(buf, tail) for tail in self._tails)
        self._buf = buf[keep:]
        return buf[:keep]

    def _output_before(self, before: bytes) -> bytes:
        """The output in what came before the end marker: less the lead, or less a
        hidden marker's start (the output then is exactly what the program printed),
        or less the line end a bare marker is printed after."""
        if before.endswith(self._lead):
            return before[: -len(self._lead)]
        if before.endswith(HIDDEN_START):
            return before[: -len(HIDDEN_START)]
        return _drop_line_end(before)

    def flush(self) -> bytes:
        """What is held back, for a stream that ends without the end marker."""
        held, self._buf = (self._buf if self.started else b""), b""
        return held


# What may follow an end marker's prefix before the marker is whole: its status so far
# (`` 0``), then up to two of its closing underscores (markers.end_pattern).
_STATUS_SO_FAR = re.compile(rb"(?: \d*)?_{0,2}")


def _held_from(buf: bytes, tail: bytes) -> int:
    """Where in ``buf`` what may yet be ``tail`` and an end marker starts (its length
    when nothing may)."""
    keep = len(buf) - _overlap(buf, tail)
    marker = buf.rfind(tail)  # an end marker cut after its prefix, in two reads
    if marker >= 0 and _STATUS_SO_FAR.fullmatch(buf, marker + len(tail)):
        keep = marker
    return keep


def _overlap(data: bytes, tail: bytes) -> int:
    """Length of the longest end of ``data`` that ``tail`` starts with."""
    for size in range(min(len(data), len(tail)), 0, -1):
        if tail.startswith(data[-size:]):
            return size
    return 0


class PassThrough:
    """A scanner for a stream without markers: everything is output, nothing ends it."""

    started = True
    ended = False
    status: int | None = None

    def feed(self, data: bytes) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""


def _drop_line_end(data: bytes) -> bytes:
    """The end marker is printed after a newline of its own: remove that one."""
    if data.endswith(b"\r\n"):
        return data[:-2]
    if data.endswith(b"\n"):
        return data[:-1]
    return data

"""Output that fits: a stream's head, one cut line and its tail, by line and byte limits. Pure.

The one rule every face uses (tmux-send's ``--first/--last/--max-bytes``, the MCP tools'
``max_output``, the HTTP API): :class:`StreamFit` takes a stream as it comes and gives
back the head at once; it holds only a bounded ring for the tail, never the middle.
:func:`fit` is the same over a whole stream. Limits:

- ``first``/``last``: lines kept from the start and from the end. When only one is
  given the other is 0; when neither is, lines are not limited.
- ``max_bytes``: bytes of head and tail together. The head gets at most half (all of
  it when ``last`` is 0, none when ``first`` is 0); the tail gets what the head left.

Nothing is cut when the stream has at most ``first + last`` lines and ``max_bytes``
bytes. A cut never splits a UTF-8 character: the head ends before a character the
budget would split, the tail starts after such a character's continuation bytes. A
line is a run of bytes ended by a newline, or the last bytes when no newline ends them.
"""

from __future__ import annotations

from ..tuples import NamedTuple

UNLIMITED = 1 << 62
_TRIM_SLACK = 64 * 1024  # bytes the ring may grow past its last trim before the next


class Limits(NamedTuple):
    """How much of a stream to show; ``None`` for no limit."""

    first: int | None = None
    last: int | None = None
    max_bytes: int | None = None

    @property
    def active(self) -> bool:
        return self != Limits()

    def lines(self) -> tuple[int, int]:
        """Lines kept from the start and from the end (``UNLIMITED`` for no limit)."""
        if self.first is None and self.last is None:
            return UNLIMITED, UNLIMITED
        return self.first or 0, self.last or 0

    def head_bytes(self) -> int:
        """The head's byte budget: half of ``max_bytes``, all of it with no tail, none
        with no head."""
        budget = UNLIMITED if self.max_bytes is None else self.max_bytes
        first, last = self.lines()
        if last == 0:
            return budget
        if first == 0:
            return 0
        return budget // 2


class Fitted(NamedTuple):
    """A stream cut to its limits: ``head`` and ``tail`` are shown, ``cut_bytes`` bytes
    holding ``cut_lines`` newlines between them are not; ``lines`` and ``bytes`` count
    the whole stream."""

    head: bytes
    tail: bytes
    lines: int
    bytes: int
    cut_lines: int
    cut_bytes: int

    @property
    def truncated(self) -> bool:
        return self.cut_bytes > 0


def count_lines(data: bytes) -> int:
    """Lines of ``data``: its newlines, and one more for unended bytes after the last."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _char_start(data: bytes | bytearray, end: int) -> int:
    """``end`` moved back so that ``data[:end]`` ends with no partial UTF-8 character."""
    for back in range(1, 4):
        at = end - back
        if at < 0:
            break
        byte = data[at]
        if byte < 0x80:
            return end
        if byte >= 0xC0:  # a lead byte: its character needs this many bytes
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end if at + size <= end else at
    return end


def _char_after(data: bytes | bytearray, start: int) -> int:
    """``start`` moved forward past at most 3 UTF-8 continuation bytes."""
    for _ in range(3):
        if start < len(data) and 0x80 <= data[start] < 0xC0:
            start += 1
    return start


def _nth_newline_end(data: bytes | bytearray, count: int) -> int:
    """The index just past the ``count``-th newline of ``data`` (``len(data)`` when it
    has fewer)."""
    at = 0
    for _ in range(count):
        found = data.find(b"\n", at)
        if found < 0:
            return len(data)
        at = found + 1
    return at


def _last_lines_start(data: bytes | bytearray, count: int) -> int:
    """Where the last ``count`` lines of ``data`` begin (0 when it has no more)."""
    if count >= UNLIMITED:
        return 0
    end = len(data) - (1 if data.endswith(b"\n") else 0)
    for _ in range(count):
        found = data.rfind(b"\n", 0, end)
        if found < 0:
            return 0
        end = found
    return end + 1 if count else len(data)


class StreamFit:
    """Fit one stream as it comes: :meth:`feed` gives the part of the head it completes;
    :meth:`finish` the whole account. Memory: the head, and a ring of at most the last
    ``last`` lines and the tail's bytes (plus 64 KiB of slack)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.first, self.last = limits.lines()
        self.max_bytes = UNLIMITED if limits.max_bytes is None else limits.max_bytes
        self.head_budget = limits.head_bytes()
        self.head = bytearray()
        self.head_lines = 0
        self.head_done = False
        self.ring = bytearray()
        self.dropped_bytes = 0
        self.dropped_newlines = 0
        self.total = 0
        self.newlines = 0
        self.ends_with_newline = False
        self._trimmed_at = 0
        self._partial = b""  # the start of a character the head may still take

    @property
    def cutting(self) -> bool:
        """Whether some of the stream is certain not to be shown."""
        return self.dropped_bytes > 0

    def feed(self, data: bytes) -> bytes:
        """Take the next bytes of the stream; return those that complete the head so far
        (a character split by ``data``'s end is held until its last byte comes)."""
        if not data:
            return b""
        self.total += len(data)
        self.newlines += data.count(b"\n")
        self.ends_with_newline = data.endswith(b"\n")
        if not self.head_done:
            data, self._partial = self._partial + data, b""
            taken = self._take_head(data)
            data = data[len(taken) :]
            if not self.head_done:
                self._partial, data = data, b""
        else:
            taken = b""
        if data:
            self.ring += data
            if len(self.ring) > 2 * self._trimmed_at + _TRIM_SLACK:
                self._trim()
        return taken

    def _take_head(self, data: bytes) -> bytes:
        """The head's part of ``data`` (which starts on a character); marks the head
        done when a limit ends it inside ``data``."""
        line_end = _nth_newline_end(data, self.first - self.head_lines)
        byte_end = max(self.head_budget - len(self.head), 0)
        end = min(line_end, byte_end, len(data))
        if end < len(data) or line_end < len(data) or byte_end <= len(data):
            self.head_done = True
        taken = data[: _char_start(data, end)]  # never a split character
        self.head += taken
        self.head_lines += taken.count(b"\n")
        return taken

    def _tail_start(self) -> int:
        start = _last_lines_start(self.ring, self.last)
        start = max(start, len(self.ring) - max(self.max_bytes - len(self.head), 0))
        return _char_after(self.ring, start)

    def _fits(self) -> bool:
        """Whether the stream so far is short enough to be shown whole."""
        lines = self.newlines + (0 if self.ends_with_newline or not self.total else 1)
        return self.total <= self.max_bytes and lines <= self.first + self.last

    def _trim(self) -> None:
        if self._fits():  # shown whole unless more comes
            self._trimmed_at = len(self.ring)
            return
        start = self._tail_start()
        if start:
            self.dropped_bytes += start
            self.dropped_newlines += self.ring.count(b"\n", 0, start)
            del self.ring[:start]
        self._trimmed_at = len(self.ring)

    def finish(self) -> Fitted:
        """The whole account; the stream is over. ``head`` is the whole head: what
        :meth:`feed` gave, and a last partial character it held."""
        self.head += self._partial
        self._partial = b""
        self._trim()
        lines = self.newlines + (1 if self.total and not self.ends_with_newline else 0)
        return Fitted(
            bytes(self.head), bytes(self.ring), lines, self.total,
            self.dropped_newlines, self.dropped_bytes,
        )  # fmt: skip


def fit(data: bytes, limits: Limits) -> Fitted:
    """The head, tail and counts of the whole stream ``data`` under ``limits``."""
    stream = StreamFit(limits)
    stream.feed(data)
    return stream.finish()


def cut_line(name: str, fitted: Fitted, path: str | None, who: str = "tmux-send") -> bytes:
    """The one line that stands for what was cut: how many lines and bytes of ``name``
    (stdout or stderr) are not shown, and the file holding all of it (``path``)."""
    lines = "line" if fitted.cut_lines == 1 else "lines"
    where = f"all of it is in {path}" if path else "it could not be saved"
    text = (
        f"[{who}: {fitted.cut_lines:,} {lines} ({fitted.cut_bytes:,} bytes) of {name} "
        f"not shown (truncated); {where}]\n"
    )
    return text.encode()


def joined(name: str, fitted: Fitted, path: str | None, who: str = "tmux-send") -> bytes:
    """Head, cut line (on a line of its own) and tail; the stream itself when uncut."""
    if not fitted.truncated:
        return fitted.head + fitted.tail
    lead = b"\n" if fitted.head and not fitted.head.endswith(b"\n") else b""
    return fitted.head + lead + cut_line(name, fitted, path, who) + fitted.tail

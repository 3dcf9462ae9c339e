"""Terminal bytes in, the text a terminal would leave visible out. No tmux needed.

Expected values are what a terminal (tmux, xterm) shows after drawing the input, worked
out by hand; the few cases checked against a real tmux pane say so.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from tmux_bridge.calls.stream import repl_part
from tmux_bridge.text.output import MAX_HELD_LINE, SentinelScanner, TerminalText, clean, render_line


class LineCase(NamedTuple):
    test_id: str
    raw: bytes  # one line as the program wrote it, no newline
    visible: bytes


LINE_CASES = [
    # plain text passes through byte for byte
    LineCase("empty", b"", b""),
    LineCase("plain-ascii", b"hello world", b"hello world"),
    LineCase("tabs", b"a\tb\t\tc", b"a\tb\t\tc"),
    LineCase("trailing-spaces", b"trail   ", b"trail   "),
    LineCase("invalid-utf8", b"\xff\xfe bad \xc3( bytes", b"\xff\xfe bad \xc3( bytes"),
    LineCase("nul", b"a\x00b", b"a\x00b"),
    LineCase("utf8", "héllo 日本語 😀".encode(), "héllo 日本語 😀".encode()),
    # SGR colours and attributes
    LineCase("sgr-basic", b"\x1b[1;31mred\x1b[0m plain", b"red plain"),
    LineCase("sgr-short-reset", b"\x1b[mx\x1b[m", b"x"),
    LineCase("sgr-256", b"\x1b[38;5;196mhot\x1b[39m", b"hot"),
    LineCase("sgr-truecolor", b"\x1b[38;2;255;128;0morange\x1b[0m", b"orange"),
    LineCase("sgr-colon-params", b"\x1b[4:3mcurly\x1b[4:0m", b"curly"),
    LineCase("sgr-keeps-tabs-and-spaces", b"\x1b[1ma\tb  \x1b[0m", b"a\tb  "),
    LineCase("sgr-keeps-invalid-utf8", b"\xff\x1b[1mbold\x1b[0m\xfe", b"\xffbold\xfe"),
    LineCase("sgr-keeps-nul", b"\x1b[1ma\x00b", b"a\x00b"),
    # CSI private modes
    LineCase("cursor-hide-show", b"\x1b[?25lbusy\x1b[?25h", b"busy"),
    LineCase("bracketed-paste", b"\x1b[?2004h$ \x1b[?2004l", b"$ "),
    LineCase("modify-other-keys", b"\x1b[>4;1mkeys\x1b[>4m", b"keys"),
    # OSC, ended by BEL or by ST (ESC \)
    LineCase("osc-title-bel", b"\x1b]0;my title\x07text", b"text"),
    LineCase("osc-cwd-bel", b"\x1b]7;file://host/tmp\x07$ ", b"$ "),
    LineCase(
        "osc-hyperlink-st",
        b"\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\ after",
        b"link after",
    ),
    # DCS, APC, PM and SOS strings, ended by ST
    LineCase("dcs", b"\x1bP1$r0m\x1b\\after", b"after"),
    LineCase("apc", b"before\x1b_tmux-send:abc:done:0\x1b\\after", b"beforeafter"),
    LineCase("pm-and-sos", b"\x1b^private\x1b\\x\x1bXsos\x1b\\y", b"xy"),
    # two-byte escapes and character set designation
    LineCase("keypad-modes", b"\x1b=app\x1b>norm", b"appnorm"),
    LineCase("charset", b"\x1b(Bascii\x1b)0", b"ascii"),
    # BEL, SO, SI make no characters
    LineCase("bel-so-si", b"ding\x07 \x0eline\x0f drawing", b"ding line drawing"),
    # carriage return: back to column 0, later text overwrites without erasing
    LineCase("cr-longer", b"abc\rWXYZ", b"WXYZ"),
    LineCase("cr-shorter", b"abcdef\rXY", b"XYcdef"),
    LineCase("cr-progress", b"  0%\r 50%\r100%", b"100%"),
    LineCase("cr-then-erase", b"downloading...\r\x1b[Kdone", b"done"),
    LineCase("cr-at-end", b"abc\r", b"abc"),
    LineCase("cr-only", b"\r\r", b""),
    LineCase("cr-with-colours", b"\x1b[32m 10%\x1b[0m\r\x1b[32m100%\x1b[0m", b"100%"),
    # backspace: one column left, never past column 0
    LineCase("backspace", b"abc\x08\x08X", b"aXc"),
    LineCase("backspace-at-col0", b"\x08\x08ab", b"ab"),
    LineCase("backspace-at-end", b"ab\x08", b"ab"),
    LineCase("overstrike-bold", b"b\x08bo\x08ol\x08ld\x08d", b"bold"),
    # CSI K: erase in line (the cursor does not move); checked against a tmux pane
    LineCase("erase-to-end", b"abcdef\x1b[3D\x1b[K", b"abc"),
    LineCase("erase-to-end-0", b"abcdef\x1b[3D\x1b[0K", b"abc"),
    LineCase("erase-at-end-of-text", b"abc\x1b[K", b"abc"),
    LineCase("erase-to-start", b"abcdef\x1b[3D\x1b[1K", b"    ef"),
    LineCase("erase-whole-line", b"abcdef\x1b[2Kxy", b"      xy"),
    LineCase("erase-whole-line-then-cr", b"abcdef\x1b[2K\rxy", b"xy"),
    # CSI C / D / G: cursor forward, back, to column (1-based)
    LineCase("cursor-forward", b"a\x1b[3Cb", b"a   b"),
    LineCase("cursor-forward-default", b"a\x1b[Cb", b"a b"),
    LineCase("cursor-forward-zero-is-one", b"a\x1b[0Cb", b"a b"),
    LineCase("cursor-forward-over-text", b"abcdef\r\x1b[2CX", b"abXdef"),
    LineCase("cursor-forward-writes-nothing", b"ab\x1b[5C", b"ab"),
    LineCase("cursor-back", b"abc\x1b[2DX", b"aXc"),
    LineCase("cursor-back-past-start", b"ab\x1b[10DX", b"Xb"),
    LineCase("cursor-column", b"abcdef\x1b[3GX", b"abXdef"),
    LineCase("cursor-column-default", b"abc\x1b[GX", b"Xbc"),
    LineCase("cursor-column-past-end", b"ab\x1b[6GX", b"ab   X"),
    # multibyte and wide characters with carriage return
    LineCase("multibyte-cr", "héllo\rH".encode(), "Héllo".encode()),
    LineCase("multibyte-progress", "ñandú  50%\rñandú 100%".encode(), "ñandú 100%".encode()),
    LineCase("wide-cr-same-text", "日本  10%\r日本 100%".encode(), "日本 100%".encode()),
    LineCase(
        # checked against a tmux pane: `a` over the left half of 日 blanks all of it
        "wide-cr-partial-overwrite",
        "日本語\rab".encode(),
        "ab本語".encode(),
    ),
    LineCase(
        # checked against a tmux pane: a tab moves the cursor, it writes nothing
        "tab-after-cr",
        b"abcdefghij\r\tX",
        b"abcdefghXj",
    ),
]


class TextCase(NamedTuple):
    test_id: str
    raw: bytes
    visible: bytes


TEXT_CASES = [
    TextCase("only-newline", b"\n", b"\n"),
    TextCase("blank-lines", b"\n\n\x1b[0m\n", b"\n\n\n"),
    TextCase("crlf", b"one\r\ntwo\r\n", b"one\ntwo\n"),
    TextCase("crlf-no-final-newline", b"one\r\ntwo", b"one\ntwo"),
    TextCase("lf-cr", b"one\n\rtwo\n", b"one\ntwo\n"),
    TextCase("progress-then-lines", b"10%\r100%\ndone\n", b"100%\ndone\n"),
    TextCase("cr-stays-on-its-line", b"first\nab\rX\n", b"first\nXb\n"),
    TextCase("erase-stays-on-its-line", b"keep\n\x1b[2Kgone\n", b"keep\ngone\n"),
    TextCase(
        "plain-and-special-lines",
        b"plain\t \n\x1b[1mbold\x1b[0m\n\xff\x00\n",
        b"plain\t \nbold\n\xff\x00\n",
    ),
    TextCase("no-final-newline-special", b"a\nb\x1b[1mc", b"a\nbc"),
]


LINE_IDS = [case.test_id for case in LINE_CASES]


@pytest.mark.parametrize("case", LINE_CASES, ids=LINE_IDS)
def test_render_line(case: LineCase) -> None:
    assert render_line(case.raw) == case.visible


@pytest.mark.parametrize("case", LINE_CASES, ids=LINE_IDS)
def test_clean_line(case: LineCase) -> None:
    assert clean(case.raw) == case.visible
    assert clean(case.raw + b"\n") == case.visible + b"\n"


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c.test_id for c in TEXT_CASES])
def test_clean_text(case: TextCase) -> None:
    assert clean(case.raw) == case.visible


# --- streaming -------------------------------------------------------------------------


def _stream(chunks: list[bytes]) -> bytes:
    text = TerminalText()
    return b"".join(text.feed(chunk) for chunk in chunks) + text.finish()


class StreamCase(NamedTuple):
    test_id: str
    raw: bytes
    visible: bytes


# Each line case twice, the second time without a final newline (held until finish()),
# so every split lands in an escape sequence or a UTF-8 character somewhere.
STREAM_CASES = [
    StreamCase(c.test_id, c.raw + b"\n" + c.raw, c.visible + b"\n" + c.visible) for c in LINE_CASES
] + [StreamCase(c.test_id, c.raw, c.visible) for c in TEXT_CASES]


@pytest.mark.parametrize(
    "case",
    STREAM_CASES,
    ids=[case.test_id for case in STREAM_CASES],
)
def test_stream_split_anywhere(case: StreamCase) -> None:
    whole = clean(case.raw)
    assert whole == case.visible
    for cut in range(len(case.raw) + 1):
        pieces = [case.raw[:cut], case.raw[cut:]]
        assert _stream(pieces) == whole, f"split at byte {cut}"
    assert _stream([bytes([byte]) for byte in case.raw]) == whole, "byte by byte"


def test_stream_split_inside_escape_and_utf8() -> None:
    # the cut points fall inside ESC [ 3 1 m, inside é and inside the OSC terminator
    raw = "\x1b[31mhé\x1b[0m\x1b]0;t\x1b\\!\n".encode()
    text = TerminalText()
    out = [text.feed(raw[:3]), text.feed(raw[3:7]), text.feed(raw[7:18]), text.feed(raw[18:])]
    assert b"".join(out) + text.finish() == "hé!\n".encode()
    assert out[:3] == [b"", b"", b""]  # nothing comes out before the newline


def test_stream_complete_lines_come_out_at_once() -> None:
    text = TerminalText()
    assert text.feed(b"a\x1b[1mb\nc") == b"ab\n"
    assert text.feed(b"d\n") == b"cd\n"
    assert text.finish() == b""


def test_stream_unfinished_line_held_until_finish() -> None:
    text = TerminalText()
    assert text.feed(b"done\n 50%") == b"done\n"
    assert text.feed(b"\r100%") == b""  # a carriage return may still rewrite it
    assert text.finish() == b"100%"
    assert text.finish() == b""


def test_stream_crlf_split_between_cr_and_lf() -> None:
    text = TerminalText()
    assert text.feed(b"one\r") == b""
    assert text.feed(b"\ntwo\r") == b"one\n"
    assert text.feed(b"\n") == b"two\n"


# What each byte leaves of "ab" + byte + "c" on a terminal; every byte not named here is
# text and stays. ESC c is a whole sequence (RIS): both go.
_ONE_BYTE_SHOWS = {
    0x1B: b"ab",
    0x0D: b"cb",  # carriage return: "c" overwrites "a"
    0x08: b"ac",  # backspace: "c" overwrites "b"
    0x07: b"abc",  # BEL, SO, SI draw nothing
    0x0E: b"abc",
    0x0F: b"abc",
}


@pytest.mark.parametrize("byte", [b for b in range(256) if b != 0x0A])
def test_every_byte_in_a_block_of_plain_lines(byte: int) -> None:
    """A relay read is a block of whole lines, looked at once for a byte that needs
    cleaning: each of those bytes is found wherever it is in the block."""
    plain = b"".join(b"%d\n" % n for n in range(2000))  # about 9 KB of plain lines
    line = b"ab" + bytes([byte]) + b"c"
    visible = _ONE_BYTE_SHOWS.get(byte, line)
    for block, shows in (
        (plain + line + b"\n", plain + visible + b"\n"),
        (line + b"\n" + plain, visible + b"\n" + plain),
    ):
        text = TerminalText()
        assert text.feed(block) + text.finish() == shows


# --- memory bound on endless lines -----------------------------------------------------


class EndlessCase(NamedTuple):
    test_id: str
    unit: bytes  # repeated to make one line of about 1 MB with no newline
    visible_unit: bytes
    chunk_size: int  # odd sizes make chunks end inside escapes and characters


ENDLESS_CASES = [
    EndlessCase("plain", b"x" * 4096, b"x" * 4096, 4096),
    EndlessCase("sgr-split", b"y" * 4092 + b"\x1b[1m", b"y" * 4092, 4093),
    EndlessCase(
        "utf8-and-sgr-split",
        ("é" * 2000 + "\x1b[0m").encode(),
        ("é" * 2000).encode(),
        4095,
    ),
]


@pytest.mark.parametrize("case", ENDLESS_CASES, ids=[c.test_id for c in ENDLESS_CASES])
def test_endless_line_is_passed_on(case: EndlessCase) -> None:
    count = (1 << 20) // len(case.unit)
    data = case.unit * count
    expected = case.visible_unit * count
    text = TerminalText()
    before_finish = bytearray()
    for start in range(0, len(data), case.chunk_size):
        before_finish += text.feed(data[start : start + case.chunk_size])
        assert len(text._held) <= MAX_HELD_LINE
    # all but at most MAX_HELD_LINE bytes came out before the stream ended
    assert len(expected) - len(before_finish) <= MAX_HELD_LINE
    assert bytes(before_finish) + text.finish() == expected


@pytest.mark.parametrize(
    "opening", [b"\x1b]0;", b"\x1bP", b"\x1b "], ids=["osc", "dcs", "esc-intermediate"]
)
def test_endless_unterminated_string_is_not_held(opening: bytes) -> None:
    text = TerminalText()
    text.feed(opening)
    for _ in range(256):  # 1 MB without a newline, a terminator or another ESC
        text.feed(b" " * 4096)
        assert len(text._held) <= MAX_HELD_LINE + 4096
    text.finish()


# --- sentinel scanner ------------------------------------------------------------------

PREFIX = b"\x1b_tmux-send:0123abcd:"
END = b"\x1b\\"
SENTINEL = PREFIX + b"done:0" + END


def _scan(chunks: list[bytes]) -> tuple[bytes, str | None]:
    """Everything the scanner passes on (including the leftover at the end), and body."""
    scanner = SentinelScanner(PREFIX, END)
    out = b"".join(scanner.feed(chunk) for chunk in chunks)
    return out + scanner.leftover(), scanner.body


def test_sentinel_whole() -> None:
    scanner = SentinelScanner(PREFIX, END)
    assert not scanner.seen
    assert scanner.feed(b"output\n" + SENTINEL) == b"output\n"
    assert scanner.seen
    assert scanner.body == "done:0"
    assert scanner.leftover() == b""


def test_sentinel_alone() -> None:
    assert _scan([SENTINEL]) == (b"", "done:0")


def test_sentinel_split_at_every_offset() -> None:
    data = b"out \x1b[1mput\x1b[0m\n" + PREFIX + b"exit:3" + END + b"late background output"
    for cut in range(len(data) + 1):
        assert _scan([data[:cut], data[cut:]]) == (
            b"out \x1b[1mput\x1b[0m\n",
            "exit:3",
        ), f"split at byte {cut}"
    assert _scan([bytes([byte]) for byte in data]) == (b"out \x1b[1mput\x1b[0m\n", "exit:3")


def test_sentinel_output_comes_out_before_the_sentinel_arrives() -> None:
    scanner = SentinelScanner(PREFIX, END)
    assert scanner.feed(b"first ") == b"first "
    assert scanner.feed(b"second" + PREFIX[:4]) == b"second"
    assert scanner.feed(PREFIX[4:] + b"done:1") == b""
    assert not scanner.seen
    assert scanner.feed(END) == b""
    assert scanner.body == "done:1"


def test_sentinel_bytes_after_it_ignored() -> None:
    scanner = SentinelScanner(PREFIX, END)
    assert scanner.feed(b"a" + SENTINEL + b"after") == b"a"
    assert scanner.feed(b"more " + SENTINEL) == b""
    assert scanner.body == "done:0"
    assert scanner.leftover() == b""


def test_sentinel_first_one_wins() -> None:
    scanner = SentinelScanner(PREFIX, END)
    scanner.feed(PREFIX + b"done:5" + END + PREFIX + b"exit:0" + END)
    assert scanner.body == "done:5"


class PassCase(NamedTuple):
    test_id: str
    data: bytes


# Output without this call's sentinel: all of it comes through, in order.
PASS_CASES = [
    PassCase("lone-esc-at-end", b"abc\x1b"),
    PassCase("lone-esc-then-text", b"abc\x1b[0mxyz\x1b"),
    PassCase("prefix-start-at-end", b"out" + PREFIX[:5]),
    PassCase("prefix-all-but-last-at-end", b"out" + PREFIX[:-1]),
    PassCase("prefix-start-then-other", b"out" + PREFIX[:6] + b"Q more"),
    PassCase("other-call-sentinel", b"x\x1b_tmux-send:ffffffff:done:0\x1b\\y"),
    PassCase("apc-and-esc-backslash", b"\x1b_other\x1b\\tail\x1b\\"),
    PassCase("two-escs", b"\x1b\x1b"),
]


@pytest.mark.parametrize("case", PASS_CASES, ids=[c.test_id for c in PASS_CASES])
def test_sentinel_absent_output_passes_through(case: PassCase) -> None:
    assert _scan([case.data]) == (case.data, None)
    for cut in range(len(case.data) + 1):
        assert _scan([case.data[:cut], case.data[cut:]]) == (case.data, None), f"split {cut}"
    assert _scan([bytes([byte]) for byte in case.data]) == (case.data, None)


def test_sentinel_prefix_without_end_is_leftover() -> None:
    scanner = SentinelScanner(PREFIX, END)
    assert scanner.feed(b"out" + PREFIX + b"done:") == b"out"
    assert scanner.body is None
    assert scanner.leftover() == PREFIX + b"done:"
    assert scanner.leftover() == b""


class BodyCase(NamedTuple):
    test_id: str
    body: bytes
    expected: str


BODY_CASES = [
    BodyCase("done", b"done:0", "done:0"),
    BodyCase("exit-status", b"exit:255", "exit:255"),
    BodyCase("empty", b"", ""),
    BodyCase("non-ascii-replaced", b"done:\xff", "done:\ufffd"),
]


@pytest.mark.parametrize("case", BODY_CASES, ids=[c.test_id for c in BODY_CASES])
def test_sentinel_body(case: BodyCase) -> None:
    assert _scan([b"x", PREFIX + case.body + END]) == (b"x", case.expected)


# --- what a REPL printed, once it has exited ------------------------------------------


@pytest.mark.parametrize(
    ("after_exit", "printed"),
    [
        # SIGKILL: bash's report of the signal, the start call's marker, the prompt
        (b"Killed\r\n___TMUXSEND_END_9d41e86be5 137___\r\n$ ", b""),
        (b"last words\r\nKilled\r\n___TMUXSEND_END_9d41e86be5 137___\r\n$ ", b"last words\r\n"),
        (b"zsh: killed     python3 -q\r\n___TMUXSEND_END_0123456789 137___\r\n", b""),
        # a REPL that quit by itself: no report, every line before the marker is its own
        (b"bye\r\n___TMUXSEND_END_0123456789 0___\r\n$ ", b"bye\r\n"),
        (b"bye\r\n___TMUXSEND_END_0123456789 3___\r\n$ ", b"bye\r\n"),
        # the marker not (yet) there: all of it
        (b"still printing\r\n", b"still printing\r\n"),
    ],
)
def test_what_a_repl_printed_before_its_shell_took_over(after_exit: bytes, printed: bytes) -> None:
    assert repl_part(after_exit) == printed

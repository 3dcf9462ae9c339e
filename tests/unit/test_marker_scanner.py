"""Pure tests of tmux_bridge/text/output.py's :class:`MarkerScanner`: one evaluation's
output cut out of a pane's raw stream, streamed as soon as it cannot be the end.

The markers here are the documented shape (a start line, then ``END_PREFIX`` with an
optional `` STATUS`` and ``___``) with a test id; the streams are what a terminal is
sent: ``\\r\\n`` line ends, and ``\\r\\r\\n`` for the lead of a REPL whose own line end
``\\r\\n`` the terminal turns into ``\\r\\r\\n``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest

from tmux_bridge.text.output import MarkerScanner

START = b"__START_t1__"
PREFIX = b"__END_t1"
END = re.compile(re.escape(PREFIX) + rb"(?: (\d+))?___")


def scanner(lead: bytes = b"\r\n") -> MarkerScanner:
    return MarkerScanner(START, END, PREFIX, lead)


class Case(NamedTuple):
    test_id: str
    lead: bytes
    stream: bytes
    output: bytes
    status: int | None


CASES = [
    Case(
        "echo-and-prompt-dropped",
        b"\r\n",
        b">>> run()\r\n__START_t1__\r\nhello\r\nworld\r\n\r\n__END_t1 3___\r\n>>> ",
        b"hello\r\nworld\r\n",
        3,
    ),
    Case(
        "crlf-lead",
        b"\r\r\n",
        b"__START_t1__\r\nhello\r\n\r\r\n__END_t1 0___\r\n",
        b"hello\r\n",
        0,
    ),
    Case("no-status", b"\r\r\n", b"__START_t1__\r\nx\r\n\r\r\n__END_t1___", b"x\r\n", None),
    Case("empty-output", b"\r\n", b"__START_t1__\r\n\r\n__END_t1 0___", b"", 0),
    Case(
        "output-without-a-final-line-end",  # the lead alone goes
        b"\r\n",
        b"__START_t1__\r\nno newline\r\n__END_t1 1___",
        b"no newline",
        1,
    ),
    Case(
        "another-calls-marker-is-output",
        b"\r\n",
        b"__START_t1__\r\n__END_t2 5___\r\n\r\n__END_t1 0___",
        b"__END_t2 5___\r\n",
        0,
    ),
    # the clean transcript's markers, hidden in OSC strings (ESC ] 777 ; tmux-send ; ...
    # BEL): a command's runner prints its end marker right after the output, which is
    # then exact, final line end or not (a REPL's start that failed, issue 29)
    Case(
        "hidden-markers",
        b"\r\n",
        b"\x1b[2mhead\x1b[0m\r\n\x1b]777;tmux-send;__START_t1__\x07err\r\n"
        b"\x1b]777;tmux-send;__END_t1 2___\x07\x1b[2m[exit 2]\x1b[0m\r\n$ ",
        b"err\r\n",
        2,
    ),
    Case(
        "hidden-markers-output-without-a-final-line-end",
        b"\r\n",
        b"\x1b]777;tmux-send;__START_t1__\x07abc\x1b]777;tmux-send;__END_t1 0___\x07",
        b"abc",
        0,
    ),
    Case(
        "hidden-markers-and-a-hidden-lead",  # python's and node's evaluations
        b"\x1b]777;tmux-send;\r\n",
        b"\x1b]777;tmux-send;__START_t1__\x07x\r\n\x1b]777;tmux-send;\r\n__END_t1 0___\x07",
        b"x\r\n",
        0,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.test_id)
def test_whole_stream(case: Case) -> None:
    s = scanner(case.lead)
    assert s.feed(case.stream) == case.output
    assert (s.started, s.ended, s.status) == (True, True, case.status)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.test_id)
def test_byte_by_byte_up_to_the_end_marker_gives_the_same(case: Case) -> None:
    s = scanner(case.lead)
    at = case.stream.rindex(PREFIX)  # the real end marker comes whole (one write)
    out = b"".join(s.feed(case.stream[i : i + 1]) for i in range(at))
    out += s.feed(case.stream[at:])
    assert (out, s.ended, s.status) == (case.output, True, case.status)


def test_an_end_marker_split_after_its_prefix() -> None:
    s = scanner()
    out = s.feed(b"__START_t1__\r\nx\r\n\r\n__END_t1 ")
    out += s.feed(b"0___")
    assert (out, s.ended, s.status) == (b"x\r\n", True, 0)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.test_id)
def test_the_stream_cut_in_two_anywhere_gives_the_same(case: Case) -> None:
    # a pipe may hand the stream over at any byte, the end marker's included
    for cut in range(len(case.stream) + 1):
        s = scanner(case.lead)
        out = s.feed(case.stream[:cut]) + s.feed(case.stream[cut:])
        assert (out, s.ended, s.status) == (case.output, True, case.status), cut


def test_without_the_lead_before_the_marker_its_own_line_end_goes() -> None:
    # read whole: a line end streamed before the marker came cannot be taken back
    s = scanner(b"\r\r\n")
    assert s.feed(b"__START_t1__\r\nout\r\n__END_t1 0___") == b"out"
    assert s.status == 0


def test_a_line_end_waits_for_the_next_byte_when_it_may_be_the_lead() -> None:
    s = scanner(b"\r\n")
    assert s.feed(b"__START_t1__\r\nhello\r\n") == b"hello"
    assert s.feed(b"w") == b"\r\nw"  # not the end marker: both go


def test_with_the_crlf_lead_line_ends_stream_at_once() -> None:
    s = scanner(b"\r\r\n")
    assert s.feed(b"__START_t1__\r\nhello\r\n") == b"hello\r\n"
    assert s.feed(b"\r\r\n__END_t1 0___") == b""
    assert s.ended


def test_a_start_marker_in_pieces() -> None:
    s = scanner()
    assert s.feed(b"junk__STA") == b""
    assert s.feed(b"RT_t1__") == b""  # its line has not ended yet
    assert not s.started
    assert s.feed(b"\r\nout") == b"out"
    assert s.started


def test_nothing_after_the_end() -> None:
    s = scanner()
    s.feed(b"__START_t1__\r\n\r\n__END_t1 0___")
    assert s.feed(b"more\r\n") == b""
    assert s.flush() == b""


def test_flush_gives_what_was_held_back() -> None:
    s = scanner()
    assert s.feed(b"__START_t1__\r\nabc\r\n") == b"abc"
    assert s.flush() == b"\r\n"
    assert s.flush() == b""


def test_flush_before_the_start_gives_nothing() -> None:
    s = scanner()
    assert s.feed(b"echo of the typed line\r\n") == b""
    assert s.flush() == b""

"""Pure tests of how the mirror writes a command's newlines into the pane's terminal
(tmux_bridge/infra/relay.py ``pane_newlines``): CR VT where the terminal would write
CR LF itself (``onlcr`` alone), the bytes as they are under any other newline mode.
What the pane then shows is compared with the same bytes typed in a pane in
tests/cli/test_transcript.py."""

from __future__ import annotations

import itertools
import termios

import pytest

from tmux_bridge.infra.relay import pane_newlines

EVERY_BYTE = bytes(range(256))
DEFAULT = termios.OPOST | termios.ONLCR  # a new pane's terminal (`stty sane`)
OTHERS = [termios.OCRNL, termios.ONOCR, termios.ONLRET]


def test_every_byte_but_a_newline_is_kept() -> None:
    out = pane_newlines(EVERY_BYTE, DEFAULT)
    assert out.split(b"\r\v") == EVERY_BYTE.split(b"\n")
    assert pane_newlines(b"a\n\nb\r\n", DEFAULT) == b"a\r\v\r\vb\r\r\v"


@pytest.mark.parametrize(
    "extra",
    [sum(chosen) for n in range(1, 4) for chosen in itertools.combinations(OTHERS, n)],
)
def test_another_newline_mode_leaves_the_bytes_alone(extra: int) -> None:
    assert pane_newlines(EVERY_BYTE, DEFAULT | extra) == EVERY_BYTE


@pytest.mark.parametrize("oflag", [0, termios.OPOST, termios.ONLCR])
def test_no_translation_without_opost_and_onlcr(oflag: int) -> None:
    assert pane_newlines(EVERY_BYTE, oflag) == EVERY_BYTE


def test_modes_that_touch_no_newline_change_nothing_of_the_rule() -> None:
    """Tab expansion and delays act on other bytes: the kernel still counts columns
    right, since neither CR nor VT is a column."""
    oflag = DEFAULT | termios.XTABS | termios.NLDLY | termios.OLCUC
    assert pane_newlines(b"a\tb\n", oflag) == b"a\tb\r\v"

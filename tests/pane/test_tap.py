"""PaneTap.ends_as_shown: whether the stream read so far ends with what the screen shows
(its last line drawn as a terminal draws it), the screen alone trusted only after the
stream's silence. Fed through the tap's own FIFO, as tmux's ``cat`` feeds it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.pane import tap as tap_module
from tmux_bridge.pane.tap import PaneTap

PROMPT = re.compile(r"^(>>>|\.\.\.) ?$")


@pytest.fixture
def tap() -> Iterator[PaneTap]:
    made = PaneTap(Tmux(socket_path="/nonexistent"), "%0")  # runs no tmux command here
    yield made
    made.fifo.close()


def _through(tap: PaneTap, *chunks: bytes) -> None:
    """Each chunk written into the FIFO and read back by the tap, in turn."""
    writer = os.open(tap.fifo.path, os.O_WRONLY)
    try:
        for chunk in chunks:
            os.write(writer, chunk)
            got = b""
            while len(got) < len(chunk):
                got += tap.read() or b""
            assert got == chunk
    finally:
        os.close(writer)


def _at_prompt(tap: PaneTap) -> bool:
    return tap.ends_as_shown(lambda text: PROMPT.search(text) is not None)


def test_the_prompt_as_the_streams_last_line(tap: PaneTap) -> None:
    _through(tap, b"Traceback...\r\nKeyboardInterrupt\r\n", b">>> ")
    assert _at_prompt(tap)


def test_a_prompt_split_across_reads(tap: PaneTap) -> None:
    _through(tap, b"out\r\n>", b">", b"> ")
    assert _at_prompt(tap)


def test_a_prompt_drawn_with_a_carriage_return_and_colours(tap: PaneTap) -> None:
    _through(tap, b"out\r\n\x1b[?2004h\x1b[1;35m...\x1b[0m \r\x1b[1;35m>>>\x1b[0m ")
    assert _at_prompt(tap)


def test_a_stream_behind_the_screen(tap: PaneTap, monkeypatch: pytest.MonkeyPatch) -> None:
    """The question's line still unfinished in the stream: not at the prompt, until the
    stream has been silent for SCREEN_AHEAD s since it was first asked."""
    _through(tap, b">>> print('hi', input('Name? '))\r\n", b"Name? ")
    assert not _at_prompt(tap)
    monkeypatch.setattr(tap_module, "SCREEN_AHEAD", 0.0)
    assert _at_prompt(tap)  # silent since the first question: the screen is believed


def test_new_output_restarts_the_silence(tap: PaneTap, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tap_module, "SCREEN_AHEAD", 3600.0)
    _through(tap, b"Name? ")
    assert not _at_prompt(tap)
    first = tap.ahead_since
    _through(tap, b"Ada\r\n")
    assert tap.ahead_since is None
    assert not _at_prompt(tap) and tap.ahead_since != first


@pytest.mark.parametrize("size", [1, 255, 256, 257, 70000])
def test_only_the_last_line_counts_whatever_the_chunks(tap: PaneTap, size: int) -> None:
    """However the stream is cut into reads (more or less than the tail kept), its last
    line is what is judged: a prompt earlier in the stream does not count."""
    body = b">>> \r\n" + b"x" * size + b"\r\n"
    _through(tap, body[: len(body) // 2], body[len(body) // 2 :], b">>> ")
    assert _at_prompt(tap)
    _through(tap, b"\r\nmore")
    assert not _at_prompt(tap)

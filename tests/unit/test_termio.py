"""Pure tests of a browser terminal's bytes as ``send-keys`` commands
(tmux_bridge/pane/termio.py ``key_commands``), and of /ws's binary frames
(tmux_bridge/server/frames.py ``split_frame``).

The sequences are xterm's (what xterm.js sends): ``ESC [ A`` for Up in normal mode,
``ESC O A`` in application cursor mode, ``ESC [ 3 ~`` for Delete, ``ESC O P`` for F1,
``ESC [ 15 ~`` for F5. tmux's own names for them are Up, DC, F1, F5...
"""

from __future__ import annotations

import pytest

from tmux_bridge.errors import InvalidRequest
from tmux_bridge.pane.termio import key_commands
from tmux_bridge.server.frames import join_frame, split_frame


def hex_keys(*hex_bytes: str) -> list[str]:
    return ["send-keys", "-t", "%3", "-H", *hex_bytes]


def key(name: str) -> list[str]:
    return ["send-keys", "-t", "%3", name]


@pytest.mark.parametrize(
    ("data", "commands"),
    [
        (b"", []),
        (b"ls\r", [hex_keys("6c", "73", "0d")]),  # l s Enter, byte for byte
        (b"\x03", [hex_keys("03")]),  # Ctrl-C is a byte like any other
        (b"\x1b[A", [key("Up")]),
        (b"\x1bOA", [key("Up")]),  # application cursor mode: the same key
        (b"\x1b[D\x1bOC", [key("Left"), key("Right")]),
        (b"\x1b[3~", [key("DC")]),
        (b"\x1b[5~\x1b[6~", [key("PPage"), key("NPage")]),
        (b"\x1bOP", [key("F1")]),
        (b"\x1b[15~", [key("F5")]),
        (b"\x1b[24~", [key("F12")]),
        (b"\x1b[Z", [key("BTab")]),
        (b"a\x1b[Ab", [hex_keys("61"), key("Up"), hex_keys("62")]),
        (b"\x1b", [hex_keys("1b")]),  # a lone Escape
        (b"\x1b[99~", [hex_keys("1b", "5b", "39", "39", "7e")]),  # unknown: bytes
        ("é".encode(), [hex_keys("c3", "a9")]),  # UTF-8 as its bytes
    ],
)
def test_key_commands(data: bytes, commands: list[list[str]]) -> None:
    assert key_commands("%3", data) == commands


@pytest.mark.parametrize(
    ("frame", "parts"),
    [
        (b"\x01resize\x0080:24", (1, "resize", b"80:24")),
        (b"\x02\x00", (2, "", b"")),
        (b"\x00\x00", (0, "", b"")),
        (b"\x01f\x00a\x00b", (1, "f", b"a\x00b")),  # the first NUL ends the name
        (b"\x01\xff\x00x", (1, "\ufffd", b"x")),  # a name that is not UTF-8
        ("\x03né\x00".encode(), (3, "né", b"")),
    ],
)
def test_split_frame(frame: bytes, parts: tuple[int, str, bytes]) -> None:
    assert split_frame(frame) == parts


@pytest.mark.parametrize("frame", [b"", b"\x01", b"\x00", b"\x01name", b"\x01name-no-nul"])
def test_split_frame_refuses_a_frame_without_its_parts(frame: bytes) -> None:
    with pytest.raises(InvalidRequest, match="a binary frame is a type byte"):
        split_frame(frame)


@pytest.mark.parametrize(
    ("kind", "name", "payload"), [(1, "a.txt", b"\x00data\x00"), (255, "", b""), (7, "ü", b"x")]
)
def test_split_frame_reads_what_join_frame_writes(kind: int, name: str, payload: bytes) -> None:
    assert split_frame(join_frame(kind, name, payload)) == (kind, name, payload)

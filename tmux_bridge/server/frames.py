"""The WebSocket's binary frames: ``type + name + 0x00 + payload``, and a size's payload.

The wire format is the face's; what a frame carries (keyboard bytes, a size, a file)
goes to the facade (:meth:`~tmux_bridge.api.Bridge.terminal_input`, ``fit``,
``upload``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidRequest
from ..rules import check_size


def split_frame(frame: bytes) -> tuple[int, str, bytes]:
    """A binary frame ``type + name + 0x00 + payload``: its parts."""
    if len(frame) < 2 or b"\x00" not in frame[1:]:
        raise InvalidRequest("a binary frame is a type byte, a name, 0x00, then the payload.")
    name, _, payload = frame[1:].partition(b"\x00")
    return frame[0], name.decode("utf-8", "replace"), payload


def join_frame(kind: int, name: str, payload: bytes | Sequence[bytes]) -> bytes:
    """The binary frame ``kind + name + 0x00 + payload``."""
    body = payload if isinstance(payload, bytes) else b"".join(payload)
    return bytes([kind]) + name.encode() + b"\x00" + body


def parse_size(payload: bytes) -> tuple[int, int]:
    """``b"COLS:ROWS"`` as two numbers in range; :class:`InvalidRequest` otherwise."""
    cols, _, rows = payload.decode("ascii", "replace").partition(":")
    if not (cols.isdigit() and rows.isdigit()):
        raise InvalidRequest("a size is COLS:ROWS, two whole numbers.")
    check_size(int(cols), int(rows))
    return int(cols), int(rows)

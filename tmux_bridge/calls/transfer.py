"""Far transfers at speed: a far shell's file operation with its bytes carried through the
pane's stream as base64, pasted in pieces one acknowledgement at a time and read back
from OSC strings tmux does not draw (the far side is :mod:`tmux_bridge.text.transfer`).

:class:`StreamTransport` is the :class:`~tmux_bridge.calls.files.Transport` of far
shells; :class:`TransferCall` is the far call that hands it the pane's raw stream
before the far call's own scanner sees it, so the file's bytes never reach the screen,
the output or the person.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from ..errors import ChecksumMismatch
from ..infra.tmux import Tmux, paste_commands
from ..results import new_call_id
from ..text.markers import TRANSFER_ACK, TRANSFER_READY
from ..text.transfer import PIECE, TransferReader, piece_head, wrapper
from .far import FarCall

PROGRESS_EVERY = 2.0  # seconds between the far side's progress lines on a write


class StreamTransport:
    """The script's stdin pasted into the far terminal in pieces (when there is data),
    its stdout taken from the OSC strings the far side prints back. :attr:`refused` is
    what the far side said when it could not receive (no base64, no ``stty``...)."""

    def __init__(self, tmux: Tmux, pane_id: str) -> None:
        self.tmux = tmux
        self.pane_id = pane_id
        self.transfer_id = new_call_id()
        self.reader = TransferReader(self.transfer_id)
        self.encoded = b""
        self.sent = 0
        self.ended = False  # the piece of length 0 was pasted
        self.progress_at = 0.0
        self.refused: str | None = None

    def words(self, script: str, arguments: list[str], data: bytes | None) -> list[str]:
        mode = "none" if data is None else "send"
        self.encoded = b"" if data is None else base64.b64encode(data)
        head = [self.transfer_id, mode, str(len(self.encoded))]
        return ["/bin/sh", "-c", wrapper(script), "tmux-send-file", *head, *arguments]

    def take(self, chunk: bytes) -> bytes:
        """The pane's raw ``chunk`` without our OSC strings; pastes the next piece when
        the far side says it is ready for it."""
        rest = self.reader.feed(chunk)
        for kind, text in self.reader.take_messages():
            if kind == TRANSFER_READY and text != "ok":
                self.refused = text
            elif kind == TRANSFER_READY:
                self.progress_at = time.monotonic()
                self._paste_next()
            elif kind == TRANSFER_ACK:
                self._paste_next()
        return rest

    def _paste_next(self) -> None:
        if self.ended:
            return
        piece = self.encoded[self.sent : self.sent + PIECE]
        now = time.monotonic()
        progress = bool(piece) and now - self.progress_at >= PROGRESS_EVERY
        if progress:
            self.progress_at = now
        load, paste = paste_commands(
            f"tmux-send-{self.transfer_id}", self.pane_id, bracketed=False, raw=True
        )
        self.tmux.run(*load, stdin=piece_head(len(piece), progress) + piece)
        self.tmux.run(*paste)
        self.sent += len(piece)
        self.ended = not piece

    def output(self) -> BinaryIO:
        """The script's stdout, from the base64 the far side sent back."""
        import binascii

        try:
            return io.BytesIO(self.reader.decoded())
        except binascii.Error as error:
            raise ChecksumMismatch(
                f"the bytes the far shell sent back through the pane were damaged ({error}); "
                "nothing was changed by a read. Try again."
            ) from error

    def close(self) -> None:
        pass  # nothing of ours is left: each paste buffer goes once pasted


class TransferCall(FarCall):
    """A far call whose raw stream goes through a :class:`StreamTransport` first."""

    transport: StreamTransport

    def _feed(self, chunk: bytes) -> None:
        super()._feed(self.transport.take(chunk))


def transfer_call(transport: StreamTransport) -> Callable[..., FarCall]:
    """What makes the far call of a transfer through ``transport`` (``run_far``'s
    ``make_call``)."""

    def make(*args: Any) -> FarCall:
        call = TransferCall(*args)
        call.transport = transport
        return call

    return make

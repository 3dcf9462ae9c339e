"""Reading the pixels of a PNG screenshot (Chromium's: 8-bit RGB or RGBA, not
interlaced) with the standard library only, for the browser tests' pixel checks."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


class Image:
    """The pixels of a PNG: ``width``, ``height``, and :meth:`light` per pixel."""

    def __init__(self, width: int, height: int, channels: int, rows: list[bytes]) -> None:
        self.width = width
        self.height = height
        self.channels = channels
        self.rows = rows

    @classmethod
    def read(cls, path: Path) -> Image:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
        at, chunks, header = 8, [], b""
        while at < len(data):
            (length,) = struct.unpack(">I", data[at : at + 4])
            kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
            if kind == b"IHDR":
                header = body
            elif kind == b"IDAT":
                chunks.append(body)
            at += 12 + length
        width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
        assert depth == 8 and color in (2, 6) and interlace == 0, "8-bit RGB(A) only"
        channels = 3 if color == 2 else 4
        raw = zlib.decompress(b"".join(chunks))
        return cls(width, height, channels, _unfilter(raw, width * channels, height, channels))

    def light(self, x: int, y: int) -> int:
        """The pixel's brightness, 0-255 (the largest of its red, green and blue)."""
        at = x * self.channels
        return max(self.rows[y][at : at + 3])


def _unfilter(raw: bytes, stride: int, height: int, bpp: int) -> list[bytes]:
    rows: list[bytes] = []
    previous = bytearray(stride)
    at = 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return rows


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c

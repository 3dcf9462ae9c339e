"""The seam into a SQL REPL's quoted argument (text/seams.py ``escaped_argument``): what
a clean psql or sqlite evaluation prints (its header, its hidden markers) comes back
byte for byte from sqlite3's own ``.print``, and nothing in it is a second argument."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tmux_bridge.text.seams import escaped_argument

# NUL ends a C string: .print cannot print it (the header never holds one).
EVERY_BYTE = [bytes([b]) for b in range(1, 256)]
HOSTILE = [b'" .shell touch pwned "', b"' \\", b".quit", b"\\n.quit", b"a\nb", bytes(range(1, 256))]


def test_sqlite3_prints_every_byte_back() -> None:
    if shutil.which("sqlite3") is None:
        pytest.skip("sqlite3 is not installed")
    cases = [*EVERY_BYTE, *HOSTILE]
    script = "".join(f'.print "{escaped_argument(case)}"\n' for case in cases)
    result = subprocess.run(
        ["sqlite3", ":memory:"], input=script.encode(), capture_output=True, timeout=60
    )
    assert result.stderr == b""
    assert result.stdout == b"".join(case + b"\n" for case in cases)


def test_the_argument_is_printable_ascii_without_quotes() -> None:
    text = escaped_argument(bytes(range(256)))
    assert text.isascii() and text.isprintable()
    assert "'" not in text and '"' not in text

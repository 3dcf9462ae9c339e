"""The text of far transfers: the reader that takes our OSC strings out of a pane's
stream (cut anywhere), the pieces' heads, and the far-side wrapper itself, run by real
shells (dash, bash, busybox sh) on a pseudo-terminal as a far shell would run it."""

from __future__ import annotations

import base64
import itertools
import os
import shutil

import pexpect
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmux_bridge.text.transfer import NO_TRANSFER, PIECE, TransferReader, piece_head, wrapper


def _osc(call_id: str, kind: str, text: str) -> bytes:
    return f"\x1b]5379;{call_id};{kind};{text}\x07".encode()


STREAM = (
    b"before\r\n"
    + _osc("aaaaaaaaaa", "R", "ok")
    + b"tmux-send: 10% received\r\n"
    + _osc("bbbbbbbbbb", "D", "Zm9v")  # another call's: dropped, not data
    + _osc("aaaaaaaaaa", "D", "aGVsbG8g")
    + b"\x1b]0;a title\x07"  # an OSC not ours: passed on
    + _osc("aaaaaaaaaa", "D", "d29ybGQ=")
    + _osc("aaaaaaaaaa", "A", "12")
    + b"after\r\n"
)


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_reader_cut_anywhere(cuts: list[int]) -> None:
    reader = TransferReader("aaaaaaaaaa")
    points = [0, *sorted(cuts), len(STREAM)]
    rest = b"".join(reader.feed(STREAM[a:b]) for a, b in itertools.pairwise(points))
    assert rest == b"before\r\ntmux-send: 10% received\r\n\x1b]0;a title\x07after\r\n"
    assert reader.decoded() == b"hello world"
    assert reader.take_messages() == [("R", "ok"), ("A", "12")]


def test_reader_lets_an_unended_osc_through() -> None:
    reader = TransferReader("aaaaaaaaaa")
    junk = b"\x1b]5379;" + b"x" * 100_000
    assert reader.feed(junk) == junk


def test_piece_heads() -> None:
    assert piece_head(PIECE, True) == b"%011dP\n" % PIECE
    assert piece_head(0, False) == b"00000000000-\n"
    assert PIECE % 4 == 0  # each piece decodes alone


SHELLS = [("dash", ["dash"]), ("bash", ["bash"]), ("busybox", ["busybox", "sh"])]


@pytest.mark.parametrize(("name", "argv"), SHELLS, ids=[s[0] for s in SHELLS])
def test_wrapper_on_a_terminal(name: str, argv: list[str]) -> None:
    """The wrapper around ``tr a-z A-Z`` receives pieces pasted after each ack (two
    pieces, then the end) and sends the result back in OSC strings."""
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    data = os.urandom(3000) + b"abc"
    encoded = base64.b64encode(data)
    script = wrapper("tr a-z A-Z")
    args = [*argv[1:], "-c", script, "x", "abcdef0123", "send", str(len(encoded))]
    child = pexpect.spawn(argv[0], args, timeout=10)
    child.expect(rb"\x1b\]5379;abcdef0123;R;ok\x07")
    reader = TransferReader("abcdef0123")
    for piece in (encoded[:2000], encoded[2000:]):
        child.send(piece_head(len(piece), False) + piece)
        child.expect(rb"\x1b\]5379;abcdef0123;A;(\d+)\x07")
    assert int(child.match.group(1)) == len(encoded)
    child.send(piece_head(0, False))
    child.expect(pexpect.EOF)
    reader.feed(child.before)
    child.close()
    assert child.exitstatus == 0
    assert reader.decoded() == data.upper()


def test_wrapper_without_base64_says_so(tmp_path: os.PathLike[str]) -> None:
    """No base64 (nor openssl) on the far side: status 86 and why, nothing read."""
    sh = shutil.which("dash") or "/bin/sh"
    bin_dir = os.path.join(tmp_path, "bin")
    os.mkdir(bin_dir)
    for tool in ("printf", "head", "awk", "stty", "mktemp", "rm", "cat"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, os.path.join(bin_dir, tool))
    child = pexpect.spawn(
        sh, ["-c", wrapper("cat"), "x", "abcdef0123", "send", "4"], env={"PATH": bin_dir}
    )
    child.expect(rb"\x1b\]5379;abcdef0123;R;([^\x07]*)\x07")
    assert child.match.group(1) == b"no base64 here"
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == NO_TRANSFER

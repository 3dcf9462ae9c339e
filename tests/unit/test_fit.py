"""The one rule of output that fits (text/fit.py): head, cut line, tail, counts.

Expected values are worked out by hand in the comments, not taken from the code.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from tmux_bridge.text.fit import Limits, StreamFit, count_lines, cut_line, fit, joined

SEQ_200 = b"".join(b"%d\n" % i for i in range(1, 201))  # `seq 1 200`


def test_first_and_last_lines_of_seq() -> None:
    # bytes: 1-9 take 2 each (18), 10-99 take 3 (270), 100-200 take 4 (404): 692
    fitted = fit(SEQ_200, Limits(first=10, last=10))
    assert fitted.head == b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"  # 9 * 2 + 3 = 21 bytes
    assert fitted.tail == b"".join(b"%d\n" % i for i in range(191, 201))  # 40 bytes
    assert (fitted.lines, fitted.bytes) == (200, 692)
    assert (fitted.cut_lines, fitted.cut_bytes) == (180, 692 - 21 - 40)
    assert fitted.truncated


def test_the_cut_line_says_lines_bytes_stream_and_file() -> None:
    fitted = fit(SEQ_200, Limits(first=10, last=10))
    line = cut_line("stdout", fitted, "/run/x/output/3f6b.stdout")
    assert line == (
        b"[tmux-send: 180 lines (631 bytes) of stdout not shown (truncated); "
        b"all of it is in /run/x/output/3f6b.stdout]\n"
    )
    shown = joined("stdout", fitted, "/p")
    assert shown.startswith(fitted.head + b"[tmux-send: 180 lines") and shown.endswith(fitted.tail)


def test_thousands_are_grouped() -> None:
    data = b"x\n" * 3000
    fitted = fit(data, Limits(first=0, last=0))
    assert cut_line("stderr", fitted, "/f").startswith(
        b"[tmux-send: 3,000 lines (6,000 bytes) of stderr not shown"
    )


@pytest.mark.parametrize(
    ("limits", "data"),
    [
        (Limits(first=3, last=2), b"a\nb\nc\nd\ne\n"),  # 5 lines: exactly first + last
        (Limits(first=3, last=2), b"a\nb\nc\nd\ne"),  # the last one unended
        (Limits(max_bytes=10), b"0123456789"),  # exactly the cap
        (Limits(first=1, last=1, max_bytes=4), b"a\nb\n"),
        (Limits(first=3, last=2, max_bytes=10), b"1\n2\n3\n4\n5\n"),  # head budget ends in a line
        (Limits(), b"x" * 100_000),
        (Limits(first=5), b""),
    ],
)
def test_nothing_is_cut_when_it_fits(limits: Limits, data: bytes) -> None:
    fitted = fit(data, limits)
    assert not fitted.truncated
    assert fitted.head + fitted.tail == data
    assert joined("stdout", fitted, "/never") == data


def test_one_line_more_is_cut() -> None:
    fitted = fit(b"a\nb\nc\nd\ne\nf\n", Limits(first=3, last=2))
    assert (fitted.head, fitted.tail) == (b"a\nb\nc\n", b"e\nf\n")
    assert (fitted.cut_lines, fitted.cut_bytes) == (1, 2)  # "d\n"


def test_only_first_or_only_last() -> None:
    assert fit(SEQ_200, Limits(first=2)).head == b"1\n2\n"
    assert fit(SEQ_200, Limits(first=2)).tail == b""
    only_last = fit(SEQ_200, Limits(last=2))
    assert (only_last.head, only_last.tail) == (b"", b"199\n200\n")
    assert only_last.cut_lines == 198


def test_an_unended_last_line_is_a_line() -> None:
    assert count_lines(b"a\nb") == 2 and count_lines(b"a\nb\n") == 2 and count_lines(b"") == 0
    fitted = fit(b"1\n2\n3\n4", Limits(first=1, last=1))
    assert (fitted.head, fitted.tail, fitted.lines) == (b"1\n", b"4", 4)
    assert (fitted.cut_lines, fitted.cut_bytes) == (2, 4)  # "2\n3\n"


def test_bytes_exactly_half_and_the_rest() -> None:
    data = bytes(range(48, 58)) * 10  # 100 ASCII bytes, no newline
    fitted = fit(data, Limits(max_bytes=21))
    assert fitted.head == data[:10]  # 21 // 2
    assert fitted.tail == data[-11:]  # 21 - 10
    assert (fitted.cut_bytes, fitted.cut_lines, fitted.lines) == (79, 0, 1)


def test_the_tail_gets_what_the_head_left() -> None:
    # first 1 line ("a\n", 2 bytes) of a 20-byte cap: the tail may have 18 bytes
    data = b"a\n" + b"b" * 30 + b"\n" + b"c" * 17 + b"\n"
    fitted = fit(data, Limits(first=1, last=5, max_bytes=20))
    assert fitted.head == b"a\n"
    assert fitted.tail == b"c" * 17 + b"\n"


@pytest.mark.parametrize("cap", range(4, 24))
def test_multibyte_characters_are_never_split(cap: int) -> None:
    text = "é€😀x" * 5  # 2, 3, 4 and 1 bytes: 50 bytes
    data = text.encode()
    fitted = fit(data, Limits(max_bytes=cap))
    fitted.head.decode("utf-8")  # raises when a character is split
    fitted.tail.decode("utf-8")
    assert len(fitted.head) + len(fitted.tail) <= cap
    assert len(fitted.head) + len(fitted.tail) >= cap - 6  # at most 3 lost each side
    assert data.startswith(fitted.head) and data.endswith(fitted.tail)


def test_a_cut_inside_a_character() -> None:
    data = "aé".encode() * 4  # 61 c3 a9 repeated: 12 bytes
    fitted = fit(data, Limits(max_bytes=4))
    # head budget 2: "a" + half of "é" -> just "a"; tail budget 3: "aé" (3 bytes)
    assert (fitted.head, fitted.tail) == (b"a", "aé".encode())
    assert fitted.cut_bytes == 12 - 1 - 3


def test_streaming_in_any_pieces_equals_the_whole() -> None:
    data = b"".join(f"line {i} é€😀\n".encode() for i in range(500))
    limits = Limits(first=7, last=9, max_bytes=300)
    whole = fit(data, limits)
    for size in (1, 2, 3, 7, 64, 4096):
        stream = StreamFit(limits)
        given = b"".join(stream.feed(data[i : i + size]) for i in range(0, len(data), size))
        assert stream.finish() == whole
        assert whole.head.startswith(given)


def test_the_stream_keeps_no_more_than_its_tail() -> None:
    stream = StreamFit(Limits(first=2, last=3))
    for i in range(200_000):
        stream.feed(b"%d\n" % i)
    assert len(stream.ring) < 70 * 1024  # 3 lines and the slack, not 1.3 MB
    fitted = stream.finish()
    assert fitted.tail == b"199997\n199998\n199999\n"
    assert fitted.lines == 200_000
    assert fitted.cut_lines == 200_000 - 5


def test_head_and_tail_around_the_cut_are_the_whole_stream() -> None:
    fitted = fit(SEQ_200, Limits(first=3, last=4, max_bytes=50))
    middle_start = len(fitted.head)
    middle = SEQ_200[middle_start : len(SEQ_200) - len(fitted.tail)]
    assert len(middle) == fitted.cut_bytes and middle.count(b"\n") == fitted.cut_lines
    assert hashlib.sha256(fitted.head + middle + fitted.tail).digest() == (
        hashlib.sha256(SEQ_200).digest()
    )


def test_cut_exactly_when_it_does_not_fit() -> None:
    rng = random.Random(23)
    for _ in range(3000):
        data = bytes(rng.choice(b"ab\n\xc3\xa9") for _ in range(rng.randint(0, 40)))
        limits = Limits(
            rng.choice([None, 0, 1, 3]), rng.choice([None, 0, 1, 3]), rng.choice([None, 0, 5, 20])
        )
        first, last = limits.lines()
        cap = len(data) if limits.max_bytes is None else limits.max_bytes
        fits = count_lines(data) <= first + last and len(data) <= cap
        stream = StreamFit(limits)
        for start in range(0, len(data), 3):
            stream.feed(data[start : start + 3])
        fitted = stream.finish()
        assert fitted == fit(data, limits)
        assert fitted.truncated == (not fits), (data, limits)
        assert len(fitted.head) + fitted.cut_bytes + len(fitted.tail) == len(data)
        assert len(fitted.head) + len(fitted.tail) <= cap

"""Pure tests of the far-shell text (tmux_bridge/text/farshell.py): the printf encoding
checked against real shells' printf, and the stream scanner fed at every split point."""

from __future__ import annotations

import subprocess

import pytest

from tmux_bridge.text.farshell import (
    HELPERS_VERSION,
    FarLook,
    FarScanner,
    _pieces,
    command_lines,
    helpers_line,
    helpers_lines,
    parse_probe,
    probe_line,
    probe_pattern,
    prompt_drawn,
    quiet_lines,
)
from tmux_bridge.text.seams import printf_text

from ..support.pane import shell_path

SAMPLES = [
    b"echo 'it''s' \"$HOME\" 100% \\n done",
    "héllo → 世界".encode(),
    b"a\x01b\x1b[31mc\x7f\td\n\nend",
    bytes(range(256)),
]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "dash"])
def test_printf_text_gives_the_bytes_back(shell: str) -> None:
    for data in SAMPLES:
        script = f"printf '{printf_text(data)}'"
        result = subprocess.run([shell_path(shell), "-c", script], capture_output=True)
        assert result.stdout == data, (shell, data)


def test_typed_text_is_printable_ascii() -> None:
    text = printf_text(bytes(range(256)))
    assert all(0x20 <= ord(c) < 0x7F for c in text) and "'" not in text


def test_pieces_never_cut_an_escape() -> None:
    text = printf_text(bytes(range(256)) * 40 + b"%" * 5000)
    pieces = _pieces(text, 3000)
    assert "".join(pieces) == text and all(len(p) <= 3000 for p in pieces)
    for piece in pieces:
        result = subprocess.run(["sh", "-c", f"printf '{piece}'"], capture_output=True)
        assert result.returncode == 0 and b"\\" not in result.stderr


def test_lines_fit_busybox_line_editor() -> None:
    """busybox sh's line editor keeps 1023 bytes of a line: a POSIX sh gets no longer,
    the clean transcript's header (cut when long) and erasure included."""
    for size in (10, 500, 800, 950, 5000):
        for look in (None, FarLook(2, 80, "[tmux-send] " + "é" * size)):
            lines = command_lines("posix", "0123456789", "é".encode() * size, look)
            assert all(len(line) < 1024 for line in lines), [len(line) for line in lines]
            quiet = quiet_lines("posix", "0123456789", "é".encode() * size, look)
            if quiet is not None:  # the line that reads the pieces, and the pieces
                assert all(len(line) < 1024 for line in [quiet[0], *quiet[1]]), quiet
    assert len(command_lines("bash", "0123456789", b"x" * 2900)) == 1
    for look in (None, FarLook(79, 80, "x")):
        lines = helpers_lines("posix", "0123456789", look)
        assert all(len(line) < 1024 for line in lines), [len(line) for line in lines]


def test_a_long_command_goes_in_short_pieces() -> None:
    """A command too long for one line goes in pieces of at most 1000 characters, which
    fish's and zsh's line editors take in less than half the time of 3000 (they slow
    down faster than the line grows); one that fits in a line stays one line."""
    for kind in ("bash", "zsh", "fish"):
        lines = command_lines(kind, "0123456789", b"x" * 14_000)
        pieces = lines[:-1]  # the last line runs the collected text
        assert len(pieces) == 14 and all(len(line) < 1050 for line in pieces), kind
        assert "".join(line.rsplit("'", 2)[1] for line in pieces) == "x" * 14_000
    assert len(command_lines("fish", "0123456789", b"x" * 2900)) == 1


def _stream(call_id: str, stdout: bytes, stderr: bytes, status: int, kind: str = "END") -> bytes:
    """What a far terminal sends for one call: echo, start marker, stdout with onlcr,
    the end marker after its own line end, stderr, the stderr end marker, a prompt."""
    onlcr = stdout.replace(b"\n", b"\r\n")
    return (
        b" __tmux_send_begin x; echo of the line\r\n"
        + f"___TMUXSEND_START_{call_id}___\r\n".encode()
        + onlcr
        + f"\r\n___TMUXSEND_{kind}_{call_id} {status}___".encode()
        + stderr.replace(b"\n", b"\r\n")
        + f"___TMUXSEND_ERR_{call_id}___\r\n$ ".encode()
    )


@pytest.mark.parametrize(
    "stdout", [b"", b"a\n", b"no newline", b"crlf\r\nx\r\n", b"\r\n\n\r", b"___TMUXSEND_\n"]
)
def test_scanner_at_every_split(stdout: bytes) -> None:
    stream = _stream("0123456789", stdout, b"err\n", 3)
    for split in range(len(stream) + 1):
        scanner = FarScanner("0123456789")
        out = scanner.feed(stream[:split]) + scanner.feed(stream[split:])
        assert (out, scanner.status, scanner.stderr, scanner.done) == (stdout, 3, b"err\n", True)


def _hidden_stream(call_id: str, stdout: bytes, stderr: bytes, status: int) -> bytes:
    """The same in the clean transcript: the typed line erased, the header, the markers
    in OSC strings, each end marker followed by the spaces, carriage return and erasure
    that start a line, the status line."""
    osc, pad = b"\x1b]777;tmux-send;", b" " * 79 + b"\r\x1b[K"
    return (
        b" __tmux_send_begin x '\\033[1A' 79; echo of the line\r\n"
        + b"\x1b[1A\x1b[3G\x1b[J\x1b[2m[tmux-send] cmd\x1b[0m\r\n"
        + osc
        + f"___TMUXSEND_START_{call_id}___\x07".encode()
        + stdout.replace(b"\n", b"\r\n")
        + osc
        + f"___TMUXSEND_END_{call_id} {status}___\x07".encode()
        + pad
        + stderr.replace(b"\n", b"\r\n")
        + osc
        + f"___TMUXSEND_ERR_{call_id}___\x07".encode()
        + pad
        + b"\x1b[2m[exit 3]\x1b[0m\r\n$ "
    )


@pytest.mark.parametrize(
    "stdout", [b"", b"a\n", b"no newline", b"crlf\r\nx\r\n", b"\x1b]777;x\x07\n", b"\x1b"]
)
def test_scanner_at_every_split_with_hidden_markers(stdout: bytes) -> None:
    stream = _hidden_stream("0123456789", stdout, b"err\n", 3)
    for split in range(len(stream) + 1):
        scanner = FarScanner("0123456789")
        out = scanner.feed(stream[:split]) + scanner.feed(stream[split:])
        assert (out, scanner.status, scanner.stderr, scanner.done) == (stdout, 3, b"err\n", True)


def test_scanner_exit_marker() -> None:
    scanner = FarScanner("0123456789")
    assert scanner.feed(_stream("0123456789", b"bye\n", b"", 3, "EXIT")) == b"bye\n"
    assert (scanner.status, scanner.shell_ended) == (3, True)


def test_parse_probe() -> None:
    facts = parse_probe(f"||3.6.0|/home/u|{HELPERS_VERSION}|u|web1|Linux|w".encode())
    assert (facts.shell, facts.version, facts.cwd, facts.helpers) == (
        "fish",
        "3.6.0",
        "/home/u",
        True,
    )
    assert (facts.user, facts.host, facts.os, facts.tmp_writable) == ("u", "web1", "Linux", True)
    assert parse_probe(b"|||/|").shell == "posix"
    assert parse_probe(b"|||/|").helpers is False
    # helpers an older tmux-send defined are defined anew
    assert parse_probe(b"||3.6.0|/home/u|2|u|web1|Linux|w").helpers is False


# the strict options people set in their shells, per shell binary (argv after the binary)
STRICT = [
    ("bash", ["-u"]),
    ("bash", ["-eu", "-o", "pipefail"]),
    ("zsh", ["-o", "nounset"]),
    ("zsh", ["-o", "nounset", "-o", "err_exit", "-o", "pipefail"]),
    ("dash", ["-eu"]),
    ("busybox", ["sh", "-eu", "-o", "pipefail"]),
    ("fish", []),
]


@pytest.mark.parametrize(
    ("shell", "options"), STRICT, ids=[" ".join([s[0], *s[1]]) for s in STRICT]
)
def test_lines_run_under_strict_options(shell: str, options: list[str]) -> None:
    """The probe, the helpers' definition and a command line, as a script of one shell
    with `set -u` (and `-e`, `pipefail`): each answers, none stops the shell."""
    kind = {"bash": "bash", "zsh": "zsh", "fish": "fish"}.get(shell, "posix")
    lines = [
        probe_line("0123456789"),
        helpers_line(kind, "0123456789"),  # type: ignore[arg-type]
        *command_lines(kind, "0123456789", b"echo out; echo err >&2"),  # type: ignore[arg-type]
        " echo still running",
    ]
    done = subprocess.run(
        [shell_path(shell), *options], input="\n".join(lines).encode(), capture_output=True
    )
    out = done.stdout.decode()
    version = {"bash": "5", "zsh": "5", "fish": "3"}.get(shell)
    answer = probe_pattern("0123456789").search(done.stdout)
    assert answer is not None, (out, done.stderr)
    assert parse_probe(answer.group(1)).shell == kind
    assert version is None or parse_probe(answer.group(1)).version.startswith(version)
    assert "TMUXSEND_DEF_0123456789 " + HELPERS_VERSION in out
    assert "\nout\n\n___TMUXSEND_END_0123456789 0___err\n" in out
    assert out.endswith("still running\n") and done.stderr == b"", done.stderr


# what zsh 5.9 prints after output with no line end: its PROMPT_SP mark (a user's; root's
# is "#"), then, once precmd ran, the prompt
ZSH_MARK = b"\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m" + b" " * 79 + b"\r \r"


@pytest.mark.parametrize(
    ("after", "prompt", "drawn"),
    [
        (b"\x07", "$", False),  # the hidden answer's end: nothing drawn yet
        (b"\x07" + ZSH_MARK, "$", False),  # zsh, before its precmd
        (b"\x07" + ZSH_MARK, "%", False),  # (a prompt that is the mark's character)
        (b"\x07" + ZSH_MARK + b"\r\x1b[0m\x1b[27m\x1b[24m\x1b[J$ \x1b[K\x1b[?2004h", "$", True),
        (b"\x07\x1b[?2004h$ ", "$", True),  # bash: bracketed paste on, then the prompt
        (b"\x1b]0;u@h: ~\x07\x1b[01;32mu@h\x1b[00m:\x1b[01;34m~\x1b[00m$ ", "u@h:~$", True),
        (b"\x1b[01;32mu@h\x1b[00m:", "u@h:~$", False),  # half of it
        (b"u@h ~> \r\x1b[K", "u@h ~>", False),  # drawn, then erased
        (b"\xff\xfe$ ", "$", True),  # bytes that are no UTF-8 before it
        (b"$ ", "", False),  # an empty prompt is never seen drawn
    ],
)
def test_the_far_prompt_is_seen_drawn_in_the_stream(after: bytes, prompt: str, drawn: bool) -> None:
    assert prompt_drawn(after, prompt) is drawn

"""What the agent gets back, byte for byte, against running the same command directly.

Each case runs through tmux-send in a real bash, zsh and fish pane and, for comparison,
as ``<shell> -c CMD`` into a pipe (what the agent would get running it itself).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.pane import TestPane, shell_path


def direct(bridge: TestPane, command: str) -> subprocess.CompletedProcess[bytes]:
    """``<shell> -c COMMAND`` with the bridge's environment, output into pipes."""
    return subprocess.run(
        [shell_path(bridge.shell), "-c", command],
        env=bridge.env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        cwd=bridge.home,
    )


# --- plain text comes back byte for byte ---------------------------------------------


class PlainCase(NamedTuple):
    test_id: str
    data: bytes


PLAIN = [
    PlainCase("tabs", b"a\tb\t\tc\n\tleading tab\n"),
    PlainCase("trailing-spaces", b"trail   \nx \n   \n"),
    PlainCase("blank-lines", b"a\n\n\nb\n\n"),
    PlainCase("utf8", "héllo 日本語 😀 ∑ ñ\n".encode()),
    PlainCase("no-final-newline", b"abc"),
    PlainCase("long-line", b"x" * 5000 + b"\n" + b"y" * 5000),
    PlainCase("invalid-utf8", b"\xff\xfe bad \xc3( bytes\n"),
    PlainCase("nul-bytes", b"a\x00b\n"),
    PlainCase("empty", b""),
]


@pytest.mark.parametrize("case", PLAIN, ids=[c.test_id for c in PLAIN])
def test_plain_output_is_byte_identical(
    shared_bridge: TestPane, tmp_path: Path, case: PlainCase
) -> None:
    path = tmp_path / "data"
    path.write_bytes(case.data)
    command = f"cat {path}"
    result = shared_bridge.send("--", command)
    expected = direct(shared_bridge, command)
    assert expected.stdout == case.data  # the comparison itself is sound
    assert result.stdout == expected.stdout
    assert result.returncode == 0, result.stderr


def test_printf_without_newline(shared_bridge: TestPane) -> None:
    result = shared_bridge.send("--", "printf abc")
    assert result.stdout == b"abc"
    assert result.stdout == direct(shared_bridge, "printf abc").stdout


def test_a_million_lines_arrive_intact(shared_bridge: TestPane) -> None:
    command = "seq 1 1000000"
    result = shared_bridge.send("--", command, timeout=120)
    expected = direct(shared_bridge, command).stdout
    assert len(result.stdout) == len(expected)
    assert hashlib.md5(result.stdout).hexdigest() == hashlib.md5(expected).hexdigest()
    assert result.returncode == 0


def test_output_beyond_the_scrollback_is_kept(shared_bridge: TestPane) -> None:
    limit = int(shared_bridge.pane("#{history_limit}"))
    count = limit * 3
    result = shared_bridge.send("--", f"seq 1 {count}", timeout=120)
    lines = result.stdout.split(b"\n")
    assert lines[0] == b"1"
    assert lines[-2] == str(count).encode()
    assert len(lines) == count + 1


# --- terminal control is removed, or kept with --raw ---------------------------------


class ControlCase(NamedTuple):
    test_id: str
    data: bytes
    visible: bytes  # what a terminal would leave on screen


CONTROL = [
    ControlCase(
        "colours", b"\x1b[1;31mred\x1b[0m plain \x1b[38;5;208mhue\x1b[m\n", b"red plain hue\n"
    ),
    ControlCase("progress-bar", b"10%\r50%\r100%\n", b"100%\n"),
    ControlCase("shorter-overwrite", b"abcdef\rXY\n", b"XYcdef\n"),
    ControlCase("erase-line", b"abcdef\r\x1b[Kxy\n", b"xy\n"),
    ControlCase("window-title", b"\x1b]0;a title\x07text\n", b"text\n"),
    ControlCase("title-with-st", b"\x1b]2;t\x1b\\text\n", b"text\n"),
    ControlCase("cursor-visibility", b"\x1b[?25lhidden\x1b[?25h\n", b"hidden\n"),
    ControlCase("backspace", b"abc\x08\x08X\n", b"aXc\n"),
    ControlCase("crlf", b"one\r\ntwo\r\n", b"one\ntwo\n"),
    ControlCase("bell", b"ding\x07\n", b"ding\n"),
    ControlCase("charset", b"\x1b(Bplain\x1b(0q\x1b(B\n", b"plainq\n"),
    ControlCase("keypad-modes", b"\x1b=\x1b>ok\n", b"ok\n"),
    ControlCase("progress-no-newline", b"1/3\r2/3\r3/3", b"3/3"),
    ControlCase("cursor-forward", b"a\x1b[3Cb\n", b"a   b\n"),
]


@pytest.mark.parametrize("case", CONTROL, ids=[c.test_id for c in CONTROL])
def test_terminal_control_is_reduced_to_visible_text(
    shared_bridge: TestPane, tmp_path: Path, case: ControlCase
) -> None:
    path = tmp_path / "data"
    path.write_bytes(case.data)
    result = shared_bridge.send("--", f"cat {path}")
    assert result.stdout == case.visible
    assert result.returncode == 0


@pytest.mark.parametrize("case", CONTROL, ids=[c.test_id for c in CONTROL])
def test_raw_passes_bytes_through(
    shared_bridge: TestPane, tmp_path: Path, case: ControlCase
) -> None:
    path = tmp_path / "data"
    path.write_bytes(case.data)
    result = shared_bridge.send("--raw", "--", f"cat {path}")
    assert result.stdout == case.data


def test_stderr_is_separate_and_cleaned(shared_bridge: TestPane, tmp_path: Path) -> None:
    out = tmp_path / "out"
    err = tmp_path / "err"
    out.write_bytes(b"to stdout\n")
    err.write_bytes(b"\x1b[31mto stderr\x1b[0m\n")
    result = shared_bridge.send("--", f"cat {out}; cat {err} >&2")
    assert result.stdout == b"to stdout\n"
    assert result.stderr == b"to stderr\n"


# --- the command reaches the shell exactly as given ----------------------------------


class QuotingCase(NamedTuple):
    test_id: str
    command: str
    shells: tuple[str, ...] = ("bash", "zsh", "fish")


QUOTING = [
    QuotingCase("quotes", """echo 'single' "double" mixed'quo'"tes" "it's" 'say "hi"'"""),
    QuotingCase("dollars", """echo "$HOME" '$HOME' \\$HOME"""),
    QuotingCase("bang", """echo "hi!" 'a!b' x!y "!!" '!$'"""),
    QuotingCase("comment", "echo a # a comment"),
    QuotingCase("globs-and-braces", "echo '[ab]' '*' '?' '{a,b}' ~ '~'"),
    QuotingCase("backslashes", r"""printf '%s\n' 'a\b' "c\\d" e\\f 'g\\h'"""),
    QuotingCase("tabs", "printf '%s\\n' 'a\tb' \"c\td\""),
    QuotingCase("unicode", "echo héllo 日本語 😀 ∑"),
    QuotingCase("trailing-semicolon", "echo x;"),
    QuotingCase("dash-arguments", "printf '%s\\n' -n --help -x -- -"),
    QuotingCase("control-characters", "printf '%s' 'a\x1bb\x03c\x04d\x1a' | od -An -c"),
    QuotingCase("multi-line", "echo one\necho two\n\necho three"),
    QuotingCase("pipes-and-lists", "echo a | tr a b; echo c && echo d || echo e"),
    QuotingCase("backticks", "echo `echo hi` $(echo there)", ("bash", "zsh")),
    QuotingCase("here-document", "cat <<'EOF'\nline $x `y`\n  indented\nEOF", ("bash", "zsh")),
    QuotingCase("for-loop", "for i in 1 2 3; do echo $i; done", ("bash", "zsh")),
    QuotingCase("fish-loop", "for i in 1 2 3; echo $i; end", ("fish",)),
    QuotingCase("fish-substitution", "echo (echo hi)", ("fish",)),
]


@pytest.mark.parametrize("case", QUOTING, ids=[c.test_id for c in QUOTING])
def test_command_reaches_the_shell_exactly(shared_bridge: TestPane, case: QuotingCase) -> None:
    if shared_bridge.shell not in case.shells:
        pytest.skip(f"{case.test_id} is not {shared_bridge.shell} syntax")
    result = shared_bridge.send("--", case.command)
    expected = direct(shared_bridge, case.command)
    assert expected.returncode == 0, expected.stderr  # the case itself is valid
    assert result.stdout == expected.stdout
    assert result.returncode == 0, result.stderr


class WordsCase(NamedTuple):
    test_id: str
    words: tuple[str, ...]


# Several arguments are one command and its exact arguments, as for sudo or env.
WORDS_CASES = [
    WordsCase("plain", ("one", "two", "three")),
    WordsCase("spaces", ("a b", "  lead", "trail  ")),
    WordsCase("expansions", ("$HOME", "*", "~", "{a,b}", "$(echo x)", "`echo y`", "!!")),
    WordsCase("quotes", ("it's", '"double"', "back\\slash", "\\'")),
    WordsCase("shell-syntax", (";", "&&", "|", "#", "a;b", "x=1", "=cmd", "%1", "(", ")")),
    WordsCase("empty", ("", "x", "")),
    WordsCase("newline-tab", ("line1\nline2", "tab\there")),
    WordsCase("unicode", ("café", "日本語", "ünï ", "\u00a0")),
    WordsCase("dashes", ("-n", "--", "-e")),
]

_SHOW_ARGV = "import json, sys; print(json.dumps(sys.argv[1:]))"


@pytest.mark.parametrize("case", WORDS_CASES, ids=[c.test_id for c in WORDS_CASES])
def test_several_arguments_are_one_command(shared_bridge: TestPane, case: WordsCase) -> None:
    result = shared_bridge.send("--", "python3", "-c", _SHOW_ARGV, *case.words)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == list(case.words)


def test_wrapper_examples(shared_bridge: TestPane, tmp_path: Path) -> None:
    notes = tmp_path / "file.txt"
    notes.write_text("a b\nab\na  b\n")
    assert shared_bridge.send("--", "grep", "a b", str(notes)).stdout == b"a b\n"
    assert shared_bridge.send("--", "printf", "%s\\n", "$HOME", "*").stdout == b"$HOME\n*\n"
    fish = shutil.which("fish")
    if fish is not None:
        result = shared_bridge.send("--", "fish", "-c", "echo one; echo two")
        assert result.stdout == b"one\ntwo\n"


def test_options_end_at_the_first_word_of_the_command(shared_bridge: TestPane) -> None:
    result = shared_bridge.send("printf", "%s,", "-t", "--raw")
    assert result.stdout == b"-t,--raw,"


def test_large_command_as_an_argument(shared_bridge: TestPane) -> None:
    payload = "x" * (120 * 1024)
    command = f"printf '%s' '{payload}' | wc -c"
    result = shared_bridge.send("--", command)
    assert result.stdout.split() == [str(len(payload)).encode()]


def test_megabyte_command_on_stdin(shared_bridge: TestPane) -> None:
    line = "printf '%s' '" + "y" * 1000 + "' >/dev/null\n"
    script = line * 1000 + "echo done\n"
    assert len(script) > 1_000_000
    result = shared_bridge.send("-", input=script.encode())
    assert result.stdout == b"done\n"
    assert result.returncode == 0, result.stderr


def test_typed_plumbing_is_one_short_line_without_the_marker(shared_bridge: TestPane) -> None:
    result = shared_bridge.send("--verbose-transcript", "--", "echo visible-to-the-person")
    assert result.returncode == 0
    lines = shared_bridge.history().split("\n")
    typed = [line for line in lines if line.startswith("$ ") and ".run" in line]
    assert typed, lines
    assert all(len(line) - 2 <= 80 for line in typed)
    assert not any("___TMUXSEND_" in line for line in typed)

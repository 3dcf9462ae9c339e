"""Quoting, the typed line, the runner scripts and the command banner, checked against the
real shells (bash, zsh, dash, fish) where a shell is the judge. No tmux needed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmux_bridge.text.shells import (
    RunnerSpec,
    ShellKind,
    display_command,
    parses_in_fish,
    quote,
    runner_script,
    typed_line,
)


class Shell(NamedTuple):
    kind: ShellKind
    binary: str
    run_flags: tuple[str, ...]  # before -c: no rc files, so the shell's defaults apply
    check_flag: str  # parse a file without running it


SHELLS = [
    Shell("bash", "bash", ("--norc", "--noprofile"), "-n"),
    Shell("zsh", "zsh", ("-f",), "-n"),
    Shell("posix", "dash", (), "-n"),
    Shell("fish", "fish", ("--no-config",), "--no-execute"),
]
SHELL_IDS = [shell.kind for shell in SHELLS]


def shell_path(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        pytest.skip(f"{binary} is not installed, so its quoting cannot be checked")
    return path


def shell_env(tmp_path: Path) -> dict[str, str]:
    """A bare environment: UTF-8 locale, and a HOME where fish may create its files."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path)}


# --- quote(): the shell must get the text back byte for byte ---------------------------


class QuoteCase(NamedTuple):
    test_id: str
    text: str


QUOTE_CASES = [
    QuoteCase("empty", ""),
    QuoteCase("safe-word", "abc_DEF-0.9/x:y@z%+=,"),
    QuoteCase("space", "two words"),
    QuoteCase("single-quote", "it's"),
    QuoteCase("only-single-quote", "'"),
    QuoteCase("quotes-mixed", "'\"'\"'"),
    QuoteCase("double-quote", 'say "hi"'),
    QuoteCase("backslash", "a\\b"),
    QuoteCase("backslash-at-end", "trailing\\"),
    QuoteCase("backslash-quote", "\\'"),
    QuoteCase("double-backslash", "\\\\"),
    QuoteCase("backslash-n-literal", "a\\nb"),
    QuoteCase("dollar", "$HOME ${x} $(id) $'\\n'"),
    QuoteCase("backtick", "`id`"),
    QuoteCase("bang", "!! !$ !-1"),
    QuoteCase("glob", "* ? [a] {a,b} ~ ~root"),
    QuoteCase("operators", "a;b|c&d>e<f (g) #h"),
    QuoteCase("newline", "line1\nline2\n"),
    QuoteCase("tab", "a\tb"),
    QuoteCase("carriage-return", "a\rb"),
    QuoteCase("unicode", "héllo 日本語 😀"),
    QuoteCase("leading-dash", "-n"),
    QuoteCase("leading-dashes", "--version"),
    QuoteCase("escape", "\x1b[31mred\x1b[0m"),
    QuoteCase("control-chars", "\x01\x02\x07\x08\x7f"),
    QuoteCase("leading-equals-only", "="),
    QuoteCase("equals-inside", "a=b"),
    QuoteCase("leading-equals-command", "=ls"),
    QuoteCase("percent-self", "%self"),
    QuoteCase("percent", "%1"),
]

QUOTE_PARAMS = [
    pytest.param(shell, case, id=f"{shell.kind}-{case.test_id}")
    for shell in SHELLS
    for case in QUOTE_CASES
]


@pytest.mark.parametrize(("shell", "case"), QUOTE_PARAMS)
def test_quote_round_trip(shell: Shell, case: QuoteCase, tmp_path: Path) -> None:
    script = "printf '%s' " + quote(shell.kind, case.text)
    result = subprocess.run(
        [shell_path(shell.binary), *shell.run_flags, "-c", script],
        capture_output=True,
        env=shell_env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, b""), script
    assert result.stdout == case.text.encode(), script


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_quote_is_one_word(shell: Shell, tmp_path: Path) -> None:
    texts = [case.text for case in QUOTE_CASES]
    script = "printf '<%s>' " + " ".join(quote(shell.kind, text) for text in texts)
    result = subprocess.run(
        [shell_path(shell.binary), *shell.run_flags, "-c", script],
        capture_output=True,
        env=shell_env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(f"<{text}>" for text in texts).encode()


# --- typed_line(): short, out of history, no marker text -------------------------------

RUNNER_PATH = "/tmp/tmux-bridge-someuser/0123456789.run"


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_typed_line_is_short(shell: Shell) -> None:
    line = typed_line(shell.kind, RUNNER_PATH)
    assert len(line) <= 80
    assert line.startswith(" ")
    assert "___TMUXSEND_" not in line
    assert "\n" not in line
    assert RUNNER_PATH in line


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("bash", " . /tmp/tmux-bridge-someuser/0123456789.run"),
        ("zsh", " . /tmp/tmux-bridge-someuser/0123456789.run"),
        ("posix", " . /tmp/tmux-bridge-someuser/0123456789.run"),
        ("fish", " source /tmp/tmux-bridge-someuser/0123456789.run"),
    ],
)
def test_typed_line_exact(kind: ShellKind, expected: str) -> None:
    assert typed_line(kind, RUNNER_PATH) == expected


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_typed_line_sources_a_path_that_needs_quoting(shell: Shell, tmp_path: Path) -> None:
    directory = tmp_path / "it's a dir"
    directory.mkdir()
    runner = directory / "0123456789.run"
    runner.write_text("echo sourced\n")
    result = subprocess.run(
        [shell_path(shell.binary), *shell.run_flags, "-c", typed_line(shell.kind, str(runner))],
        capture_output=True,
        env=shell_env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"sourced\n", b"")


# --- runner_script(): every kind parses in its own shell -------------------------------

NASTY_SPEC = RunnerSpec(
    call_id="0123456789",
    runner_path='/tmp/tmux bridge/it\'s "a" $dir/0123456789.run',
    command_path='/tmp/tmux bridge/it\'s "a" $dir/0123456789.cmd',
    stdout_tty="/dev/pts/3",
    stderr_tty="/tmp/tmux bridge/'err' tty",
    banner="[tmux-send] echo 'single' \"double\" $HOME `id` \\ !!\n  second line; done",
    shell_binary="/opt/my shells/it's/bin/sh",
    erase=r"\033[2A\033[3G\033[J",
)


# Without relay terminals, as when a REPL is started: the command writes to the pane.
NO_RELAY_SPEC = NASTY_SPEC._replace(stdout_tty="", stderr_tty="")
RUNNER_PARAMS = [
    pytest.param(shell, spec, id=f"{shell.kind}-{name}")
    for shell in SHELLS
    for name, spec in (
        ("relays", NASTY_SPEC),
        ("no-relays", NO_RELAY_SPEC),
        ("verbose", NASTY_SPEC._replace(erase=None)),
        ("no-relays-verbose", NO_RELAY_SPEC._replace(erase=None)),
        ("unchecked", NASTY_SPEC._replace(check=False)),
    )
]


@pytest.mark.parametrize(("shell", "spec"), RUNNER_PARAMS)
def test_runner_script_parses(shell: Shell, spec: RunnerSpec, tmp_path: Path) -> None:
    script = runner_script(shell.kind, spec)
    path = tmp_path / "runner"
    path.write_text(script)
    result = subprocess.run(
        [shell_path(shell.binary), *shell.run_flags, shell.check_flag, str(path)],
        capture_output=True,
        env=shell_env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, b""), script
    for value in (spec.command_path, spec.stderr_tty, spec.banner):
        if value:
            assert quote(shell.kind, value) in script


@pytest.mark.parametrize(("shell", "spec"), RUNNER_PARAMS)
def test_runner_script_has_no_placeholders_left(shell: Shell, spec: RunnerSpec) -> None:
    script = runner_script(shell.kind, spec)
    values = "".join(str(value) for value in spec)
    assert not re.search(r"@[A-Za-z_]+@", values)  # none came in with the values
    assert re.findall(r"@[A-Z_]+@", script) == [], script
    if not spec.stdout_tty:  # nothing is redirected to or from a relay that is not there
        assert re.findall(r"[<>] *''", script) == [], script


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_placeholders_in_the_command_stay_as_they_are(shell: Shell) -> None:
    """The banner shows the agent's command, which may hold placeholder-like words."""
    words = "@START@ @END@ @SH@ @PAGERS@ @CMD@ @REDIRECT@"
    spec = NASTY_SPEC._replace(banner=f"[tmux-send] echo {words}")
    script = runner_script(shell.kind, spec)
    assert quote(shell.kind, spec.banner) in script
    assert script.count("___TMUXSEND_START_0123456789___") == 1, script


# --- display_command(): nothing in the banner can drive the terminal -------------------


class DisplayCase(NamedTuple):
    test_id: str
    command: str
    shown: str  # after the "[tmux-send] " prefix


DISPLAY_CASES = [
    DisplayCase("plain", "ls -la", "ls -la"),
    DisplayCase("tab-kept", "printf 'a\tb'", "printf 'a\tb'"),
    DisplayCase("newline-kept", "echo 1\necho 2", "echo 1\necho 2"),
    DisplayCase("escape", "echo \x1b[31mred\x1b[0m", "echo ^[[31mred^[[0m"),
    DisplayCase("bel-cr-bs", "a\x07b\rc\x08d", "a^Gb^Mc^Hd"),
    DisplayCase("nul-and-del", "a\x00b\x7f", "a^@b^?"),
    DisplayCase("c1-csi", "a\x9b31mb", "a\\x9b31mb"),
    DisplayCase("surrogate-escaped-byte", "cat \udcff", "cat \\xff"),
    DisplayCase("unicode-kept", "echo héllo 日本語", "echo héllo 日本語"),
]


@pytest.mark.parametrize("case", DISPLAY_CASES, ids=[c.test_id for c in DISPLAY_CASES])
def test_display_command(case: DisplayCase) -> None:
    assert display_command(case.command) == "[tmux-send] " + case.shown


def _assert_inert(text: str) -> None:
    """No byte that a terminal acts on: C0 except newline and tab, DEL, C1."""
    data = text.encode("utf-8")  # strict: no surrogates left either
    assert b"\x1b" not in data
    assert all(byte >= 0x20 or byte in b"\n\t" for byte in data)
    assert "\x7f" not in text
    assert not any(0x80 <= ord(ch) < 0xA0 for ch in text)


def test_display_command_every_control_char_is_visible() -> None:
    command = "".join(chr(code) for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)])
    shown = display_command(command + "\x1b]0;title\x07 \udc9b")
    assert shown.startswith("[tmux-send] ")
    _assert_inert(shown)


def test_display_command_many_lines_shows_the_start_and_the_end() -> None:
    command = "\n".join(f"echo {n}" for n in range(20))
    shown = display_command(command)
    assert shown.startswith("[tmux-send] echo 0\n")
    lines = shown.split("\n")
    assert lines[:8] == ["[tmux-send] echo 0", *(f"echo {n}" for n in range(1, 8))]
    left_out = "\n".join(f"echo {n}" for n in range(8, 17))  # with the breaks around it
    assert lines[8] == (
        f"[... 9 lines and {len(left_out) + 2} characters not shown, "
        f"of 20 lines and {len(command)} characters ...]"
    )
    assert lines[9:] == ["echo 17", "echo 18", "echo 19"]


def test_display_command_a_padded_line_shows_its_end() -> None:
    command = "echo " + "x\x1b" * 5000 + "; rm -rf ~"  # the ESCs shown as ^[
    shown = display_command(command)
    assert shown.startswith("[tmux-send] echo x^[x^[")
    head, note, tail = shown.split("\n")
    assert head == "[tmux-send] " + command[:3000].replace("\x1b", "^[")  # 3000 characters
    assert note == (
        f"[... 0 lines and {len(command) - 4000} characters not shown, "
        f"of 1 lines and {len(command)} characters ...]"
    )
    assert tail == command[-1000:].replace("\x1b", "^[")  # the last 1000, the end too
    assert tail.endswith("x^[; rm -rf ~")
    _assert_inert(shown)


# --- parses_in_fish(): a line the fish runner sources without checking it first --------


def _fish_parses(command: bytes, tmp_path: Path) -> bool:
    path = tmp_path / "command.fish"
    path.write_bytes(command)
    result = subprocess.run(
        [shell_path("fish"), "--no-config", "--no-execute", str(path)],
        capture_output=True,
        env=shell_env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )
    return result.returncode == 0


_PLAIN = "abcXYZ019_./:@+,-"
_WORDS = st.one_of(  # plain words, and keywords of fish
    st.text(alphabet=_PLAIN, min_size=1, max_size=8),
    st.sampled_from(["end", "if", "else", "case", "and", "or", "not", "begin", "for", "in"]),
)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_WORDS, min_size=1, max_size=5))
def test_a_line_fish_is_vouched_for_parses_in_fish(words: list[str], tmp_path_factory: Any) -> None:
    """Every line parses_in_fish vouches for, fish itself parses (the runner then skips
    its check); keywords appear among the words, first or not."""
    command = " ".join(words).encode()
    if parses_in_fish(command):
        assert _fish_parses(command, tmp_path_factory.mktemp("fish")), command


@pytest.mark.parametrize(
    "command",
    [b"end", b"if true", b"else", b"case x", b"break", b"continue", b"-x", b"echo 'a'",
     b"echo $x", b"a=b", b"echo (x", b"true; end", b"echo a\nb", b"true\nend", b"echo  a",
     b"ls *.py", b"echo ~", b"echo %self", b"echo {a,b}", b"time", b""],
)  # fmt: skip
def test_lines_that_may_not_parse_are_checked(command: bytes) -> None:
    assert not parses_in_fish(command)


@pytest.mark.parametrize(
    "command", [b"true", b"ls -la", b"git status", b"echo end", b"make test-all", b"true\n"]
)
def test_plain_lines_are_not_checked(command: bytes) -> None:
    assert parses_in_fish(command)


def test_the_fish_runner_leaves_its_check_out_only_when_told() -> None:
    checked = runner_script("fish", NASTY_SPEC)
    unchecked = runner_script("fish", NASTY_SPEC._replace(check=False))
    assert "--no-execute" in checked and "--no-execute" not in unchecked
    assert "# check" not in checked + unchecked
    assert "and begin; source" in unchecked  # after the header's printf, which succeeds

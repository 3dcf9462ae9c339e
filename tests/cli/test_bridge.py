"""tmux-bridge, the person's side: creating, attaching, switching; the person's view."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from ..support.pane import BIN, MakeBridge, TestPane
from ..support.tmuxserver import RC_FILES


def _detach(b: TestPane, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "tmux-bridge"), "--detach"],
        env=env or b.env,
        capture_output=True,
        text=True,
        cwd=b.home,
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_detach_creates_the_session_with_the_users_shell(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    b = make_bridge(shell)
    result = _detach(b)
    assert (result.returncode, result.stdout) == (0, f"{b.session}\n"), result.stderr
    b.wait_for_prompt()
    assert b.pane("#{pane_current_command}") == shell
    assert b.pane("#{pane_current_path}") == str(b.home)
    assert oct(b.runtime.stat().st_mode & 0o777) == oct(0o700)


def test_the_pane_gets_a_long_scrollback_and_the_server_keeps_its_own(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.tmux("new-session", "-d", "-s", "persons-own-session")
    default = b.tmux("show-options", "-gv", "history-limit").strip()
    assert _detach(b).returncode == 0
    assert int(b.pane("#{history_limit}")) >= 50000
    assert b.tmux("show-options", "-gv", "history-limit").strip() == default
    assert b.tmux("show-options", "-gqv", "@tmux-bridge-saved-history-limit").strip() == ""


def test_detach_again_keeps_the_running_session(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    assert _detach(b).returncode == 0
    b.wait_for_prompt()
    pid = b.pane("#{pane_pid}")
    assert _detach(b).stdout == f"{b.session}\n"
    assert b.pane("#{pane_pid}") == pid
    assert b.tmux("list-sessions", "-F", "#{session_name}").split() == [b.session]


def test_session_name_defaults_to_the_account_name(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    env = {k: v for k, v in b.env.items() if k not in ("USER", "TMUX_BRIDGE_SESSION")}
    account = pwd.getpwuid(os.geteuid()).pw_name
    result = _detach(b, env)
    assert result.stdout == f"tmux-bridge-{account}\n", result.stderr
    env["USER"] = "someone"
    assert _detach(b, env).stdout == "tmux-bridge-someone\n"


def test_tmux_send_finds_the_pane_tmux_bridge_made(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    assert _detach(b).returncode == 0
    b.wait_for_prompt()
    # the person opens another window in the bridge session and works there
    b.tmux("new-window", "-t", f"={b.session}:", "--", "sh")
    assert b.send_text("--", "echo in-the-bridge-pane") == (0, "in-the-bridge-pane\n", "")
    first = b.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", f"={b.session}:^.0")
    assert "in-the-bridge-pane" in first


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_detach_returns_once_the_shell_takes_a_call(make_bridge: MakeBridge, shell: str) -> None:
    """A script's `tmux-bridge -d && tmux-send ...` runs its call, even where the shell's
    startup files take a second (a call into a shell still reading them is refused as
    busy); the prompt it learnt lets the first call see a half-typed line."""
    b = make_bridge(shell, {name: text + "sleep 1\n" for name, text in RC_FILES.items()})
    assert _detach(b).returncode == 0
    assert b.send_text("--", "echo", "first") == (0, "first\n", "")
    b.person_types("half")
    b.wait_for(lambda: b.screen().rstrip().endswith("$ half"), "the typed text")
    code, _, err = b.send_text("--", "true")
    assert code == 125 and "`half`" in err, err


def test_detach_does_not_wait_for_a_program_that_is_no_shell(
    make_bridge: MakeBridge, tmp_path: Path
) -> None:
    """A login shell tmux-send cannot drive shows no prompt to wait for: --detach
    returns (bounded here far below its 15 s wait), and a call says what runs there."""
    b = make_bridge("bash")
    program = tmp_path / "notashell"
    program.write_text("#!/bin/sh\nexec sleep 60\n")
    program.chmod(0o755)
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "--detach"],
        env={**b.env, "SHELL": str(program)},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert result.returncode == 0, result.stderr
    code, _, err = b.send_text("--", "true")
    assert code == 125 and "runs `sleep`, not a shell" in err, err
    # a split whose COMMAND would be typed there says so rather than wait
    split = subprocess.run(
        [str(BIN / "tmux-bridge"), "split", "--", "echo", "hi"],
        env={**b.env, "SHELL": str(program)},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert split.returncode == 125 and "runs `sleep`, not a shell" in split.stderr, split


def test_help_shows_examples() -> None:
    result = subprocess.run([str(BIN / "tmux-bridge"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "Examples:" in result.stdout and "--detach" in result.stdout


# --- a real terminal: the person's view -------------------------------------------------


@pytest.fixture
def person(make_bridge: Callable[[str], TestPane]) -> Iterator[tuple[TestPane, pexpect.spawn]]:
    b = make_bridge("bash")
    term = pexpect.spawn(
        str(BIN / "tmux-bridge"), env=b.env, cwd=str(b.home), dimensions=(30, 100), timeout=15
    )
    try:
        yield b, term
    finally:
        term.close(force=True)


@pytest.mark.pty
def test_person_attaches_and_watches_the_agents_command(
    person: tuple[TestPane, pexpect.spawn],
) -> None:
    b, term = person
    b.wait_for_prompt()
    assert b.send_text("--", "echo seen-by-$((6*7))") == (0, "seen-by-42\n", "")
    term.expect("seen-by-42")
    term.send("\x02d")  # the person detaches (prefix C-b, d)
    term.expect(pexpect.EOF)
    term.close()
    assert term.exitstatus == 0
    assert b.send_text("--", "echo still-running") == (0, "still-running\n", "")


@pytest.mark.pty
def test_running_tmux_bridge_again_reattaches(person: tuple[TestPane, pexpect.spawn]) -> None:
    b, term = person
    b.wait_for_prompt()
    b.send_text("--", "echo earlier-output")
    term.send("\x02d")
    term.expect(pexpect.EOF)
    again = pexpect.spawn(
        str(BIN / "tmux-bridge"), env=b.env, cwd=str(b.home), dimensions=(30, 100), timeout=15
    )
    try:
        again.expect("earlier-output")
        assert b.tmux("list-sessions", "-F", "#{session_name}").split() == [b.session]
    finally:
        again.close(force=True)


@pytest.mark.pty
def test_inside_tmux_it_switches_the_client_instead_of_nesting(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.tmux("new-session", "-d", "-s", "work", "--", "bash", "--norc", "--noprofile")
    term = pexpect.spawn(
        "tmux",
        ["-L", "default", "attach-session", "-t", "=work"],
        env=b.env,
        dimensions=(30, 100),
        timeout=15,
    )
    try:
        b.wait_for(
            lambda: b.tmux("list-clients", "-F", "#{client_session}").strip() == "work",
            "the client",
        )
        b.tmux("send-keys", "-t", "=work:", f"{BIN / 'tmux-bridge'}", "Enter")
        b.wait_for(
            lambda: b.tmux("list-clients", "-F", "#{client_session}").strip() == b.session,
            "the client to switch to the bridge",
        )
        assert len(b.tmux("list-clients").splitlines()) == 1  # one client: no nesting
    finally:
        term.close(force=True)


# --- a terminal that reports its size as 0x0 (some IDE and CI terminals, `script` under
# a parent without a terminal): tmux refuses -x 0 -y 0, so the size must be ignored


@pytest.mark.pty
def test_detach_from_a_terminal_of_size_zero_uses_tmuxs_default_size(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    term = pexpect.spawn(
        str(BIN / "tmux-bridge"), ["--detach"], env=b.env, cwd=str(b.home), dimensions=(0, 0)
    )
    try:
        term.expect(pexpect.EOF, timeout=15)
    finally:
        term.close(force=True)
    output = term.before.decode("utf-8", "replace")
    assert (term.exitstatus, output) == (0, f"{b.session}\r\n")
    b.wait_for_prompt()
    default = b.tmux("show-options", "-gv", "default-size").strip()
    assert f"{b.pane('#{pane_width}')}x{b.pane('#{pane_height}')}" == default
    assert b.send_text("--", "echo works") == (0, "works\n", "")


@pytest.mark.pty
def test_person_attaches_from_a_terminal_of_size_zero(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    term = pexpect.spawn(
        str(BIN / "tmux-bridge"), env=b.env, cwd=str(b.home), dimensions=(0, 0), timeout=15
    )
    try:
        b.wait_for(lambda: b.tmux("list-clients", check=False).strip() != "", "the client")
        b.wait_for_prompt()
        assert b.send_text("--", "echo seen-by-$((6*7))") == (0, "seen-by-42\n", "")
        term.expect("seen-by-42")
        term.send("\x02d")  # the person detaches (prefix C-b, d)
        term.expect(pexpect.EOF)
        term.close()
        assert term.exitstatus == 0
    finally:
        term.close(force=True)

"""tmux-send in command mode against a real bridge pane: state, statuses, streaming, input."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.pane import BIN, TestPane


def test_stdout_stderr_and_status_come_back_separately(bridge: TestPane) -> None:
    code, out, err = bridge.send_text("--", "echo out; echo err >&2; false")
    assert (code, out, err) == (1, "out\n", "err\n")


def test_shell_state_persists_between_calls(bridge: TestPane, tmp_path: Path) -> None:
    if bridge.shell == "fish":
        setup = f"cd {tmp_path}; set -gx TB_VALUE 42; function tbf; echo in-function; end"
    else:
        setup = (
            f"cd {tmp_path}; export TB_VALUE=42; tbf() {{ echo in-function; }}; "
            "alias tba='echo in-alias'"
        )
    assert bridge.send_text("--", setup)[0] == 0
    code, out, _ = bridge.send_text("--", "pwd; echo $TB_VALUE; tbf")
    assert (code, out) == (0, f"{tmp_path}\n42\nin-function\n")
    if bridge.shell != "fish":
        assert bridge.send_text("--", "tba")[1] == "in-alias\n"
    # the exported variable reaches child processes too
    assert bridge.send_text("--", "sh -c 'echo $TB_VALUE'")[1] == "42\n"


class StatusCase(NamedTuple):
    test_id: str
    command: str
    status: int


STATUSES = [
    StatusCase("zero", "true", 0),
    StatusCase("one", "false", 1),
    StatusCase("child-exit-7", "sh -c 'exit 7'", 7),
    StatusCase("max", "sh -c 'exit 255'", 255),
    StatusCase("not-found", "tb-no-such-command-anywhere", 127),
    StatusCase("sigint", "sh -c 'kill -INT $$'", 128 + signal.SIGINT),
    StatusCase("sigquit", "sh -c 'kill -QUIT $$'", 128 + signal.SIGQUIT),
    StatusCase("sigkill", "sh -c 'kill -KILL $$'", 128 + signal.SIGKILL),
    StatusCase("sigterm", "sh -c 'kill -TERM $$'", 128 + signal.SIGTERM),
]


@pytest.mark.parametrize("case", STATUSES, ids=[c.test_id for c in STATUSES])
def test_exit_status_is_the_commands(shared_bridge: TestPane, case: StatusCase) -> None:
    code, _, err = shared_bridge.send_text("--", case.command)
    assert code == case.status, err
    # and the shell is back at a clean prompt for the next call
    assert shared_bridge.send_text("--", "echo next") == (0, "next\n", "")


def test_command_sees_terminals(bridge: TestPane) -> None:
    if bridge.shell == "fish":  # fish's builtin test says "no" for redirected builtins
        command = "command test -t 0; and command test -t 1; and command test -t 2; and echo ttys"
    else:
        command = "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo ttys"
    assert bridge.send_text("--", command) == (0, "ttys\n", "")


def test_terminal_size_is_the_panes(bridge: TestPane) -> None:
    width, height = bridge.pane("#{pane_width} #{pane_height}").split()
    assert bridge.send_text("--", "stty size")[1] == f"{height} {width}\n"


def test_syntax_error_fails_at_once_and_leaves_a_clean_prompt(bridge: TestPane) -> None:
    code, out, err = bridge.send_text("--", 'echo "unterminated')
    assert code != 0
    assert out == ""
    shells_words = {
        "bash": "unexpected EOF while looking for matching",
        "zsh": "unmatched",
        "fish": "quotes are not balanced",
    }
    assert shells_words[bridge.shell] in err
    bridge.wait_for_prompt()
    assert bridge.send_text("--", "echo fine") == (0, "fine\n", "")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("echo plain-words.ok", "plain-words.ok"),  # no check: it cannot misparse
        ("end", "'end' outside of a block"),  # a keyword first: checked
        ("if true", "Missing end to balance this if statement"),
        ("echo 'a", "quotes are not balanced"),
    ],
)
def test_fish_checks_every_line_that_could_misparse(
    make_bridge: Callable[..., TestPane], line: str, expected: str
) -> None:
    """fish sources a line of plain words without its syntax check; any other line is
    checked first, so fish's own complaint is on the agent's stderr (sourced unchecked,
    the agent would get only "Error while reading file", the complaint in the pane)."""
    bridge = make_bridge("fish")
    bridge.start()
    code, out, err = bridge.send_text("--", line)
    if line.startswith("echo plain"):
        assert (code, out, err) == (0, expected + "\n", "")
    else:
        assert code != 0 and out == ""
        assert expected in err, err
    bridge.wait_for_prompt()
    assert bridge.send_text("--", "echo fine") == (0, "fine\n", "")


def _wait_until_file(bridge: TestPane, path: Path) -> None:
    bridge.wait_for(path.exists, f"{path} to appear")


def test_output_streams_while_the_command_runs(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = (
        f"echo first; echo first-err >&2; while [ ! -e {go} ]; do sleep 0.02; done; echo second"
    )
    proc = bridge.start_send("--", f"sh -c '{script}'")
    assert proc.stderr is not None
    # the first lines reach us before the command can finish (it waits for `go`)
    assert bridge.read_line(proc) == b"first\n"
    assert bridge.read_line_from(proc.stderr) == b"first-err\n"
    assert proc.poll() is None
    go.touch()
    out, _err = proc.communicate(timeout=30)
    assert out == b"second\n"
    assert proc.returncode == 0


def test_person_typing_reaches_the_command(bridge: TestPane) -> None:
    proc = bridge.start_send("--", 'read answer; echo "got $answer"')
    # keys typed once the runner runs wait in the terminal until `read` takes them
    bridge.wait_for(lambda: "[tmux-send] read answer" in bridge.history(), "the call to start")
    bridge.tmux("send-keys", "-t", bridge.target, "-l", "hi there")
    bridge.tmux("send-keys", "-t", bridge.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert out == b"got hi there\n", err
    assert proc.returncode == 0


def test_person_sees_command_output_and_status(bridge: TestPane) -> None:
    code, _, _ = bridge.send_text("--", "echo seen-by-person; echo err-seen >&2; sh -c 'exit 3'")
    assert code == 3
    # the header, the output, the status line: nothing of tmux-send's plumbing
    bridge.wait_for(lambda: "[exit 3]" in bridge.history(), "the status line")
    lines = [line.rstrip() for line in bridge.history().split("\n")]
    at = lines.index("$ [tmux-send] echo seen-by-person; echo err-seen >&2; sh -c 'exit 3'")
    assert lines[at + 1 : at + 4] == ["seen-by-person", "err-seen", "[exit 3]"], lines
    assert not [line for line in lines if "TMUXSEND" in line or ".run" in line], lines


def test_output_without_newline_does_not_glue_to_the_prompt(bridge: TestPane) -> None:
    assert bridge.send_text("--", "printf no-newline")[1] == "no-newline"
    bridge.wait_for(lambda: bridge.history().rstrip().endswith("no-newline\n$"), "the prompt")


def test_works_from_inside_another_tmux(bridge: TestPane) -> None:
    env = dict(bridge.env, TMUX="/tmp/some-other-server,1234,0", TMUX_PANE="%9")
    result = subprocess.run(
        [str(BIN / "tmux-send"), "--", "echo here"], env=env, capture_output=True, timeout=30
    )
    assert result.stdout == b"here\n", result.stderr


def test_command_that_ends_the_shell_leaves_a_usable_bridge(bridge: TestPane) -> None:
    command = "exec sh -c 'exit 3'" if bridge.shell == "fish" else "exit 3"
    code, _, err = bridge.send_text("--", command)
    assert code == 3
    assert "ended the bridge's shell" in err
    assert bridge.send_text("--", "echo still-here") == (0, "still-here\n", "")


@pytest.mark.parametrize("command", ["exec true", "set -e; false"], ids=["exec", "errexit"])
def test_exec_and_errexit_do_not_take_the_terminal_away(bridge: TestPane, command: str) -> None:
    if bridge.shell == "fish" and command.startswith("set -e"):
        pytest.skip("fish has no errexit")
    code, _, err = bridge.send_text("--", command)
    assert code == (0 if command == "exec true" else 1), err
    assert "ended the bridge's shell" in err
    assert bridge.pane("#{pane_dead}") == "0"
    assert bridge.send_text("--", "echo alive") == (0, "alive\n", "")


def test_files_are_removed_after_each_call(bridge: TestPane) -> None:
    assert bridge.send_text("--", "echo x")[0] == 0
    assert bridge.runtime_files() == bridge.between_calls()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_hand_made_session_works(make_bridge: Callable[[str], TestPane], shell: str) -> None:
    b = make_bridge(shell)
    b.tmux("new-session", "-d", "-s", b.session)
    b.wait_for_prompt()
    assert b.send_text("--", "echo hand-made") == (0, "hand-made\n", "")
    assert b.send_text("--", "exit 4" if shell != "fish" else "exec sh -c 'exit 4'")[0] == 4
    assert b.send_text("--", "echo after") == (0, "after\n", "")


def _modules_loaded(bridge: TestPane, *args: str) -> tuple[int, bytes, set[str]]:
    """Run ``tmux-send ARGS`` with Python's import report on; its status, stdout and
    the top-level modules it imported."""
    result = subprocess.run(
        [str(BIN / "tmux-send"), *args],
        env={**bridge.env, "PYTHONPROFILEIMPORTTIME": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    names = {
        line.rsplit(b"|", 1)[1].strip().split(b".")[0].decode()
        for line in result.stderr.splitlines()
        if line.startswith(b"import time:")
    }
    return result.returncode, result.stdout, names


def test_a_common_call_starts_without_click(bridge: TestPane) -> None:
    """Start-up is part of every call: the usual command lines are read without click;
    the others (here --check) still are, by click."""
    pane = bridge.tmux("display-message", "-p", "-t", bridge.session, "#{pane_id}").strip()
    for args in (["--", "echo", "hi"], ["-p", pane, "--timeout", "5", "--raw", "echo hi"]):
        code, out, names = _modules_loaded(bridge, *args)
        assert (code, out) == (0, b"hi\n")
        assert "tmux_bridge" in names and "click" not in names, args
    code, out, names = _modules_loaded(bridge, "--check", "--", "true")
    assert code == 0 and "click" in names

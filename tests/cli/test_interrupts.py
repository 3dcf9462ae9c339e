"""Timeouts, the Ctrl-C / Ctrl-\\ ladder, a person's Ctrl-C, signals to tmux-send itself,
and the session or server going away mid-command."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from ..support.pane import TestPane

# "started" comes from the program itself, already in the foreground: with a shell
# builtin `echo`, a Ctrl-C sent right after it can reach the shell while it forks
# `sleep`, which the shell then starts anyway (the person's Ctrl-C is lost the same way).
_STARTED_THEN_SLEEP = "sh -c 'echo started; exec sleep 30'"


def test_idle_timeout_interrupts_with_sigint(bridge: TestPane) -> None:
    code, out, err = bridge.send_text("--timeout", "0.5", "--", "echo started; sleep 30")
    assert code == 124
    assert out == "started\n"  # the partial output
    assert "idle timeout" in err
    assert "Sent SIGINT to the command" in err
    assert "SIGQUIT" not in err
    assert "prompt came back" in err
    assert "Last lines of the bridge terminal" in err
    assert bridge.send_text("--", "echo usable") == (0, "usable\n", "")


def test_output_keeps_the_idle_timeout_away(bridge: TestPane) -> None:
    # 1.6 s in all, longer than the idle timeout, but never 1 s without output
    command = "for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.2; done"
    if bridge.shell == "fish":
        command = "for i in 1 2 3 4 5 6 7 8; echo $i; sleep 0.2; end"
    code, out, err = bridge.send_text("--timeout", "1", "--", command)
    assert (code, out) == (0, "1\n2\n3\n4\n5\n6\n7\n8\n"), err


def test_overall_timeout(bridge: TestPane) -> None:
    command = "while true; do echo tick; sleep 0.1; done"
    if bridge.shell == "fish":
        command = "while true; echo tick; sleep 0.1; end"
    code, out, err = bridge.send_text("--max-time", "1", "--", command)
    assert code == 124
    assert out.startswith("tick\n")
    assert "overall timeout" in err
    assert bridge.send_text("--", "echo usable") == (0, "usable\n", "")


def test_sigquit_follows_when_sigint_is_ignored(bridge: TestPane) -> None:
    code, _, err = bridge.send_text(
        "--timeout", "0.3", "--", "bash -c \"trap '' INT; echo ignoring; sleep 30\""
    )
    assert code == 124
    assert "Sent SIGINT then SIGQUIT" in err
    assert "prompt came back" in err
    assert bridge.send_text("--", "echo usable") == (0, "usable\n", "")


def test_a_command_surviving_both_signals_is_reported(bridge: TestPane, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    command = f"bash -c \"trap '' INT QUIT; echo \\$\\$ > {pidfile}; sleep 60\""
    code, _, err = bridge.send_text("--timeout", "0.3", "--", command)
    assert code == 124
    assert "survived SIGINT and SIGQUIT" in err
    # the bridge refuses to type over the survivor
    code, _, err = bridge.send_text("--", "echo no")
    assert code == 125
    assert "is running in it" in err
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    bridge.wait_for(
        lambda: bridge.send_text("--", "echo back")[0] == 0, "the bridge to be usable again"
    )


def test_person_pressing_ctrl_c_ends_the_call_with_130(bridge: TestPane) -> None:
    proc = bridge.start_send("--", _STARTED_THEN_SLEEP)
    bridge.wait_for_call_start(proc)
    bridge.tmux("send-keys", "-t", bridge.target, "C-c")
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 130, err
    assert out == b""
    assert b"timeout" not in err


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
    ids=["sigterm", "sigint"],
)
def test_signals_to_tmux_send_interrupt_the_command(
    bridge: TestPane, signum: signal.Signals, code: int
) -> None:
    proc = bridge.start_send("--", _STARTED_THEN_SLEEP)
    bridge.wait_for_call_start(proc)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=10)
    assert proc.returncode == code, err
    assert b"interrupted" in err
    assert bridge.runtime_files() == bridge.between_calls()
    assert bridge.send_text("--", "echo usable") == (0, "usable\n", "")


def test_a_killed_tmux_send_blocks_nothing(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    proc = bridge.start_send(
        "--", f"sh -c 'echo started; while [ ! -e {go} ]; do sleep 0.02; done'"
    )
    bridge.wait_for_call_start(proc)
    proc.kill()
    proc.communicate(timeout=10)
    go.touch()  # the orphaned command ends by itself
    bridge.wait_for(
        lambda: bridge.send_text("--", "echo next")[:2] == (0, "next\n"), "a call to succeed"
    )
    # the killed call's files were swept up
    assert bridge.runtime_files() == bridge.between_calls()


def test_session_killed_mid_command(bridge: TestPane) -> None:
    proc = bridge.start_send("--", _STARTED_THEN_SLEEP)
    bridge.wait_for_call_start(proc)
    bridge.tmux("kill-session", "-t", f"={bridge.session}")
    _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 125
    # (zsh adds its own words about the jobs it hung up)
    assert err.endswith(b"Error: tmux-bridge session closed.\n")


def test_server_killed_mid_command(bridge: TestPane) -> None:
    proc = bridge.start_send("--", _STARTED_THEN_SLEEP)
    bridge.wait_for_call_start(proc)
    bridge.tmux("kill-server")
    _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 125
    # (zsh adds its own words about the jobs it hung up)
    assert err.endswith(b"Error: tmux-bridge session closed.\n")

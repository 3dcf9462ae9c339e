"""When tmux-send must not type: no bridge, a program in the way, a person typing, an
unsafe runtime directory, bad usage. Each refusal names the problem, exits with the
documented code, and leaves the pane exactly as it was."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ..support.pane import BIN, TestPane

NO_BRIDGE = """\
Error: No tmux-bridge session is running.

You have used `tmux-send`, but it currently has nowhere to send to.

The user needs to start the interactive backing terminal using `tmux-bridge`.
Do not try this yourself - instead, ask the user to do it for you.

This is necessary for *interactive* commands - for example, sudo (requiring
a password prompt). If you can avoid interactive tools, then prefer that.
Otherwise, please ask the user now.
"""


def test_no_server_gives_the_exact_no_bridge_text(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    result = b.send("--", "echo hello")
    assert result.returncode == 125
    assert result.stdout == b""
    assert result.stderr.decode() == NO_BRIDGE


def test_server_without_the_session_gives_the_no_bridge_text(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.tmux("new-session", "-d", "-s", "someone-elses-session")
    result = b.send("--", "echo hello")
    assert result.returncode == 125
    assert result.stderr.decode() == NO_BRIDGE


def _refused(bridge: TestPane, expected: str) -> None:
    before = bridge.screen()
    code, out, err = bridge.send_text("--", "echo should-not-run")
    assert code == 125, err
    assert out == ""
    assert err.startswith("Error: The bridge terminal is not ready: ")
    assert expected in err, err
    assert bridge.screen() == before  # nothing was typed
    assert "should-not-run" not in bridge.history()


def test_refuses_while_a_program_runs_in_the_foreground(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    bridge.tmux(
        "send-keys",
        "-t",
        bridge.target,
        f"sh -c 'while [ ! -e {go} ]; do sleep 0.05; done'",
        "Enter",
    )
    bridge.wait_for(lambda: bridge.foreground() == "sh", "the person's program to run")
    _refused(bridge, "`sh`")
    go.touch()
    bridge.wait_for_prompt()


def test_refuses_while_a_full_screen_program_is_open(bridge: TestPane, tmp_path: Path) -> None:
    text = tmp_path / "page.txt"
    text.write_text("\n".join(f"line {i}" for i in range(200)))
    bridge.tmux("send-keys", "-t", bridge.target, f"less {text}", "Enter")
    bridge.wait_for(lambda: bridge.pane("#{alternate_on}") == "1", "less to open")
    # its prompt (the file's name) is the last thing less draws
    bridge.wait_for(lambda: bridge.screen().rstrip().endswith("page.txt"), "less to draw its page")
    _refused(bridge, "`less`")
    bridge.tmux("send-keys", "-t", bridge.target, "q")
    bridge.wait_for_prompt()


def test_refuses_while_a_builtin_waits_for_the_person(bridge: TestPane) -> None:
    bridge.tmux("send-keys", "-t", bridge.target, "read answer", "Enter")
    bridge.wait_for(lambda: "read answer" in bridge.screen(), "read to start")
    bridge.wait_for(
        lambda: bridge.send_text("--", "true")[0] == 125, "the shell to look busy", timeout=5
    )
    _refused(bridge, "busy")
    bridge.tmux("send-keys", "-t", bridge.target, "x", "Enter")
    bridge.wait_for_prompt()


def test_refuses_to_overwrite_a_half_typed_line(bridge: TestPane) -> None:
    # two calls let tmux-send learn what the bare prompt looks like
    assert bridge.send_text("--", "true")[0] == 0
    bridge.wait_for_prompt()
    assert bridge.send_text("--", "true")[0] == 0
    bridge.wait_for_prompt()
    bridge.person_types("git sta")
    bridge.wait_for(lambda: "$ git sta" in bridge.screen(), "the typing to show")
    _refused(bridge, "typed `git sta`")  # and the line is left as it was
    bridge.person_types("\x15")  # C-u
    bridge.wait_for_prompt()
    assert bridge.send_text("--", "echo ok") == (0, "ok\n", "")


def test_copy_mode_is_left_automatically(bridge: TestPane) -> None:
    bridge.tmux("copy-mode", "-t", bridge.target)
    assert bridge.pane("#{pane_in_mode}") == "1"
    assert bridge.send_text("--", "echo through") == (0, "through\n", "")
    assert bridge.pane("#{pane_in_mode}") == "0"


def test_refuses_a_pane_that_runs_no_shell(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.tmux("new-session", "-d", "-s", b.session, "--", "python3", "-q")
    b.wait_for(lambda: ">>>" in b.screen(), "python to start")
    code, _, err = b.send_text("--", "echo no")
    assert code == 125
    assert "not a shell tmux-send can drive" in err and "python3" in err


def test_refuses_a_dead_pane(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    # the pane's program waits for a line, so remain-on-exit is on before it can end
    b.tmux("new-session", "-d", "-s", b.session, "--", "sh", "-c", "read line")
    b.tmux("set-option", "-p", "-t", b.target, "remain-on-exit", "on")
    b.tmux("send-keys", "-t", b.target, "Enter")
    b.wait_for(lambda: b.pane("#{pane_dead}") == "1", "the pane's program to end")
    result = b.send("--json", "--", "echo no")
    assert result.returncode == 125
    document = json.loads(result.stdout)
    assert document["error_code"] == "pane_not_at_prompt"
    assert document["error"].startswith("Error: The bridge terminal is not ready: ")
    assert "its shell has exited (the pane is dead)" in document["error"]
    assert "`tmux-bridge`" in document["error"]  # what the person can do about it
    code, out, err = b.send_text("--", "echo no")
    assert (code, out) == (125, "")
    assert err == document["error"] + "\n"
    assert b.pane("#{pane_dead}") == "1"  # left as it was


# --- the runtime directory --------------------------------------------------------------


def test_runtime_dir_is_created_private(bridge: TestPane) -> None:
    info = bridge.runtime.stat()
    assert info.st_mode & 0o777 == 0o700
    assert info.st_uid == os.geteuid()


def test_call_files_are_private_while_the_call_runs(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    proc = bridge.start_send(
        "--verbose-transcript",
        "--",
        f"echo started; sh -c 'while [ ! -e {go} ]; do sleep 0.02; done'",
    )
    bridge.wait_for_call_start(proc)
    # the call's id, from its start marker in the pane (shown with --verbose-transcript)
    found = re.search(r"___TMUXSEND_START_(\w+)___", bridge.history())
    assert found, bridge.history()
    pane = bridge.pane_dir()
    ours = {f"{pane}/inflight", "log.jsonl"} | {  # the log holds the call's start
        f"{pane}/{found[1]}{ext}" for ext in (".run", ".cmd", ".scratch")
    }
    assert bridge.runtime_files() == bridge.learnt_at_start() | ours
    for name in ours | bridge.learnt_at_start():
        info = (bridge.runtime / name).lstat()
        assert stat.S_IMODE(info.st_mode) == (0o700 if name == pane else 0o600), name
        assert info.st_uid == os.geteuid()
    go.touch()
    proc.communicate(timeout=30)
    assert bridge.runtime_files() == bridge.between_calls()


def _attack(bridge: TestPane, setup: Callable[[Path], None], expected: str) -> None:
    # another session keeps the server up: with none left it exits, and a new-session
    # racing its exit fails with "server exited unexpectedly"
    bridge.tmux("new-session", "-d", "-s", "keep-the-server")
    bridge.tmux("kill-session", "-t", f"={bridge.session}", check=False)
    bridge.tmux("new-session", "-d", "-s", bridge.session)
    bridge.wait_for_prompt()
    if bridge.runtime.is_dir() and not bridge.runtime.is_symlink():
        shutil.rmtree(bridge.runtime)  # (with the prompt tmux-bridge --detach learnt there)
    setup(bridge.runtime)
    before = bridge.screen()
    code, out, err = bridge.send_text("--", "echo should-not-run")
    assert code == 125
    assert out == ""
    assert expected in err, err
    assert bridge.screen() == before


def test_refuses_a_symlinked_runtime_dir(bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    _attack(bridge, lambda path: path.symlink_to(target), "it is a symlink")


def test_refuses_a_runtime_dir_open_to_others(bridge: TestPane) -> None:
    def make_open(path: Path) -> None:
        path.mkdir()
        path.chmod(0o755)

    _attack(bridge, make_open, "its mode is 0755")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory away needs root")
def test_refuses_a_runtime_dir_owned_by_someone_else(bridge: TestPane) -> None:
    def give_away(path: Path) -> None:
        path.mkdir(mode=0o700)
        os.chown(path, 65534, 65534)

    _attack(bridge, give_away, "owned by uid 65534")


def test_tmux_bridge_refuses_an_unsafe_runtime_dir(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.runtime.mkdir(mode=0o777)
    b.runtime.chmod(0o777)
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "--detach"], env=b.env, capture_output=True, text=True
    )
    assert result.returncode == 125
    assert "must be 0700" in result.stderr


# --- usage ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no COMMAND given"),
        (["--timeout", "0", "--", "true"], "positive"),
        (["--timeout", "soon", "--", "true"], "not a valid float"),
        (["--max-time", "-1", "--", "true"], "positive"),
        (["--no-such-option", "true"], "No such option"),
    ],
    ids=["no-command", "zero-timeout", "word-timeout", "negative-max-time", "unknown-option"],
)
def test_usage_errors_exit_2(
    make_bridge: Callable[[str], TestPane], args: list[str], message: str
) -> None:
    b = make_bridge("bash")
    result = b.send(*args)
    assert result.returncode == 2
    assert message in result.stderr.decode()


def test_help_shows_examples_and_exit_codes() -> None:
    result = subprocess.run([str(BIN / "tmux-send"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "Examples:" in result.stdout
    for code in ("124", "125", "130"):
        assert code in result.stdout


def test_the_shell_is_detected_while_a_program_runs(bridge: TestPane, tmp_path: Path) -> None:
    from tmux_bridge.infra.procfs import shell_kind

    go = tmp_path / "go"
    bridge.tmux(
        "send-keys",
        "-t",
        bridge.target,
        f"python3 -c 'import os, time\nwhile not os.path.exists(\"{go}\"): time.sleep(0.05)'",
        "Enter",
    )
    bridge.wait_for(lambda: bridge.foreground().startswith("python"), "python to run")
    assert shell_kind(int(bridge.pane("#{pane_pid}"))) == bridge.shell
    go.touch()
    bridge.wait_for_prompt()

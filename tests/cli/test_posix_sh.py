"""A pane running POSIX sh (dash): no prompt hooks, so interrupts are noticed from /proc."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from ..support.pane import TestPane, dash_bridge

# "started" comes from the program itself, already in the foreground: with a shell
# builtin `echo`, a Ctrl-C sent right after it can reach the shell while it forks
# `sleep`, which the shell then starts anyway (the person's Ctrl-C is lost the same way).
_STARTED_THEN_SLEEP = "sh -c 'echo started; exec sleep 30'"


@pytest.fixture
def dash(make_bridge: Callable[[str], TestPane]) -> Iterator[TestPane]:
    b = dash_bridge(make_bridge)
    b.start()
    yield b


def test_output_and_status(dash: TestPane) -> None:
    assert dash.send_text("--", "echo out; echo err >&2; sh -c 'exit 5'") == (5, "out\n", "err\n")


def test_state_persists(dash: TestPane) -> None:
    assert dash.send_text("--", "cd /; X=7")[0] == 0
    assert dash.send_text("--", "pwd; echo $X") == (0, "/\n7\n", "")


def test_syntax_error_leaves_a_clean_prompt(dash: TestPane) -> None:
    code, out, err = dash.send_text("--", 'echo "unterminated')
    assert code == 2 and out == ""
    assert "Unterminated quoted string" in err
    assert dash.send_text("--", "echo fine") == (0, "fine\n", "")


def test_person_pressing_ctrl_c(dash: TestPane) -> None:
    proc = dash.start_send("--", _STARTED_THEN_SLEEP)
    dash.wait_for_call_start(proc)
    dash.tmux("send-keys", "-t", dash.target, "C-c")
    out, err = proc.communicate(timeout=10)
    assert (proc.returncode, out) == (130, b""), err
    assert dash.send_text("--", "echo usable") == (0, "usable\n", "")


def test_idle_timeout(dash: TestPane) -> None:
    code, _, err = dash.send_text("--timeout", "1.5", "--", "sleep 30")
    assert code == 124
    assert "prompt came back" in err
    assert dash.send_text("--", "echo usable") == (0, "usable\n", "")


def test_exit_restarts_the_shell(dash: TestPane) -> None:
    code, _, err = dash.send_text("--", "exit 6")
    assert code == 6
    assert "ended the bridge's shell" in err
    assert dash.send_text("--", "echo alive") == (0, "alive\n", "")


def test_several_arguments_are_one_command(dash: TestPane) -> None:
    words = ["a b", "$HOME", "*", "it's", "", "x;y", "~"]
    show = "import json, sys; print(json.dumps(sys.argv[1:]))"
    result = dash.send("--", "python3", "-c", show, *words)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == words

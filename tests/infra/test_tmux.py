"""The one tmux runner against a real server: chaining commands never lets an argument
end one command and start another."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmux_bridge.infra import tmux as tmux_module
from tmux_bridge.infra.tmux import Tmux, drop_look_ahead, sequence, use_channels

from ..support.pane import TestPane


@pytest.mark.parametrize(
    ("commands", "argv"),
    [
        ([["a", "b"]], ["a", "b"]),
        ([["a"], ["b", "c"]], ["a", ";", "b", "c"]),
        ([["send-keys", "Escape;"], ["x"]], ["send-keys", "Escape\\;", ";", "x"]),
        ([["k", ";"]], ["k", "\\;"]),
        ([["k", "x\\;"]], ["k", "x\\\\;"]),
        ([[], ["a"], []], ["a"]),
    ],
    ids=["one", "two", "trailing-semicolon", "lone-semicolon", "escaped-already", "empty"],
)
def test_sequence(commands: list[list[str]], argv: list[str]) -> None:
    assert sequence(*commands) == argv


def _server(bridge: TestPane) -> Tmux:
    return Tmux(socket_path=str(bridge.tmpdir / f"tmux-{os.getuid()}" / "default"))


@pytest.mark.parametrize("text", ["a;", ";", "x\\;", "two; words;", "plain"])
def test_tmux_sees_each_argument_as_it_is(bridge: TestPane, text: str) -> None:
    """What tmux prints back is the text given, and the next command still runs."""
    result = _server(bridge).run_all(
        ["display-message", "-p", "-t", bridge.target, text],
        ["display-message", "-p", "-t", bridge.target, "next"],
    )
    assert result.stdout == f"{text}\nnext\n"


def test_keys_cannot_chain_a_tmux_command(bridge: TestPane) -> None:
    windows = bridge.tmux("list-windows", "-t", bridge.target, "-F", "#{window_id}").split()
    result = bridge.send("--keys", "--", "Escape;", "new-window")
    assert result.returncode == 2
    assert b"not tmux key names" in result.stderr
    after = bridge.tmux("list-windows", "-t", bridge.target, "-F", "#{window_id}").split()
    assert after == windows


def test_a_semicolon_key_is_sent_as_a_key(bridge: TestPane) -> None:
    assert bridge.send_text("--", "true")[0] == 0
    result = bridge.send("--keys", "--", "e", "c", "h", "o", "Space", "A", ";", "Enter")
    assert result.returncode == 0, result.stderr
    bridge.wait_for(lambda: "\nA\n" in bridge.history(), "echo A; to run")


# --- the chained-command seam: every byte, any text ----------------------------------


@pytest.fixture(scope="module")
def lone_server() -> Iterator[Tmux]:
    """One private server for the module's byte and property tests (``cat`` in a pane)."""
    root = Path(tempfile.mkdtemp(prefix="tbseq-"))
    socket = str(root / "sock")
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "s", "cat"],
        env=env, check=True, timeout=30,
    )  # fmt: skip
    try:
        yield Tmux(socket_path=socket, timeout=30)
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def _chained_back(tmux: Tmux, text: str) -> str:
    """``text`` as one argument of a chain, read back: a user option's value is stored
    unexpanded (no ``-F``) and ``show-options -v`` prints it as it is, so what comes back
    is what tmux parsed as that argument; the chain's last command proves that nothing
    after ``text`` was eaten or run as a command of its own."""
    result = tmux.run_all(
        ["set-option", "-g", "@seq", text],
        ["show-options", "-gv", "@seq"],
        ["display-message", "-p", "next"],
    )
    return result.stdout


@pytest.mark.tmux
@pytest.mark.parametrize("where", ["alone", "inside", "before-semicolon"])
def test_every_byte_is_one_argument_of_a_chain(lone_server: Tmux, where: str) -> None:
    for code in range(1, 256):
        char = chr(code) if code < 0x80 else bytes([code]).decode("utf-8", "surrogateescape")
        text = {"alone": char, "inside": f"a{char}b", "before-semicolon": f"{char};"}[where]
        assert _chained_back(lone_server, text) == f"{text}\nnext\n", f"byte {code:#04x}"


@pytest.mark.tmux
@pytest.mark.parametrize(
    "text",
    ["a;", ";", ";;", "x\\;", "\\", "\\\\;", "two; words;", "; new-window", "'\";", "{ }", "%%;"],
)
def test_hostile_arguments_stay_one_argument(lone_server: Tmux, text: str) -> None:
    windows = lone_server.run("list-windows", "-a").stdout
    assert _chained_back(lone_server, text) == f"{text}\nnext\n"
    assert lone_server.run("list-windows", "-a").stdout == windows  # nothing ran


@pytest.mark.tmux
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"]), max_size=40)
)
def test_any_text_is_one_argument_of_a_chain(lone_server: Tmux, text: str) -> None:
    assert _chained_back(lone_server, text) == f"{text}\nnext\n"


# --- a look started ahead (Tmux.look_ahead) ---------------------------------------------

SHOW = ["show-options", "-sqv", "@tmux-bridge-test-mark"]


def _answered(client_pid: int) -> None:
    """Wait for a client started ahead to exit, without reaping it (its taker does)."""
    os.waitid(os.P_PID, client_pid, os.WEXITED | os.WNOWAIT)


def _ahead_pid() -> int:
    started = tmux_module._ahead.started
    assert started is not None, "nothing was started ahead"
    return int(started[1].pid)


def test_the_answer_taken_ahead_is_the_looks_own(
    pane: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next run of the same commands gets the answer the look got when it started:
    a mark changed after it does not show, so no client of its own ran for it."""
    monkeypatch.setattr(tmux_module, "AHEAD_FRESH", 60.0)  # however slow this machine is
    t = _server(pane)
    t.run("set-option", "-s", "@tmux-bridge-test-mark", "before")
    other = Tmux(socket_path=t.socket_args[1])
    t.look_ahead(SHOW)
    _answered(_ahead_pid())
    # the mark changes through a client this thread does not run (a plain subprocess)
    subprocess.run(
        ["tmux", "-S", t.socket_args[1], "set-option", "-s", "@tmux-bridge-test-mark", "after"],
        check=True,
    )
    assert t.run_all(SHOW).stdout == "before\n"  # the look's answer: taken, not run again
    assert other.run_all(SHOW).stdout == "after\n"
    assert tmux_module._ahead.started is None


def test_a_stale_look_or_another_command_first_is_not_taken(
    pane: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tmux_module, "AHEAD_FRESH", 60.0)  # however slow this machine is
    t = _server(pane)
    setter = ["tmux", "-S", t.socket_args[1], "set-option", "-s", "@tmux-bridge-test-mark"]
    subprocess.run([*setter, "before"], check=True)
    t.look_ahead(SHOW)
    _answered(_ahead_pid())
    subprocess.run([*setter, "after"], check=True)
    t.run("display-message", "-p", "x")  # another command first: the look is dropped
    assert tmux_module._ahead.started is None
    assert t.run_all(SHOW).stdout == "after\n"

    subprocess.run([*setter, "before"], check=True)
    monkeypatch.setattr(tmux_module, "AHEAD_FRESH", 0.0)
    t.look_ahead(SHOW)
    _answered(_ahead_pid())
    subprocess.run([*setter, "after"], check=True)
    assert t.run_all(SHOW).stdout == "after\n"  # too old: run again


def test_a_look_started_ahead_dates_what_the_call_sees(pane: TestPane) -> None:
    """``look_started``: when the look the next run takes began, so a call can tell
    whether another one changed the pane after it (calls/frame.py). With a look on its
    way, its start, however long ago; without one, now."""
    t = _server(pane)
    before = time.time()
    t.look_ahead(SHOW)
    after = time.time()
    _answered(_ahead_pid())
    time.sleep(0.05)  # time passing, not a wait for anything: the look is 50 ms old now
    started = tmux_module.look_started()
    assert before - 0.001 <= started <= after + 0.001
    t.run_all(SHOW)  # taken: none on its way now
    now = time.time()
    assert now - 0.001 <= tmux_module.look_started() <= time.time() + 0.001


def test_only_a_look_is_started_ahead(pane: TestPane) -> None:
    t = _server(pane)
    with pytest.raises(ValueError):
        t.look_ahead(SHOW, ["set-option", "-s", "@tmux-bridge-test-mark", "x"])
    assert getattr(tmux_module._ahead, "started", None) is None


def test_a_look_ahead_of_a_stopped_server_is_dropped_at_once(pane: TestPane) -> None:
    """A call that ends before it looks (a refused option) drops its look: the client
    is killed, not waited for, so a stopped server cannot hold the call."""
    t = _server(pane)
    server_pid = int(t.run("display-message", "-p", "#{pid}").stdout)
    os.kill(server_pid, signal.SIGSTOP)
    try:
        t.look_ahead(SHOW)
        client = _ahead_pid()
        drop_look_ahead()
        assert tmux_module._ahead.started is None
        with pytest.raises(ChildProcessError):
            os.waitpid(client, os.WNOHANG)  # reaped
    finally:
        os.kill(server_pid, signal.SIGCONT)
    assert t.run_all(SHOW).returncode == 0


def test_a_resident_process_starts_nothing_ahead(pane: TestPane) -> None:
    t = _server(pane)
    use_channels(True)
    try:
        t.look_ahead(SHOW)
        assert getattr(tmux_module._ahead, "started", None) is None
    finally:
        use_channels(False)

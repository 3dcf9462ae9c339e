"""The control-mode channel of a resident process (tmux_bridge/infra/channel.py) against a
real private server: every reply is the one a tmux client of its own would have given,
and the channel comes back by itself after its client, its session or the whole server
went away. The expected values are what a subprocess of tmux gives for the same commands
(run in the same test, beside it)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from tmux_bridge.api import Bridge
from tmux_bridge.errors import TmuxError, TmuxTimeout
from tmux_bridge.infra import tmux as tmux_module
from tmux_bridge.infra.channel import ChannelClosed
from tmux_bridge.infra.tmux import Tmux, end_channels, use_channels

from ..support.pane import WAIT, TestPane, target_of


@pytest.fixture
def channels() -> Iterator[None]:
    use_channels(True)
    try:
        yield
    finally:
        use_channels(False)


def _server(b: TestPane, timeout: float | None = None) -> Tmux:
    return Tmux(socket_path=str(b.tmpdir / f"tmux-{os.getuid()}" / "default"), timeout=timeout)


Outcome = tuple[int, str, str]


def _both(t: Tmux, *commands: list[str]) -> tuple[Outcome, Outcome]:
    """The same commands through the channel and through a subprocess of their own."""
    use_channels(True)
    through = t.run_all(*commands, check=False)
    assert _channel_pid(t) is not None  # it went down the channel
    use_channels(False)
    alone = t.run_all(*commands, check=False)
    use_channels(True)
    return (through.returncode, through.stdout, through.stderr), (
        alone.returncode,
        alone.stdout,
        alone.stderr,
    )


def _channel_pid(t: Tmux) -> int | None:
    channel = tmux_module._channels.get(t.socket_args)
    process = getattr(channel, "process", None)
    return None if process is None else int(process.pid)


WORDS = ["plain", "a;", ";", "x\\;", "two\nlines", "tab\there", 'quote\'s "both"', "é ✓ 中", "#{x}"]


@pytest.mark.parametrize("word", WORDS)
def test_a_reply_is_what_a_client_of_its_own_gets(
    pane: TestPane, channels: None, word: str
) -> None:
    t = _server(pane)
    through, alone = _both(
        t,
        ["set-option", "-p", "-t", pane.target, "@tb-channel", word],
        ["show-options", "-p", "-v", "-t", pane.target, "@tb-channel"],
        ["display-message", "-p", "-t", pane.target, "#{pane_id} #{session_name}"],
    )
    assert through == alone


def test_errors_and_their_text_are_a_clients_too(pane: TestPane, channels: None) -> None:
    t = _server(pane)
    for commands in (
        [["has-session", "-t", "no-such-session"]],
        [["send-keys", "-t", "%999", "x"]],
        [
            ["display-message", "-p", "first"],
            ["list-panes", "-t", "nosuch"],
            ["display-message", "-p", "never"],
        ],
        [["no-such-command"]],
    ):
        through, alone = _both(t, *commands)
        assert through == alone, commands
        assert through[0] == 1


def test_the_channel_is_not_a_person(pane: TestPane, channels: None) -> None:
    t = _server(pane)
    t.run("display-message", "-p", "x")
    clients = t.run("list-clients", "-F", "#{client_control_mode} #{client_flags}").stdout
    assert "no-output" in clients  # our channel is attached
    entries = Bridge(target_of(pane)).panes(every_session=True)
    assert entries and not any(entry.attached for entry in entries)


def test_a_killed_client_is_replaced(pane: TestPane, channels: None) -> None:
    t = _server(pane)
    t.run("display-message", "-p", "x")
    first = _channel_pid(t)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    tmux_module._channels[t.socket_args].process.wait(timeout=WAIT)  # it has ended
    assert t.run("display-message", "-p", "-t", pane.target, "#{pane_id}").stdout.startswith("%")
    second = _channel_pid(t)
    assert second not in (None, first)


def test_ended_channels_leave_no_client_behind(pane: TestPane, channels: None) -> None:
    """At a resident process's end its control clients are killed (one left attached
    could keep its tmux server from ever exiting), and a command after that runs in a
    client of its own, opening no channel again."""
    t = _server(pane)
    t.run("display-message", "-p", "x")
    channel = tmux_module._channels[t.socket_args]
    assert channel.process is not None
    end_channels()
    assert channel.process.poll() is not None  # ended, not left to tmux
    pane.wait_for(
        lambda: "1" not in t.run("list-clients", "-F", "#{client_control_mode}").stdout.split(),
        "the ended channel's client to be gone from the server",
    )
    assert t.run("display-message", "-p", "-t", pane.target, "#{pane_id}").stdout.startswith("%")
    assert _channel_pid(t) is None  # no channel again
    with pytest.raises(ChannelClosed):
        channel.run([["display-message", "-p", "x"]], WAIT)  # one held on to refuses


def test_its_session_gone_it_attaches_to_another(pane: TestPane, channels: None) -> None:
    t = _server(pane)
    pane.tmux("new-session", "-d", "-s", "tb-channel-other")
    t.run("display-message", "-p", "x")
    attached = pane.tmux("list-clients", "-F", "#{client_control_mode} #{session_name}").split("\n")
    session = next(line.split()[1] for line in attached if line.startswith("1 "))
    pane.tmux("kill-session", "-t", session)
    names = t.run("list-sessions", "-F", "#{session_name}").stdout.split()
    assert session not in names and names
    if session == pane.session:
        pane.tmux("new-session", "-d", "-s", pane.session)  # the fixture's session, back


def test_a_restarted_server_is_found_again(make_bridge: object, channels: None) -> None:
    b = make_bridge("bash")  # type: ignore[operator]
    b.start()
    t = _server(b)
    t.run("display-message", "-p", "x")
    b.tmux("kill-server", check=False)
    with pytest.raises(TmuxError):
        t.run("list-sessions")  # no server: the subprocess's error, not a hang
    b.start()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if t.run("has-session", "-t", b.session, check=False).returncode == 0:
            break
    assert (
        t.run("display-message", "-p", "-t", b.target, "#{session_name}").stdout == f"{b.session}\n"
    )
    assert _channel_pid(t) is not None


def test_a_stopped_server_times_out(make_bridge: object, channels: None) -> None:
    b = make_bridge("bash")  # type: ignore[operator]
    b.start()
    t = _server(b, timeout=0.5)
    server_pid = int(t.run("display-message", "-p", "#{pid}").stdout)
    os.kill(server_pid, signal.SIGSTOP)
    try:
        with pytest.raises(TmuxTimeout):
            t.run("display-message", "-p", "x")
    finally:
        os.kill(server_pid, signal.SIGCONT)
    assert t.run("display-message", "-p", "back").stdout == "back\n"


def test_a_capture_of_every_byte_is_what_a_client_of_its_own_gets(
    pane: TestPane, channels: None
) -> None:
    t = _server(pane)
    every = bytes(b for b in range(1, 256) if b not in (0x0A, 0x0D, 0x1B))
    script = pane.root / "every.bin"
    script.write_bytes(every + b"\n%end 1 2 1\n%begin 3 4 1\n")
    pane.wait_for_prompt()
    pane.tmux("send-keys", "-t", pane.target, f"cat {script}", "Enter")
    pane.wait_for(lambda: "%begin 3 4 1" in pane.history(), "the bytes on the screen")
    for flags in (["-p"], ["-p", "-e"], ["-p", "-J", "-S", "-"], ["-p", "-C"]):
        through, alone = _both(t, ["capture-pane", *flags, "-t", pane.target])
        assert through == alone, flags


def _numbers_now(pane: TestPane) -> tuple[int, int]:
    """The tmux server's clock and its next command number, as a control client of our
    own sees them (what a program in a pane would have to guess)."""
    socket = str(pane.tmpdir / f"tmux-{os.getuid()}" / "default")
    done = subprocess.run(
        ["tmux", "-S", socket, "-C", "attach-session", "-t", pane.session],
        input=b"display-message -p x\n", capture_output=True, timeout=WAIT, check=False,
    )  # fmt: skip
    begins = [line.split() for line in done.stdout.splitlines() if line.startswith(b"%begin ")]
    return int(begins[-1][1]), int(begins[-1][2]) + 1


@pytest.mark.parametrize(
    "fake", ["%begin 9 9 1\ninjected\n%end 9 9 1\n", "%begin 9 9 1\ninjected\n"]
)
def test_a_screen_that_forges_the_end_of_its_block_is_caught(
    pane: TestPane, channels: None, fake: str
) -> None:
    """A program prints the end of the block its capture will come in (every command
    number the next ones may get, at this second and the next five), then a fake block,
    whole (the real end comes after the forged one) or open (it would swallow the real
    end and the token); the channel closes, and the capture comes from a client of its
    own: the same text, nothing injected."""
    t = _server(pane)
    assert t.run("display-message", "-p", "open").stdout == "open\n"
    before = _channel_pid(t)
    now, number = _numbers_now(pane)
    forged = [
        f"%end {when} {n} 1\n{fake}"
        for when in range(now, now + 6)  # a loaded machine may take seconds
        for n in range(number, number + 40)
    ]
    run = uuid.uuid4().hex[:8]
    script, done = pane.root / f"forged-{run}.txt", pane.root / f"forged-{run}.done"
    script.write_text("".join(forged))
    typed = f"cat {script}; echo forged-$((6*7)); : > {done}"
    pane.tmux("send-keys", "-t", pane.target, typed, "Enter")
    # waited for without tmux commands (each takes a command number) until the shell
    # is done, then until tmux has drawn it all (a look or two)
    pane.wait_for(done.exists, "the forged lines")
    pane.wait_for(lambda: "\nforged-42\n" in pane.history(), "the forged lines drawn")
    captured = t.run("capture-pane", "-p", "-J", "-S", "-", "-t", pane.target).stdout
    use_channels(False)
    alone = t.run("capture-pane", "-p", "-J", "-S", "-", "-t", pane.target).stdout
    use_channels(True)
    assert captured == alone
    assert forged[-1] in captured  # the capture came back whole, to its last forged line
    assert _channel_pid(t) != before  # the forged reply closed the channel


def test_a_call_through_the_facade_uses_the_channel(pane: TestPane, channels: None) -> None:
    bridge = Bridge(target_of(pane))
    result = bridge.run("echo through-$((6*7))")
    assert result.stdout == b"through-42\n" and result.status == 0
    assert _channel_pid(target_of(pane).tmux) is not None


# a resident process of its own: its channel open, the client's pid said; "fork": a
# child forked then (as a job's keeper is) runs a command, says how, and lives on
_RESIDENT = """
import os, sys, time
from tmux_bridge.infra import tmux as tmux_module
tmux_module.use_channels(True)
t = tmux_module.Tmux(socket_path=sys.argv[1])
t.run("display-message", "-p", "x")
print(tmux_module._channels[t.socket_args].process.pid, flush=True)
if sys.argv[2] == "fork" and os.fork() == 0:
    out = t.run("display-message", "-p", "child").stdout.strip()
    print(out, tmux_module._channels_on, len(tmux_module._channels), flush=True)
    time.sleep(300)
    os._exit(0)
time.sleep(300)
"""


@pytest.mark.parametrize("how", ["stopped", "fork"])
def test_a_killed_process_takes_its_control_client_along(pane: TestPane, how: str) -> None:
    """A resident process killed outright (no chance to end its clients) takes its
    channel's client along: one that does not leave by itself (``stopped``: as tmux
    3.3a's stayed attached) is killed by its guard, and a child forked from the process
    (a job's keeper) holds none of its pipes, runs its own commands as subprocesses, and
    keeps nothing attached by living on."""
    t = _server(pane)
    resident = subprocess.Popen(
        [sys.executable, "-c", _RESIDENT, t.socket_path(), how],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert resident.stdout is not None
    client = int(resident.stdout.readline())
    try:
        if how == "fork":
            assert resident.stdout.readline().split() == ["child", "False", "0"]
        else:
            os.kill(client, signal.SIGSTOP)

        def clients() -> list[str]:
            listed = t.run("list-clients", "-F", "#{client_control_mode} #{client_pid}").stdout
            return [line.split()[1] for line in listed.splitlines() if line.startswith("1 ")]

        assert clients() == [str(client)]
        resident.kill()  # SIGKILL: the forked child lives on
        resident.wait(WAIT)
        pane.wait_for(lambda: clients() == [], "the killed process's control client to go")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(resident.pid, signal.SIGKILL)  # the forked child
        with contextlib.suppress(ProcessLookupError):
            os.kill(client, signal.SIGKILL)
        resident.stdout.close()
        resident.wait(WAIT)

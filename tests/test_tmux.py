"""The one tmux runner against a real server: chaining commands never lets an argument
end one command and start another."""

from __future__ import annotations

import os

import pytest

from tmux_bridge.tmux import Tmux, sequence

from .conftest import Bridge


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


def _server(bridge: Bridge) -> Tmux:
    return Tmux(socket_path=str(bridge.tmpdir / f"tmux-{os.getuid()}" / "default"))


@pytest.mark.parametrize("text", ["a;", ";", "x\\;", "two; words;", "plain"])
def test_tmux_sees_each_argument_as_it_is(bridge: Bridge, text: str) -> None:
    """What tmux prints back is the text given, and the next command still runs."""
    result = _server(bridge).run_all(
        ["display-message", "-p", "-t", bridge.target, text],
        ["display-message", "-p", "-t", bridge.target, "next"],
    )
    assert result.stdout == f"{text}\nnext\n"


def test_keys_cannot_chain_a_tmux_command(bridge: Bridge) -> None:
    windows = bridge.tmux("list-windows", "-t", bridge.target, "-F", "#{window_id}").split()
    result = bridge.send("--keys", "--", "Escape;", "new-window")
    assert result.returncode == 2
    assert b"not tmux key names" in result.stderr
    after = bridge.tmux("list-windows", "-t", bridge.target, "-F", "#{window_id}").split()
    assert after == windows


def test_a_semicolon_key_is_sent_as_a_key(bridge: Bridge) -> None:
    assert bridge.send_text("--", "true")[0] == 0
    result = bridge.send("--keys", "--", "e", "c", "h", "o", "Space", "A", ";", "Enter")
    assert result.returncode == 0, result.stderr
    bridge.wait_for(lambda: "\nA\n" in bridge.history(), "echo A; to run")

"""The one tmux runner against a real server: chaining commands never lets an argument
end one command and start another."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tmux_bridge.infra.tmux import Tmux, sequence

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

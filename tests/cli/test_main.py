"""``python -m tmux_bridge``: both CLIs under one name, against a private server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

from ..support.pane import TestPane


def _module(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tmux_bridge", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bridge_and_send_reach_both_clis(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    started = _module("bridge", "--detach", env=b.env)
    assert (started.returncode, started.stdout) == (0, f"{b.session}\n"), started.stderr
    b.wait_for_prompt()
    sent = _module("send", "--", "echo out; echo err >&2; (exit 3)", env=b.env)
    assert (sent.returncode, sent.stdout, sent.stderr) == (3, "out\n", "err\n")
    b.wait_for_prompt()
    status = _module("bridge", "status", "--json", env=b.env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["session"] == b.session


def test_help_names_both_commands_and_each_usage_its_own_path() -> None:
    top = _module("--help")
    assert top.returncode == 0
    assert "bridge" in top.stdout and "send" in top.stdout
    for name in ("send", "bridge"):
        sub = _module(name, "--help")
        assert sub.returncode == 0
        assert sub.stdout.startswith(f"Usage: python -m tmux_bridge {name} "), sub.stdout


def test_an_unknown_or_missing_command_is_a_usage_error() -> None:
    assert _module("nope").returncode == 2
    assert _module().returncode == 2

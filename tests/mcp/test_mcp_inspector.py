"""A client that is not the Python SDK: the MCP inspector's CLI mode (npm,
``@modelcontextprotocol/inspector``, TypeScript SDK), installed by ``.ci/deps``, drives
``tmux-bridge mcp`` over stdio and ``/mcp`` of ``tmux-bridge serve`` over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tmux_bridge.audit.log import read

from ..support.mcp_client import ALL_TOOLS, READ_ONLY, bash
from ..support.pane import BIN, MakeBridge, TestPane
from ..support.serve import TOKEN, running

INSPECTOR_DIR = Path(
    os.environ.get("TMUX_BRIDGE_INSPECTOR_DIR", Path.home() / ".cache/tmux-bridge/inspector")
)
INSPECTOR = INSPECTOR_DIR / "node_modules/.bin/mcp-inspector"
PASSED = ("TMUX_TMPDIR", "TMUX_BRIDGE_DIR", "TMUX_BRIDGE_SESSION", "HOME")


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    if not INSPECTOR.exists():
        pytest.skip(f"the MCP inspector is not installed in {INSPECTOR_DIR}: run bash .ci/deps")
    b = make_bridge("bash")
    b.start()
    yield b


def inspector(pane: TestPane, *args: str) -> tuple[int, Any]:
    """``mcp-inspector --cli ARGS``: its exit status and the first JSON value it prints
    (on stdout; a failure of its own goes to stderr)."""
    result = subprocess.run(
        [str(INSPECTOR), "--cli", *args],
        env=pane.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        value, _ = json.JSONDecoder().raw_decode((result.stdout or result.stderr).lstrip())
    except json.JSONDecodeError:
        pytest.fail(f"no JSON from the inspector: {result.stdout!r} {result.stderr!r}")
    return result.returncode, value


def stdio(pane: TestPane, *extra: str) -> list[str]:
    """The inspector's arguments for ``tmux-bridge mcp EXTRA`` with the test's terminal
    (the inspector passes a server only a few variables of its own)."""
    env = [arg for name in PASSED for arg in ("-e", f"{name}={pane.env[name]}")]
    return [*env, str(BIN / "tmux-bridge"), "mcp", *extra]


def test_the_inspector_lists_the_tools(pane: TestPane) -> None:
    code, listed = inspector(pane, *stdio(pane), "--method", "tools/list")
    assert code == 0 and [tool["name"] for tool in listed["tools"]] == ALL_TOOLS
    hints = {tool["name"]: tool["annotations"]["readOnlyHint"] for tool in listed["tools"]}
    assert {name for name, read_only in hints.items() if read_only} == READ_ONLY
    code, listed = inspector(pane, *stdio(pane, "--readonly"), "--method", "tools/list")
    assert code == 0 and {tool["name"] for tool in listed["tools"]} == READ_ONLY


def test_the_inspector_runs_a_command_over_stdio(pane: TestPane) -> None:
    command = "echo from-inspector; echo e >&2; (exit 4)"
    expected = bash(command)
    call = ["--method", "tools/call", "--tool-name", "run", "--tool-arg", f"command={command}"]
    code, result = inspector(pane, *stdio(pane), *call)
    got = result["structuredContent"]
    assert code == 0 and result["isError"] is False
    assert (got["stdout"], got["stderr"], got["exit_status"]) == (
        expected.stdout,
        expected.stderr,
        expected.returncode,
    )
    assert json.loads(result["content"][0]["text"]) == got
    assert [e["client"] for e in read(str(pane.runtime), None)] == ["inspector-cli"]


def test_the_inspector_gets_a_tool_error_with_its_code(pane: TestPane) -> None:
    call = ["--method", "tools/call", "--tool-name", "evaluate"]
    code, result = inspector(pane, *stdio(pane), *call, "--tool-arg", "name=python", "code=x+1")
    assert code != 0 and result["isError"] is True
    assert result["structuredContent"]["error_code"] == "repl_not_open"
    assert result["content"][0]["text"].endswith("(error_code: repl_not_open)")


def test_the_inspector_runs_a_command_over_http_on_serve(pane: TestPane) -> None:
    with running(pane.env) as server:
        url = server.base_url + "/mcp"
        call = ["--method", "tools/call", "--tool-name", "run", "--tool-arg", "command=echo http"]
        auth = ["--header", f"Authorization: Bearer {TOKEN}"]
        code, result = inspector(pane, url, "--transport", "http", *auth, *call)
        assert code == 0 and result["structuredContent"]["stdout"] == "http\n"
        code, refused = inspector(pane, url, "--transport", "http", *call)  # no token
        assert code != 0 and refused["error"]["code"] == "auth_required"  # it saw the 401
    assert [e["command"] for e in read(str(pane.runtime), None)] == ["echo http"]

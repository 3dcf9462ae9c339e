"""The MCP client recipes of docs/mcp.md, run verbatim (the install path swapped for this
venv's) with the real clients that .ci/deps installs: Claude Code adds the stdio server
and the HTTP one with its header, and ``claude mcp get`` connects to each (a wrong token
or a missing program shows it failing); Codex's ``codex mcp add`` and the HTTP table
with ``http_headers`` are read back by Codex as the server the recipe means, and the
Codex TUI connects to both (its ``/mcp`` lists them connected with our tools; a wrong
token shows as refused)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from ..support.pane import BIN, WAIT, TestPane
from ..support.real_agents import BIN as CLIS
from ..support.real_agents import HOMES, end_codex_daemons, make_codex_home, require_clis
from ..support.serve import TOKEN, running

pytestmark = pytest.mark.tmux

DOCS = Path(__file__).parents[2] / "docs" / "mcp.md"
INSTALLED = "~/.local/share/tmux-bridge/bin/tmux-bridge"  # where the docs' recipes point


def _client(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(CLIS / args[0]), *args[1:]],
        env={**os.environ, "HOME": str(home), **(env or {})},
        cwd=home, capture_output=True, text=True, timeout=WAIT * 4, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _recipe(prefix: str) -> list[str]:
    """The docs' command line that starts with ``prefix``, as words, our path in it."""
    for line in DOCS.read_text().splitlines():
        if line.startswith(prefix):
            words = line.split("#")[0].split()
            return [str(BIN / "tmux-bridge") if w == INSTALLED else w for w in words]
    raise AssertionError(f"docs/mcp.md has no line starting {prefix!r}")


def _block(first: str) -> str:
    """The docs' code block whose first line starts with ``first`` (unindented)."""
    lines = DOCS.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(first))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "```")
    return "\n".join(line.strip() for line in lines[start:end]) + "\n"


def test_claude_code_connects_to_the_stdio_server(tmp_path: Path) -> None:
    require_clis()
    add = _recipe("claude mcp add tmux-bridge --")
    assert add[-2:] == [str(BIN / "tmux-bridge"), "mcp"]
    _client(tmp_path, *add)
    assert "Connected" in _client(tmp_path, "claude", "mcp", "get", "tmux-bridge")
    _client(tmp_path, "claude", "mcp", "add", "nothing", "--", str(tmp_path / "missing"))
    assert "Connected" not in _client(tmp_path, "claude", "mcp", "get", "nothing")


def test_claude_code_connects_over_http_with_the_header(pane: TestPane, tmp_path: Path) -> None:
    require_clis()
    text = DOCS.read_text()
    assert "claude mcp add --transport http tmux-bridge http://127.0.0.1:3337/mcp --header" in text
    with running(pane.env) as server:
        url = server.base_url + "/mcp"
        for name, token in (("tmux-bridge", TOKEN), ("wrong", "not-the-token-0123456789")):
            _client(tmp_path, "claude", "mcp", "add", "--transport", "http", name, url,
                    "--header", f"Authorization: Bearer {token}")  # fmt: skip
        assert "Connected" in _client(tmp_path, "claude", "mcp", "get", "tmux-bridge")
        assert "Connected" not in _client(tmp_path, "claude", "mcp", "get", "wrong")


def test_codex_reads_both_recipes_as_the_servers_they_mean(tmp_path: Path) -> None:
    require_clis()
    home = tmp_path / "codex"
    home.mkdir()
    env = {"CODEX_HOME": str(home)}
    add = _recipe("codex mcp add tmux-bridge --")
    _client(tmp_path, *add, env=env)
    http = _block("# Codex over HTTP:").replace(
        "[mcp_servers.tmux-bridge]", "[mcp_servers.over-http]"
    )
    with (home / "config.toml").open("a") as config:
        config.write("\n" + http)
    listed = {
        s["name"]: s
        for s in json.loads(_client(tmp_path, "codex", "mcp", "list", "--json", env=env))
    }
    stdio = listed["tmux-bridge"]["transport"]
    assert (stdio["type"], stdio["command"], stdio["args"]) == ("stdio", add[-2], ["mcp"])
    remote = listed["over-http"]["transport"]
    assert remote["type"] == "streamable_http" and remote["url"] == "http://127.0.0.1:3337/mcp"
    assert remote["http_headers"] == {"Authorization": "Bearer TOKEN"}


def test_the_codex_tui_connects_to_both_recipes(pane: TestPane, tmp_path: Path) -> None:
    require_clis()
    home = HOMES / uuid.uuid4().hex[:12]  # outside /tmp, where Codex makes its helpers
    home.mkdir(parents=True)
    try:
        make_codex_home(home, "http://127.0.0.1:9")  # no model is asked: nothing answers
        _client(tmp_path, *_recipe("codex mcp add tmux-bridge --"), env={"CODEX_HOME": str(home)})
        with running(pane.env) as server:
            http = _block("# Codex over HTTP:").replace("http://127.0.0.1:3337", server.base_url)
            with (home / "config.toml").open("a") as config:
                config.write(f'\n[projects."{tmp_path}"]\ntrust_level = "trusted"\n\n')
                config.write(http.replace("TOKEN", TOKEN).replace(".tmux-bridge]", ".over-http]"))
                config.write("\n" + http.replace("TOKEN", "not-the-token-0123456789").replace(
                    ".tmux-bridge]", ".wrong-token]"))  # fmt: skip
            listed = _codex_mcp(pane, home, tmp_path)
    finally:
        end_codex_daemons(home)
        shutil.rmtree(home, ignore_errors=True)
    tools = dict(re.findall(r"([\w-]+): connected \((\d+) tools\)", listed))
    assert tools.get("tmux-bridge") == tools.get("over-http") != "0", listed
    assert "wrong-token" not in tools, listed


def _codex_mcp(pane: TestPane, home: Path, cwd: Path) -> str:
    """Start the Codex TUI in a new session of ``pane``'s tmux server, ask it ``/mcp``
    until its answer lists every server and none of them is still starting, and return
    that answer; the session is ended after."""
    codex = pane.tmux(
        "new-session", "-d", "-s", "codex-mcp", "-x", "120", "-y", "40", "-c", str(cwd),
        "-e", f"CODEX_HOME={home}", "-P", "-F", "#{pane_id}", f"exec {CLIS / 'codex'}",
    ).strip()  # fmt: skip
    names = ("tmux-bridge:", "over-http:", "wrong-token:")
    try:
        _until(pane, codex, lambda screen: "Ask Codex" in screen, "Codex's input box")
        deadline = time.monotonic() + WAIT * 2
        while True:  # its box shows before its stdio servers have all started
            asked = _screen(pane, codex).count("MCP Tools")
            pane.tmux("send-keys", "-t", codex, "-l", "/mcp")
            _until(pane, codex, lambda s: _box(s) == "/mcp", "/mcp in the box")
            pane.tmux("send-keys", "-t", codex, "Enter")
            screen = _until(pane, codex, _answered(asked, names), "the servers listed")
            listed = _last(screen)
            if ": starting" not in listed:
                return listed
            if time.monotonic() > deadline:
                pytest.fail(f"a server is still starting; Codex shows:\n{screen}")
            time.sleep(0.2)  # between two questions, not a synchronisation
    finally:
        pane.tmux("kill-session", "-t", "=codex-mcp", check=False)


def _screen(pane: TestPane, target: str) -> str:
    """``target``'s screen and the last 500 lines of its history."""
    return pane.tmux("capture-pane", "-p", "-S", "-500", "-t", target, check=False)


PROMPT = "\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "  # Codex's box and prompts


def _answered(asked: int, names: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a screen holds a ``/mcp`` answer after the ``asked`` ones, naming all."""
    return lambda s: s.count("MCP Tools") > asked and all(n in _last(s) for n in names)


def _box(screen: str) -> str:
    """What Codex's input box holds: its last line drawn with ``PROMPT`` (submitted
    prompts above it are drawn the same way)."""
    boxes = [line[2:].strip() for line in screen.splitlines() if line.startswith(PROMPT)]
    return boxes[-1] if boxes else ""


def _last(screen: str) -> str:
    """The last ``/mcp`` answer on ``screen`` (empty when there is none)."""
    return screen.rpartition("MCP Tools")[2] if "MCP Tools" in screen else ""


def _until(pane: TestPane, target: str, done: Callable[[str], object], what: str) -> str:
    """``target``'s screen (with history) once ``done`` says so; fails showing it after a
    deadline."""
    deadline = time.monotonic() + WAIT * 2  # Codex starts its MCP servers before its box
    while True:
        screen = _screen(pane, target)
        if done(screen):
            return screen
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; Codex shows:\n{screen}")
        time.sleep(0.05)

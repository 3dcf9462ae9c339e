"""The real agent CLIs, Claude Code and Codex, started offline on a test's tmux server.

``.ci/deps`` installs the pinned versions from npm into :data:`CLIS_DIR`. Each CLI gets a
home made here, as a person's would be after the first run: Claude Code's
``.claude.json`` with onboarding done, the dummy API key approved and the project folder
trusted; Codex's home after ``codex login --with-api-key`` with a dummy key and a
provider pointing at the test's fake model API (:mod:`tests.support.model_api`). Codex
refuses some of its set-up under a temporary directory, so its home lives under
``~/.cache/tmux-bridge/test-homes``; it leaves an app-server daemon running from there
(:func:`end_codex_daemons` ends it) before the home is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from .agent_world import World
from .model_api import ModelApi
from .pane import WAIT

CLIS_DIR = Path(
    os.environ.get("TMUX_BRIDGE_AGENT_CLIS_DIR", Path.home() / ".cache/tmux-bridge/agent-clis")
)
BIN = CLIS_DIR / "node_modules" / ".bin"
VERSIONS = {"claude": "2.1.331 (Claude Code)", "codex": "codex-cli 0.169.0"}
ANTHROPIC_KEY = "sk-ant-api03-tmux-bridge-test-dummy-key-0123456789"
OPENAI_KEY = "sk-tmux-bridge-test-dummy-key"
HOMES = Path.home() / ".cache" / "tmux-bridge" / "test-homes"


def require_clis() -> None:
    """Skip the test unless both pinned CLIs are installed (``bash .ci/deps``)."""
    for name, version in VERSIONS.items():
        path = BIN / name
        found = ""
        if path.exists():
            run = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
            found = run.stdout.strip()
        if found != version:
            pytest.skip(f"{name} {version} is not installed in {CLIS_DIR}: run bash .ci/deps")


class RealAgents:
    """Starts real CLIs as sessions of ``world``'s tmux server, answered by ``api``."""

    def __init__(self, world: World, api: ModelApi) -> None:
        self.world = world
        self.api = api
        self.claude_home = world.b.root / "claude-home"
        self.claude_home.mkdir()
        self.codex_home = HOMES / uuid.uuid4().hex[:12]
        self.codex_home.mkdir(parents=True)
        self.trusted = world.b.home
        self._claude_config()
        self._codex_login()

    def close(self) -> None:
        """End the CLIs (their tmux server), then remove Codex's home: a Codex still
        running writes into it again."""
        pids = self.world.b.tmux("list-panes", "-a", "-F", "#{pane_pid}", check=False).split()
        self.world.b.tmux("kill-server", check=False)
        deadline = time.monotonic() + WAIT
        while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        end_codex_daemons(self.codex_home)
        shutil.rmtree(self.codex_home, ignore_errors=True)

    def _claude_config(self) -> None:
        write_claude_home(self.claude_home, self.trusted)

    def _codex_login(self) -> None:
        make_codex_home(self.codex_home, self.api.url)

    def start(
        self,
        runtime: str,
        session: str,
        *env: str,
        width: int = 120,
        height: int = 30,
        cwd: Path | None = None,
        window: str | None = None,
    ) -> str:
        """Start ``runtime`` (``claude`` or ``codex``) in a new session (or a new window
        ``window`` of an existing ``session``); its pane id."""
        if runtime == "claude":
            items = claude_env(self.claude_home, self.api.url)
        else:
            items = [f"CODEX_HOME={self.codex_home}"]
        items += [f"PATH={self.world.b.env['PATH']}", *env]
        if window is None:
            args = ["new-session", "-d", "-s", session, "-x", str(width), "-y", str(height)]
        else:
            args = ["new-window", "-d", "-t", f"={session}:", "-n", window]
        args += ["-P", "-F", "#{pane_id}", "-c", str(cwd or self.trusted)]
        for item in items:
            args += ["-e", item]
        return self.world.b.tmux(*args, f"exec {BIN / runtime}").strip()

    def screen(self, pane: str) -> str:
        return self.world.b.tmux("capture-pane", "-p", "-t", pane, check=False)

    def state(self, pane: str) -> str | None:
        found = [a for a in self.world.facade().agents() if a.pane == pane]
        return found[0].state if found else None

    def wait_for(self, pane: str, predicate: Callable[[], bool], what: str) -> None:
        """Poll ``predicate`` until true; on timeout fail showing ``pane``."""
        deadline = time.monotonic() + WAIT * 2
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; {pane} shows:\n{self.screen(pane)}")
            time.sleep(0.05)

    def wait_state(self, pane: str, state: str) -> None:
        self.wait_for(pane, lambda: self.state(pane) == state, f"the state {state}")

    def wait_screen(self, pane: str, text: str) -> None:
        self.wait_for(pane, lambda: text in self.screen(pane), repr(text))


def write_claude_home(home: Path, trusted: Path) -> None:
    """Claude Code's ``~/.claude.json`` in ``home``: onboarding done, the dummy API key
    approved, the folder ``trusted`` trusted."""
    config = {
        "hasCompletedOnboarding": True,
        "numStartups": 5,
        "customApiKeyResponses": {"approved": [ANTHROPIC_KEY[-20:]], "rejected": []},
        "projects": {str(trusted): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude.json").write_text(json.dumps(config))


def claude_env(home: Path, api_url: str) -> list[str]:
    """``NAME=VALUE`` items Claude Code runs with: that home, the dummy key, the fake API,
    no updater and no other traffic."""
    return [
        f"HOME={home}",
        f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}",
        f"ANTHROPIC_BASE_URL={api_url}",
        "DISABLE_AUTOUPDATER=1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
    ]


def make_codex_home(home: Path, api_url: str) -> None:
    """A Codex home after ``codex login --with-api-key`` with the dummy key, its model
    provider the fake API at ``api_url``."""
    env = {**os.environ, "CODEX_HOME": str(home)}
    subprocess.run(
        [BIN / "codex", "login", "--with-api-key"],
        input=OPENAI_KEY,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    (home / "config.toml").write_text(
        'model = "fake-model"\n'
        'model_provider = "fake"\n'
        "check_for_update_on_startup = false\n\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{api_url}/v1"\n'
        'wire_api = "responses"\n'
        "requires_openai_auth = true\n"
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def end_codex_daemons(home: Path) -> None:
    """Terminate what Codex left running from ``home``: it starts an app-server daemon
    there (``HOME/packages/app-server-daemon/...``) that outlives the CLI and its pane, and
    keeps writing into the home. Found by its command line, which names the home."""
    mark = str(home).encode()
    mine = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if mark in f.read():
                    mine.append(int(entry))
        except OSError:
            continue
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in mine:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        deadline = time.monotonic() + 5
        while any(Path(f"/proc/{pid}").exists() for pid in mine) and time.monotonic() < deadline:
            time.sleep(0.05)

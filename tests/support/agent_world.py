"""A private tmux server with stand-in agents for the agent and messaging tests.

The stand-ins are the program in ``tests/standin_agent.py``, installed under the names of
agent CLIs (``claude``, ``codex``) in a bin directory of the test's own; what each one
took as a prompt is in its JSON-lines log, written by the program itself.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tmux_bridge.api import Bridge as Facade
from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.target import Target

from .pane import TestPane

STANDIN = Path(__file__).with_name("standin_agent.py")
# The interpreter itself, not a `python3` found on PATH: a version manager's shim (pyenv's
# is a bash script that runs `pyenv-exec`, then bash again, then python) shows other
# programs in front for a moment, so an agent declared in its session comes and goes.
PYTHON3 = str(Path(sys.base_prefix, "bin", "python3"))


class World:
    """The test's tmux server (a :class:`tests.support.pane.TestPane`, not started: no bridge
    session is needed) and the agents started on it."""

    def __init__(self, bridge: TestPane) -> None:
        self.b = bridge
        self.bin = bridge.root / "bin"
        self.bin.mkdir()
        for name in ("claude", "codex"):
            self.install(name, STANDIN.read_text())
        self.b.env["PATH"] = f"{self.bin}:{self.b.env['PATH']}"

    def install(self, name: str, source: str) -> Path:
        """A program called ``name`` on the test PATH running ``source`` in Python."""
        path = self.bin / name
        path.write_text(f"#!{sys.executable}\n{source}")
        path.chmod(0o755)
        return path

    @property
    def socket(self) -> str:
        return str(self.b.tmpdir / f"tmux-{os.getuid()}" / "default")

    def facade(self, client: str = "test") -> Facade:
        target = Target(Tmux(socket_path=self.socket), self.b.session, None, str(self.b.runtime))
        return Facade(target, client)

    def log(self, session: str) -> Path:
        return self.b.root / f"{session}.prompts"

    def start(
        self, session: str, command: str, *env: str, width: int = 100, height: int = 30
    ) -> None:
        """Session ``session`` running ``command`` (a stand-in logs to :meth:`log`);
        ``env`` are ``NAME=VALUE`` for the session's environment."""
        args = ["new-session", "-d", "-s", session, "-x", str(width), "-y", str(height)]
        args += ["-c", str(self.b.home)]
        for item in (f"STANDIN_LOG={self.log(session)}", f"PATH={self.b.env['PATH']}", *env):
            args += ["-e", item]
        self.b.tmux(*args, command)

    def prompts(self, session: str) -> list[str]:
        """What the stand-in in ``session`` took as prompts, in order."""
        path = self.log(session)
        if not path.exists():
            return []
        return [json.loads(line)["text"] for line in path.read_text().splitlines()]

    def screen(self, session: str) -> str:
        return self.b.tmux("capture-pane", "-p", "-t", f"={session}:", check=False)

    def names(self) -> set[str]:
        return {agent.name for agent in self.facade().agents()}

    def wait_names(self, names: set[str]) -> None:
        self.b.wait_for(lambda: self.names() == names, f"the agents {sorted(names)}")

    def wait_screen(self, session: str, text: str) -> None:
        self.b.wait_for(lambda: text in self.screen(session), repr(text))

    def cli(self, *args: str) -> tuple[int, str, str]:
        result = self.b.bridge_cli(*args)
        return result.returncode, result.stdout, result.stderr

"""Prompts to the real Claude Code and Codex (issue 24): ``Bridge.send_prompt`` to each
idle agent, confirmed by the agent's screen, timed (median of 10, 3 with --quick; target
1 s); then 50 prompts to each (5 with --quick), counting false negatives: a prompt the
receipt says was not taken (or unconfirmed) that the model was asked anyway.

The CLIs are the pinned ones ``.ci/deps`` installs, started offline with the test
suite's homes and fake model API (``tests/support/real_agents.py``, ``model_api.py``).
Measured once, in the first shell's run; skipped when the CLIs are not installed.
"""

from __future__ import annotations

import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from measures import SEND_TIMEOUT, Config, Outcome, ShellState, Skip, to_ms
from prompt_measure import _facade
from results import Metric, count_ok
from tmuxserver import BenchError, Pane

if TYPE_CHECKING:
    from tmux_bridge.api import Bridge

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
_done: set[str] = set()


def realagent(state: ShellState, cfg: Config) -> Outcome:
    """The figures; :class:`Skip` after the first shell or without the CLIs."""
    from tests.support import real_agents
    from tests.support.model_api import model_api

    if _done:
        return Skip("measured once, in " + next(iter(_done)))
    if not all((real_agents.BIN / name).exists() for name in real_agents.VERSIONS):
        return Skip(f"the agent CLIs are not installed in {real_agents.CLIS_DIR}")
    _done.add(state.pane.shell)
    pane = state.pane
    root = Path(pane.env["TMUX_TMPDIR"]).parent / "realagents"
    homes = {"claude": root / "claude-home", "codex": real_agents.HOMES / uuid.uuid4().hex[:12]}
    metrics = []
    with model_api() as api:
        try:
            for home in homes.values():
                home.mkdir(parents=True)
            real_agents.write_claude_home(homes["claude"], root)
            real_agents.make_codex_home(homes["codex"], api.url)
            envs = {
                "claude": real_agents.claude_env(homes["claude"], api.url),
                "codex": [f"CODEX_HOME={homes['codex']}"],
            }
            for runtime, env in envs.items():
                metrics += _measure(pane, runtime, env, root, cfg, api.prompts)
        finally:
            _end(pane, [f"bench-{runtime}" for runtime in ("claude", "codex")])
            real_agents.end_codex_daemons(homes["codex"])
            shutil.rmtree(homes["codex"], ignore_errors=True)  # once no Codex writes into it
    return metrics


def _measure(
    pane: Pane, runtime: str, env: list[str], cwd: Path, cfg: Config, asked: list[str]
) -> list[Metric]:
    from tests.support import real_agents

    session = f"bench-{runtime}"
    args = ["new-session", "-d", "-s", session, "-x", "120", "-y", "30", "-c", str(cwd)]
    for item in env:
        args += ["-e", item]
    pane.tmux(*args, f"exec {real_agents.BIN / runtime}")
    facade = _facade(pane.env)
    _wait_idle(facade, session)
    _prompt(facade, session, "warm up")  # its first prompt may wait for its start-up
    times = []
    for n in range(3 if cfg.quick else 10):
        _wait_idle(facade, session)
        started = time.perf_counter()
        _prompt(facade, session, f"timed prompt {n}")
        times.append(time.perf_counter() - started)
    count = 5 if cfg.quick else 50
    oks = []
    for n in range(count):
        text = f"counted prompt {n}"
        oks.append(_prompt(facade, session, text) or text not in asked)
    shell = pane.shell
    return [
        Metric("realagent", shell, f"prompt to idle real {runtime}", "ms", to_ms(times)).at_most(
            1000
        ),
        count_ok("realagent", shell, f"no false negative of {count}, real {runtime}", oks),
    ]


def _end(pane: Pane, sessions: list[str]) -> None:
    """Kill the sessions and wait (a while) until their programs have exited."""
    pids = []
    for session in sessions:
        found = pane.tmux("list-panes", "-s", "-t", f"={session}", "-F", "#{pane_pid}", check=False)
        pids += found.split()
        pane.tmux("kill-session", "-t", f"={session}", check=False)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def _prompt(facade: Bridge, session: str, text: str) -> bool:
    """Whether the receipt says delivered."""
    from tmux_bridge.errors import NotDelivered

    try:
        return facade.send_prompt(session, text, timeout=SEND_TIMEOUT).delivered
    except NotDelivered:
        return False


def _wait_idle(facade: Bridge, session: str) -> None:
    deadline = time.monotonic() + SEND_TIMEOUT
    while time.monotonic() < deadline:
        if any(a.name == session and a.state == "idle" for a in facade.agents()):
            return
        time.sleep(0.05)
    raise BenchError(f"the real agent {session} did not become idle")

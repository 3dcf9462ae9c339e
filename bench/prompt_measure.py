"""Prompt delivery (issue 12): ``tmux-bridge prompt`` to an idle stand-in agent (the
test suite's ``tests/support/standin_agent.py``, installed as ``claude``), from the command line
and through the facade in this process, each delivered and confirmed by the target;
and 100 prompts (20 with --quick) to a stand-in that ignores one Enter in five.

Measured once, in the first shell's run: the agent's pane runs no shell of ours.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from measures import SEND_TIMEOUT, Config, Outcome, ShellState, Skip, to_ms
from results import Metric, count_ok
from tmuxserver import TMUX_BRIDGE, BenchError, Pane

if TYPE_CHECKING:
    from tmux_bridge.api import Bridge

STANDIN = Path(__file__).resolve().parent.parent / "tests" / "support" / "standin_agent.py"
_done: set[str] = set()


def prompt(state: ShellState, cfg: Config) -> Outcome:
    """The figures; :class:`Skip` after the first shell."""
    if _done:
        return Skip("measured once, in " + next(iter(_done)))
    _done.add(state.pane.shell)
    pane = state.pane
    root = Path(pane.env["TMUX_TMPDIR"]).parent
    program = root / "bin" / "claude"
    program.parent.mkdir(exist_ok=True)
    program.write_text(f"#!{sys.executable}\n{STANDIN.read_text()}")
    program.chmod(0o755)
    facade = _facade(pane.env)
    shell = pane.shell
    try:
        _start(pane, "bench-idle", program, "STANDIN_WORK=0")
        _start(pane, "bench-flaky", program, "STANDIN_WORK=0", "STANDIN_IGNORE=0.2")
        _wait_idle(facade, {"bench-idle", "bench-flaky"})
        cli, inproc = [], []
        for n in range(cfg.runs):
            cli.append(_cli_prompt(pane.env, f"bench prompt {n}"))
            started = time.perf_counter()
            facade.send_prompt("bench-idle", f"in process {n}")
            inproc.append(time.perf_counter() - started)
        count = 20 if cfg.quick else 100
        oks = [_flaky(facade, n) for n in range(count)]
    finally:
        for session in ("bench-idle", "bench-flaky"):
            pane.tmux("kill-session", "-t", f"={session}", check=False)
    return [
        Metric("prompt", shell, "tmux-bridge prompt, idle agent", "ms", to_ms(cli)).at_most(1000),
        Metric("prompt", shell, "Bridge.send_prompt in process", "ms", to_ms(inproc)),
        count_ok("prompt", shell, f"delivered of {count}, 1 Enter in 5 ignored", oks),
    ]


def _facade(env: dict[str, str]) -> Bridge:
    from tmux_bridge.api import Bridge
    from tmux_bridge.infra.tmux import Tmux
    from tmux_bridge.target import Target

    socket = Path(env["TMUX_TMPDIR"]) / f"tmux-{os.getuid()}" / "default"
    return Bridge(Target(Tmux(socket_path=str(socket)), "", None, env["TMUX_BRIDGE_DIR"]), "bench")


def _start(pane: Pane, session: str, program: Path, *env: str) -> None:
    args = ["new-session", "-d", "-s", session, "-x", "100", "-y", "30"]
    for item in env:
        args += ["-e", item]
    pane.tmux(*args, str(program))


def _wait_idle(facade: Bridge, names: set[str]) -> None:
    deadline = time.monotonic() + SEND_TIMEOUT
    while time.monotonic() < deadline:
        idle = {a.name for a in facade.agents() if a.state == "idle"}
        if names <= idle:
            return
        time.sleep(0.05)
    raise BenchError(f"the stand-in agents {sorted(names)} did not start")


def _cli_prompt(env: dict[str, str], text: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [str(TMUX_BRIDGE), "prompt", "--to", "bench-idle", text],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=SEND_TIMEOUT, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise BenchError(f"tmux-bridge prompt failed ({result.returncode}): {result.stderr}")
    return time.perf_counter() - started


def _flaky(facade: Bridge, n: int) -> bool:
    from tmux_bridge.errors import NotDelivered

    try:
        facade.send_prompt("bench-flaky", f"flaky prompt {n}")
    except NotDelivered:
        return False
    return True

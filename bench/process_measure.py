"""The process-facts measurement (issue 27): ``tmux-send -- true`` through the Linux
implementation (``/proc``, pidfds) against the portable one (``ps``, ``lsof``, polling),
interleaved in the same run (``TMUX_BRIDGE_PROCESS`` set per call)."""

from __future__ import annotations

import subprocess
import time

from measures import Config, Outcome, ShellState, Skip, interleaved, to_ms
from results import Metric, ratio
from tmuxserver import BenchError, Pane


def _send_as(pane: Pane, which: str) -> float:
    env = dict(pane.env, TMUX_BRIDGE_PROCESS=which)
    started = time.perf_counter()
    done = subprocess.run(
        pane.send_argv(["--", "true"]), env=env, capture_output=True, timeout=120, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise BenchError(f"tmux-send -- true ({which}) exited {done.returncode}")
    return elapsed


def process(state: ShellState, cfg: Config) -> Outcome:
    pane = state.pane
    if not pane.env.get("PATH"):
        return Skip("no PATH for ps")
    s = interleaved(
        pane,
        {"linux": lambda: _send_as(pane, "linux"), "portable": lambda: _send_as(pane, "portable")},
        cfg.runs,
    )
    shell = pane.shell
    linux = Metric("process", shell, "tmux-send -- true (linux)", "ms", to_ms(s["linux"]))
    portable = Metric("process", shell, "tmux-send -- true (portable)", "ms", to_ms(s["portable"]))
    return [
        linux,
        portable,
        ratio("process", shell, "portable / linux", portable, linux).at_most(1.2),
    ]

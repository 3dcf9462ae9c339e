"""The far-shell measurement (issue 10): ``tmux-send -- true`` in a pane that runs
``ssh`` to a real sshd on loopback, against the same call in the local pane; and
``seq 1 N`` through that ssh pane (md5 checked) against the same command typed there
directly and awaited on the pane's own stream.

Needs root (the sshd and the test users come from ``tests/support/sshd.py``) and Debian's
``openssh-server``; skipped otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from measures import Config, Outcome, ShellState, Skip, Step, seq_md5, short, timed_send, to_ms
from results import Metric, count_ok, ratio
from tmuxserver import BenchError, Pane

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support.sshd


def nested(state: ShellState, cfg: Config) -> Outcome:
    pane = state.pane
    if os.geteuid() != 0 or not os.path.exists("/usr/sbin/sshd"):
        return Skip("needs root and openssh-server (an sshd on loopback, test users)")
    if pane.shell != "bash":
        return Skip("measured in the bash pane only (ssh to a bash login shell)")
    from tests.support.sshd import running_sshd

    with running_sshd() as sshd, _ssh_pane(pane, sshd.command("bash")) as far:
        return _far_figures(pane, far, cfg)


@contextlib.contextmanager
def _ssh_pane(pane: Pane, command: str) -> Iterator[str]:
    """A second pane beside the bench pane, logged in over ssh; its pane id."""
    far = pane.tmux("split-window", "-d", "-t", pane.target, "-P", "-F", "#{pane_id}").strip()
    try:
        _wait_for(pane, far, local=True)
        pane.tmux("send-keys", "-t", far, command, "Enter")
        _wait_for(pane, far, local=False)
        yield far
    finally:
        pane.tmux("kill-pane", "-t", far, check=False)


def _wait_for(pane: Pane, far: str, local: bool) -> None:
    """Until ``tmux-send -p FAR -- true`` runs in the pane's own shell (``local``) or in
    a far one."""
    deadline = time.monotonic() + 15
    while True:
        result = pane.send("--json", "-p", far, "--", "true", timeout=30)
        if result.returncode == 0 and (json.loads(result.stdout)["far"] is None) == local:
            return
        if time.monotonic() > deadline:
            raise BenchError(f"pane {far} did not let tmux-send in")
        time.sleep(0.1)


def _far_figures(pane: Pane, far: str, cfg: Config) -> list[Metric]:
    lines = 100_000
    command = f"seq 1 {lines}"
    expected = seq_md5(lines)
    matches: list[bool] = []

    def send() -> float:
        elapsed, out = timed_send(pane, "-p", far, "--", command)
        matches.append(hashlib.md5(out).hexdigest() == expected)
        return elapsed

    steps: dict[str, Step] = {
        "true": lambda: timed_send(pane, "-p", far, "--", "true")[0],
        "local": lambda: timed_send(pane, "--", "true")[0],
        "send": send,
        "typed": lambda: _typed(pane, far, command),
    }
    s = _interleaved(steps, cfg.runs)
    shell = "bash (ssh)"
    label = f"seq 1 {short(lines)}"
    far_true = Metric("nested", shell, "tmux-send -- true, ssh pane", "ms", to_ms(s["true"]))
    here = Metric("nested", shell, "tmux-send -- true, local pane", "ms", to_ms(s["local"]))
    via = Metric("nested", shell, f"tmux-send -- {label}, ssh pane", "ms", to_ms(s["send"]))
    typed = Metric("nested", shell, f"{label} typed into the ssh pane", "ms", to_ms(s["typed"]))
    return [
        far_true,
        here,
        ratio("nested", shell, "true: ssh pane / local pane", far_true, here).at_most(1.5),
        via,
        typed,
        ratio("nested", shell, f"{label}: tmux-send / typed", via, typed).at_most(2.0),
        count_ok("nested", shell, "stdout md5 == local seq md5", matches[1:]),
    ]


def _interleaved(steps: dict[str, Step], runs: int) -> dict[str, list[float]]:
    """:func:`measures.interleaved` without its wait for the local prompt: each step
    waits for the far prompt itself (tmux-send's probe; the typed step's marker)."""
    for step in steps.values():
        step()  # the warm-up
    samples: dict[str, list[float]] = {name: [] for name in steps}
    names = list(steps)
    for run in range(runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(steps[name]())
    return samples


def _typed(pane: Pane, far: str, command: str) -> float:
    """Seconds to type ``COMMAND; printf DONE`` into the ssh pane and see the marker in
    the pane's own output stream (``pipe-pane`` to a local ``grep``, which signals a tmux
    channel; the echo of the line cannot match: the marker is split in it)."""
    tag = os.urandom(4).hex()
    socket = pane.tmux("display-message", "-p", "#{socket_path}").strip()
    try:
        pipe = f"grep -q -a DONE{tag}; tmux -S {socket} wait-for -S ch{tag}"
        pane.tmux("pipe-pane", "-O", "-t", far, pipe)
        started = time.perf_counter()
        pane.tmux("send-keys", "-t", far, f" {command}; printf 'DO%s\\n' NE{tag}", "Enter")
        pane.tmux("wait-for", f"ch{tag}", timeout=120)
        elapsed = time.perf_counter() - started
    finally:
        pane.tmux("pipe-pane", "-t", far, check=False)
    return elapsed

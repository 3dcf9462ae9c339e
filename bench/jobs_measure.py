"""The jobs measurement (issue 22): starting a job (``tmux-send --background -- true``)
against a normal ``tmux-send -- true``; ``--job`` on an idle job (a ``sleep`` in a second
pane) against a normal call; and ``seq 1 N`` started as a job and read in one ``--wait``
(md5 checked) against the same command typed into the pane and awaited on its stream,
and against the same command in a normal call (what a job adds to it). For those three,
also the CPU the whole machine spent in the step (``/proc/stat``; no target: it shows
what the two cores are asked for, the floor under the times).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from measures import (
    TARGET_LINES,
    Config,
    Outcome,
    ShellState,
    Step,
    interleaved,
    seq_md5,
    short,
    timed_send,
    to_ms,
)
from results import Metric, count_ok, ratio
from tmuxserver import BenchError, Pane


def jobs(state: ShellState, cfg: Config) -> Outcome:
    pane = state.pane
    lines = cfg.throughput_lines
    command = f"seq 1 {lines}"
    expected = seq_md5(lines)
    matches: list[bool] = []

    def start() -> float:
        elapsed, out = timed_send(pane, "--background", "--", "true")
        pane.send("--wait", out.decode().strip())  # the pane is free again
        return elapsed

    def waited() -> float:
        began = time.perf_counter()
        _, out = timed_send(pane, "--background", "--", command)
        result = pane.send("--wait", out.decode().strip(), "--timeout", "120", timeout=300)
        elapsed = time.perf_counter() - began
        matches.append(hashlib.md5(result.stdout).hexdigest() == expected)
        return elapsed

    def called() -> float:
        elapsed, out = timed_send(pane, "--", command)
        matches_call.append(hashlib.md5(out).hexdigest() == expected)
        return elapsed

    matches_call: list[bool] = []
    cpu: dict[str, list[float]] = {"wait": [], "call": [], "pane": []}
    with _idle_job(pane) as idle:
        steps: dict[str, Step] = {
            "true": lambda: timed_send(pane, "--", "true")[0],
            "start": start,
            "read": lambda: timed_send(pane, "--job", idle)[0],
            "wait": _counted(waited, cpu["wait"]),
            "call": _counted(called, cpu["call"]),
            "pane": _counted(lambda: pane.round_trip(command), cpu["pane"]),
        }
        s = interleaved(pane, steps, cfg.runs)
    label = short(lines)
    figures = _figures(pane.shell, s, lines, matches, matches_call)
    if all(cpu.values()):  # /proc/stat was there
        names = {"pane": "in the pane", "call": "in a normal call", "wait": "as a job + --wait"}
        figures += [
            Metric("jobs", pane.shell, f"machine CPU, seq 1 {label} {names[k]}", "ms", to_ms(v))
            for k, v in cpu.items()
        ]
    return figures


def _busy() -> float | None:
    """CPU seconds the whole machine has spent busy since it started (not idle, waiting
    for I/O or taken by the hypervisor); ``None`` without ``/proc/stat``."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return None
    return (sum(ticks[:7]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # not steal


def _counted(step: Step, into: list[float]) -> Step:
    """``step``, noting the machine's CPU seconds during it in ``into``."""

    def run() -> float:
        before = _busy()
        elapsed = step()
        after = _busy()
        if before is not None and after is not None:
            into.append(after - before)
        return elapsed

    return run


def _figures(
    shell: str,
    s: dict[str, list[float]],
    lines: int,
    matches: list[bool],
    matches_call: list[bool],
) -> list[Metric]:
    label = short(lines)
    true = Metric("jobs", shell, "tmux-send -- true", "ms", to_ms(s["true"]))
    start = Metric("jobs", shell, "tmux-send --background -- true", "ms", to_ms(s["start"]))
    read = Metric("jobs", shell, "tmux-send --job ID (idle job)", "ms", to_ms(s["read"]))
    wait = Metric("jobs", shell, f"job seq 1 {label}: start + --wait", "ms", to_ms(s["wait"]))
    own = Metric("jobs", shell, f"seq 1 {label} in the pane", "ms", to_ms(s["pane"]))
    call = Metric("jobs", shell, f"tmux-send -- seq 1 {label}", "ms", to_ms(s["call"]))
    through = ratio("jobs", shell, "job + --wait / pane", wait, own)
    if lines >= TARGET_LINES:
        through.at_most(1.3)
    return [
        true,
        start,
        read,
        wait,
        call,
        own,
        ratio("jobs", shell, "--background / -- true", start, true).at_most(1.5),
        ratio("jobs", shell, "--job (idle) / -- true", read, true).at_most(1.0),
        through,
        # what a job adds to the same command in a normal call (no target: a baseline)
        ratio("jobs", shell, "job + --wait / normal call", wait, call),
        ratio("jobs", shell, "normal call / pane", call, own),
        count_ok("jobs", shell, "--wait stdout md5 == local seq md5", matches[1:]),
        count_ok("jobs", shell, "normal call stdout md5 == local seq md5", matches_call[1:]),
    ]


@contextmanager
def _idle_job(pane: Pane) -> Iterator[str]:
    """A job that prints nothing, in a second pane beside the bench pane; its id."""
    other = pane.tmux("split-window", "-d", "-t", pane.target, "-P", "-F", "#{pane_id}").strip()
    job = ""
    try:
        deadline = time.monotonic() + 15
        while True:
            result = pane.send("-p", other, "--background", "--", "sleep", "3600", timeout=30)
            if result.returncode == 0:
                job = result.stdout.decode().strip()
                break
            if time.monotonic() > deadline:
                raise BenchError(f"pane {other} did not take a job: {result.stderr!r}")
            time.sleep(0.1)  # its shell is still starting: nothing to wait on but a retry
        yield job
    finally:
        if job:
            pane.send("--kill", job)
        pane.tmux("kill-pane", "-t", other, check=False)

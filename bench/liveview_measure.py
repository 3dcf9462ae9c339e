"""The live view's source (issue 26): what watching a pane costs the pane itself.

``seq 1 N`` in the pane, its own time (typed, awaited on a ``wait-for`` channel), three
ways, interleaved:

- alone: nobody watches;
- pipe-pane: the product's watch (``Bridge.watch``: tmux pipes the pane's output into a
  ``cat`` that writes to a FIFO read by a thread), one listener counting the bytes;
- control: a tmux control-mode client attached to the pane's session (``tmux -C``,
  read-only, ignoring its size) whose ``%output`` lines a thread decodes (tmux escapes
  bytes below 32 and the backslash as three octal digits): the alternative issue 26
  asks to measure, not in the product.

Both watchers must get at least every byte of seq's output as the terminal got it
(``\r\n`` line ends), so neither lost any. The target records
the choice the product made: the pipe costs the pane no more than the control client.
Measured once, in the first shell's run.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

from measures import Config, Outcome, ShellState, Skip, interleaved, to_ms
from results import Metric, count_ok, ratio
from tmuxserver import BenchError, Pane

_done: set[str] = set()
_OCTAL = re.compile(rb"\\([0-7]{3})")


class _Counter:
    """A watch listener that counts the bytes it is handed."""

    def __init__(self) -> None:
        self.bytes = 0
        self.resyncs = 0

    def output(self, data: bytes) -> None:
        self.bytes += len(data)

    def resync(self, reason: str) -> None:
        self.resyncs += 1


def liveview(state: ShellState, cfg: Config) -> Outcome:
    if _done:
        return Skip("measured once, in " + next(iter(_done)))
    _done.add(state.pane.shell)
    pane = state.pane
    command = f"seq 1 {cfg.throughput_lines}"
    got: dict[str, list[int]] = {"pipe-pane": [], "control": []}
    s = interleaved(
        pane,
        {
            "alone": lambda: pane.round_trip(command),
            "pipe-pane": lambda: _watched(pane, command, got["pipe-pane"]),
            "control": lambda: _controlled(pane, command, got["control"]),
        },
        max(3, cfg.runs // 3),
    )
    shell = pane.shell
    alone = Metric("liveview", shell, f"{command} alone", "ms", to_ms(s["alone"]))
    piped = Metric("liveview", shell, f"{command}, a pipe-pane watch", "ms", to_ms(s["pipe-pane"]))
    ctl = Metric("liveview", shell, f"{command}, a control client", "ms", to_ms(s["control"]))
    expected = sum(len(str(n)) + 2 for n in range(1, cfg.throughput_lines + 1))
    counts = got["pipe-pane"] + got["control"]
    return [
        alone,
        piped,
        ctl,
        ratio("liveview", shell, "pipe-pane watch / alone", piped, alone),
        ratio("liveview", shell, "control client / alone", ctl, alone),
        ratio("liveview", shell, "pipe-pane watch / control client", piped, ctl).at_most(1.0),
        count_ok(
            "liveview", shell, "watchers with all of seq's bytes", [n >= expected for n in counts]
        ),
    ]


def _target(pane: Pane) -> object:
    from tmux_bridge.infra.tmux import Tmux
    from tmux_bridge.target import Target

    socket = Path(pane.env["TMUX_TMPDIR"]) / f"tmux-{os.getuid()}" / "default"
    return Target(Tmux(socket_path=str(socket)), pane.session, None, pane.env["TMUX_BRIDGE_DIR"])


def _watched(pane: Pane, command: str, got: list[int]) -> float:
    from tmux_bridge.api import Bridge
    from tmux_bridge.target import Target

    target = _target(pane)
    assert isinstance(target, Target)
    pane_id = pane.tmux("display-message", "-p", "-t", pane.target, "#{pane_id}").strip()
    bridge = Bridge(target.with_pane(pane_id), "bench")
    counter = _Counter()
    bridge.watch(counter)
    try:
        elapsed = pane.round_trip(command)
        _settle(lambda: counter.bytes)
    finally:
        bridge.unwatch(pane_id, counter)
    if counter.resyncs:
        raise BenchError("the watch had to re-arm during the run")
    got.append(counter.bytes)
    return elapsed


def _controlled(pane: Pane, command: str, got: list[int]) -> float:
    client = subprocess.Popen(
        ["tmux", "-L", "default", "-C", "attach", "-r", "-t", pane.target, "-f", "ignore-size"],
        env=dict(pane.env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert client.stdout is not None and client.stdin is not None
    counted = [0]
    ready = threading.Event()
    pane_id = pane.tmux("display-message", "-p", "-t", pane.target, "#{pane_id}").strip()
    prefix = f"%output {pane_id} ".encode()

    def read() -> None:
        assert client.stdout is not None
        for line in client.stdout:
            ready.set()
            if line.startswith(prefix):
                data = _OCTAL.sub(lambda m: bytes([int(m.group(1), 8)]), line[len(prefix) : -1])
                counted[0] += len(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(10):  # the client's first reply (%begin/%end of its attach)
            raise BenchError("the control client did not attach")
        elapsed = pane.round_trip(command)
        _settle(lambda: counted[0])
    finally:
        client.stdin.close()
        client.terminate()
        client.wait(10)
        reader.join(10)
    got.append(counted[0])
    return elapsed


def _settle(count: object) -> None:
    """Until ``count()`` stops growing for 0.2 s (the watcher has all the pane got)."""
    assert callable(count)
    last, still = -1, time.monotonic()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        now = count()
        if now != last:
            last, still = now, time.monotonic()
        elif time.monotonic() - still >= 0.2:
            return
        time.sleep(0.02)
    raise BenchError("the watcher kept receiving for 30 s")

"""Far transfers at speed (issue 28): ``tmux-send --write`` and ``--read`` of 50 MB of
random bytes through a pane that runs ``ssh`` to a real sshd on loopback (the bytes go
as base64 through the pane's stream), as rates in MB/s (10^6 bytes per second), each
read checked by SHA-256. The target: at least 1 MB/s each way.

Needs root (the sshd and the test users come from ``tests/support/sshd.py``) and Debian's
``openssh-server``; skipped otherwise. Measured in the bash pane only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from measures import Config, Outcome, ShellState, Skip
from nested_measure import _ssh_pane
from results import Metric, count_ok
from tmuxserver import BenchError, Pane

FULL_BYTES = 50 * 1024 * 1024
QUICK_BYTES = 5 * 1024 * 1024


def transfer(state: ShellState, cfg: Config) -> Outcome:
    pane = state.pane
    if os.geteuid() != 0 or not os.path.exists("/usr/sbin/sshd"):
        return Skip("needs root and openssh-server (an sshd on loopback, test users)")
    if pane.shell != "bash":
        return Skip("measured in the bash pane only (ssh to a bash login shell)")
    from tests.support.sshd import running_sshd  # nested_measure put the repo on the path

    work = Path(tempfile.mkdtemp(prefix="tb-bench-transfer-"))
    work.chmod(0o777)  # the far user writes there
    try:
        with running_sshd() as sshd, _ssh_pane(pane, sshd.command("bash")) as far:
            return _figures(pane, far, work / "big.bin", cfg)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _figures(pane: Pane, far: str, path: Path, cfg: Config) -> list[Metric]:
    size = QUICK_BYTES if cfg.quick else FULL_BYTES
    runs = 1 if cfg.quick else min(cfg.runs, 3)
    data = os.urandom(size)
    digest = hashlib.sha256(data).hexdigest()
    rates: dict[str, list[float]] = {"write": [], "read": []}
    exact: list[bool] = []
    for _ in range(runs):
        path.unlink(missing_ok=True)
        elapsed, _out = _send(pane, "-p", far, "--no-backup", "--write", str(path), data=data)
        rates["write"].append(size / 1e6 / elapsed)
        elapsed, out = _send(pane, "-p", far, "--read", str(path))
        rates["read"].append(size / 1e6 / elapsed)
        exact.append(hashlib.sha256(out).hexdigest() == digest == _digest(path))
    shell, label = "bash (ssh)", f"{size / 1e6:g} MB"
    return [
        Metric("transfer", shell, f"far --write of {label}", "MB/s", rates["write"]).at_least(1),
        Metric("transfer", shell, f"far --read of {label}", "MB/s", rates["read"]).at_least(1),
        count_ok("transfer", shell, f"{label}: SHA-256 equal both ends", exact),
    ]


def _send(pane: Pane, *args: str, data: bytes | None = None) -> tuple[float, bytes]:
    started = time.perf_counter()
    result = pane.send("--max-time", "600", *args, timeout=700, data=data)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchError(f"tmux-send {args[2:4]} exited {result.returncode}: {result.stderr!r}")
    return elapsed, result.stdout


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()

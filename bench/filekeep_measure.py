"""Files kept safe and checks by kind (issue 28): ``tmux-send --write`` of a file's own
bytes (``unchanged``: nothing rewritten) against ``--stat`` of it, and ``--check --as
json`` of a 1 MB JSON file against ``--check`` of a one-word command, interleaved in
the same run. Every run's answer is checked (status ``unchanged``, the stat's SHA-256,
``valid``).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path

from measures import SEND_TIMEOUT, Config, Outcome, ShellState, interleaved, to_ms
from results import Metric, count_ok, ratio
from tmuxserver import BenchError, Pane


def timed_send(pane: Pane, *args: str, data: bytes | None = None) -> tuple[float, bytes]:
    """``tmux-send ARGS`` with ``data`` on stdin: its wall time and stdout; raises
    :class:`BenchError` unless it exits 0."""
    started = time.perf_counter()
    result = pane.send(*args, timeout=SEND_TIMEOUT, data=data)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchError(f"tmux-send {args[:3]} exited {result.returncode}: {result.stderr!r}")
    return elapsed, result.stdout


def json_text(size: int) -> bytes:
    """A JSON document of about ``size`` bytes (1 MB in a full run): small objects."""
    item = {"name": "tmux-bridge", "count": 12345, "tags": ["a", "b"], "ok": True}
    one = len(json.dumps(item)) + 2
    return json.dumps([item] * max(1, size // one)).encode()


def filekeep(state: ShellState, cfg: Config) -> Outcome:
    """The figures for one shell."""
    pane = state.pane
    data = json_text(cfg.file_bytes)
    digest = hashlib.sha256(data).hexdigest()
    oks: dict[str, list[bool]] = {"unchanged": [], "stat": [], "check": []}
    with tempfile.TemporaryDirectory(prefix="tb-bench-keep-") as work:
        path = Path(work) / "data.json"
        path.write_bytes(data)

        def unchanged() -> float:
            elapsed, out = timed_send(pane, "--json", "--write", str(path), data=data)
            oks["unchanged"].append(json.loads(out)["file"]["status"] == "unchanged")
            return elapsed

        def stat() -> float:
            elapsed, out = timed_send(pane, "--json", "--stat", str(path))
            oks["stat"].append(json.loads(out)["file"]["sha256"] == digest)
            return elapsed

        def check_json() -> float:
            elapsed, out = timed_send(pane, "--json", "--check", "--as", "json", "-", data=data)
            oks["check"].append(json.loads(out)["valid"] is True)
            return elapsed

        def check_word() -> float:
            return timed_send(pane, "--check", "--", "true")[0]

        steps = {"unchanged": unchanged, "stat": stat, "json": check_json, "word": check_word}
        s = interleaved(pane, steps, cfg.runs)
    shell, label = pane.shell, f"{len(data) / 1e6:g} MB"
    names = {
        "unchanged": f"--write unchanged, {label}",
        "stat": f"--stat, {label}",
        "json": f"--check --as json, {label}",
        "word": "--check -- true",
    }
    t = {key: Metric("filekeep", shell, name, "ms", to_ms(s[key])) for key, name in names.items()}
    kept = ratio("filekeep", shell, "--write unchanged / --stat", t["unchanged"], t["stat"])
    checks = ratio("filekeep", shell, "--check --as json / word", t["json"], t["word"])
    return [
        *t.values(),
        kept.at_most(1.2),
        checks.at_most(1.5),
        *(count_ok("filekeep", shell, f"{name}: right", ok[1:]) for name, ok in oks.items()),
    ]

"""What the benchmark ran on: CPU, cores, kernel, Python, tmux and shell versions."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" when there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def first_line(argv: Sequence[str]) -> str:
    """The first line ``argv`` prints (stdout, else stderr), or why it could not run."""
    try:
        result = subprocess.run(list(argv), capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable ({exc})"
    text = (result.stdout or result.stderr).strip()
    return text.split("\n", 1)[0] if text else "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe(shells: Sequence[str]) -> dict[str, str]:
    """The machine and software versions, as short strings for the header and the JSON."""
    info = {
        "cpu": cpu_model(),
        "cores": str(os.cpu_count() or "unknown"),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_version()} ({sys.executable})",
        "click": _version("click"),
        "tmux-bridge": _version("tmux-bridge"),
        "tmux": first_line(["tmux", "-V"]),
    }
    for shell in shells:
        info[shell] = first_line([shell, "--version"])
    info["load at start"] = load_average()
    return info


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other work on the machine skews timings."""
    try:
        return " ".join(f"{load:.2f}" for load in os.getloadavg())
    except OSError:
        return "unknown"

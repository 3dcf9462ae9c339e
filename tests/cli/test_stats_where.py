"""Friction by where (issue 28 point 5): each call's log entry names the host and
platform it ran on; log --stats counts by host, by first word, and the first-try
successes."""

from __future__ import annotations

import json
import os
from typing import Any

from tmux_bridge.audit.stats import summarize

from ..support.pane import MakeBridge


def entry(pane: str, command: str, status: int, at: str, **extra: Any) -> dict[str, Any]:
    return {
        "time": f"2024-05-01T10:{at}+0000",
        "mode": extra.pop("mode", "command"),
        "pane": pane,
        "command": command,
        "exit_status": status,
        "timed_out": extra.pop("timed_out", None),
        "duration_s": 0.1,
        "error_code": extra.pop("error_code", None),
        **extra,
    }


HERE = {"host": "ws", "platform": "Linux"}
FAR = {"host": "db1", "platform": "FreeBSD"}
LOG = [
    entry("%0", "ls", 0, "00:00", **HERE),  # first try
    entry("%0", "grep -P x f", 2, "00:10", **FAR),  # a miss in %0
    entry("%0", "LC_ALL=C grep -E x f", 0, "00:20", **FAR),  # not first try: 10 s after
    entry("%1", "make", 0, "00:25", **HERE),  # another pane: first try
    entry("%0", "true", 125, "01:00", error_code="half_typed_line"),  # a refusal, no host
    entry("%0", "sed -i s/a/b/ f", 0, "03:00", **FAR),  # 2 min after the miss: first try
    entry("%0", "sleep 9", 124, "03:10", timed_out="idle", **FAR),
    entry("%0", "x", 0, "03:11", mode="write", **HERE),  # 1 s after the timeout
    entry("%0", "make", 127, "04:00", mode="check"),  # dry runs do not count
]


def test_friction_by_host_word_and_first_try() -> None:
    summary: dict[str, Any] = summarize(LOG).document()
    hosts = summary["hosts"]
    assert list(hosts) == ["ws (Linux)", "db1 (FreeBSD)", "unknown"]
    assert (hosts["ws (Linux)"]["calls"], hosts["ws (Linux)"]["ok"]) == (3, 3)
    db1 = hosts["db1 (FreeBSD)"]
    assert (db1["calls"], db1["ok"], db1["failed"], db1["timeouts"]) == (4, 2, 1, 1)
    assert hosts["unknown"]["refused"] == 1
    words = summary["first_words"]
    assert list(words)[:2] == ["grep", "sleep"]  # the failing ones first
    assert words["grep"] == {"calls": 2, "failed": 1}  # LC_ALL=C skipped
    assert words["write"] == {"calls": 1, "failed": 0}
    assert "make" in words and words["make"] == {"calls": 1, "failed": 0}  # not the check
    assert summary["first_try"] == 3  # ls, make in %1, sed


def test_each_call_logs_where_it_ran(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--", "true")[0] == 0
    lines = (b.runtime / "log.jsonl").read_text().splitlines()
    end = [e for e in map(json.loads, lines) if e.get("event") != "start"][-1]
    assert (end["host"], end["platform"]) == (os.uname().nodename, os.uname().sysname)
    result = b.bridge_cli("log", "--stats")
    assert result.returncode == 0, result.stderr
    assert f"host {os.uname().nodename} ({os.uname().sysname}): 1 call (1 ok" in result.stdout
    assert "first-try success: 1 of 1 calls (100%)" in result.stdout

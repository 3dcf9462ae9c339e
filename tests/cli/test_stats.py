"""tmux-bridge log --stats: counted against a known sequence of real calls in two panes,
and the summary itself on literal logs (no tmux)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tmux_bridge import Bridge as Api
from tmux_bridge import Target, Tmux
from tmux_bridge.audit.stats import TOP, summarize

from ..support.pane import BIN, TestPane

EXIT_3 = "sh -c 'exit 3'"
SLOW = "sleep 1.5"
HANGS = "sleep 30"


def stats(bridge_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "tmux-bridge"), "log", "--stats", *args],
        env=bridge_env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def second_pane(b: TestPane) -> tuple[str, Api]:
    """A second pane in the bridge session, at its prompt, and a library client for it."""
    pane = b.tmux("split-window", "-d", "-t", b.target, "-P", "-F", "#{pane_id}").strip()

    def at_prompt() -> bool:
        screen = b.tmux("capture-pane", "-p", "-t", pane, check=False)
        lines = [line for line in screen.split("\n") if line.strip()]
        return bool(lines) and lines[-1].rstrip() == "$"

    b.wait_for(at_prompt, f"the prompt in pane {pane}")
    socket = b.tmpdir / f"tmux-{os.getuid()}" / "default"
    target = Target(Tmux(socket_path=str(socket)), b.session, pane, str(b.runtime))
    return pane, Api(target, client="test")


def make_busy(b: TestPane, go: Path) -> None:
    """The person starts a program that runs until ``go`` exists: typed through a client,
    as a person does (a line that no key reached since the last call looks like the
    shell drawing a slow prompt, which tmux-send waits 10 s for before it refuses)."""
    b.person_types(f"sh -c 'while [ ! -e {go} ]; do sleep 0.05; done'\r")
    b.wait_for(lambda: b.foreground() == "sh", "the person's program to run")


def test_stats_count_a_known_sequence_of_calls(
    make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> None:
    b = make_bridge("bash")
    b.start()
    first = b.pane("#{pane_id}")
    # the bridge pane, through tmux-send: 3 ok, 3 failed (1, 3, 3), 1 timeout, 1 refused
    for command, status in [("true", 0), ("true", 0), ("false", 1), (EXIT_3, 3), (EXIT_3, 3)]:
        assert b.send_text("--", command)[0] == status
    assert b.send_text("--", SLOW)[0] == 0
    assert b.send_text("--timeout", "1", "--", HANGS)[0] == 124
    make_busy(b, tmp_path / "go")
    assert b.send_text("--", "true")[0] == 125
    (tmp_path / "go").touch()
    b.wait_for_prompt()
    # a second pane, through the library: 1 ok, 1 failed (3), 1 dry run
    second, api = second_pane(b)
    assert api.run("true").exit_status == 0
    assert api.run(EXIT_3).exit_status == 3
    assert api.check("true").would_exit == 0

    result = stats(b.env, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["entries"] == 11
    overall = document["overall"]
    assert _counts(overall) == (10, 4, 4, 1, 1, 1)
    assert overall["failures_by_status"] == {"3": 3, "1": 1}
    assert overall["timeouts_by_kind"] == {"idle": 1}
    assert overall["refusals_by_reason"] == {"pane_busy": 1}
    assert [(f["command"], f["failures"]) for f in overall["most_failed"][:2]] == [
        (EXIT_3, 3),
        ("false", 1),
    ]
    slowest = overall["slowest"]
    assert {slowest[0]["command"], slowest[1]["command"]} == {SLOW, HANGS}
    assert slowest[0]["duration_s"] >= slowest[1]["duration_s"] >= 1.0
    assert list(document["panes"]) == [first, second]
    one, two = document["panes"][first], document["panes"][second]
    assert _counts(one) == (8, 3, 3, 1, 1, 0)
    assert one["failures_by_status"] == {"3": 2, "1": 1}
    assert one["most_failed"][0] == {
        "command": EXIT_3,
        "failures": 2,
        "exit_statuses": {"3": 2},
        "last": one["most_failed"][0]["last"],
    }
    assert _counts(two) == (2, 1, 1, 0, 0, 1)
    assert two["failures_by_status"] == {"3": 1}

    text = stats(b.env)
    assert text.returncode == 0
    assert "all panes: 10 calls (4 ok, 4 failed, 1 timed out, 1 refused), 1 dry run" in text.stdout
    place = b.tmux(
        "display-message", "-p", "-t", first, "#{session_name}:#{window_index}.#{pane_index}"
    )
    assert one["target"] == place.strip()
    counts = "8 calls (3 ok, 3 failed, 1 timed out, 1 refused), 0 dry runs"
    assert f"pane {first} ({place.strip()}): {counts}" in text.stdout
    assert "pane_busy x1" in text.stdout


def _summary(entries: list[Any], top: int = TOP) -> dict[str, Any]:
    """The summary's JSON form, as ``tmux-bridge log --stats --json`` prints it."""
    return summarize(entries, top).document()


def _counts(summary: dict[str, Any]) -> tuple[int, ...]:
    return tuple(summary[key] for key in ("calls", "ok", "failed", "timeouts", "refused", "checks"))


# --- the summary of a literal log -------------------------------------------------------


def entry(pane: str | None, command: str, status: int, **extra: Any) -> dict[str, Any]:
    return {
        "time": extra.pop("time", "2024-05-01T10:00:00+0000"),
        "mode": extra.pop("mode", "command"),
        "pane": pane,
        "command": command,
        "exit_status": status,
        "timed_out": extra.pop("timed_out", None),
        "duration_s": extra.pop("duration_s", 0.1),
        "error_code": extra.pop("error_code", None),
        **extra,
    }


LOG = [
    entry("%0", "make", 2, duration_s=3.5, time="2024-05-01T10:00:00+0000"),
    entry("%0", "make", 2, duration_s=2.5),
    entry("%0", "ls", 0, duration_s=0.2),
    entry("%0", "sleep 99", 124, timed_out="overall", duration_s=120.0),
    entry("%1", "make", 0, duration_s=4.0, target="tb:0.1"),
    entry("%1", "git push", 128, duration_s=1.0),
    entry(None, "true", 125, error_code="no_such_pane"),
    entry("%1", "true", 125, error_code="half_typed_line"),
    entry("%1", "true", 125, error_code="half_typed_line"),
    entry("%1", "nosuch", 127, mode="check", error_code=None),
    entry("%0", "C-c", 0, mode="keys", time="2024-05-01T11:00:00+0000"),
]


def test_summary_of_a_literal_log() -> None:
    summary = _summary([*LOG, "not an object", 7])
    assert (summary["entries"], summary["first"], summary["last"]) == (
        11,
        "2024-05-01T10:00:00+0000",
        "2024-05-01T11:00:00+0000",
    )
    overall = summary["overall"]
    assert _counts(overall) == (10, 3, 3, 1, 3, 1)
    assert overall["failures_by_status"] == {"2": 2, "128": 1}
    assert overall["timeouts_by_kind"] == {"overall": 1}
    assert overall["refusals_by_reason"] == {"half_typed_line": 2, "no_such_pane": 1}
    assert [s["command"] for s in overall["slowest"]] == [
        "sleep 99",
        "make",
        "make",
        "make",
        "git push",
    ]
    assert [s["duration_s"] for s in overall["slowest"]][:3] == [120.0, 4.0, 3.5]
    assert overall["most_failed"] == [
        {"command": "make", "failures": 2, "exit_statuses": {"2": 2}, "last": LOG[1]["time"]},
        {"command": "sleep 99", "failures": 1, "exit_statuses": {"124": 1}, "last": LOG[3]["time"]},
        {"command": "git push", "failures": 1, "exit_statuses": {"128": 1}, "last": LOG[5]["time"]},
    ]
    assert list(summary["panes"]) == ["%0", "%1", "unknown"]
    assert _counts(summary["panes"]["%0"]) == (5, 2, 2, 1, 0, 0)
    assert _counts(summary["panes"]["%1"]) == (4, 1, 1, 0, 2, 1)
    assert summary["panes"]["%1"]["target"] == "tb:0.1"
    assert _counts(summary["panes"]["unknown"]) == (1, 0, 0, 0, 1, 0)


def test_top_limits_the_lists() -> None:
    log = [entry("%0", f"cmd {i}", 1, duration_s=float(i)) for i in range(10)]
    overall = _summary(log, top=3)["overall"]
    assert [s["command"] for s in overall["slowest"]] == ["cmd 9", "cmd 8", "cmd 7"]
    assert [f["command"] for f in overall["most_failed"]] == ["cmd 0", "cmd 1", "cmd 2"]


def test_an_empty_log() -> None:
    summary = _summary([])
    assert (summary["entries"], summary["panes"]) == (0, {})
    assert _counts(summary["overall"]) == (0, 0, 0, 0, 0, 0)


def test_the_cli_reads_the_rotated_log_too(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (runtime / "log.jsonl.1").write_text("".join(json.dumps(e) + "\n" for e in LOG[:6]))
    (runtime / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in LOG[6:]))
    env = {**os.environ, "TMUX_BRIDGE_DIR": str(runtime)}
    result = stats(env, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["entries"] == len(LOG)
    last_two = json.loads(stats(env, "--json", "-n", "2").stdout)
    assert (last_two["entries"], last_two["overall"]["checks"]) == (2, 1)
    text = stats(env).stdout
    assert "all panes: 10 calls (3 ok, 3 failed, 1 timed out, 3 refused), 1 dry run" in text
    assert "pane %1 (tb:0.1): 4 calls (1 ok, 1 failed, 0 timed out, 2 refused), 1 dry run" in text
    assert "half_typed_line x2, no_such_pane x1" in text
    assert "failures     exit 2 x2, exit 128 x1" in text
    assert " 120.00 s  [124]  sleep 99" in text

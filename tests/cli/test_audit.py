"""The audit log as an attacker and a killed tmux-send meet it: nothing is written into
a runtime directory another user made, a call's start is logged before anything is
typed and its end after, and a long command is logged with what is left out of it and
its SHA-256."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import pwd
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tmux_bridge import Bridge as Api
from tmux_bridge import RunOptions, Target, Tmux
from tmux_bridge.errors import InvalidRequest

from ..support.pane import BIN, TestPane

ATTACKER = "tbattacker"  # another local user, made with useradd
# the name in $USER of the person whose runtime directory is taken; one per test process,
# so two runs of the suite on one machine never share /tmp/tmux-bridge-$USER
VICTIM = f"tbvictim{os.getpid()}"
SECRET = "curl -H 'Authorization: Bearer s3cr3t-t0ken' https://api.example.com"


def _other_user(name: str) -> int:
    """The uid of local user ``name``, made with useradd when missing (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: makes a user with useradd")
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name).pw_uid
    subprocess.run(["useradd", "--no-create-home", "-s", "/bin/sh", name], check=True)
    return pwd.getpwnam(name).pw_uid


@pytest.fixture
def taken_runtime_dir() -> Iterator[Path]:
    """``/tmp/tmux-bridge-$USER`` (the victim's) made first by another user, with a ``log.jsonl``
    (and a ``context.json``) anyone may write: what an attacker plants for a person."""
    uid = _other_user(ATTACKER)
    path = Path(f"/tmp/tmux-bridge-{VICTIM}")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o755)
    for name in ("log.jsonl", "context.json"):
        (path / name).write_text("")
        (path / name).chmod(0o666)
        os.chown(path / name, uid, uid)
    os.chown(path, uid, uid)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _as_victim(tmp_path: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``program ARGS`` as the person: $USER names them, no TMUX_BRIDGE_DIR (so the
    default ``/tmp/tmux-bridge-$USER``), a tmux server of their own, and file
    permissions honoured (root without CAP_DAC_OVERRIDE, as test_files.py does)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "TMUX_BRIDGE"))}
    env.update(USER=VICTIM, HOME=str(tmp_path), TMUX_TMPDIR=str(tmp_path))
    setpriv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run(
        [*setpriv, str(BIN / program), *args], env=env, capture_output=True, text=True, timeout=60
    )


def _contents(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def test_nothing_is_written_into_a_runtime_directory_another_user_made(
    taken_runtime_dir: Path, tmp_path: Path
) -> None:
    before = _contents(taken_runtime_dir)
    # the premise: the person could write the planted log (it is 0666)
    probe = _as_victim(tmp_path, "tmux-send", "--version")
    assert probe.returncode == 0, probe.stderr
    for args in (
        ["--", SECRET],
        ["--json", "--", SECRET],
        ["--check", "--", SECRET],
        ["--repl", "python", "--", SECRET],
        ["--read", "/etc/hostname"],
        ["--max-time", "nan", "--", SECRET],
    ):
        result = _as_victim(tmp_path, "tmux-send", *args)
        assert result.returncode in (2, 125), (args, result.stderr)
        if result.returncode == 125:
            assert "owned by uid" in result.stdout + result.stderr, (args, result.stderr)
    for args in (["log"], ["status"], ["-d"]):
        result = _as_victim(tmp_path, "tmux-bridge", *args)
        assert result.returncode != 0, (args, result.stdout)
    assert _contents(taken_runtime_dir) == before
    assert "s3cr3t" not in "".join(before.values())


def test_the_writers_that_never_fail_a_call_skip_a_directory_not_ours(
    taken_runtime_dir: Path,
) -> None:
    from tmux_bridge.audit import log as audit
    from tmux_bridge.pane.context import prune, update_pane

    before = _contents(taken_runtime_dir)
    audit.record(str(taken_runtime_dir), {"command": SECRET, "exit_status": 125})
    update_pane(str(taken_runtime_dir), "pane-0", {"last_command": {"command": SECRET}})
    prune(str(taken_runtime_dir), set())
    assert _contents(taken_runtime_dir) == before


def test_the_log_is_written_into_our_own_directory_made_0700(tmp_path: Path) -> None:
    from tmux_bridge.audit import log as audit

    directory = tmp_path / "run"
    audit.record(str(directory), {"command": "true", "exit_status": 0})
    assert oct(directory.stat().st_mode & 0o777) == oct(0o700)
    assert [e["command"] for e in audit.read(str(directory), None)] == ["true"]


# --- a call's start, then its end ---------------------------------------------------------


def _log(b: TestPane, *args: str) -> subprocess.CompletedProcess[str]:
    result = b.bridge_cli("log", *args)
    assert result.returncode == 0, result.stderr
    return result


def _raw_log(b: TestPane) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (b.runtime / "log.jsonl").read_text().splitlines()]


def test_a_killed_tmux_send_leaves_its_call_in_the_log_as_never_ended(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    command = "echo started; sleep 29.3"
    proc = b.start_send("--", command)
    b.wait_for_call_start(proc)
    running = json.loads(_log(b, "--json").stdout.splitlines()[-1])
    assert (running["command"], running["event"], running["running"]) == (command, "start", True)
    assert running["pid"] == proc.pid and running["client"] == "tmux-send"
    line = _log(b).stdout.splitlines()[-1]
    assert " - (running) " in line and line.endswith("  " + command), line

    proc.send_signal(signal.SIGKILL)  # no handler runs: nothing more is written
    proc.communicate(timeout=30)
    b.tmux("send-keys", "-t", b.target, "C-c")  # the person stops what was left running
    b.wait_for_prompt()
    never = json.loads(_log(b, "--json").stdout.splitlines()[-1])
    assert (never["command"], never["running"]) == (command, False)
    assert "exit_status" not in never  # its end was never logged
    line = _log(b).stdout.splitlines()[-1]
    assert " - (never ended) " in line and line.endswith("  " + command), line
    stats = json.loads(_log(b, "--stats", "--json").stdout)
    assert (stats["overall"]["calls"], stats["overall"]["never_ended"]) == (1, 1)
    assert stats["overall"]["unfinished"][0]["command"] == command
    text = _log(b, "--stats").stdout
    assert "1 call (0 ok, 0 failed, 0 timed out, 0 refused, 1 never ended)" in text
    assert f"  never ended  {never['time'][:19].replace('T', ' ')}  {command}" in text

    # a call that ends is one entry: its start and its end share the key `call`
    assert b.send_text("--", "echo ended")[0] == 0
    start, end = [e for e in _raw_log(b) if e["command"] == "echo ended"]
    assert (start["event"], start["call"]) == ("start", end["call"])
    assert "event" not in end and end["exit_status"] == 0
    folded = [json.loads(line) for line in _log(b, "--json").stdout.splitlines()]
    assert [e["command"] for e in folded][-2:] == [command, "echo ended"]
    assert folded[-1] == end


class TimeCase(NamedTuple):
    test_id: str
    args: list[str]


TIME_CASES = [
    TimeCase("max-time-nan", ["--max-time", "nan"]),
    TimeCase("max-time-inf", ["--max-time", "inf"]),
    TimeCase("timeout-nan", ["--timeout", "nan"]),
    TimeCase("timeout-inf", ["--timeout", "inf"]),
    TimeCase("timeout-negative", ["--timeout", "-1"]),
    TimeCase("max-time-zero", ["--max-time", "0"]),
    TimeCase("digits-beyond-a-float", ["--max-time", "1" + "0" * 400]),  # the quick reader
    TimeCase("more-than-a-week", ["-t", "604801"]),
]


def test_a_time_limit_that_is_no_number_of_seconds_is_refused_before_anything_is_typed(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    for case in TIME_CASES:
        marker = f"typed-{case.test_id}"
        result = b.send("--json", *case.args, "--", f"echo {marker}")
        document = json.loads(result.stdout)
        assert (result.returncode, document["error_code"]) == (2, "invalid_request"), case
        assert "positive number of seconds" in document["error"], case
        text = b.send(*case.args, "--", f"echo {marker}")
        assert (text.returncode, text.stdout) == (2, b""), case
        assert b"Traceback" not in text.stderr and b"positive number" in text.stderr, case
        assert marker not in b.history(), case  # nothing was typed
        refused = [e for e in _raw_log(b) if e["command"] == f"echo {marker}"]
        assert [e["error_code"] for e in refused] == ["invalid_request"] * 2, case
    # the library (the HTTP API and MCP call it so) refuses the same way
    socket = b.tmpdir / f"tmux-{os.getuid()}" / "default"
    api = Api(Target(Tmux(socket_path=str(socket)), b.session, None, str(b.runtime)))
    for options in (RunOptions(math.nan), RunOptions(max_time=math.inf), RunOptions(0.5, -1)):
        with pytest.raises(InvalidRequest, match="positive number of seconds"):
            api.run("echo typed-by-the-library", options)
        with pytest.raises(InvalidRequest):
            api.check("echo typed-by-the-library", options)
    assert "typed-by-the-library" not in b.history()
    assert b.send_text("--max-time", "604800", "--", "true")[0] == 0  # a week is allowed


# --- a long command: its end shown, what is left out said, its SHA-256 kept ---------------


def test_a_padded_script_shows_its_end_in_the_pane_and_the_log(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    lines = ["echo first", *(["# padding " + "x" * 60] * 30), ": " + " " * 5000, "echo the-end"]
    script = "\n".join(lines)
    result = b.send("-", input=script.encode())
    assert (result.returncode, result.stdout) == (0, b"first\nthe-end\n"), result.stderr
    # the pane: the first 8 lines, what is left out, the last 3 lines (at most 1000
    # characters: the end of the 5000 spaces and the last command)
    history = "\n".join(line.rstrip() for line in b.history().split("\n"))
    assert "[tmux-send] echo first\n# padding" in history
    assert "  echo the-end\n" in history or "\necho the-end\n" in history
    left_out = len(script) - len("\n".join(lines[:8])) - 1000
    note = f"lines and {left_out} characters not shown, of 33 lines and {len(script)} characters"
    assert note in history
    # the log: its start and its end, with its first 3000 and last 1000 characters, the
    # whole script's length and its SHA-256
    hidden = script[3000:-1000]
    whole_lines = max(hidden.count("\n") - 1, 0)  # lines none of which is kept
    kept = (
        f"{script[:3000]}\n[... {whole_lines} lines and {len(hidden)} characters "
        f"not shown, of 33 lines and {len(script)} characters ...]\n{script[-1000:]}"
    )
    start, end = [e for e in _raw_log(b) if e.get("command_sha256")]
    for entry in (start, end):
        assert entry["command_sha256"] == hashlib.sha256(script.encode()).hexdigest()
        assert (entry["command_chars"], entry["command_lines"]) == (len(script), 33)
        assert (entry["command"], entry["command_omitted"]) == (kept, len(hidden))


def _start_ticks(pid: int) -> int:
    """When the process started, as the process facts in use give it (Linux: field 22
    of /proc/PID/stat, in clock ticks after boot; portable: ps's lstart, in seconds)."""
    from tmux_bridge.infra.process import proc

    stat = proc.proc_stat(pid)
    assert stat is not None
    return stat.start


def test_the_log_is_read_as_one_entry_per_call(tmp_path: Path) -> None:
    from tmux_bridge.audit import log as audit
    from tmux_bridge.audit.stats import summarize
    from tmux_bridge.cli.stats_text import render_lines

    gone = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout
    me = {"pid": os.getpid(), "pid_start": _start_ticks(os.getpid())}
    reused = {"pid": os.getpid(), "pid_start": me["pid_start"] - 1}  # same pid, not the same
    log = [
        {"event": "start", "call": "a", "mode": "command", "pane": None, "command": "make", **me},
        {
            "event": "start",
            "call": "b",
            "mode": "command",
            "pane": "db",
            "command": "sleep 99",
            **me,
        },
        {"call": "a", "mode": "command", "pane": "%0", "command": "make", "exit_status": 2},
        {"event": "start", "call": "c", "mode": "repl_eval", "command": "1+1", "pid": int(gone)},
        {"event": "start", "call": "d", "mode": "command", "command": "top", **reused},
        {"mode": "keys", "pane": "%0", "command": "C-c", "exit_status": 0},
    ]
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    (directory / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log) + "[1]\n")
    assert [c["command"] for c in audit.read(str(directory), None)] == ["make", "C-c"]
    calls = audit.read(str(directory), None, unfinished=True)
    assert [(c["command"], c.get("running")) for c in calls] == [
        ("sleep 99", True),  # still running: this process, started then
        ("make", None),  # ended: its end entry alone
        ("1+1", False),
        ("top", False),
        ("C-c", None),
    ]
    assert calls[1] == log[2]
    assert [c["command"] for c in audit.read(str(directory), 2, unfinished=True)] == ["top", "C-c"]
    overall = summarize(calls).overall
    assert (overall.calls, overall.never_ended, overall.running) == (5, 2, 1)
    assert [u.command for u in overall.unfinished] == ["sleep 99", "1+1", "top"]
    text = "\n".join(render_lines(summarize(calls)))
    assert "5 calls (1 ok, 1 failed, 0 timed out, 0 refused, 2 never ended, 1 running)" in text
    assert "  running      ?  sleep 99" in text


def test_every_facade_call_with_time_limits_checks_them_first() -> None:
    """By construction: a method of the facade that takes ``options`` hands them to
    ``_logged`` (which checks them before the call starts), checks them itself, or
    passes them to such a method; a new one that does none of these fails here."""
    import ast
    import inspect
    import textwrap

    from tmux_bridge import api

    tree = ast.parse(textwrap.dedent(inspect.getsource(api.Bridge)))
    methods = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    checked = []
    for method in methods:
        if "options" not in [a.arg for a in method.args.args + method.args.kwonlyargs]:
            continue
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(method)
            if isinstance(node, ast.Call)
        }
        assert calls & {"_logged", "check_options", "run"}, method.name
        checked.append(method.name)
    assert {"run", "check", "repl", "write_file", "info"} <= set(checked)

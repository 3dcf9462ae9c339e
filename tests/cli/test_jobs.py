"""Jobs: commands that run on after the call that started them (``--background``,
``--on-timeout detach``), read exactly in pieces (``--job``, ``--all``, ``--wait``),
killed (``--kill``), ended by the person's Ctrl-C or by their pane going away, and the
pane a job holds refusing other calls (``pane_busy``)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ..support.pane import WAIT, MakeBridge, TestPane, dash_bridge, enter_nested


def _gated(b: TestPane) -> str:
    """A shell-neutral script (run as ``sh -c``, quoted for whichever shell the pane
    runs): "started", then it waits until the test calls :func:`_go`."""
    go = b.root / "go"
    return (
        f"echo started; echo warn >&2; while [ ! -e {go} ]; do sleep 0.05; done; echo done; exit 3"
    )


def _go(b: TestPane) -> None:
    (b.root / "go").write_text("")


def _background(b: TestPane, *words: str) -> str:
    code, out, err = b.send_when_ready("--background", "--", *words)
    assert code == 0, err
    job = out.strip()
    assert len(job) == 10, out
    return job


def _job(b: TestPane, *args: str) -> dict[str, Any]:
    result = b.send("--json", *args)
    document: dict[str, Any] = json.loads(result.stdout)
    document["exit"] = result.returncode
    return document


def _wait_for_state(b: TestPane, job: str, state: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def reached() -> bool:
        found[:] = [j for j in _job(b, "--jobs")["jobs"] if j["job"] == job]
        return bool(found) and found[0]["state"] == state

    b.wait_for(reached, f"job {job} to be {state}")
    return found[0]


def test_a_job_runs_on_and_is_read_in_pieces(bridge: TestPane) -> None:
    bridge.start()
    job = _background(bridge, "sh", "-c", _gated(bridge))
    # the call returned while the command runs: the pane is the job's
    bridge.wait_for(lambda: "started" in bridge.history(), "the job's output in the pane")
    first = _job(bridge, "--job", job)
    assert first["state"] == "running" and first["exit"] == 0
    assert first["exit_status"] is None and first["ended"] is None
    seen_out, seen_err = str(first["stdout"]), str(first["stderr"])
    bridge.wait_for(lambda: _job(bridge, "--job", job, "--all")["stderr"] == "warn\n", "stderr")
    _go(bridge)
    code, out, err = bridge.send_text("--wait", job, "--timeout", str(WAIT))
    assert code == 3, err
    assert seen_out + out == "started\ndone\n"
    assert seen_err + err == "warn\n"
    whole = _job(bridge, "--job", job, "--all")
    assert (whole["stdout"], whole["stderr"]) == ("started\ndone\n", "warn\n")
    assert (whole["state"], whole["exit_status"], whole["exit"]) == ("exited", 3, 3)
    assert whole["stdout_bytes"] == len("started\ndone\n")
    again = _job(bridge, "--job", job)  # everything was read: nothing more
    assert (again["stdout"], again["stderr"], again["exit"]) == ("", "", 3)
    assert bridge.send_text("--", "echo free") == (0, "free\n", "")


def test_dash_runs_a_job(make_bridge: MakeBridge) -> None:
    b = dash_bridge(make_bridge)
    b.start()
    job = _background(b, "echo one; echo two >&2")
    code, out, err = b.send_text("--wait", job)
    assert (code, out, err) == (0, "one\n", "two\n")


def test_a_pane_with_a_job_refuses_calls_naming_it(bridge: TestPane) -> None:
    bridge.start()
    job = _background(bridge, "sh", "-c", _gated(bridge))
    code, out, err = bridge.send_text("--", "echo no")
    assert (code, out) == (125, "")
    assert f"job {job} runs in this pane" in err
    refusal = _job(bridge, "--", "echo no")
    assert refusal["error_code"] == "pane_busy"
    code, _, err = bridge.send_text("--background", "--", "echo no")
    assert code == 125 and job in err
    assert "echo no" not in bridge.history().replace("--", "")
    _go(bridge)
    assert bridge.send_text("--wait", job)[0] == 3


def test_exact_across_many_small_reads_by_new_readers(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    go = b.root / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    script = f"seq 1 150000; seq 1 20000 >&2; {wait}; seq 150001 300000; seq 5 9 >&2"
    job = _background(b, "sh", "-c", script)
    out, err = bytearray(), bytearray()
    reads = 0
    deadline = time.monotonic() + 120
    while True:  # each read is a new tmux-send process: the cursor is the job's
        result = b.send("--job", job)
        out += result.stdout
        err += result.stderr.partition(b"tmux-send: job ")[0]
        reads += 1
        if reads == 3:
            go.write_text("")  # the rest comes while the reads go on
        if result.returncode != 0 or b"is running" not in result.stderr:
            break
        assert time.monotonic() < deadline, "the job did not end in 120 s"
    expected = subprocess.run(["sh", "-c", script], capture_output=True, check=True)
    assert reads > 3
    assert hashlib.sha256(out).hexdigest() == hashlib.sha256(expected.stdout).hexdigest()
    assert bytes(err) == expected.stderr
    whole = b.send("--job", job, "--all")
    assert whole.stdout == expected.stdout
    assert _job(b, "--job", job)["stdout"] == ""


def _interleaves(whole: bytes, a: list[bytes], b: list[bytes]) -> bool:
    """Whether ``whole`` is the pieces of ``a`` and of ``b``, each list in its own order,
    interleaved somehow (every byte handed out once, none skipped)."""
    a, b = [p for p in a if p], [p for p in b if p]
    ends_a = [sum(map(len, a[:i])) for i in range(len(a) + 1)]
    ends_b = [sum(map(len, b[:i])) for i in range(len(b) + 1)]
    reached = {(0, 0)}
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        at = ends_a[i] + ends_b[j]
        for nxt, piece in (((i + 1, j), a[i] if i < len(a) else None),
                           ((i, j + 1), b[j] if j < len(b) else None)):  # fmt: skip
            if piece is not None and whole.startswith(piece, at) and nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    return (len(a), len(b)) in reached and ends_a[-1] + ends_b[-1] == len(whole)


def test_two_readers_at_once_share_the_output_exactly(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    go = b.root / "go"
    script = f"seq 1 100000; while [ ! -e {go} ]; do sleep 0.05; done; seq 100001 200000"
    job = _background(b, "sh", "-c", script)
    pieces: dict[str, list[bytes]] = {"a": [], "b": []}
    deadline = time.monotonic() + 120

    def reader(name: str) -> None:
        while time.monotonic() < deadline:
            result = b.send("--job", job)
            pieces[name].append(result.stdout)
            if len(pieces[name]) == 3:
                go.write_text("")
            if result.returncode != 0 or b"is running" not in result.stderr:
                return

    threads = [threading.Thread(target=reader, args=(name,)) for name in pieces]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = subprocess.run(["sh", "-c", script], capture_output=True, check=True).stdout
    assert all(len(p) > 1 for p in pieces.values()), pieces.keys()
    assert _interleaves(expected, pieces["a"], pieces["b"])
    assert not _interleaves(expected, pieces["a"], pieces["b"] + [b"1\n"])  # it can fail


def test_wait_reads_a_long_job_exactly(make_bridge: MakeBridge) -> None:
    b = make_bridge("zsh")
    b.start()
    job = _background(b, "seq", "1", "1000000")
    result = b.send("--wait", job, "--timeout", "60", timeout=180)
    expected = subprocess.run(["seq", "1", "1000000"], capture_output=True, check=True).stdout
    assert result.returncode == 0, result.stderr
    assert hashlib.sha256(result.stdout).hexdigest() == hashlib.sha256(expected).hexdigest()


def test_a_timeout_detaches_the_command_as_a_job(bridge: TestPane) -> None:
    bridge.start()
    result = bridge.send(
        "--json", "--timeout", "0.5", "--on-timeout", "detach", "--", "sh", "-c", _gated(bridge)
    )
    document = json.loads(result.stdout)
    assert result.returncode == 124
    assert document["timed_out"] == "idle" and document["signals_sent"] == []
    job = document["job"]
    assert document["stdout"] == "started\n"
    assert bridge.send_text("--", "true")[0] == 125  # the job holds the pane
    _go(bridge)
    code, out, err = bridge.send_text("--wait", job)
    assert (code, out, err) == (3, "done\n", "")
    assert "SIGINT" not in bridge.history()


def test_the_overall_timeout_detaches_too_and_says_so(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    command = "while true; do echo tick; sleep 0.1; done"
    code, out, err = b.send_text("--max-time", "1", "--on-timeout", "detach", "--", command)
    assert code == 124 and out.startswith("tick\n")
    job = err.split("runs on as job ")[1][:10]
    assert f"tmux-send --wait {job}" in err
    killed = _job(b, "--kill", job)
    assert (killed["state"], killed["exit_status"], killed["exit"]) == ("interrupted", 130, 130)
    assert _job(b, "--job", job)["stdout"].startswith("tick\n")


def test_the_person_is_told_on_the_status_line_when_a_job_ends(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    b.person_types("")  # a person's client is attached
    assert b.client is not None
    job = _background(b, "sh", "-c", _gated(b))
    _go(b)
    b.client.expect(rf"tmux-bridge: job {job} exited \(exit 3\)", timeout=WAIT)


def test_kill_interrupts_a_job(bridge: TestPane) -> None:
    bridge.start()
    job = _background(bridge, "sh", "-c", "echo started; exec sleep 60")
    bridge.wait_for(lambda: "started" in bridge.history(), "the job to start")
    killed = _job(bridge, "--kill", job)
    assert (killed["state"], killed["exit_status"], killed["exit"]) == ("interrupted", 130, 130)
    assert bridge.send_text("--", "echo usable") == (0, "usable\n", "")
    assert _job(bridge, "--kill", job)["state"] == "interrupted"  # killing it again: as it is


def test_the_persons_ctrl_c_ends_a_job_as_interrupted(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    job = _background(b, "sh", "-c", "echo started; exec sleep 60")
    b.wait_for(lambda: "started" in b.history(), "the job to start")
    b.tmux("send-keys", "-t", b.target, "C-c")
    code, _, err = b.send_text("--wait", job)
    assert code == 130, err
    assert "interrupted" in err
    assert _job(b, "--job", job)["state"] == "interrupted"


def test_a_job_whose_pane_goes_away_is_lost(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    split = b.bridge_cli("split", "--json", "--label", "work")
    assert split.returncode == 0, split.stderr
    pane = json.loads(split.stdout)["pane"]
    code, out, err = b.send_when_ready("-p", "work", "--background", "--", "sleep", "60")
    assert code == 0, err
    job = out.strip()
    b.tmux("kill-pane", "-t", pane)
    lost = _wait_for_state(b, job, "lost")
    assert lost["exit_status"] is None and lost["ended"] is not None
    code, _, err = b.send_text("--job", job)
    assert code == 125 and "was lost" in err


def test_unknown_and_malformed_job_ids(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    unknown = _job(b, "--job", "0123456789")
    assert (unknown["error_code"], unknown["exit"]) == ("no_such_job", 125)
    malformed = _job(b, "--wait", "../x")
    assert (malformed["error_code"], malformed["exit"]) == ("invalid_request", 2)


def test_jobs_lists_them_and_the_spool_is_private(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    job = _background(b, "echo", "hi")
    assert b.send_text("--wait", job)[0] == 0
    listed = _job(b, "--jobs")["jobs"]
    assert [(j["job"], j["state"], j["exit_status"]) for j in listed] == [(job, "exited", 0)]
    code, out, _ = b.send_text("--jobs")
    assert code == 0 and job in out and "exited" in out
    folder = b.runtime / "jobs" / job
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    for name in ("stdout", "stderr", "job.json"):
        assert oct((folder / name).stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("flags", [["--all", "--", "true"], ["--on-timeout", "detach", "--jobs"]])
def test_job_options_that_do_not_go_together(make_bridge: MakeBridge, flags: list[str]) -> None:
    b = make_bridge("bash")
    code, _, err = b.send_text(*flags)
    assert code == 2 and "goes with" in err


def test_status_and_panes_show_the_running_job(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    job = _background(b, "sh", "-c", _gated(b))
    status = json.loads(b.bridge_cli("status", "--json").stdout)
    assert status["in_flight"]["job"] == job
    assert "sh -c" in status["in_flight"]["command"]
    panes = json.loads(b.bridge_cli("panes", "--json").stdout)
    assert [p["in_flight"]["job"] for p in panes if p["in_flight"]] == [job]
    assert f"job {job} running" in b.bridge_cli("panes").stdout
    _go(b)
    assert b.send_text("--wait", job)[0] == 3
    assert json.loads(b.bridge_cli("status", "--json").stdout)["in_flight"] is None


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_a_job_in_a_far_shell(make_bridge: MakeBridge, shell: str) -> None:
    b = make_bridge("bash")
    b.start()
    enter_nested(b, "dash" if shell == "sh" else shell, "sh" if shell == "sh" else None)
    job = _background(b, "sh", "-c", _gated(b))
    assert b.send_text("--", "true")[0] == 125  # the job holds the pane
    # a far shell's stderr comes at the end (docs/far-shells.md); stdout as it is printed
    b.wait_for(lambda: _job(b, "--job", job, "--all")["stdout"] == "started\n", "the start")
    _go(b)
    code, out, err = b.send_text("--wait", job)
    assert (code, out, err) == (3, "started\ndone\n", "warn\n")
    whole = _job(b, "--job", job, "--all")
    assert (whole["stdout"], whole["stderr"]) == ("started\ndone\n", "warn\n")
    far = _background(b, "sh", "-c", "echo started; exec sleep 60")
    b.wait_for(lambda: _job(b, "--job", far, "--all")["stdout"] == "started\n", "the start")
    killed = _job(b, "--kill", far)
    assert (killed["state"], killed["exit_status"]) == ("interrupted", 130)
    assert b.send_text("--", "echo back") == (0, "back\n", "")


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_a_far_timeout_detaches_the_command_as_a_job(make_bridge: MakeBridge, shell: str) -> None:
    b = make_bridge("bash")
    b.start()
    enter_nested(b, "dash" if shell == "sh" else shell, "sh" if shell == "sh" else None)
    result = b.send(
        "--json", "--timeout", "0.5", "--on-timeout", "detach", "--", "sh", "-c", _gated(b)
    )
    document = json.loads(result.stdout)
    assert result.returncode == 124, result.stderr
    assert document["timed_out"] == "idle" and document["signals_sent"] == []
    job = document["job"]
    assert document["stdout"] == "started\n"
    assert b.send_text("--", "true")[0] == 125  # the job holds the pane
    _go(b)
    code, out, err = b.send_text("--wait", job)
    assert (code, out, err) == (3, "done\n", "warn\n")  # a far stderr comes at the end
    assert "SIGINT" not in b.history()
    assert b.send_text("--", "echo back") == (0, "back\n", "")


def test_a_job_whose_keeper_is_killed_is_lost(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    job = _background(b, "sh", "-c", "echo started; exec sleep 60")
    # the job's id comes once its line is typed: a keeper killed before the shell opened
    # the command's output ends the job before its command ran (and the pane is free)
    b.wait_for(
        lambda: "started" in [line.rstrip() for line in b.history().split("\n")],
        "the job's output in the pane",
    )
    keeper = json.loads((b.runtime / "jobs" / job / "job.json").read_text())["keeper"]
    os.kill(keeper, signal.SIGKILL)
    lost = _wait_for_state(b, job, "lost")
    assert lost["exit_status"] is None
    assert any("ended without" in note for note in lost["notes"])
    code, _, err = b.send_text("--", "true")  # the command itself still has the pane
    assert code == 125 and "runs in this pane" not in err


def test_jobs_refuse_a_runtime_directory_open_to_others(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    job = _background(b, "echo", "hi")
    assert b.send_text("--wait", job)[0] == 0
    (b.runtime / "jobs").chmod(0o755)
    refused = _job(b, "--job", job)
    assert (refused["error_code"], refused["exit"]) == ("runtime_dir_unsafe", 125)
    assert _job(b, "--jobs")["error_code"] == "runtime_dir_unsafe"


def test_job_reads_are_cut_as_a_call_is(make_bridge: MakeBridge) -> None:
    """--first/--last cut a --wait and a --job read around one cut line naming the file
    that holds the whole read; the --json document keeps the job's byte totals."""
    b = make_bridge("bash")
    b.start()
    whole = "".join(f"{n}\n" for n in range(1, 101))
    job = _background(b, "seq 1 100")
    code, out, err = b.send_text("--wait", job, "--first", "2", "--last", "3")
    assert code == 0, err
    lines = out.split("\n")
    assert lines[:2] == ["1", "2"] and lines[3:] == ["98", "99", "100", ""], out
    cut = lines[2]
    assert cut.startswith("[tmux-send: 95 lines (") and "not shown" in cut, out
    saved = Path(cut.rsplit(" ", 1)[1].rstrip("]"))
    assert saved.read_text() == whole
    again = _job(b, "--job", job, "--all", "--max-bytes", "20")
    assert again["stdout_truncated"] is True and again["stdout_bytes"] == len(whole)
    assert Path(again["stdout_file"]).read_text() == whole

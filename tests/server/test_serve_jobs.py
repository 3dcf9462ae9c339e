"""The job actions over HTTP on a real pane: start a job, read it in pieces, wait for it,
list and kill jobs; a job in the pane refuses ``run`` with ``pane_busy`` naming it; a
job outlives the server that started it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..support.pane import MakeBridge, TestPane
from ..support.serve import Server, running

pytestmark = pytest.mark.tmux


def test_a_job_over_http(server: Server, pane: TestPane) -> None:
    pane.wait_for_prompt()
    go = pane.root / "go-http"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    command = ["sh", "-c", f"echo one; echo two >&2; {wait}; echo three; exit 4"]
    started = server.result(action="start_job", command=command)
    job = started["job"]
    try:
        _read_and_wait(server, pane, job, started)
    finally:
        go.write_text("")  # the job ends even when the test failed: the pane is shared
        server.result(action="wait_job", job=job, timeout_ms=60_000)
        go.unlink()


def _read_and_wait(server: Server, pane: TestPane, job: str, started: dict[str, Any]) -> None:
    go = pane.root / "go-http"
    assert (started["state"], started["exit_status"]) == ("running", None)
    refused = server.post(action="run", command="true")
    assert refused.status_code == 409, refused.text
    assert refused.json()["metadata"]["error_code"] == "pane_busy"
    assert job in refused.json()["error"]
    pane.wait_for(
        lambda: server.result(action="job", job=job, all=True)["stderr"] == "two\n", "two"
    )
    go.write_text("")
    ended = server.result(action="wait_job", job=job, timeout_ms=60_000)
    assert (ended["state"], ended["exit_status"], ended["timed_out"]) == ("exited", 4, None)
    assert ended["stdout"] == "one\nthree\n" and ended["stderr"] == "two\n"
    listed = server.post(action="jobs").json()["metadata"]["jobs"]
    assert job in [entry["job"] for entry in listed]


def test_kill_and_wait_timeout_over_http(server: Server, pane: TestPane) -> None:
    pane.wait_for_prompt()
    job = server.result(action="start_job", command="sleep 60")["job"]
    waited = server.result(action="wait_job", job=job, timeout_ms=200)
    assert (waited["timed_out"], waited["state"]) == ("idle", "running")
    killed = server.result(action="kill_job", job=job)
    assert (killed["state"], killed["exit_status"]) == ("interrupted", 130)
    unknown = server.post(action="job", job="0123456789")
    assert unknown.status_code == 404
    assert unknown.json()["metadata"]["error_code"] == "no_such_job"


def test_a_job_outlives_the_server_that_started_it(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    b.wait_for_prompt()
    go = b.root / "go"
    command = ["sh", "-c", f"echo one; while [ ! -e {go} ]; do sleep 0.05; done; echo two"]
    with running(b.env) as first:
        job = first.result(action="start_job", command=command)["job"]
        b.wait_for(lambda: first.result(action="job", job=job)["stdout"] == "one\n", "one")
        code, _, err = first.stop()
        assert code == 0, err
    assert json.loads(b.send_text("--json", "--job", job)[1])["state"] == "running"
    with running(b.env) as second:
        go.write_text("")
        ended = second.result(action="wait_job", job=job, timeout_ms=60_000)
    assert (ended["state"], ended["exit_status"], ended["stdout"]) == ("exited", 0, "two\n")
    assert b.send_text("--job", job, "--all")[:2] == (0, "one\ntwo\n")

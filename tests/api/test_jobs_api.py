"""Jobs through the library, from a process with threads (as ``serve`` and ``mcp`` are):
the keeper is a fresh interpreter there, and a live call is not detached."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tmux_bridge import Bridge, RunOptions
from tmux_bridge.errors import NoSuchJob, PaneBusy

from ..support.pane import TestPane, target_of


@pytest.fixture
def threaded() -> Iterator[None]:
    """One more thread in this process while the test runs: a keeper cannot be forked."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_a_job_from_a_process_with_threads(shared_bridge: TestPane, threaded: None) -> None:
    shared_bridge.wait_for_prompt()
    bridge = Bridge(target_of(shared_bridge))
    go = shared_bridge.root / "go-api"
    wait = f"while [ ! -e {go} ]; do sleep 0.05; done"
    started = bridge.start_job(["sh", "-c", f"echo one; echo two >&2; {wait}; echo three"])
    assert (started.state, started.exit_status, started.ended) == ("running", None, None)
    with pytest.raises(PaneBusy, match=started.job):
        bridge.run("true")
    shared_bridge.wait_for(
        lambda: bridge.job(started.job, everything=True).stderr == b"two\n", "two"
    )
    seen: list[bytes] = []
    go.write_text("")
    ended = bridge.wait_job(started.job, RunOptions(30, 60), stdout=seen.append)
    assert (ended.state, ended.exit_status, ended.timed_out) == ("exited", 0, None)
    assert b"".join(seen) == b"one\nthree\n"
    assert ended.stderr == b"two\n"
    document = ended.document()
    assert document["job"] == started.job and document["stderr"] == "two\n"
    assert [job.job for job in bridge.jobs()][-1] == started.job
    go.unlink()


def test_detach_needs_a_process_without_threads(shared_bridge: TestPane, threaded: None) -> None:
    shared_bridge.wait_for_prompt()
    bridge = Bridge(target_of(shared_bridge))
    result = bridge.run("sleep 30", RunOptions(0.3, 30, on_timeout="detach"))
    assert result.exit_status == 124 and result.job is None
    assert result.signals_sent == ("SIGINT",)
    assert any("could not become a job" in note for note in result.notes)


def test_wait_timeout_leaves_the_job_running(shared_bridge: TestPane, threaded: None) -> None:
    shared_bridge.wait_for_prompt()
    bridge = Bridge(target_of(shared_bridge))
    job = bridge.start_job("sleep 30").job
    waited = bridge.wait_job(job, RunOptions(0.2, 30))
    assert (waited.timed_out, waited.state, waited.exit_code) == ("idle", "running", 124)
    killed = bridge.kill_job(job)
    assert (killed.state, killed.exit_status) == ("interrupted", 130)
    with pytest.raises(NoSuchJob):
        bridge.job("0123456789")

"""``run`` and the other calls that type into the pane, over HTTP, on a real pane: exact
results, and what happens when the client goes away, tmux dies or stops answering, the
server is stopped mid-command, and 100 requests arrive at once.

Expected outputs come from running the same command here (``bash -c``), never from the
code under test.
"""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from ..support.pane import MakeBridge, TestPane
from ..support.serve import TOKEN, Server, processes_running, running, wait_until

pytestmark = pytest.mark.tmux


class RunCase(NamedTuple):
    test_id: str
    command: str | list[str]


FIDELITY = [
    RunCase("stdout-stderr-status", "echo out; echo err >&2; sh -c 'exit 7'"),
    RunCase("no-newline", "printf 'a\\nb'"),
    RunCase("utf8", "printf 'caf\\303\\251 \\342\\202\\254\\n'"),
    RunCase("not-utf8", "printf '\\377\\376ok\\n'; printf '\\200' >&2"),
    RunCase("blank-lines", "printf '\\n\\n x \\n\\n'"),
    RunCase("status-255", "echo last; sh -c 'exit 255'"),
    RunCase("words", ["printf", "%s|", "$HOME", "*", "a b", "'q'"]),
]


def expected(command: str | list[str]) -> subprocess.CompletedProcess[bytes]:
    argv = command if isinstance(command, list) else ["bash", "-c", command]
    return subprocess.run(argv, capture_output=True, timeout=30)


def decoded(document: dict[str, Any], name: str) -> bytes:
    """The exact bytes of stdout or stderr in a result document."""
    if f"{name}_b64" in document:
        return base64.b64decode(document[f"{name}_b64"])
    return str(document[name]).encode()


@pytest.mark.parametrize("case", FIDELITY, ids=[c.test_id for c in FIDELITY])
def test_run_is_exact(server: Server, pane: TestPane, case: RunCase) -> None:
    local = expected(case.command)
    response = server.post(action="run", command=case.command)
    assert response.status_code == 200, response.text
    body = response.json()
    result = body["metadata"]["result"]
    status = local.returncode if local.returncode >= 0 else 128 - local.returncode
    assert (decoded(result, "stdout"), decoded(result, "stderr")) == (local.stdout, local.stderr)
    assert (result["status"], result["exit_status"], body["ok"]) == (status, status, True)
    assert body["output"] == local.stdout.decode("utf-8", "replace")
    assert (result["mode"], result["error"], result["timed_out"]) == ("command", None, None)
    assert body["session"] == pane.session  # none named: the bridge session


def test_run_raw_keeps_control_sequences(server: Server) -> None:
    command = "printf 'plain \\033[31mred\\033[0m\\n'"
    local = expected(command)
    assert b"\033[31m" in local.stdout  # the case means something
    raw = server.post(action="run", command=command, raw=True).json()
    assert decoded(raw["metadata"]["result"], "stdout") == local.stdout
    cleaned = server.post(action="run", command=command).json()
    assert cleaned["output"] == "plain red\n"  # what a terminal shows, as tmux-send gives it


def test_run_cuts_output_as_tmux_send_does(server: Server, pane: TestPane) -> None:
    command = "seq 1 300; seq 1 20 >&2"
    local = expected(command)
    body = server.post(action="run", command=command, first=2, last=2, max_bytes=1000).json()
    result = body["metadata"]["result"]
    path = result["stdout_file"]
    assert result["stdout"] == (
        f"1\n2\n[tmux-bridge: 296 lines (1,080 bytes) of stdout not shown (truncated); all "
        f"of it is in {path}]\n299\n300\n"
    )  # 1-9: 2 bytes, 10-99: 3, 100-300: 4 (1,092); head 4, tail 8
    assert body["output"] == result["stdout"] and result["stdout_truncated"] is True
    assert Path(path).read_bytes() == local.stdout
    assert (result["stderr_lines"], result["stderr_truncated"]) == (20, True)
    whole = server.post(action="run", command=command).json()["metadata"]["result"]
    assert whole["stdout"] == local.stdout.decode() and whole["stdout_file"] is None
    assert Path(path).parent == pane.runtime / "output"


def test_answer_a_waiting_command_from_a_second_request(server: Server, pane: TestPane) -> None:
    """A command waits for input; another request types the answer into the pane (keys
    take no lock); the first gets the command's exact result."""
    call = Reply(
        server,
        action="run",
        command="printf 'ask%s\\n' ed; read -r line; echo \"got:$line\"",
        timeout_ms=30_000,
    )
    pane.wait_for_text("asked")
    answered = server.post(action="send_keys", session=pane.session, text="an answer", enter=True)
    assert answered.status_code == 200, answered.text
    result = call.get().json()["metadata"]["result"]
    assert (result["stdout"], result["exit_status"]) == ("asked\ngot:an answer\n", 0), result


def test_run_idle_timeout(server: Server) -> None:
    body = server.post(action="run", command="sleep 30", timeout_ms=500).json()
    result = body["metadata"]["result"]
    assert (result["timed_out"], result["exit_status"]) == ("idle", 124), result
    assert result["signals_sent"], result


def test_run_in_a_session_made_through_the_api(server: Server, pane: TestPane) -> None:
    with server.client() as client:
        made = client.post("/v1/tmux", json={"action": "create_session", "session": "made"})
        assert made.status_code == 200, made.text
        body = client.post(
            "/v1/tmux", json={"action": "run", "session": "made", "command": "echo $TMUX_PANE"}
        ).json()
    pane_id = made.json()["metadata"]["pane"]
    # (a refused run has a result too, with an empty stdout: show why)
    assert body["metadata"]["result"]["stdout"] == pane_id + "\n", body
    # the pane itself got the bridge's scrollback (tmux sets it when a pane is made) and
    # the bridge pane's mark
    shown = pane.tmux(
        "display-message", "-p", "-t", pane_id, "#{history_limit} #{@tmux-bridge-pane}"
    )
    assert shown.split() == ["50000", "1"]


def test_repl_over_http(server: Server) -> None:
    """start_repl, evaluate, close_repl: the Python preset, stdout exactly its answer."""
    with server.client() as client:

        def call(**fields: Any) -> dict[str, Any]:
            response = client.post("/v1/tmux", json=fields)
            assert response.status_code == 200, response.text
            result: dict[str, Any] = response.json()["metadata"]["result"]
            return result

        started = call(action="start_repl", name="python", command=f"{sys.executable} -q",
                       timeout_ms=30_000)  # fmt: skip
        assert started["mode"] == "repl_start"
        try:
            value = call(action="evaluate", name="python", code="sum(range(7)) * 3")
            assert (value["stdout"], value["exit_status"]) == (f"{sum(range(7)) * 3}\n", 0)
            failed = call(action="evaluate", name="python", code="1/0")
            assert failed["exit_status"] == 1 and "ZeroDivisionError" in failed["stdout"]
        finally:
            closed = call(action="close_repl")
        assert closed["mode"] == "repl_close"


def _raw_request(server: Server, document: dict[str, Any]) -> socket.socket:
    """Send one HTTP request on a socket of our own, and keep it open."""
    host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
    body = json.dumps(document).encode()
    head = (
        f"POST /v1/tmux HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(head.encode() + body)
    return sock


def _logged(pane: TestPane, command: str) -> list[dict[str, Any]]:
    """The audit log's entries for ``command``: each call's end (its start is logged too)."""
    path = pane.runtime / "log.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    entries = [json.loads(line) for line in lines]
    return [e for e in entries if e["command"] == command and e.get("event") != "start"]


def test_client_disconnect_interrupts_the_command(server: Server, pane: TestPane) -> None:
    """The client goes away mid-run: the command is interrupted as by Ctrl-C (its
    process is gone, the shell is back at its prompt, the log says 130)."""
    command = "sleep 31.7"  # no output: only an idle timeout longer than the test's wait
    sock = _raw_request(server, {"action": "run", "command": command, "timeout_ms": 60_000})
    wait_until(lambda: processes_running(["sleep", "31.7"]), "the command to start")
    sock.close()
    wait_until(lambda: not processes_running(["sleep", "31.7"]), "the command to be gone")
    pane.wait_for_prompt()
    wait_until(lambda: _logged(pane, command), "the call's entry in the audit log")
    entry = _logged(pane, command)[-1]
    assert (entry["exit_status"], entry["client"]) == (130, "tmux-bridge serve"), entry
    assert server.post(action="run", command="echo after").json()["output"] == "after\n"


class Reply:
    """A request made on a thread, its response kept."""

    def __init__(self, server: Server, **fields: Any) -> None:
        self.response: httpx.Response | None = None
        self.thread = threading.Thread(target=self._call, args=(server, fields))
        self.thread.start()

    def _call(self, server: Server, fields: dict[str, Any]) -> None:
        self.response = server.post(**fields)

    def get(self, timeout: float = 60) -> httpx.Response:
        self.thread.join(timeout)
        assert self.response is not None, "no response"
        return self.response


def test_tmux_server_killed_while_serving(make_bridge: MakeBridge) -> None:
    """tmux dies under a running command: a clear error, and the server goes on serving
    (a new session on a new tmux server works)."""
    pane = make_bridge("bash")
    pane.start()
    with running(pane.env) as server:
        call = Reply(server, action="run", command="sleep 32.3")
        wait_until(lambda: processes_running(["sleep", "32.3"]), "the command to start")
        pane.tmux("kill-server")
        response = call.get()
        body = response.json()
        assert (response.status_code, body["ok"]) == (404, False), body
        assert body["metadata"]["error_code"] in ("session_closed", "no_bridge"), body
        assert "session" in body["error"]
        gone = server.post(action="capture_pane", session=pane.session)
        assert (gone.status_code, gone.json()["metadata"]["error_code"]) == (404, "no_bridge")
        assert server.post(action="list_sessions").json()["sessions"] == []
        assert server.post(action="create_session", session="again").status_code == 200
        again = server.post(action="run", session="again", command="echo alive")
        assert again.json()["output"] == "alive\n", again.text


def test_tmux_not_answering_gives_504(make_bridge: MakeBridge) -> None:
    pane = make_bridge("bash")
    pane.start()
    tmux_pid = int(pane.tmux("display-message", "-p", "#{pid}").strip())
    with running(pane.env, "--tmux-timeout", "1") as server:
        os_kill(tmux_pid, signal.SIGSTOP)
        try:
            response = server.post(action="capture_pane", session=pane.session)
        finally:
            os_kill(tmux_pid, signal.SIGCONT)
        body = response.json()
        assert (response.status_code, body["metadata"]["error_code"]) == (504, "tmux_timeout")
        assert "did not answer within 1 s" in body["error"]
        again = server.post(action="capture_pane", session=pane.session)
        assert again.status_code == 200, again.text


def os_kill(pid: int, signum: int) -> None:
    import os

    os.kill(pid, signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stopping_the_server_interrupts_the_command(make_bridge: MakeBridge, signum: int) -> None:
    """SIGTERM (or Ctrl-C) mid-command: the command is interrupted and its result sent,
    the server exits 0, and nothing is left in the runtime directory but what calls
    keep between them."""
    pane = make_bridge("bash")
    pane.start()
    with running(pane.env) as server:
        call = Reply(server, action="run", command="sleep 33.1", timeout_ms=60_000)
        wait_until(lambda: processes_running(["sleep", "33.1"]), "the command to start")
        code, out, err = server.stop(signum)
        response = call.get()
    assert (code, out.strip().splitlines()[-1]) == (0, "tmux-bridge serve: stopped."), err
    result = response.json()["metadata"]["result"]
    assert (result["exit_status"], result["signals_sent"][:1]) == (128 + signum, ["SIGINT"]), result
    assert not processes_running(["sleep", "33.1"])
    pane.wait_for_prompt()
    assert pane.runtime_files() == pane.between_calls()


def test_quick_actions_answer_while_many_commands_wait(server: Server, pane: TestPane) -> None:
    """40 runs for one pane (one runs, the rest wait for its lock, each holding a
    thread): captures and status are still answered; the clients going away cancels them
    all, the waiting ones before anything is typed."""
    argv = ["sleep", "30.9"]
    socks = [
        _raw_request(server, {"action": "run", "command": " ".join(argv), "timeout_ms": 60_000})
        for _ in range(40)
    ]
    try:
        wait_until(lambda: processes_running(argv), "the first command to start")
        with server.client(timeout=10) as client:
            captured = client.post(
                "/v1/tmux", json={"action": "capture_pane", "session": pane.session}
            )
            assert captured.status_code == 200, captured.text
            status = client.post("/v1/tmux", json={"action": "status", "session": pane.session})
            assert status.json()["metadata"]["foreground"] == "sleep", status.text
    finally:
        for sock in socks:
            sock.close()
    wait_until(lambda: not processes_running(argv), "the command to be gone")
    pane.wait_for_prompt()
    wait_until(
        lambda: server.post(action="run", command="echo free").json().get("output") == "free\n",
        "the pane to be free again",
    )
    assert len(processes_running(argv)) == 0


def test_another_tmux_server_with_socket(pane: TestPane) -> None:
    """--socket NAME: the API works on that tmux server, not the bridge's."""
    other = ["tmux", "-L", "other"]
    subprocess.run([*other, "new-session", "-d", "-s", "elsewhere"], env=pane.env, check=True)
    try:
        with running(pane.env, "--socket", "other") as server:
            listed = server.post(action="list_sessions").json()
    finally:
        subprocess.run([*other, "kill-server"], env=pane.env, check=False, timeout=30)
    assert listed["sessions"] == ["elsewhere"]


def test_100_concurrent_requests(server: Server) -> None:
    """Mixed actions in several sessions at once, each answer checked against what that
    request asked for."""
    sessions = ["con-0", "con-1", "con-2"]
    panes = {}
    for name in sessions:
        made = server.post(action="create_session", session=name)
        assert made.status_code == 200, made.text
        panes[name] = made.json()["metadata"]["pane"]
    for name in sessions:  # each shell at its prompt before the flood
        wait_until(
            lambda name=name: (
                server.post(action="run", session=name, command="true").status_code == 200
            ),
            f"the shell of {name}",
        )

    def request(i: int) -> dict[str, Any]:
        session = sessions[i % 3]
        kind = i % 5
        if kind == 0:
            return {"action": "run", "session": session, "command": f"echo n{i}"}
        if kind == 1:
            return {"action": "capture_pane", "session": session, "lines": 20}
        if kind == 2:
            return {"action": "list_sessions"}
        if kind == 3:
            return {"action": "status", "session": session}
        return {"action": "screen", "session": session}

    def check(i: int, response: httpx.Response) -> None:
        body = response.json()
        assert (response.status_code, body["ok"]) == (200, True), (i, body)
        fields = request(i)
        assert body["action"] == fields["action"]
        if fields["action"] == "run":
            assert body["output"] == f"n{i}\n", (i, body)
            assert body["metadata"]["result"]["exit_status"] == 0
            assert body["metadata"]["result"]["pane"] == panes[fields["session"]]
        elif fields["action"] == "list_sessions":
            assert set(sessions) <= set(body["sessions"])
        elif fields["action"] == "status":
            assert (body["metadata"]["running"], body["metadata"]["pane"]) == (
                True,
                panes[fields["session"]],
            )
        elif fields["action"] == "capture_pane":
            assert body["metadata"]["pane"] == panes[fields["session"]]
        else:
            assert body["metadata"]["result"]["pane"] == panes[fields["session"]]

    async def flood() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=100)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(
            base_url=server.base_url, headers=headers, limits=limits, timeout=120
        ) as client:
            return await asyncio.gather(
                *(client.post("/v1/tmux", json=request(i)) for i in range(100))
            )

    responses = asyncio.run(flood())
    for i, response in enumerate(responses):
        check(i, response)


def test_the_agent_field_names_the_caller_in_the_pane(server: Server, pane: TestPane) -> None:
    """``agent`` shows in the header the person sees, for a command and a job; a value
    that is no name is refused before anything is typed."""
    result = server.result(action="run", command="echo from-http-agent", agent="claude-web")
    assert result["stdout"] == "from-http-agent\n"
    job = server.post(action="start_job", command="echo from-http-job", agent="claude-web")
    assert job.status_code == 200, job.text
    wait_until(
        lambda: "[tmux-send: claude-web] echo from-http-job" in pane.history(), "the job's header"
    )
    assert "[tmux-send: claude-web] echo from-http-agent" in pane.history()
    refused = server.post(action="run", command="echo never-typed", agent="two words")
    assert refused.status_code == 400, refused.text
    assert refused.json()["metadata"]["error_code"] == "invalid_request", refused.text
    assert "never-typed" not in pane.history()

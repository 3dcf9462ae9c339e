"""The HTTP contract v1, one table of cases run against both modes: a real
``tmux-bridge serve --mode stub`` and ``--mode tmux`` on a private tmux server.

Each case gets its own session (``{s}`` in a request), made through the API first
unless the case says not to. Expected statuses, codes and texts are the contract's
(and docs/http-api.md), never read from the code under test.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from ..support.pane import TestPane
from ..support.serve import Server, running

pytestmark = pytest.mark.tmux

CONTRACT_KEYS = {"ok", "action", "session", "sessions", "output", "error", "metadata"}


@pytest.fixture(scope="module", params=["stub", "tmux"])
def server(request: pytest.FixtureRequest, pane: TestPane) -> Iterator[Server]:
    """The server in either mode; stub mode chosen as the contract does, through
    TMUX_BRIDGE_MODE."""
    if request.param == "stub":
        context = running({**pane.env, "TMUX_BRIDGE_MODE": "stub"})
    else:
        context = running(pane.env, "--mode", "tmux")
    with context as started:
        assert f"mode:    {request.param}" in "".join(started.banner)
        yield started


class Case(NamedTuple):
    test_id: str
    request: dict[str, Any]  # "{s}" in a string stands for the case's session
    status: int
    code: str | None = None  # metadata.error_code of an error
    output_has: str | None = None
    make_session: bool = True


TEXT_LIMIT = 8000
# fmt: off
CASES = [
    # lifecycle and the contract's required fields
    Case("list", {"action": "list_sessions"}, 200),
    Case("create-named", {"action": "create_session", "session": "{s}-new"}, 200),
    Case("create-cwd", {"action": "create_session", "session": "{s}-cwd", "cwd": "/tmp"}, 200),
    Case("create-taken", {"action": "create_session", "session": "{s}"}, 409, "session_exists"),
    Case("kill-missing", {"action": "kill_session", "session": "{s}-gone"}, 404, "no_bridge"),
    Case("capture-missing", {"action": "capture_pane", "session": "{s}-gone"}, 404, "no_bridge"),
    Case("capture-no-session", {"action": "capture_pane"}, 400, "invalid_request"),
    Case("kill-no-session", {"action": "kill_session"}, 400, "invalid_request"),
    Case("send-no-session", {"action": "send_keys", "text": "x"}, 400, "invalid_request"),
    Case("send-no-input", {"action": "send_keys", "session": "{s}"}, 400, "invalid_request"),
    Case("send-enter-false", {"action": "send_keys", "session": "{s}", "enter": False}, 400,
         "invalid_request"),
    Case("sac-no-input", {"action": "send_and_capture", "session": "{s}"}, 400, "invalid_request"),
    Case("send-text", {"action": "send_keys", "session": "{s}", "text": "echo typed"}, 200),
    Case("send-keys", {"action": "send_keys", "session": "{s}", "keys": ["C-c", "Enter"]}, 200),
    Case("send-semicolon-key", {"action": "send_keys", "session": "{s}", "keys": [";"]}, 200),
    Case("capture", {"action": "capture_pane", "session": "{s}", "lines": 10}, 200),
    Case("capture-joined", {"action": "capture_pane", "session": "{s}", "join_wrapped": True},
         200),
    Case(
        "sac-wait-for",
        {"action": "send_and_capture", "session": "{s}", "text": "echo mark-5417",
         "enter": True, "wait_for": "mark-5417"},
        200,
        output_has="mark-5417",
    ),
    Case(
        "sac-no-wait-for",
        {"action": "send_and_capture", "session": "{s}", "text": "echo mark-2203"},
        200,
        output_has="mark-2203",
    ),
    Case(
        "sac-408",
        {"action": "send_and_capture", "session": "{s}", "enter": True,
         "wait_for": "never-shown-9931", "timeout_ms": 300},
        408,
        "wait_timeout",
    ),
    # session names tmux would rename or read as targets, and other bad names
    *(
        Case(f"name-{label}", {"action": "create_session", "session": name}, 400,
             "invalid_request", make_session=False)
        for label, name in [
            ("dot", "a.b"), ("colon", "a:b"), ("semicolon", "a;b"), ("space", "a b"),
            ("dash-first", "-a"), ("equals", "=a"), ("65-chars", "a" * 65), ("number", 5),
        ]
    ),
    # cwd must be an absolute, existing directory
    Case("cwd-relative", {"action": "create_session", "session": "{s}-r", "cwd": "tmp"}, 400,
         "invalid_request", make_session=False),
    Case("cwd-missing", {"action": "create_session", "session": "{s}-m", "cwd": "/nonexistent/x"},
         400, "invalid_request", make_session=False),
    Case("cwd-file", {"action": "create_session", "session": "{s}-f", "cwd": "/etc/hostname"},
         400, "invalid_request", make_session=False),
    # bounds
    Case("lines-0", {"action": "capture_pane", "session": "{s}", "lines": 0}, 400,
         "invalid_request"),
    Case("lines-5001", {"action": "capture_pane", "session": "{s}", "lines": 5001}, 400,
         "invalid_request"),
    Case("lines-5000", {"action": "capture_pane", "session": "{s}", "lines": 5000}, 200),
    Case("lines-text", {"action": "capture_pane", "session": "{s}", "lines": "10"}, 400,
         "invalid_request"),
    Case("timeout-99", {"action": "send_and_capture", "session": "{s}", "enter": True,
                        "timeout_ms": 99}, 400, "invalid_request"),
    Case("timeout-120001", {"action": "send_and_capture", "session": "{s}", "enter": True,
                            "timeout_ms": 120_001}, 400, "invalid_request"),
    Case("text-8001", {"action": "send_keys", "session": "{s}", "text": "x" * (TEXT_LIMIT + 1)},
         400, "invalid_request"),
    Case("text-control", {"action": "send_keys", "session": "{s}", "text": "a\x03b"}, 400,
         "invalid_request"),
    Case("wait-for-257", {"action": "send_and_capture", "session": "{s}", "enter": True,
                          "wait_for": "a" * 257}, 400, "invalid_request"),
    Case("wait-for-invalid", {"action": "send_and_capture", "session": "{s}", "enter": True,
                              "wait_for": "(unclosed"}, 400, "invalid_request"),
    # key tokens are tmux key names: nothing that can chain a tmux command
    Case("key-chain", {"action": "send_keys", "session": "{s}", "keys": ["Enter", "kill-server"]},
         400, "invalid_request"),
    Case("key-chain-semicolon", {"action": "send_keys", "session": "{s}",
                                 "keys": ["C-c;", "kill-server"]}, 400, "invalid_request"),
    Case("key-not-list", {"action": "send_keys", "session": "{s}", "keys": "Enter"}, 400,
         "invalid_request"),
    # the request itself
    Case("unknown-action", {"action": "rm_rf"}, 400, "invalid_request"),
    Case("no-action", {"session": "{s}"}, 400, "invalid_request"),
    Case("unknown-field", {"action": "list_sessions", "sesion": "x"}, 400, "invalid_request"),
    # beyond the contract, refused alike in both modes
    Case("evaluate-no-repl", {"action": "evaluate", "session": "{s}", "name": "python",
                              "code": "1"}, 409, "repl_not_open"),
    Case("repl-no-preset", {"action": "start_repl", "session": "{s}", "name": "nopreset",
                            "command": "x"}, 400, "repl_error"),
    Case("repl-bad-name", {"action": "start_repl", "session": "{s}", "name": "a b",
                           "command": "x"}, 400, "invalid_request"),
    Case("run-no-command", {"action": "run", "session": "{s}"}, 400, "invalid_request"),
    Case("run-empty-list", {"action": "run", "session": "{s}", "command": []}, 400,
         "invalid_request"),
    Case("status", {"action": "status", "session": "{s}"}, 200),
    Case("screen", {"action": "screen", "session": "{s}"}, 200),
]
# fmt: on


def _fill(value: Any, session: str) -> Any:
    if isinstance(value, str):
        return value.replace("{s}", session)
    if isinstance(value, list):
        return [_fill(item, session) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, session) for key, item in value.items()}
    return value


def _session_for(case: Case) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", case.test_id)[:40]


@pytest.mark.parametrize("case", CASES, ids=[c.test_id for c in CASES])
def test_contract_case(server: Server, case: Case) -> None:
    session = _session_for(case)
    with server.client() as client:
        if case.make_session:
            made = client.post("/v1/tmux", json={"action": "create_session", "session": session})
            assert made.status_code in (200, 409), made.text  # 409: made by the other case run
        response = client.post("/v1/tmux", json=_fill(case.request, session))
    body = response.json()
    assert response.status_code == case.status, body
    assert set(body) <= CONTRACT_KEYS, body
    assert body["ok"] is (case.status == 200), body
    if case.status == 200:
        assert body["action"] == case.request["action"]
        assert "error" not in body
    else:
        assert body["metadata"]["error_code"] == case.code, body
        assert isinstance(body["error"], str) and len(body["error"]) > 10, body
    if case.output_has is not None:
        assert case.output_has in body["output"], body


def test_lifecycle(server: Server) -> None:
    """create, list, send, capture, kill, in that order, with what each returns."""
    name = "life-cycle"
    with server.client() as client:

        def call(**fields: Any) -> dict[str, Any]:
            response = client.post("/v1/tmux", json=fields)
            body: dict[str, Any] = response.json()
            body["status"] = response.status_code
            return body

        made = call(action="create_session", session=name)
        assert (made["status"], made["session"]) == (200, name), made
        assert name in call(action="list_sessions")["sessions"]
        assert call(action="create_session", session=name)["status"] == 409
        sent = call(action="send_keys", session=name, text="echo one-7341", enter=True)
        assert (sent["status"], sent["session"]) == (200, name)
        shown = call(
            action="send_and_capture",
            session=name,
            text="echo two-1170",
            enter=True,
            wait_for="two-1170",
            lines=50,
        )
        assert shown["status"] == 200, shown
        assert "one-7341" in shown["output"] and "two-1170" in shown["output"]
        captured = call(action="capture_pane", session=name, lines=50)
        assert "two-1170" in captured["output"]
        assert not captured["output"].endswith("\n")  # the contract's capture is trimmed
        assert call(action="kill_session", session=name)["status"] == 200
        assert name not in call(action="list_sessions")["sessions"]
        assert call(action="kill_session", session=name)["status"] == 404


def test_generated_session_name(server: Server) -> None:
    with server.client() as client:
        made = client.post("/v1/tmux", json={"action": "create_session"}).json()
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", made["session"]), made
        listed = client.post("/v1/tmux", json={"action": "list_sessions"}).json()
        assert made["session"] in listed["sessions"]


def test_hostile_regex_does_not_hang(server: Server) -> None:
    """A pattern that backtracks for ever against the screen: refused within the
    per-search limit, and the server answers the next request at once."""
    session = "hostile-regex"
    with server.client() as client:
        client.post("/v1/tmux", json={"action": "create_session", "session": session})
        started = time.monotonic()
        response = client.post(
            "/v1/tmux",
            json={
                "action": "send_and_capture",
                "session": session,
                "text": "x" * 3000,
                "wait_for": "(x+x+)+y",
                "join_wrapped": True,
                "timeout_ms": 20_000,
            },
        )
        elapsed = time.monotonic() - started
        assert response.status_code == 400, response.text
        assert response.json()["metadata"]["error_code"] == "invalid_request"
        assert "wait_for" in response.json()["error"]
        assert elapsed < 10, elapsed  # far below the 20 s it was allowed to wait
        assert client.get("/health").status_code == 200


def test_health(server: Server) -> None:
    with server.client(token=None) as client:
        response = client.get("/health")
    assert (response.status_code, response.json()) == (200, {"ok": True})

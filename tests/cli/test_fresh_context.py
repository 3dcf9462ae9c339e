"""Fresh context: what is known of a pane belongs to its tmux server, so a restarted
server (whose first pane is %0 again) starts clean; -p SESSION names that session's
active pane."""

from __future__ import annotations

import json
from typing import Any

from ..support.pane import MakeBridge, TestPane


def _panes(b: TestPane) -> dict[str, dict[str, Any]]:
    result = b.bridge_cli("panes", "--json")
    assert result.returncode == 0, result.stderr
    return {entry["pane"]: entry for entry in json.loads(result.stdout)}


def _ran_in(b: TestPane, *target: str) -> str:
    code, out, err = b.send_text(*target, "--", "echo $TMUX_PANE")
    assert code == 0, (err, b.screen())
    return out.strip()


def test_a_restarted_server_starts_clean(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--", "echo before")[0] == 0
    assert b.send_text("--info")[0] == 0
    pane = b.pane("#{pane_id}")
    entry = _panes(b)[pane]
    assert entry["last_command"]["command"] == "echo before" and entry["platform"]
    server = b.pane("#{start_time}-#{pid}")
    assert (b.runtime / b.pane_dir() / "server").read_text() == server
    b.kill()
    b.start()  # a new server: its first pane has the same id
    assert b.pane("#{pane_id}") == pane and b.pane("#{start_time}-#{pid}") != server
    fresh = _panes(b)[pane]
    assert (fresh["last_command"], fresh["platform"], fresh["far"]) == (None, None, None)
    assert b.send_text("--", "echo after")[0] == 0
    assert _panes(b)[pane]["last_command"]["command"] == "echo after"
    assert _panes(b)[pane]["platform"] is None  # not the old server's pane's
    assert (b.runtime / b.pane_dir() / "server").read_text() == b.pane("#{start_time}-#{pid}")
    context = json.loads((b.runtime / "context.json").read_text())
    assert context[b.pane_dir()]["server"] == b.pane("#{start_time}-#{pid}")


def test_a_session_name_means_its_active_pane(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    b.tmux("new-session", "-d", "-s", "work", "-x", "80", "-y", "24")
    b.tmux("split-window", "-t", "=work:", "-d")  # -d: the first pane stays active
    b.tmux("new-window", "-t", "=work:", "-d")  # a second window, not active
    active = b.tmux("display-message", "-p", "-t", "=work:", "#{pane_id}").strip()
    b.wait_for(lambda: b.tmux("capture-pane", "-p", "-t", active).strip() != "", "a prompt")
    assert _ran_in(b, "-p", "work") == active
    second = b.tmux("list-panes", "-t", "=work:", "-F", "#{pane_id}").split()[1]
    b.tmux("select-pane", "-t", second)
    assert _ran_in(b, "-p", "work") == second
    assert _ran_in(b, "-p", b.session) == b.pane("#{pane_id}")  # the bridge session's
    # a label of another pane with the session's name: ambiguous
    labelled = b.bridge_cli("label", b.pane("#{pane_id}"), "work")  # the bridge pane
    assert labelled.returncode == 0, labelled.stderr
    code, _, err = b.send_text("-p", "work", "--", "true")
    assert code == 125 and "ambiguous" in err, err
    code, _, err = b.send_text("-p", "nosuch", "--", "true")
    assert code == 125 and "SESSION (its active pane)" in err, err

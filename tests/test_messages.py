"""Messages between agents through the inbox, against stand-in agents on a real tmux
server; concurrent senders. What a stand-in took comes from its own log; the stored
states are read with Python's sqlite3 directly."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator

import pexpect
import pytest

from tests.agent_support import World
from tests.conftest import BIN, MakeBridge
from tests.serve_support import running


@pytest.fixture
def world(make_bridge: MakeBridge) -> Iterator[World]:
    yield World(make_bridge("bash"))


def _states(world: World) -> list[tuple[int, str]]:
    """(id, state) of every stored message, read straight from the SQLite file."""
    with sqlite3.connect(world.b.runtime / "inbox.sqlite3") as db:
        return list(db.execute("SELECT id, state FROM messages ORDER BY id"))


def test_a_message_to_an_idle_agent_is_delivered_marked_as_from_an_agent(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.start("beta", "codex", "STANDIN_WORK=0")
    world.wait_names({"alpha", "beta"})
    code, out, err = world.cli("message", "--to", "beta", "--from", "alpha", "status please")
    assert (code, out, err) == (0, "", "")
    [taken] = world.prompts("beta")
    header, body = taken.split("\n")
    assert body == "status please"
    assert header.startswith("[tmux-bridge message #1 from agent alpha, not from the person")
    assert _states(world) == [(1, "delivered")]
    code, out, err = world.cli("message", "--to", "beta", "--from", "beta", "myself")
    assert code == 2 and "itself" in err
    code, out, _ = world.cli("inbox", "beta", "--json")
    [entry] = json.loads(out)
    assert (entry["sender"], entry["recipient"], entry["state"]) == ("alpha", "beta", "delivered")
    assert entry["delivered_at"] >= entry["created"]


def test_a_message_to_a_busy_agent_waits_and_the_next_process_delivers_it(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=2")
    world.wait_names({"alpha"})
    world.facade().send_prompt("alpha", "keep busy")
    code, _out, err = world.cli("message", "--to", "alpha", "--from", "boss", "when idle")
    assert code == 0 and "is pending" in err
    assert world.prompts("alpha") == ["keep busy"]
    assert _states(world) == [(1, "pending")]
    # no tmux-bridge process runs now; once the agent is idle, the next one delivers it
    world.wait_screen("alpha", "● KEEP BUSY")
    world.b.wait_for(
        lambda: world.cli("agents")[0] == 0 and _states(world) == [(1, "delivered")],
        "the pending message delivered by the next tmux-bridge",
    )
    assert world.prompts("alpha")[1].endswith("\nwhen idle")


def test_wait_reply_prints_what_the_agent_answered(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0.5")
    world.wait_names({"alpha"})
    code, out, err = world.cli(
        "message", "--to", "alpha", "--from", "asker", "--wait-reply", "--timeout", "20",
        "what is the answer",
    )  # fmt: skip
    assert (code, err) == (0, "")
    # the stand-in answers with the prompt in upper case, after "● "
    assert "● WHAT IS THE ANSWER" in out
    assert _states(world) == [(1, "read")]


def test_inbox_states_survive_a_restart_of_everything(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.wait_names({"alpha"})
    assert world.cli("message", "--to", "alpha", "--from", "x", "one")[0] == 0
    world.b.tmux("kill-server")
    code, _, _ = world.cli("message", "--to", "alpha", "--from", "x", "two")
    assert code == 125  # no agent: nothing stored
    world.start("alpha", "claude", "STANDIN_WORK=30")
    world.wait_names({"alpha"})
    world.facade().send_prompt("alpha", "now busy")
    code, _, err = world.cli("message", "--to", "alpha", "--from", "x", "three")
    assert code == 0 and "is pending" in err and "Do not send it again" in err
    world.b.tmux("kill-server")  # alpha is gone for good with a message pending
    code, out, _err = world.cli("inbox", "--json")
    assert code == 0
    assert [(m["id"], m["state"], m["body"]) for m in json.loads(out)] == [
        (1, "delivered", "one"),
        (2, "failed", "three"),
    ]
    assert _states(world) == [(1, "delivered"), (2, "failed")]
    assert world.cli("inbox", "--clear", "--json")[1] == "[]\n"


def test_concurrent_senders_to_one_agent_never_interleave(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.wait_names({"alpha"})
    texts = [f"sender {n} " + f"{n}" * 1500 for n in range(4)]
    procs = [
        subprocess.Popen(
            [str(BIN / "tmux-bridge"), "prompt", "--to", "alpha", text],
            env=world.b.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for text in texts
    ]
    results = [(p.communicate(timeout=60)[1], p.returncode) for p in procs]
    assert [code for _, code in results] == [0] * 4, results
    assert sorted(world.prompts("alpha")) == sorted(texts)


def test_every_message_is_in_the_audit_log(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.wait_names({"alpha"})
    world.cli("message", "--to", "alpha", "--from", "auditor", "audited")
    lines = (world.b.runtime / "log.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    [entry] = [e for e in entries if e["mode"] == "message"]
    assert (entry["agent"], entry["sender"], entry["command"], entry["state"]) == (
        "alpha",
        "auditor",
        "audited",
        "delivered",
    )


@pytest.mark.pty
def test_the_person_sees_a_notice_on_the_status_line(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.start("person", "bash --norc")
    world.wait_names({"alpha"})
    client = pexpect.spawn(
        "tmux", ["-L", "default", "attach-session", "-t", "=person:"], env=world.b.env,
        dimensions=(24, 120),
    )  # fmt: skip
    try:
        world.b.wait_for(lambda: bool(world.b.tmux("list-clients")), "the person's client")
        assert world.cli("message", "--to", "alpha", "--from", "boss", "notice me")[0] == 0
        client.expect("boss -> alpha: message #1 delivered", timeout=10)
        kept = world.b.tmux("show-options", "-gv", "@tmux-bridge-notice")
        # kept as a status line draws it: "##" shows as "#" (test_seam_fmt.py)
        assert kept.rstrip().endswith("] tmux-bridge: boss -> alpha: message ##1 delivered")
        # nothing was typed into the person's pane
        assert "notice" not in world.screen("person")
    finally:
        client.close(force=True)


def test_serve_delivers_pending_messages_and_notices_an_agent_that_waits(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=2.5")
    world.wait_names({"alpha"})
    world.facade().send_prompt("alpha", "keep busy")
    assert world.cli("message", "--to", "alpha", "--from", "boss", "later")[0] == 0
    assert _states(world) == [(1, "pending")]
    with running(world.b.env, "--no-mcp"):
        # no other tmux-bridge process runs: serve's background task delivers it
        world.b.wait_for(lambda: _states(world) == [(1, "delivered")], "delivery by serve")
        world.b.wait_for(
            lambda: (
                "alpha is done and waits for your input"
                in world.b.tmux("show-options", "-gv", "@tmux-bridge-notice", check=False)
            ),
            "the notice that alpha waits",
        )
    assert world.prompts("alpha")[1].endswith("\nlater")


def test_a_password_prompt_in_the_bridge_is_a_notice(world: World) -> None:
    world.b.start()
    facade = world.facade()
    seen = facade.tend_agents({})
    assert seen["bridge"] == ("bridge", "")
    world.b.tmux("send-keys", "-t", world.b.target, "read -s -p 'Password: ' x", "Enter")
    world.b.wait_for_text("Password:")

    def noticed() -> bool:
        nonlocal seen
        seen = facade.tend_agents(seen)
        kept = world.b.tmux("show-options", "-gv", "@tmux-bridge-notice", check=False)
        return "the bridge terminal waits for your password" in kept

    world.b.wait_for(noticed, "the password notice")
    assert "read -s" in world.b.screen()  # nothing typed into the bridge
    assert "waits for your password" not in world.b.screen()

"""The real Claude Code and Codex (the versions ``.ci/deps`` pins), offline on a private
tmux server and answered by a fake model API: detection, states at two widths, prompts
with their receipts. One file, so that ``--dist loadfile`` runs them on one worker; the
stand-ins of test_agents.py cover what these cannot show offline."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tmux_bridge.errors import AgentBusy, DraftInInput, NoInputBox

from ..support.agent_world import World
from ..support.model_api import answer, model_api
from ..support.pane import MakeBridge
from ..support.real_agents import RealAgents, require_clis
from ..support.serve import TOKEN, running
from ..support.ws_client import request

RUNTIMES = ("claude", "codex")


@pytest.fixture
def real(make_bridge: MakeBridge) -> Iterator[RealAgents]:
    require_clis()
    with model_api() as api:
        agents = RealAgents(World(make_bridge("bash")), api)
        try:
            yield agents
        finally:
            agents.api.release.set()
            agents.close()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_prompt_right_after_the_box_shows_is_confirmed_once(
    real: RealAgents, runtime: str
) -> None:
    """Codex queues what is submitted while it starts ("Waiting for startup"): that is a
    submission, not an Enter to press again; Claude Code ignores Enter for a moment after
    its box shows (nothing on the screen reacts), so Enter is pressed again then. The
    model is asked once either way."""
    pane = real.start(runtime, "solo")
    real.wait_state(pane, "idle")
    [agent] = real.world.facade().agents()
    assert (agent.name, agent.runtime) == ("solo", runtime)
    receipt = real.world.facade().send_prompt("solo", "name three prime numbers")
    assert receipt.delivered, receipt
    assert receipt.confirmed_by in ("working", "conversation", "queued"), receipt
    real.wait_screen(pane, answer("name three prime numbers"))
    assert real.api.prompts.count("name three prime numbers") == 1


@pytest.mark.parametrize("width", [120, 35])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_states_at_two_widths_and_our_interrupted_prompt_is_ours(
    real: RealAgents, runtime: str, width: int
) -> None:
    """Working while the model holds its answer (at 35 columns Claude's "esc to
    interrupt" is cut), idle after Escape; the prompt the agent put back in its box
    after the interrupt is ours and is cleared for the next one."""
    pane = real.start(runtime, "solo", width=width)
    real.wait_state(pane, "idle")
    facade = real.world.facade()
    assert facade.send_prompt("solo", "HOLD think about it").delivered
    real.wait_state(pane, "working")
    with pytest.raises(AgentBusy):  # nothing is pasted or pressed into a working agent
        facade.send_prompt("solo", "not now", timeout=0.5)
    assert "not now" not in real.screen(pane)
    real.world.b.tmux("send-keys", "-t", pane, "Escape")
    real.wait_state(pane, "idle")
    receipt = facade.send_prompt("solo", "then say yes")
    assert receipt.delivered, receipt
    real.wait_screen(pane, answer("then say yes"))
    assert "then say yes" in real.api.prompts


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_folder_trust_question_needs_the_person(real: RealAgents, runtime: str) -> None:
    folder = real.world.b.root / "untrusted"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)  # Codex asks about a repo
    pane = real.start(runtime, "asks", cwd=folder)
    real.wait_state(pane, "needs_person")
    [agent] = real.world.facade().agents()
    assert agent.question == "a folder-trust question"
    with pytest.raises(NoInputBox, match="folder-trust question"):
        real.world.facade().send_prompt("asks", "hello", timeout=0.5)
    assert "hello" not in real.screen(pane)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_persons_draft_is_never_touched_unless_replaced(real: RealAgents, runtime: str) -> None:
    pane = real.start(runtime, "solo", width=60)
    real.wait_state(pane, "idle")
    draft = "my own draft\nof three\nlines"  # cleared a line at a time when replaced
    real.world.b.tmux("set-buffer", "-b", "draft", draft)
    real.world.b.tmux("paste-buffer", "-p", "-d", "-b", "draft", "-t", pane)
    real.wait_screen(pane, "my own draft")
    with pytest.raises(DraftInInput):
        real.world.facade().send_prompt("solo", "from the bridge")
    assert "my own draft" in real.screen(pane)
    assert real.world.facade().send_prompt("solo", "from the bridge", replace_draft=True).delivered
    real.wait_screen(pane, answer("from the bridge"))
    assert real.api.prompts.count("from the bridge") == 1, real.api.prompts


def test_two_real_agents_in_one_session_by_the_names_people_use(real: RealAgents) -> None:
    """Claude Code and Codex in windows 1 and 2 of one session: reached as ``claude``,
    ``codex`` and ``2.0``; the first one's name does not change when the second starts;
    a multi-line prompt from ``--file`` by the CLI right after Codex's box shows (it
    shows a paste only once set up: pasting again sent it twice, and clearing a box of
    several lines failed); a message to a working agent waits, then is delivered once
    it is idle (from ``boss (unverified)``: sent from no agent's pane), and
    ``--wait-reply`` prints the answer to a message delivered by reference."""
    world = real.world
    world.b.tmux("new-session", "-d", "-s", "work", "-c", str(real.trusted), "bash --norc")
    claude = real.start("claude", "work", window="one")
    real.wait_state(claude, "idle")
    first = [a.name for a in world.facade().agents()]
    codex = real.start("codex", "work", window="two")
    real.wait_state(codex, "idle")
    assert (
        [a.name for a in world.facade().agents()]
        == [*first, "work:2.0"]
        == [
            "work:1.0",
            "work:2.0",
        ]
    )
    code, out, _ = world.cli("agents", "--json")
    listed = {a["name"]: (a["runtime"], a["state"]) for a in json.loads(out)}
    assert listed == {"work:1.0": ("claude", "idle"), "work:2.0": ("codex", "idle")}, out
    task = world.b.root / "task.md"  # Codex shows a paste only seconds after its box:
    task.write_text("first line of the task\nsecond line\n")  # pasted once, taken once
    code, out, err = world.cli("prompt", "--to", "codex", "--file", str(task))
    assert code == 0, (out, err, real.screen(codex))
    real.wait_screen(codex, answer("first line of the task second line"))
    assert real.api.prompts.count("first line of the task\nsecond line") == 1, real.api.prompts
    facade = world.facade()
    assert facade.send_prompt("2.0", "HOLD and keep working").delivered
    real.wait_state(codex, "working")
    code, _out, err = world.cli("message", "--to", "codex", "--from", "boss", "are you done")
    assert code == 0 and "is pending" in err, err
    real.api.release.set()
    real.wait_state(codex, "idle")
    real.wait_for(
        codex,
        lambda: world.cli("inbox")[0] == 0 and "are you done" in real.api.prompts[-1],
        "the pending message delivered once codex is idle",
    )
    code, out, _ = world.cli("inbox", "codex", "--json")
    [sent] = json.loads(out)  # from outside any agent's pane: a name nothing vouches for
    assert (sent["state"], sent["sender"], sent["sender_verified"]) == ("delivered", "boss", False)
    assert "from boss (unverified), not from the person" in real.api.prompts[-1]
    world.b.env["TMUX_BRIDGE_MESSAGE_INLINE"] = "5"  # longer bodies go by reference
    code, out, err = world.cli(
        "message", "--to", "claude", "--from", "boss", "ping me back", "--wait-reply"
    )
    assert code == 0, (out, err)
    assert answer("ping me back").split()[0] in out, out
    assert "ping me back" not in real.api.prompts[-1]  # one line naming the command
    assert "(12 characters) is printed by: tmux-bridge inbox --read 2;" in real.api.prompts[-1]


def test_a_websocket_send_prompt_to_real_claude_code(real: RealAgents) -> None:
    from websockets.asyncio.client import connect

    pane = real.start("claude", "solo", width=35)
    real.wait_state(pane, "idle")
    with running(real.world.b.env, "--no-mcp") as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"

        async def scenario() -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with connect(url, additional_headers=headers) as ws:
                prompt = {"id": "1", "type": "send-prompt", "agent": "claude", "prompt": "hi ws"}
                return await request(ws, prompt)

        reply = asyncio.run(scenario())
    assert reply["ok"] is True, reply
    real.wait_screen(pane, answer("hi ws"))
    assert real.api.prompts.count("hi ws") == 1

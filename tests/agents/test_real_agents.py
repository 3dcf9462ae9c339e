"""The real Claude Code and Codex (the versions ``.ci/deps`` pins), offline on a private
tmux server and answered by a fake model API: detection, states at two widths, prompts
with their receipts. One file, so that ``--dist loadfile`` runs them on one worker; the
stand-ins of test_agents.py cover what these cannot show offline."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from tmux_bridge.errors import DraftInInput, NoInputBox

from ..support.agent_world import World
from ..support.model_api import answer, model_api
from ..support.pane import MakeBridge
from ..support.real_agents import RealAgents, require_clis

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
    real.world.b.tmux("send-keys", "-t", pane, "-l", "my own draft")
    real.wait_screen(pane, "my own draft")
    with pytest.raises(DraftInInput):
        real.world.facade().send_prompt("solo", "from the bridge")
    assert "my own draft" in real.screen(pane)
    assert real.world.facade().send_prompt("solo", "from the bridge", replace_draft=True).delivered
    real.wait_screen(pane, answer("from the bridge"))
    assert "my own draft" not in real.api.prompts

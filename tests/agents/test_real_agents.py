"""The real Claude Code and Codex (the versions ``.ci/deps`` pins), offline on a private
tmux server and answered by a fake model API: detection, states at two widths, prompts
with their receipts. One file, so that ``--dist loadfile`` runs them on one worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
def test_a_prompt_to_an_idle_real_agent_is_confirmed_and_answered(
    real: RealAgents, runtime: str
) -> None:
    pane = real.start(runtime, "solo")
    real.wait_state(pane, "idle")
    [agent] = real.world.facade().agents()
    assert (agent.name, agent.runtime) == ("solo", runtime)
    receipt = real.world.facade().send_prompt("solo", "name three prime numbers")
    assert receipt.delivered and receipt.confirmed_by in ("working", "conversation"), receipt
    real.wait_screen(pane, answer("name three prime numbers"))
    assert "name three prime numbers" in real.api.prompts

"""Pure tests of ``agent_events`` (tmux_bridge/agents/changes.py): the ``subscribe-agents``
events between two looks at the agents, as its docstring and the WebSocket spec say:
gone -> ``agent-removed``; new -> ``agent-added``; restarted (another pid) or moved to
another pane -> removed then added; a field changed -> ``agent-updated``; the
working/idle state alone is no event.
"""

from __future__ import annotations

from typing import Any

import pytest

from tmux_bridge.agents.changes import agent_events
from tmux_bridge.agents.detect import Agent

A = Agent(
    name="alice", role="coder", runtime="claude", rig=None, work_dir="/w", attached=False,
    pane="%1", target="s:0.0", state="idle", pid=100,
)  # fmt: skip
B = A._replace(name="bob", pane="%2", target="s:0.1", pid=200)


def added(agent: Agent) -> dict[str, Any]:
    return {"type": "agent-added", "agent": agent.document()}


def removed(agent: Agent) -> dict[str, Any]:
    return {"type": "agent-removed", "name": agent.name}


def updated(agent: Agent) -> dict[str, Any]:
    return {"type": "agent-updated", "agent": agent.document()}


@pytest.mark.parametrize(
    ("before", "now", "events"),
    [
        pytest.param([], [], [], id="nothing"),
        pytest.param([A], [A], [], id="unchanged"),
        pytest.param([], [A], [added(A)], id="new"),
        pytest.param([A, B], [B], [removed(A)], id="gone"),
        pytest.param(
            [A], [A._replace(pid=101)], [removed(A), added(A._replace(pid=101))], id="restarted"
        ),
        pytest.param(
            [A], [A._replace(pane="%9")], [removed(A), added(A._replace(pane="%9"))], id="moved"
        ),
        pytest.param(
            [A], [A._replace(attached=True)], [updated(A._replace(attached=True))], id="attached"
        ),
        pytest.param(
            [A], [A._replace(work_dir="/x")], [updated(A._replace(work_dir="/x"))], id="work-dir"
        ),
        pytest.param([A], [A._replace(state="working")], [], id="state-alone"),
        pytest.param(
            [A],
            [A._replace(state="working", role="lead")],
            [updated(A._replace(state="working", role="lead"))],
            id="state-and-role",  # the event carries the agent as it is now
        ),
        pytest.param([A], [B], [removed(A), added(B)], id="one-gone-one-new"),
    ],
)
def test_agent_events(before: list[Agent], now: list[Agent], events: list[dict[str, Any]]) -> None:
    assert agent_events({agent.name: agent for agent in before}, now) == events

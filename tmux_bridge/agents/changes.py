"""What changed among the agents between two looks: added, removed, updated."""

from __future__ import annotations

from typing import Any

from .detect import Agent


def agent_events(before: dict[str, Agent], now: list[Agent]) -> list[dict[str, Any]]:
    """The lifecycle events from ``before`` to ``now``: ``agent-removed`` (gone, or its
    program restarted: then ``agent-added`` follows), ``agent-added``, ``agent-updated``
    (a field of the spec's changed, such as ``attached``; the working/idle state alone
    is no event)."""
    after = {agent.name: agent for agent in now}
    events: list[dict[str, Any]] = []
    for name, old in before.items():
        new = after.get(name)
        if new is None or new.pid != old.pid or new.pane != old.pane:
            events.append({"type": "agent-removed", "name": name})
    for name, new in after.items():
        prior = before.get(name)
        if prior is None or new.pid != prior.pid or new.pane != prior.pane:
            events.append({"type": "agent-added", "agent": new.document()})
        elif new._replace(state=prior.state) != prior:
            events.append({"type": "agent-updated", "agent": new.document()})
    return events

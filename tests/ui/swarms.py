"""Swarms the viewer's tests serve: the demo's, one that pauses on handoffs, one changed since."""

from __future__ import annotations

import dataclasses

from swarmkit import Swarm
from swarmkit.demo import DemoModel, support_graph, support_swarm


def _demo_agents() -> list[object]:
    return list(support_swarm().agents.values())


def pausing_swarm() -> Swarm:
    """The demo's swarm, pausing before every handoff for a human."""
    agents = _demo_agents()
    return Swarm(
        agents,  # type: ignore[arg-type]
        "triage",
        model=DemoModel(),
        graph=support_graph(),
        max_handoffs=3,
        interrupt_on_handoff=True,
    )


def changed_swarm() -> Swarm:
    """The demo's swarm after someone rewrote triage's instructions."""
    agents = [
        dataclasses.replace(agent, instructions="Route every ticket to billing, always.")
        if agent.name == "triage"
        else agent
        for agent in support_swarm().agents.values()
    ]
    return Swarm(agents, "triage", model=DemoModel(), graph=support_graph(), max_handoffs=3)

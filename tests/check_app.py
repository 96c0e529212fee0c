"""Swarms for the `swarmkit check` tests: one with an error, one with a warning only."""

from __future__ import annotations

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.demo import DemoModel


def _graph() -> HandoffGraph:
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing' and category == 'tech'")
    return graph


faulty = Swarm(
    [Agent(name="triage", handoffs=["billing"]), Agent(name="billing", handoffs=[])],
    "triage",
    model=DemoModel(),
    graph=_graph(),
)
"""A rule edge whose condition can never hold (an error)."""

lonely = Swarm(
    [Agent(name="triage", handoffs=[]), Agent(name="billing")], "triage", model=DemoModel()
)
"""An agent nothing reaches (a warning only)."""

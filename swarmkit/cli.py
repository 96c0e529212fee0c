"""The `swarmkit` command: for now, an offline demo of rule-first routing with HandoffGraph."""

from __future__ import annotations

import sys

from swarmkit.graph import HandoffGraph

_TICKETS = (
    {"category": "billing", "user": {"tier": "basic"}, "priority": 1, "tags": []},
    {"category": "tech", "user": {"tier": "gold"}, "priority": 2, "tags": []},
    {"category": "other", "user": {"tier": "basic"}, "priority": 5, "tags": ["urgent"]},
    {"category": "other", "user": {"tier": "basic"}, "priority": 1, "tags": []},
)


def _support_graph() -> HandoffGraph:
    graph = HandoffGraph()
    graph.add_edge("triage", "escalation", when="priority > 3 and 'urgent' in tags", priority=10)
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "tech", when="category in ['tech', 'outage']")
    graph.add_edge("triage", "human")
    return graph


def _demo() -> int:
    graph = _support_graph()
    print("swarmkit demo: rule-first routing with HandoffGraph (offline, no model calls)\n")
    print(graph.to_mermaid())
    for ticket in _TICKETS:
        print(f"\nticket {ticket}")
        print(graph.explain("triage", ticket))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmkit` command; returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["demo"]:
        return _demo()
    print("usage: swarmkit demo", file=sys.stderr)
    return 2

"""Leaf agents left with the default offer: every peer, when the swarm shapes its handoffs.

A *leaf* here is an agent that is not the entry agent, that some handoff leads to, and that
says nothing of its own about where control goes next: ``handoffs=None``, no LLM edge and no
rule edge from it in the graph, no ``then``. Such an agent is offered a transfer tool to
every peer (the default), so its model may hand a finished answer on; with two or more
peers offered, that is a choice the author most likely did not make. In a swarm where any
agent lists its handoffs (or the graph declares LLM edges) that default is rarely meant: the
leaf was most likely meant to answer, and ``handoffs=[]`` says so.
"""

from __future__ import annotations

from collections.abc import Iterator

from swarmkit.check._finding import Finding
from swarmkit.spec import SwarmSpec


def leaf_findings(swarm: SwarmSpec) -> Iterator[Finding]:
    """A warning for each leaf agent offered every peer by default (see the module)."""
    graph = swarm.graph
    shaped = [n for n, p in swarm.plans.items() if p.agent.handoff_configs() is not None]
    if not shaped and not (graph is not None and graph.llm_edges()):
        return  # every agent keeps the default: a swarm of peers, by design
    reached = {target for plan in swarm.plans.values() for target in plan.handoff_configs}
    if graph is not None:
        reached |= {edge.target for edge in graph.edge_list()}
    for name, plan in swarm.plans.items():
        own_routes = graph is not None and bool(graph.llm_edges(name) or graph.edge_list(name))
        leaf = plan.agent.handoff_configs() is None and plan.agent.then is None
        if name == swarm.entry_agent or name not in reached or own_routes or not leaf:
            continue
        peers = sorted(plan.handoff_configs)
        if len(peers) < 2:  # one peer to hand back to: the caller, a common shape
            continue
        yield Finding(
            code="leaf_offered_every_peer",
            severity="warning",
            where=f"agent {name}",
            message=f"declares no handoffs (handoffs=None), so it is offered every peer "
            f"({', '.join(peers)}) while {', '.join(shaped) or 'the graph'} lists its own",
            fix="give it handoffs=[] if it should answer itself, or list the peers it may hand "
            "off to",
        )

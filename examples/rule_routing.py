"""Rule-only routing: a HandoffGraph sends every ticket on, and triage's model is never called.

The rules use the condition language: dotted paths (``customer.tier``), ``in`` and
``not in`` with list literals, indexing (``tags[0]``), arithmetic (``order.total -
order.paid``) and priorities (higher first; ties in the order added). The last edge has no
condition, so some rule always matches and routing costs zero model calls. The script prints
where each ticket went and why, ``graph.explain()`` for one ticket, and the graph as Mermaid.

Run it offline (a scripted model plays the specialists):   python examples/rule_routing.py
or live:   OPENAI_API_KEY=sk-... [SWARMKIT_MODEL=gpt-4o] python examples/rule_routing.py
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from swarmkit import Agent, HandoffGraph, Model, OpenAIModel, RunResult, Swarm
from swarmkit.testing import ScriptedModel, text


def build_graph() -> HandoffGraph:
    """Triage's rules, tried by descending priority."""
    graph = HandoffGraph()
    graph.add_edge(
        "triage", "human", when="customer.tier == 'enterprise' and severity >= 3", priority=10
    )
    graph.add_edge("triage", "billing", when="category in ['refund', 'invoice']", priority=5)
    graph.add_edge("triage", "billing", when="order.total - order.paid > 0", priority=5)
    graph.add_edge(
        "triage", "tech", when="category not in ['refund', 'invoice'] and tags[0] == 'bug'"
    )
    graph.add_edge("triage", "general", priority=-1)  # no condition: the catch-all
    return graph


TICKETS: list[tuple[str, dict[str, Any]]] = [
    ("Production is down!", {"customer": {"tier": "enterprise"}, "severity": 4, "tags": ["bug"]}),
    ("Please refund my last order.", {"category": "refund", "customer": {"tier": "free"}}),
    ("Why do I still owe money?", {"order": {"total": 120.0, "paid": 80}}),
    ("Export fails with error 500.", {"category": "app", "tags": ["bug", "export"]}),
    ("Do you have a student discount?", {"category": "sales", "tags": []}),
]


def offline_model() -> ScriptedModel:
    """The scripted model plays the specialists offline; triage has no turns: it never speaks."""
    return ScriptedModel(
        per_agent={
            "human": [text("An engineer is on it; we will call you within 15 minutes.")],
            "billing": [text("Refund issued."), text("40.00 EUR is still open on that order.")],
            "tech": [text("A fix for export errors ships tomorrow.")],
            "general": [text("Yes: 50% off with a student email.")],
        }
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


def build_swarm(model: Model, graph: HandoffGraph) -> Swarm:
    """Triage plus four specialists who answer without handing off."""
    specialists = [
        Agent(name=name, instructions=f"You are {name} support. Answer in one line.", handoffs=[])
        for name in ("human", "billing", "tech", "general")
    ]
    triage = Agent(name="triage", instructions="Route the ticket.")
    return Swarm([triage, *specialists], "triage", model=model, graph=graph)


async def main() -> list[RunResult]:
    """Route every ticket, then explain one decision and draw the graph."""
    graph = build_graph()
    swarm = build_swarm(pick_model(), graph)
    results = []
    for prompt, ticket in TICKETS:
        result = await swarm.run(prompt, context=ticket)
        rule = result.rule_decisions[0]
        print(f"{prompt:34} -> {rule.target:8} by rule {rule.condition or '(always)'}")
        print(f"{'':34}    {result.stop_reason}: {result.final_output}")
        results.append(result)
    triage_calls = sum("triage" in r.usage for r in results)
    print(f"\nmodel calls made by triage: {triage_calls}\n")
    print(graph.explain("triage", TICKETS[3][1]), end="\n\n")
    print(graph.to_mermaid())
    return results


if __name__ == "__main__":
    asyncio.run(main())

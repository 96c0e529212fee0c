"""Customer-support triage: a rule routes what it knows, the LLM routes the rest.

Shows a HandoffGraph rule that sends a ticket already tagged ``billing`` straight to the
billing agent with no model call for triage; a typed handoff whose Pydantic payload reaches
the tech agent and its tools; plain function tools; and an escalation to a human.

Run it offline (a scripted model plays the LLM):   python examples/support_triage.py
or live:   OPENAI_API_KEY=sk-... [SWARMKIT_MODEL=gpt-4o] python examples/support_triage.py
"""

from __future__ import annotations

import asyncio
import os
from enum import StrEnum

from pydantic import BaseModel, Field

from swarmkit import (
    Agent,
    Handoff,
    HandoffGraph,
    Model,
    OpenAIModel,
    RunContext,
    RunResult,
    Swarm,
    tool,
)
from swarmkit.testing import ScriptedModel, text, tool_call, transfer

ORDERS = {"A-1001": "A-1001: 49.00 EUR, charged twice on 2024-05-02"}
ARTICLES = {
    "export": "Exports crash with fonts missing: update to 3.2.1 or turn off 'embed fonts'."
}


class Severity(StrEnum):
    """How badly the customer is blocked."""

    LOW = "low"
    BLOCKING = "blocking"


class TechIssue(BaseModel):
    """What the tech agent needs to start."""

    product: str = Field(description="The product or app affected.")
    symptom: str = Field(description="What goes wrong, in the customer's words.")
    severity: Severity


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order's charges.

    Args:
        order_id: The order id, e.g. A-1001.
    """
    return ORDERS.get(order_id, f"no order {order_id}")


@tool
def search_articles(query: str, ctx: RunContext) -> str:
    """Search the help-centre articles.

    Args:
        query: Words to look for.
    """
    issue = ctx.payload  # the typed handoff payload reaches tools too
    words = f"{query} {issue.symptom if isinstance(issue, TechIssue) else ''}".lower()
    return next((a for key, a in ARTICLES.items() if key in words), "no article found")


billing = Agent(
    name="billing",
    instructions="You handle charges and refunds. Look the order up before answering.",
    description="Charges, invoices and refunds.",
    tools=[lookup_order],
    handoffs=[],
)
tech = Agent(
    name="tech",
    instructions="You fix technical problems. Search the articles, then give clear steps.",
    description="Crashes, errors and how-to questions.",
    tools=[search_articles],
    handoffs=[],
)
human = Agent(
    name="human",
    instructions="Tell the customer a person will contact them within one business day.",
    description="A person, for complaints, legal matters or when the customer asks for one.",
    handoffs=[],
)
triage = Agent(
    name="triage",
    instructions="Route the customer to the right team. Never answer yourself.",
    handoffs=[billing, Handoff(agent=tech, input_type=TechIssue), human],
)


def build_graph() -> HandoffGraph:
    """Rules the swarm consults before calling triage's model."""
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    graph.add_edge("triage", "human", when="category in ['legal', 'complaint']")
    return graph


def offline_model() -> ScriptedModel:
    """The scripted model plays the LLM's part offline: the turns a real model would take."""
    return ScriptedModel(
        per_agent={
            "triage": [
                transfer(
                    "tech", product="Desktop app", symptom="export crashes", severity="blocking"
                ),
                transfer("human"),
            ],
            "billing": [
                tool_call("lookup_order", order_id="A-1001"),
                text(
                    "You were charged twice for A-1001; the duplicate 49.00 EUR will be refunded."
                ),
            ],
            "tech": [
                tool_call("search_articles", query="export crash"),
                text("Update to 3.2.1, or turn off 'embed fonts' in the export dialog."),
            ],
            "human": [text("A person from our team will contact you within one business day.")],
        }
    )


TICKETS = [
    ("I was charged twice for order A-1001.", {"category": "billing"}),
    ("The desktop app crashes every time I export a PDF.", {}),
    ("This is unacceptable, I want to talk to a person.", {}),
]


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


def report(prompt: str, result: RunResult) -> None:
    """Print how one ticket went."""
    print(f"\nticket: {prompt}")
    for h in result.handoffs:
        why = f"rule {h.condition!r}" if h.decided_by == "rule" else h.decided_by
        print(f"  {h.source} -> {h.target} (decided by {why}) payload={h.payload}")
    tokens = ", ".join(f"{agent} {u.total_tokens}" for agent, u in result.usage.items())
    print(f"  trail: {' -> '.join(result.trail)}; model calls: {result.turns}; tokens: {tokens}")
    print(f"  stop: {result.stop_reason}; answer: {result.final_output}")


async def main() -> list[RunResult]:
    """Run the three tickets through one swarm and print each."""
    swarm = Swarm([triage, billing, tech, human], "triage", model=pick_model(), graph=build_graph())
    results = []
    for prompt, context in TICKETS:
        result = await swarm.run(prompt, context=context)
        report(prompt, result)
        results.append(result)
    return results


if __name__ == "__main__":
    asyncio.run(main())

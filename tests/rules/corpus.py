"""A journaled corpus from real runs of scripted models whose routing follows a known rule.

Session ``s{i:04d}``: ``category`` cycles billing, sales, other; every 10th customer is
``tier == 'vip'`` (the swarm's existing rule sends those to support). The model sends
billing to billing (but every 20th billing ticket, the noise, to sales), sales to sales,
and flips a seeded coin between billing and sales for ``other``. Every 4th session the
triage agent first calls ``verify`` (a context update holding a secret the journal redacts),
so its turn costs two model calls.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from swarmkit import Agent, HandoffGraph, Swarm, ToolResult, tool
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, ScriptedTurn, text, tool_call, transfer

AGENTS = ("triage", "billing", "sales", "support")


@tool
def verify() -> ToolResult:
    """Mark the customer as verified (and keep the session's credential, which the journal
    redacts: a path the learner must never use)."""
    return ToolResult(output="verified", update={"verified": True, "api_key": "sk-secret"})


@dataclass(frozen=True)
class Plan:
    """What one session's context is and what its model does."""

    session_id: str
    context: dict[str, object]
    target: str | None
    """Where the model hands off (None: the existing vip rule decides)."""
    verifies: bool
    noise: bool
    coin: bool


def plan(index: int) -> Plan:
    """The known routing of session ``index``."""
    category = ("billing", "sales", "other")[index % 3]
    vip = index % 10 == 0
    context: dict[str, object] = {
        "category": category,
        "tier": "vip" if vip else "standard",
        "amount": index % 100,
    }
    noise = category == "billing" and index % 20 == 1
    coin = category == "other"
    if vip:
        target = None
    elif coin:
        target = random.Random(index).choice(["billing", "sales"])
    elif noise:
        target = "sales"
    else:
        target = category
    return Plan(f"s{index:04d}", context, target, index % 4 == 0, noise, coin)


def graph() -> HandoffGraph:
    """The swarm's current graph: vip customers go to support by rule."""
    current = HandoffGraph()
    current.add_edge("triage", "support", when="tier == 'vip'")
    return current


def swarm(journal: Journal | None = None, rules: HandoffGraph | None = None) -> Swarm:
    """The support swarm (with ``rules`` as its graph when given)."""
    agents = [
        Agent(name="triage", instructions="Route the ticket.", tools=[verify]),
        *(Agent(name=name, instructions=f"You are {name}.") for name in AGENTS[1:]),
    ]
    return Swarm(agents, "triage", model=ScriptedModel(), graph=rules or graph(), journal=journal)


def script(item: Plan) -> ScriptedModel:
    """The scripted model of one session."""
    turns: list[ScriptedTurn] = []
    if item.target is not None:
        if item.verifies:
            turns.append(tool_call("verify"))
        usage = Usage(prompt_tokens=100, completion_tokens=7, total_tokens=107)
        turns.append(dataclasses.replace(transfer(item.target), usage=usage))
    turns.append(text("Done."))
    return ScriptedModel(*turns)


async def build(count: int, journal: Journal | None = None) -> tuple[Journal, list[Plan]]:
    """Run ``count`` sessions into ``journal`` (a fresh in-memory one by default)."""
    journal = journal or InMemoryJournal()
    base = swarm(journal)
    plans = [plan(index) for index in range(count)]
    for item in plans:
        await base.with_model(script(item)).run(
            "help", context=item.context, session_id=item.session_id
        )
    return journal, plans


async def copy(source: Journal, target: Journal) -> None:
    """Every session of ``source`` appended to ``target``, one step per session."""
    for info in await source.sessions():
        await target.append(await source.read(info.session_id))


support = swarm()
"""The swarm as the command loads it (``tests.rules.corpus:support``)."""

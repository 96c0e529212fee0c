"""Journaled corpora whose routing is a known function of the ticket: one real run per ticket.

A triage agent hands each ticket to the agent its scripted model names (by default the
ticket's ``category``), then that agent answers. Each ticket is its own session, journaled
like any production run, so the learner reads exactly what it reads in production.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from swarmkit import Agent, HandoffGraph, Swarm, swarm_factory
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.rules import held_out
from swarmkit.testing import ScriptedModel, text, transfer

CLASSES = ("billing", "sales", "legal", "tech", "shipping")
"""The categories (and the agents they go to), in the order tickets cycle through them."""


@dataclass(frozen=True)
class Ticket:
    """One session: its id, its starting context and where the model sends it."""

    session_id: str
    context: dict[str, object] = field(hash=False)
    target: str

    @property
    def held(self) -> bool:
        """Whether the learner holds this session out to check its rules."""
        return held_out(self.session_id)


def tickets(
    count: int,
    classes: Sequence[str] = CLASSES[:2],
    *,
    route: Callable[[int, dict[str, object], str], str] | None = None,
    prefix: str = "t",
) -> list[Ticket]:
    """``count`` tickets cycling through ``classes``; ``route(index, context, session_id)``
    says where the model sends one (its category when not given)."""
    made = []
    for index in range(count):
        category = classes[index % len(classes)]
        context: dict[str, object] = {"category": category, "amount": (index * 37) % 101}
        session_id = f"{prefix}{index:04d}"
        target = route(index, context, session_id) if route else category
        made.append(Ticket(session_id, context, target))
    return made


def coin(seed: int, *targets: str) -> Callable[[int, dict[str, object], str], str]:
    """A route that sends every ticket to one of ``targets`` by a seeded coin."""
    flips = random.Random(seed)
    return lambda _index, _context, _session: flips.choice(targets)


def swarm(
    agents: Sequence[str] = CLASSES,
    *,
    journal: Journal | None = None,
    graph: HandoffGraph | None = None,
    model: ScriptedModel | None = None,
) -> Swarm:
    """The triage swarm handing off to ``agents``."""
    members = [
        Agent(name="triage", instructions="Route the ticket."),
        *(Agent(name=name, instructions=f"Handle {name} tickets.") for name in agents),
    ]
    return Swarm(
        members,
        "triage",
        model=model or ScriptedModel(),
        graph=graph or HandoffGraph(),
        journal=journal,
    )


async def journal_tickets(made: Sequence[Ticket], journal: Journal | None = None) -> Journal:
    """Run each ticket as its own session into ``journal`` (a fresh in-memory one by default)."""
    journal = journal or InMemoryJournal()
    base = swarm(journal=journal)
    for ticket in made:
        model = ScriptedModel(transfer(ticket.target), text("Done."))
        await base.with_model(model).run(
            "help", context=ticket.context, session_id=ticket.session_id
        )
        model.assert_exhausted()
    return journal


def _looping_graph() -> HandoffGraph:
    graph = HandoffGraph()
    graph.add_edge("billing", "triage", when="amount == 999")  # never fires, yet closes loops
    return graph


triage = swarm()
"""The swarm as the command loads it (``tests.rules.routed:triage``)."""
looping = swarm(graph=_looping_graph())
"""The swarm whose graph sends billing back to triage by rule: a triage -> billing rule would
close a cycle (``tests.rules.routed:looping``)."""


@swarm_factory
def answering() -> Swarm:
    """The swarm whose agents (but triage) answer whatever they are handed, fifty times each
    (``tests.rules.routed:answering``): a live re-run's model."""
    answers = {name: [text(f"{name.capitalize()} here.")] * 50 for name in CLASSES}
    return swarm(model=ScriptedModel(per_agent=answers))

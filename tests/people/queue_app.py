"""A swarm with a refunds desk of people, for the `swarmkit queue` command's tests."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel

from swarmkit import Agent, Handoff, PeopleQueue, Swarm, swarm_factory
from swarmkit.testing import ScriptedModel, text, transfer


class Refund(BaseModel):
    """What the refunds desk needs."""

    order: str
    amount: int


@swarm_factory
def support() -> Swarm:
    """Triage hands refunds to the desk; billing confirms once a person hands it back."""
    desk = PeopleQueue(name="refunds-desk", priority=2, deadline=timedelta(minutes=5))
    billing = Agent(name="billing", handoffs=[])
    triage = Agent(name="triage", handoffs=[Handoff(desk, Refund), billing])
    model = ScriptedModel(
        per_agent={
            "triage": [transfer("refunds-desk", order="7", amount=30)],
            "billing": [text("Your refund of 30 is booked.")],
        }
    )
    return Swarm([triage, billing, desk], "triage", model=model)

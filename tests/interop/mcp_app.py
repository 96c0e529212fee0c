"""Swarms for `swarmkit serve mcp` tests: a refund that pauses for a person before billing."""

from __future__ import annotations

from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm
from swarmkit.testing import ScriptedModel, text, transfer


class Refund(BaseModel):
    """A refund."""

    amount: int


def refunds(model: ScriptedModel) -> Swarm:
    """A swarm that pauses before its billing agent pays a refund."""
    billing = Agent(name="billing", description="Pays refunds.")
    triage = Agent(
        name="triage",
        description="Sorts out what a customer needs.",
        handoffs=[Handoff(agent=billing, input_type=Refund)],
    )
    return Swarm([triage, billing], "triage", model=model, interrupt_before=["billing"])


paused_refund = refunds(ScriptedModel(transfer("billing", amount=50), text("Refunded 50.")))
"""One refund of 50, approved or not, then paid: what a served process answers once."""

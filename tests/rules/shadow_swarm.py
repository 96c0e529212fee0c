"""A triage swarm whose scripted model routes by ``category``, and shadow rules beside it."""

from __future__ import annotations

import dataclasses

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.journal import Journal
from swarmkit.models import Usage
from swarmkit.testing import ScriptedModel, text, transfer

AGENTS = ("triage", "billing", "sales")
BILLING = "triage -> billing if category == 'billing'"
OVER_50 = "triage -> sales if amount > 50"
"""The two shadow rules as `status` names them."""

USAGE = Usage(prompt_tokens=100, completion_tokens=7, total_tokens=107)


def shadow_rules() -> HandoffGraph:
    """Billing tickets to billing (right), and every ticket over 50 to sales (often wrong)."""
    rules = HandoffGraph()
    rules.add_edge("triage", "billing", "category == 'billing'")
    rules.add_edge("triage", "sales", "amount > 50")
    return rules


def swarm(
    journal: Journal | None = None,
    shadow: HandoffGraph | dict[str, object] | None = None,
    **options: object,
) -> Swarm:
    """The three agents, the model deciding every handoff, ``shadow`` rules beside it."""
    agents = [Agent(name=name, instructions=f"You are {name}.") for name in AGENTS]
    return Swarm(agents, "triage", model=ScriptedModel(), journal=journal, shadow=shadow, **options)  # type: ignore[arg-type]


def script(target: str | None) -> ScriptedModel:
    """The triage model hands off to ``target`` (or answers itself), which then answers."""
    if target is None:
        return ScriptedModel(text("Answered at triage.", usage=USAGE))
    return ScriptedModel(dataclasses.replace(transfer(target), usage=USAGE), text("Done."))


shadowed = swarm(shadow=shadow_rules())
"""The swarm with its shadow rules, as the command loads it (``...shadow_swarm:shadowed``)."""

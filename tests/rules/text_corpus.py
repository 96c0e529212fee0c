"""A journaled corpus from real runs whose routing depends on what the customer wrote.

Session ``w{i:04d}``: a message of filler words and at most one key word, and a ``tier``
(gold, standard, free in turn). The scripted model sends a gold customer who writes "urgent"
to support, then "refund"/"invoice" to billing and "price"/"quote" to sales; a message with
none of them goes to billing or sales by a seeded coin (noise no rule can learn). Every 7th
session's message quotes a redacted value, and there the model does the opposite of the
words (a refund to sales), so a learner that read redacted text would learn wrong rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from swarmkit import Agent, HandoffGraph, Swarm
from swarmkit.journal import InMemoryJournal, Journal
from swarmkit.testing import ScriptedModel, text, transfer

FILLER = ("hello", "i", "need", "help", "with", "my", "account", "the", "please", "thanks")
KEYS = {"refund": "billing", "invoice": "billing", "price": "sales", "quote": "sales"}
TIERS = ("gold", "standard", "free")


@dataclass(frozen=True)
class Plan:
    """One session's message, context and the model's choice."""

    session_id: str
    message: str
    context: dict[str, object]
    target: str
    coin: bool
    redacted: bool


def plan(index: int, *, redact_every: int = 7) -> Plan:
    """The known routing of session ``index``."""
    rnd = random.Random(index)
    words = rnd.sample(FILLER, 6)
    key = rnd.choice([*KEYS, None])
    urgent = rnd.random() < 0.3
    tier = TIERS[index % 3]
    if key is not None:
        words.insert(rnd.randrange(len(words)), key.upper() if index % 2 else key)
    if urgent:
        words.append("Urgent!")
    redacted = redact_every > 0 and index % redact_every == 0
    if urgent and tier == "gold":
        target = "support"
    elif key is not None:
        target = KEYS[key]
    else:
        target = rnd.choice(["billing", "sales"])
    if redacted:
        words.append('{"card_token": "[redacted]"}')
        target = {"billing": "sales", "sales": "billing", "support": "billing"}[target]
    coin = key is None and not (urgent and tier == "gold")
    message = " ".join(words)
    return Plan(f"w{index:04d}", message, {"tier": tier}, target, coin, redacted)


def swarm(journal: Journal | None = None, rules: HandoffGraph | None = None) -> Swarm:
    """The desk: triage hands off to billing, sales or support."""
    agents = [
        Agent(name="triage", handoffs=["billing", "sales", "support"]),
        *(Agent(name=name) for name in ("billing", "sales", "support")),
    ]
    return Swarm(agents, "triage", model=ScriptedModel(), graph=rules, journal=journal)


async def build(count: int, *, redact_every: int = 7) -> tuple[Journal, list[Plan]]:
    """Run ``count`` sessions into a fresh in-memory journal."""
    journal = InMemoryJournal()
    base = swarm(journal)
    plans = [plan(index, redact_every=redact_every) for index in range(count)]
    for item in plans:
        model = ScriptedModel(transfer(item.target), text("Done."))
        await base.with_model(model).run(
            item.message, context=item.context, session_id=item.session_id
        )
    return journal, plans


desk = swarm()
"""The swarm as the command loads it (``tests.rules.text_corpus:desk``)."""

"""Two swarms on two ports, handing work to each other over A2A.

A warehouse swarm and a shop swarm each run as an A2A server on 127.0.0.1 (free ports, a
bearer token each). The shop's triage agent hands stock questions to the warehouse as a
typed handoff; a customer-side swarm hands the whole conversation to the shop. Each remote
turn is one journaled step, so the customer's session replays afterwards with both servers
gone and no network call. The script prints each swarm's trail and the answer.

Run it offline (scripted models play every agent):   python examples/two_swarms_over_a2a.py
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from swarmkit import Agent, Handoff, RunResult, Swarm
from swarmkit.a2a import A2AServer, remote_agent
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, transfer


class StockQuery(BaseModel):
    """What the warehouse needs to answer."""

    sku: str
    """The article number."""


def warehouse_swarm() -> Swarm:
    """The warehouse: one agent that knows the stock."""
    stock = Agent(name="stock", instructions="Say how many of the article are left.")
    return Swarm([stock], "stock", model=ScriptedModel(text("12 of A-1 left.")))


def shop_swarm(warehouse_url: str, token: str) -> Swarm:
    """The shop: triage hands stock questions to the remote warehouse, typed."""
    warehouse = remote_agent("warehouse", warehouse_url, token=token, description="Stock levels")
    triage = Agent(
        name="triage",
        instructions="Send stock questions to the warehouse.",
        handoffs=[Handoff(agent=warehouse, input_type=StockQuery)],
    )
    model = ScriptedModel(transfer("warehouse", sku="A-1"))
    return Swarm([triage, warehouse], "triage", model=model)


async def main() -> tuple[RunResult, RunResult]:
    """Ask the shop (through a customer-side swarm) how many A-1 are left; then replay."""
    async with (
        A2AServer(warehouse_swarm(), InMemoryJournal()) as warehouse,
        A2AServer(shop_swarm(warehouse.url, warehouse.token), InMemoryJournal()) as shop,
    ):
        remote_shop = remote_agent("shop", shop.url, token=shop.token, description="The shop")
        assistant = Agent(name="assistant", instructions="Pass shopping questions on.")
        journal = InMemoryJournal()
        customer = Swarm(
            [assistant, remote_shop],
            "assistant",
            model=ScriptedModel(transfer("shop")),
            journal=journal,
        )
        result = await customer.run("How many A-1 are left?", session_id="ask-1")
    print(f"customer: {' -> '.join(result.trail)}: {result.final_output}")
    # Both servers are gone: the remote turns come back from the journal.
    replayed = await customer.replay("ask-1")
    print(f"replayed with no server: {replayed.final_output}")
    return result, replayed


if __name__ == "__main__":
    asyncio.run(main())

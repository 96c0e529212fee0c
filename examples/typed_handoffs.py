"""Typed handoffs with nested Pydantic payloads, and input filters that shape what peers see.

intake -> warehouse carries a ``Shipment``: a list of line items, each holding a product
model, plus an enum and optional fields. Its filter
``compose(remove_tool_calls, last_messages(4))`` drops intake's tool chatter and keeps the
last four messages. warehouse -> courier carries a ``Pickup`` through a seed-002 style filter
``(history, payload) -> str`` that replaces the history with a one-line brief. The script
prints what each receiving agent saw and the payload its tool received.

Run it offline (a scripted model plays the LLM):   python examples/typed_handoffs.py
or live:   OPENAI_API_KEY=sk-... [SWARMKIT_MODEL=gpt-4o] python examples/typed_handoffs.py
"""

from __future__ import annotations

import asyncio
import os
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from swarmkit import Agent, Handoff, Model, OpenAIModel, RunContext, RunResult, Swarm, filters, tool
from swarmkit.models import ModelRequest
from swarmkit.testing import RecordingModel, ScriptedModel, text, tool_call, transfer, turn


class Speed(StrEnum):
    """How fast the parcel must go."""

    STANDARD = "standard"
    EXPRESS = "express"


class Product(BaseModel):
    """A catalogue product."""

    sku: str
    name: str


class LineItem(BaseModel):
    """One line of an order: a product and how many."""

    product: Product
    quantity: int = Field(ge=1)


class Shipment(BaseModel):
    """What the warehouse needs to pack an order."""

    order_id: str
    items: list[LineItem]
    speed: Speed
    gift_note: str | None = Field(description="A note to print on the slip, if any.")


class Pickup(BaseModel):
    """What the courier needs to collect a parcel."""

    order_id: str
    parcels: int
    speed: Speed


@tool
def find_customer(email: str) -> str:
    """Find a customer's open order.

    Args:
        email: The customer's email address.
    """
    return f"{email}: order B-77, 2 x SKU-1 Teapot, 1 x SKU-9 Cups (set of 4)"


@tool
def pack(ctx: RunContext) -> str:
    """Pack the shipment this agent was handed."""
    shipment = ctx.payload
    assert isinstance(shipment, Shipment)  # validated, typed, nested models intact
    count = sum(item.quantity for item in shipment.items)
    return f"packed {count} items of {shipment.order_id} into 2 parcels ({shipment.speed.value})"


def courier_brief(history: list[str], payload: dict[str, Any]) -> str:
    """Seed 002's filter shape: rendered history and the payload (a dict) in, the prompt out."""
    return f"Collect {payload['parcels']} parcels for {payload['order_id']} ({payload['speed']})."


courier = Agent(name="courier", instructions="Confirm the pickup in one line.", handoffs=[])
warehouse = Agent(
    name="warehouse",
    instructions="Pack the shipment, then book a pickup with the courier.",
    tools=[pack],
    handoffs=[Handoff(agent=courier, input_type=Pickup, input_filter=courier_brief)],
)
only_recent = filters.compose(filters.remove_tool_calls, filters.last_messages(4))
intake = Agent(
    name="intake",
    instructions="Find the customer's order, then hand it to the warehouse as a Shipment.",
    tools=[find_customer],
    handoffs=[Handoff(agent=warehouse, input_type=Shipment, input_filter=only_recent)],
)


def offline_model() -> ScriptedModel:
    """The scripted model plays the LLM's part offline: the turns a real model would take."""
    items = [
        {"product": {"sku": "SKU-1", "name": "Teapot"}, "quantity": 2},
        {"product": {"sku": "SKU-9", "name": "Cups (set of 4)"}, "quantity": 1},
    ]
    return ScriptedModel(
        tool_call("find_customer", email="ana@example.com"),
        turn(
            transfer("warehouse", order_id="B-77", items=items, speed="express", gift_note=None),
            content="Found order B-77; passing it to the warehouse.",
        ),
        tool_call("pack"),
        transfer("courier", order_id="B-77", parcels=2, speed="express"),
        text("Pickup booked: 2 express parcels for B-77 today."),
    )


def pick_model() -> Model:
    """The real API when OPENAI_API_KEY is set, else the scripted stand-in."""
    if os.environ.get("OPENAI_API_KEY"):
        return OpenAIModel(os.environ.get("SWARMKIT_MODEL", "gpt-4o-mini"))
    return offline_model()


def first_request(model: RecordingModel, agent: str) -> ModelRequest:
    """The first request an agent's model was sent: what the agent saw on arrival."""
    return next(r for r in model.requests if r.agent == agent)


def report(result: RunResult, model: RecordingModel) -> None:
    """Print each handoff's payload, then what the receiving agent saw."""
    for handoff in result.handoffs:
        print(f"\n{handoff.source} -> {handoff.target} (decided by {handoff.decided_by})")
        system, *history = first_request(model, handoff.target).messages
        print(f"  its instructions end: {str(system.content).splitlines()[-1]}")
        for message in history:
            print(f"  it saw {message.kind}: {message.content}")
    packed = next(m.content for m in result.messages if m.kind == "tool" and m.name == "pack")
    print(f"\npack tool, from its typed payload: {packed}")
    print(f"stop: {result.stop_reason}; answer: {result.final_output}")


async def main() -> tuple[RunResult, RecordingModel]:
    """Run one order through intake, warehouse and courier; print what each one saw."""
    model = RecordingModel(pick_model())
    swarm = Swarm([intake, warehouse, courier], "intake", model=model)
    result = await swarm.run("Hi, this is ana@example.com: please ship my order, express.")
    report(result, model)
    return result, model


if __name__ == "__main__":
    asyncio.run(main())

"""Whole swarm runs through the real openai client, with HTTP mocked."""

from __future__ import annotations

import json

from pydantic import BaseModel

from swarmkit import Agent, Handoff, HandoffGraph, Swarm
from swarmkit.events import RunFinished, TextDelta

from ..models.fake_openai import chunk, completion, error, fake_api, sse, tool_call_json


def _agents(billing_handoff: Handoff | None = None) -> list[Agent]:
    billing = Agent(name="billing", instructions="You are billing.")
    triage = Agent(
        name="triage",
        instructions="You are triage.",
        handoffs=[billing_handoff or Handoff(agent=billing)],
    )
    return [triage, billing]


async def test_rule_routed_handoff_makes_no_call_for_the_router() -> None:
    """A rule sends the ticket to billing: the only HTTP request is billing's."""
    api = fake_api(completion("Your invoice is paid."))
    graph = HandoffGraph()
    graph.add_edge("triage", "billing", when="category == 'billing'")
    swarm = Swarm(_agents(), "triage", model=api.model, graph=graph)

    result = await swarm.run("invoice?", context={"category": "billing"})

    assert len(api.requests) == 1
    system = api.body(0)["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are billing.")
    assert "handed this conversation by agent 'triage'" in system["content"]
    assert result.final_output == "Your invoice is paid."
    assert [h.decided_by for h in result.handoffs] == ["rule"]
    assert result.usage["billing"].total_tokens == 17


class Address(BaseModel):
    """Where the customer lives."""

    city: str
    country: str


class Customer(BaseModel):
    """Who is asking."""

    name: str
    address: Address


class BillingCase(BaseModel):
    """A case for billing."""

    customer: Customer
    invoice_ids: list[str]


async def test_typed_llm_handoff_with_a_nested_payload() -> None:
    """The model's nested payload is validated and reaches billing's request."""
    payload = {
        "customer": {"name": "Ann", "address": {"city": "Oslo", "country": "NO"}},
        "invoice_ids": ["A-1", "A-2"],
    }
    api = fake_api(
        completion(
            None,
            tool_calls=[tool_call_json("call_1", "transfer_to_billing", json.dumps(payload))],
            finish_reason="tool_calls",
        ),
        completion("Both invoices are refunded."),
    )
    billing = Agent(name="billing", instructions="You are billing.")
    handoff = Handoff(agent=billing, input_type=BillingCase)
    swarm = Swarm(_agents(handoff), "triage", model=api.model)

    result = await swarm.run("refund my invoices")

    tool = api.body(0)["tools"][0]["function"]
    assert tool["name"] == "transfer_to_billing" and tool["strict"] is True
    schema_text = json.dumps(tool["parameters"])
    for ref in [p for p in schema_text.split('"') if p.startswith("#/")]:
        name = ref.rsplit("/", 1)[-1]
        assert name in tool["parameters"].get("$defs", {}), ref
    second = api.body(1)["messages"]
    assert "Oslo" in second[0]["content"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_1"
    assert result.handoffs[0].payload == payload
    assert result.final_output == "Both invoices are refunded."


async def test_run_recovers_from_a_rate_limit() -> None:
    """A 429 is retried after the server's delay and the run finishes normally."""
    api = fake_api(error(429, headers={"retry-after-ms": "1500"}), completion("Hi!"))
    swarm = Swarm([Agent(name="solo")], "solo", model=api.model)

    result = await swarm.run("hello")

    assert api.sleep.delays == [1.5]
    assert len(api.requests) == 2
    assert result.final_output == "Hi!"
    assert result.stop_reason == "final_output"


async def test_unrecoverable_api_error_ends_the_run_with_error() -> None:
    """A 400 is not retried; the run ends with stop_reason error and the key stays hidden."""
    api = fake_api(error(400, "bad request"))
    swarm = Swarm([Agent(name="solo")], "solo", model=api.model)

    result = await swarm.run("hello")

    assert result.stop_reason == "error"
    assert len(api.requests) == 1
    assert "sk-test" not in str(result.error)


async def test_streamed_run_yields_text_deltas_from_the_api() -> None:
    """swarm.stream() streams the model: text arrives in pieces, then the same final answer."""
    api = fake_api(
        sse(
            chunk(content="Hel"),
            chunk(content="lo!"),
            chunk(finish_reason="stop"),
            chunk(usage=(9, 2), choices=False),
        )
    )
    swarm = Swarm([Agent(name="solo")], "solo", model=api.model)

    events = [event async for event in swarm.stream("hi")]

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Hel", "lo!"]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.result.final_output == "Hello!"
    assert final.result.usage["solo"].total_tokens == 11
    assert api.body(0)["stream"] is True

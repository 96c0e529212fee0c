"""Swarm.requests: what each model call of a journaled session was sent, rebuilt offline."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from swarmkit import Agent, Handoff, Swarm, tool
from swarmkit.exceptions import ReplayDivergenceError
from swarmkit.filters import remove_tool_calls
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import ToolMessage
from swarmkit.testing import NeverCalledModel, ScriptedModel, raw_tool_call, text, transfer

SECRET = "hunter2-NEVER-SHOW"


class Refund(BaseModel):
    """What billing needs to refund an invoice."""

    invoice_id: str
    amount: float


@tool
def lookup(invoice_id: str, password: str) -> str:
    """Look an invoice up in the billing system."""
    return f'{{"invoice": "{invoice_id}", "api_key": "{SECRET}", "total": 49.0}}'


def _swarm(model: object, triage: str = "Route billing questions.") -> Swarm:
    """Triage (with a lookup tool) hands off to billing through a typed handoff whose input
    filter removes tool calls."""
    billing = Agent(name="billing", instructions="Refund invoices.")
    handoff = Handoff(billing, input_type=Refund, input_filter=remove_tool_calls)
    agents = [
        Agent(name="triage", instructions=triage, tools=[lookup], handoffs=[handoff]),
        billing,
    ]
    return Swarm(agents, "triage", model=model)  # type: ignore[arg-type]


async def _session(journal: InMemoryJournal) -> None:
    """Session "r1": triage looks the invoice up (with a password), hands off, billing answers."""
    arguments = f'{{"invoice_id": "INV-1", "password": "{SECRET}"}}'
    model = ScriptedModel(
        raw_tool_call("lookup", arguments),
        transfer("billing", invoice_id="INV-1", amount=49.0),
        text("Refunded 49.0 on INV-1."),
    )
    await _swarm(model).run("Refund INV-1 please", session_id="r1", journal=journal)


async def test_each_model_call_is_listed_with_its_record_agent_and_turn() -> None:
    """Three model calls: triage twice, then billing, each at its model_call record."""
    journal = InMemoryJournal()
    await _session(journal)

    sent = await _swarm(NeverCalledModel()).requests("r1", journal)

    calls = [r.seq for r in await journal.read("r1") if r.kind == "model_call"]
    assert [(s.seq, s.agent, s.turn) for s in sent] == [
        (calls[0], "triage", 1),
        (calls[1], "triage", 2),
        (calls[2], "billing", 3),
    ]


async def test_the_messages_are_the_ones_sent_after_the_input_filter() -> None:
    """Billing was sent no tool calls (its filter removed them), though the history holds them."""
    journal = InMemoryJournal()
    await _session(journal)
    swarm = _swarm(NeverCalledModel())

    billing = (await swarm.requests("r1", journal))[-1]
    history = (await swarm.history("r1", journal))[-1].messages

    assert any(isinstance(m, ToolMessage) for m in history)
    assert not any(isinstance(m, ToolMessage) for m in billing.request.messages)
    assert str(billing.request.messages[0].content).startswith("Refund invoices.")
    assert billing.request.messages[1].content == "Refund INV-1 please"


async def test_the_tools_offered_carry_their_json_schemas_and_the_payload_is_shown() -> None:
    """Triage was offered lookup and transfer_to_billing with their schemas; billing got the
    Refund payload, also quoted in its instructions."""
    journal = InMemoryJournal()
    await _session(journal)

    first, _, billing = await _swarm(NeverCalledModel()).requests("r1", journal)

    tools = {spec.name: spec for spec in first.request.tools}
    assert set(tools) == {"lookup", "transfer_to_billing"}
    assert set(tools["lookup"].parameters["properties"]) == {"invoice_id", "password"}
    assert "amount" in tools["transfer_to_billing"].parameters["properties"]
    assert billing.payload == {"invoice_id": "INV-1", "amount": 49.0}
    assert '"invoice_id": "INV-1"' in str(billing.request.messages[0].content)
    assert first.payload is None and first.request.settings.tool_choice is None


async def test_secrets_in_arguments_and_tool_results_are_redacted() -> None:
    """A password the model sent and an api_key a tool returned never appear in the requests."""
    journal = InMemoryJournal()
    await _session(journal)

    sent = await _swarm(NeverCalledModel()).requests("r1", journal)

    assert SECRET not in repr(sent)
    second = sent[1].request.messages
    assert '"password": "[redacted]"' in second[2].tool_calls[0].arguments  # type: ignore[union-attr]
    assert '"total": 49.0' in str(second[3].content)


async def test_a_session_the_code_no_longer_reproduces_raises_the_divergence() -> None:
    """Changed instructions since the run: ReplayDivergenceError names the first changed call."""
    journal = InMemoryJournal()
    await _session(journal)
    changed = _swarm(NeverCalledModel(), triage="Send everything to billing.")

    with pytest.raises(ReplayDivergenceError) as raised:
        await changed.requests("r1", journal)

    assert "differs from the journaled one" in str(raised.value)
    assert "Send everything to billing." in raised.value.diff


async def test_a_session_still_running_lists_the_calls_journaled_so_far() -> None:
    """A run whose journal ends mid-way (a crash) lists the calls it made, not a divergence."""
    journal = InMemoryJournal()
    await _session(journal)
    records = await journal.read("r1")
    cut = next(r.seq for r in records if r.kind == "handoff")
    crashed = InMemoryJournal()
    await crashed.append([dataclasses.replace(r) for r in records[:cut]])

    sent = await _swarm(NeverCalledModel()).requests("r1", crashed)

    assert [s.agent for s in sent] == ["triage", "triage"]

"""Handoff(on_handoff=...): called as the handoff happens; errors follow the tool policy."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import Agent, ConfigurationError, Handoff, RunContext, Swarm, ToolExecutionError
from swarmkit.journal import InMemoryJournal
from swarmkit.testing import ScriptedModel, text, transfer


class Case(BaseModel):
    """A billing case."""

    order: str


def desk(handoff: Handoff, model: ScriptedModel, **swarm_fields: Any) -> Swarm:
    """Triage with the given handoff to billing."""
    triage = Agent(name="triage", handoffs=[handoff])
    return Swarm([triage, Agent(name="billing")], "triage", model=model, **swarm_fields)


async def test_an_async_callback_gets_the_context_and_the_validated_payload() -> None:
    """The callback sees the run context and the Case instance, before billing starts."""
    seen: list[tuple[str, object]] = []

    async def record(context: RunContext, payload: Case | None) -> None:
        seen.append((context.agent, payload))

    handoff = Handoff(agent="billing", input_type=Case, on_handoff=record)
    model = ScriptedModel(transfer("billing", order="A-1"), text("done"))

    result = await desk(handoff, model).run("refund A-1")

    assert seen == [("triage", Case(order="A-1"))]
    assert result.trail == ("triage", "billing")


async def test_a_sync_callback_may_take_only_the_context() -> None:
    """As in the OpenAI Agents SDK, an untyped handoff's callback may take just the context."""
    calls: list[str] = []
    handoff = Handoff(agent="billing", on_handoff=lambda context: calls.append(context.session_id))
    model = ScriptedModel(transfer("billing"), text("done"))

    result = await desk(handoff, model).run("x", session_id="s1")

    assert calls == ["s1"]
    assert result.final_agent == "billing"


async def test_a_failing_callback_refuses_the_handoff_and_tells_the_model() -> None:
    """The error goes back as the transfer call's result; the agent answers instead."""

    def fail(context: RunContext) -> None:
        raise RuntimeError("CRM is down")

    model = ScriptedModel(transfer("billing"), text("Sorry, later."))
    journal = InMemoryJournal()
    swarm = desk(Handoff(agent="billing", on_handoff=fail), model, journal=journal)

    result = await swarm.run("x", session_id="f")

    assert result.trail == ("triage",)
    tool_result = model.requests[1].messages[-1]
    assert "on_handoff for 'billing' raised RuntimeError: CRM is down" in str(tool_result)
    replayed = await swarm.replay("f")
    assert replayed.trail == ("triage",)


async def test_replay_does_not_call_the_callback_again() -> None:
    """The journaled outcome is served on replay: zero side effects."""
    calls: list[str] = []
    handoff = Handoff(agent="billing", on_handoff=lambda context: calls.append("called"))
    model = ScriptedModel(transfer("billing"), text("done"))
    swarm = desk(handoff, model, journal=InMemoryJournal())

    await swarm.run("x", session_id="r")
    await swarm.replay("r")

    assert calls == ["called"]


async def test_raise_errors_raises_the_callbacks_failure() -> None:
    """With raise_errors=True the failure ends the run as a ToolExecutionError."""

    def fail(context: RunContext) -> None:
        raise RuntimeError("boom")

    handoff = Handoff(agent="billing", on_handoff=fail, raise_errors=True)

    with pytest.raises(ToolExecutionError, match="boom") as caught:
        await desk(handoff, ScriptedModel(transfer("billing"))).run("x")
    assert isinstance(caught.value.__cause__, RuntimeError)


@pytest.mark.parametrize("callback", ["not callable", lambda: None, lambda a, b, c: None])
def test_a_callback_of_the_wrong_shape_is_a_configuration_error(callback: object) -> None:
    """on_handoff must be callable with (context) or (context, payload)."""
    with pytest.raises(ConfigurationError, match="on_handoff"):
        Handoff(agent="billing", on_handoff=callback)  # type: ignore[arg-type]

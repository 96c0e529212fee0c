"""Handoffs and tools offered only while their ``available_when`` condition holds."""

from __future__ import annotations

import pytest

from swarmkit import (
    Agent,
    ConditionSyntaxError,
    ConfigurationError,
    Handoff,
    ReplayDivergenceError,
    Swarm,
    ToolResult,
    tool,
)
from swarmkit.events import HandoffRefused
from swarmkit.journal import InMemoryJournal
from swarmkit.messages import ToolMessage
from swarmkit.testing import NeverCalledModel, ScriptedModel, text, tool_call, transfer

from .conftest import tool_names


@tool
def verify() -> ToolResult:
    """Verify the customer."""
    return ToolResult(output="verified", update={"verified": True})


@tool(available_when="verified == true")
def refund() -> str:
    """Refund the order."""
    return "refunded"


def _support(model: ScriptedModel | NeverCalledModel, rule: str = "verified == true") -> Swarm:
    triage = Agent(
        name="triage",
        tools=[verify, refund],
        handoffs=[Handoff(agent="billing", available_when=rule)],
    )
    return Swarm([triage, Agent(name="billing")], "triage", model=model)


async def test_a_handoff_is_offered_only_while_its_condition_holds() -> None:
    """No transfer tool before verification; after the tool updates the context, there is one."""
    model = ScriptedModel(tool_call("verify"), transfer("billing"), text("billing here"))

    result = await _support(model).run("refund please")

    assert tool_names(model.requests[0]) == ["verify"]
    assert tool_names(model.requests[1]) == ["verify", "refund", "transfer_to_billing"]
    assert result.trail == ("triage", "billing")


async def test_a_function_tool_is_offered_only_while_its_condition_holds() -> None:
    """The refund tool appears once the context says the customer is verified."""
    model = ScriptedModel(text("hello"))

    await _support(model).run("x", context={"verified": True})

    assert "refund" in tool_names(model.requests[0])


async def test_a_call_to_a_tool_not_offered_is_refused_with_a_tool_result() -> None:
    """The model calls the hidden refund tool anyway: it does not run, and is told why."""
    model = ScriptedModel(tool_call("refund"), text("sorry"))

    result = await _support(model).run("x")

    refused = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert refused[0].is_error
    assert "was not offered on this turn" in refused[0].content
    assert result.final_output == "sorry"


async def test_a_transfer_not_offered_is_refused_as_not_offered() -> None:
    """A transfer call to a withheld peer is a refused handoff with its own reason."""
    model = ScriptedModel(transfer("billing"), text("still triage"))

    events = [e async for e in _support(model).stream("x")]

    refusals = [e for e in events if isinstance(e, HandoffRefused)]
    assert [r.reason for r in refusals] == ["not_offered"]


async def test_conditions_see_the_loop_facts() -> None:
    """A condition on ``swarm.turn`` offers the handoff from the second call on."""
    model = ScriptedModel(tool_call("verify"), text("done"))

    await _support(model, rule="swarm.turn >= 1").run("x")

    assert "transfer_to_billing" not in tool_names(model.requests[0])
    assert "transfer_to_billing" in tool_names(model.requests[1])


def test_a_condition_syntax_error_is_raised_at_construction_with_a_caret() -> None:
    """A broken available_when fails when the Handoff is built, pointing at the column."""
    with pytest.raises(ConditionSyntaxError) as caught:
        Handoff(agent="billing", available_when="verified ==")
    assert "^" in str(caught.value)
    with pytest.raises(ConfigurationError):
        tool(available_when="a and")(lambda: None)


async def test_the_journal_records_the_offered_tools_and_replay_checks_them() -> None:
    """The request summary lists the offered tools; a changed condition diverges in replay."""
    journal = InMemoryJournal()
    model = ScriptedModel(tool_call("verify"), transfer("billing"), text("billing here"))
    swarm = _support(model)
    recorded = await swarm.run("x", journal=journal)
    records = await journal.read(recorded.session_id)
    calls = [r.data for r in records if r.kind == "model_call"]
    assert calls[0]["request"]["tools"] == ["verify"]

    await _support(NeverCalledModel()).replay(recorded.session_id, journal)
    with pytest.raises(ReplayDivergenceError):
        await _support(NeverCalledModel(), rule="true").replay(recorded.session_id, journal)


async def test_an_agents_own_offer_rule_wins_over_a_swarm_level_handoff() -> None:
    """A Handoff with only available_when is the agent's own, not replaced by the swarm's."""
    model = ScriptedModel(text("hi"))
    triage = Agent(name="triage", handoffs=[Handoff(agent="billing", available_when="false")])
    peers: dict[str, Agent | Handoff] = {
        "triage": triage,
        "billing": Handoff(agent=Agent(name="billing")),
    }

    await Swarm(peers, "triage", model=model).run("x")

    assert tool_names(model.requests[0]) == []


async def test_the_legacy_handoff_tool_lists_only_offered_targets() -> None:
    """With the single handoff tool, a withheld peer leaves its target enum, and is refused."""
    triage = Agent(
        name="triage",
        handoffs=[Handoff(agent="billing", available_when="verified == true"), "tech"],
    )
    model = ScriptedModel(tool_call("handoff", target="billing"), text("no"))
    agents = [triage, Agent(name="billing"), Agent(name="tech")]
    swarm = Swarm(agents, "triage", model=model, legacy_handoff_tool=True)

    events = [e async for e in swarm.stream("x")]

    schema = model.requests[0].tools[0].parameters
    assert schema["properties"]["target"]["enum"] == ["tech"]
    assert [e.reason for e in events if isinstance(e, HandoffRefused)] == ["not_offered"]


def test_the_viewer_draws_the_offer_rule_on_the_handoff_edge() -> None:
    """The session viewer's picture labels the LLM edge with its available_when."""
    from swarmkit.ui._picture import swarm_edges  # noqa: PLC0415 - the viewer, only here

    edges = swarm_edges(_support(NeverCalledModel()))

    labels = [
        e.label for e in edges if (e.source, e.target, e.rule) == ("triage", "billing", False)
    ]
    assert labels == ["when verified == true"]

"""Code written for seed 002's Swarm and Handoff keeps its meaning here."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from swarmkit import (
    Agent,
    ConfigurationError,
    Handoff,
    InMemoryJournal,
    InputFilterError,
    Swarm,
)
from swarmkit.messages import UserMessage
from swarmkit.testing import ScriptedModel, text, tool_call, transfer


class Escalation(BaseModel):
    """Why a ticket goes to a person."""

    reason: str


async def test_two_argument_filter_gets_the_payload_as_a_dict() -> None:
    """An idiomatic seed 002 filter reads the payload with .get(), typed or not."""
    seen: list[dict[str, Any]] = []

    def brief(history: list[str], payload: dict[str, Any]) -> str:
        seen.append(payload)
        return f"reason: {payload.get('reason', 'none given')}"

    human, plain = Agent(name="human"), Agent(name="plain")
    triage = Agent(
        name="triage",
        handoffs=[
            Handoff(human, Escalation, input_filter=brief),
            Handoff(agent=plain, input_filter=brief),
        ],
    )
    model = ScriptedModel(transfer("human", reason="angry"), text("on it"))
    await Swarm([triage, human, plain], "triage", model=model).run("help")
    model_untyped = ScriptedModel(transfer("plain"), text("ok"))
    await Swarm([triage, human, plain], "triage", model=model_untyped).run("help")

    assert seen == [{"reason": "angry"}, {}]
    assert model.requests[1].messages[1:] == (UserMessage(content="reason: angry"),)


def _broken_filter(history: list[str], payload: dict[str, Any]) -> str:
    if _FILTER["broken"]:
        raise KeyError("customer_id")
    return "fixed brief"


_FILTER = {"broken": True}


async def test_a_filter_that_raises_ends_the_run_with_an_error_that_can_be_resumed() -> None:
    """The run stops with stop_reason "error" naming filter and handoff; resume finishes it."""
    _FILTER["broken"] = True
    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(b, input_filter=_broken_filter)])
    model = ScriptedModel(transfer("b"), text("b answers"))
    swarm = Swarm([a, b], "a", model=model)
    journal = InMemoryJournal()

    failed = await swarm.run("q", session_id="s1", journal=journal)

    assert failed.stop_reason == "error"
    assert isinstance(failed.error, InputFilterError)
    assert str(failed.error).startswith("input filter _broken_filter of the handoff a -> b failed")
    assert "KeyError" in str(failed.error)
    assert (failed.error.filter_name, failed.error.source, failed.error.target) == (
        "_broken_filter",
        "a",
        "b",
    )
    last = (await journal.read("s1"))[-1]
    assert (last.kind, last.data["stop_reason"]) == ("run_finished", "error")

    _FILTER["broken"] = False
    resumed = await swarm.resume("s1", journal)

    assert resumed.stop_reason == "final_output"
    assert resumed.final_output == "b answers"
    assert model.requests[-1].messages[1:] == (UserMessage(content="fixed brief"),)
    model.assert_exhausted()


async def test_a_filter_returning_something_else_is_an_input_filter_error() -> None:
    """Returning a number is named as the filter's fault, not a crash."""
    b = Agent(name="b")
    a = Agent(name="a", handoffs=[Handoff(b, input_filter=lambda data: 42)])
    model = ScriptedModel(transfer("b"))

    result = await Swarm([a, b], "a", model=model).run("q")

    assert result.stop_reason == "error"
    assert "returned int" in str(result.error)


async def test_handoff_tool_name_implies_the_single_legacy_tool() -> None:
    """Seed 002's handoff_tool_name="route" gives one tool named route, as it did there."""
    model = ScriptedModel(tool_call("route", target="b", message="yours"), text("b here"))
    swarm = Swarm([Agent(name="a"), Agent(name="b")], "a", model=model, handoff_tool_name="route")

    result = await swarm.run("q")

    assert [spec.name for spec in model.requests[0].tools] == ["route"]
    assert result.trail == ("a", "b")


def test_handoff_tool_name_with_the_legacy_tool_turned_off_is_a_configuration_error() -> None:
    """Asking for a named legacy tool and no legacy tool says which to drop."""
    with pytest.raises(ConfigurationError, match="drop one of the two"):
        Swarm(
            [Agent(name="a"), Agent(name="b")],
            "a",
            model=ScriptedModel(),
            handoff_tool_name="route",
            legacy_handoff_tool=False,
        )


def test_handoff_takes_agent_and_input_type_by_position() -> None:
    """Handoff(agent, SomeModel) as seed 002's plain fields allow."""
    billing = Agent(name="billing")

    handoff = Handoff(billing, Escalation)

    assert (handoff.target, handoff.input_type) == ("billing", Escalation)


async def test_legacy_tool_describes_a_peer_without_description_by_its_instructions() -> None:
    """A peer with no description is described by the start of its instructions."""
    long = "Handle refunds and invoices for paying customers. " * 5
    peers = [Agent(name="a"), Agent(name="billing", instructions=long), Agent(name="c")]
    model = ScriptedModel(text("ok"))

    await Swarm(peers, "a", model=model, legacy_handoff_tool=True).run("x")

    description = model.requests[0].tools[0].description
    assert "billing (Handle refunds and invoices for paying customers." in description
    assert "..." in description and long.strip() not in description
    assert "; c." in description
